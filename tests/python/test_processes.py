"""Tests whose client starts its server many times, or two servers, as
agent frameworks do: every process is recorded into the test's cassette on
the first run and replayed, in order, on the second, with no flag or mode.

The server is examples/notes_server.rs: its notes outlive its process (a
file), so a later process reads what an earlier one wrote, as
`@modelcontextprotocol/server-memory` does.
"""

import json
import os
from pathlib import Path

import pytest

SUITE = '''
import json
import os
import signal
import subprocess
from pathlib import Path

import anyio
from mcp import ClientSession
from mcp.client.stdio import stdio_client


def notes(mcp_cassette, name=None, file="notes.txt"):
    return mcp_cassette.stdio(os.environ["NOTES_SERVER"], [str(Path(os.environ["NOTES_DIR"]) / file)], name=name)


async def call(server, tool, arguments):
    """One process per call, as langchain-mcp-adapters starts them; an
    error becomes the answer, as LangGraph's tool nodes make it a message,
    so only mcpcassette can fail the test for it."""
    async with stdio_client(server.parameters()) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            try:
                result = await session.call_tool(tool, arguments)
            except Exception as error:  # noqa: BLE001 - the agent's way
                return f"error: {error}"
            return result.content[0].text


def keep(name, transcript):
    Path(os.environ["TRANSCRIPTS"], name + ".json").write_text(json.dumps(transcript))


def test_sessions_one_after_another(mcp_cassette):
    server = notes(mcp_cassette)

    async def main():
        return [
            await call(server, "recall", {}),
            await call(server, "remember", {"note": os.environ.get("NOTE", "alpha")}),
            await call(server, "remember", {"note": "beta"}),
            await call(server, "recall", {}),
        ]

    keep("one_after_another", anyio.run(main))


def test_sessions_at_the_same_time(mcp_cassette):
    server = notes(mcp_cassette)

    async def main():
        results = {}
        async with anyio.create_task_group() as group:
            for tag, ms in (("first", 300), ("second", 10), ("third", 150)):
                async def one(tag=tag, ms=ms):
                    results[tag] = await call(server, "slow", {"tag": tag, "ms": ms})
                group.start_soon(one)
        return results

    keep("at_the_same_time", anyio.run(main))


def test_two_servers(mcp_cassette):
    mine = notes(mcp_cassette, file="mine.txt")
    theirs = notes(mcp_cassette, name="theirs", file="theirs.txt")

    async def main():
        results = {}
        async with anyio.create_task_group() as group:
            async def one(server, key, note):
                await call(server, "remember", {"note": note})
                results[key] = await call(server, "recall", {})
            group.start_soon(one, mine, "mine", "m")
            group.start_soon(one, theirs, "theirs", "t")
        return results

    keep("two_servers", anyio.run(main))


def test_a_client_that_kills_its_server(mcp_cassette):
    server = notes(mcp_cassette)
    process = subprocess.Popen([server.command, *server.args], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    answers = []
    for message in (
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "remember", "arguments": {"note": "killed"}}},
    ):
        process.stdin.write(json.dumps(message).encode() + b"\\n")
        process.stdin.flush()
        answers.append(json.loads(process.stdout.readline())["result"])
    # As pydantic-ai 1.x closes its servers.
    process.send_signal(signal.SIGKILL)
    process.wait()
    keep("killed", answers[1])
'''

TESTS = ["test_sessions_one_after_another", "test_sessions_at_the_same_time", "test_two_servers", "test_a_client_that_kills_its_server"]


@pytest.fixture
def project(pytester, monkeypatch, notes_server, tmp_path):
    """A scratch project holding the suite, outside CI; the notes start
    empty on every run."""
    pytester.makepyfile(test_agents=SUITE)
    for name in ("CI", "TF_BUILD", "MCPCASSETTE_MODE", "NOTE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("NOTES_SERVER", notes_server)
    return pytester


def run(pytester, monkeypatch, tmp_path, name, *args):
    """Runs the suite with fresh notes; its transcripts, by test."""
    notes = tmp_path / f"notes-{name}"
    transcripts = tmp_path / f"transcripts-{name}"
    notes.mkdir()
    transcripts.mkdir()
    monkeypatch.setenv("NOTES_DIR", str(notes))
    monkeypatch.setenv("TRANSCRIPTS", str(transcripts))
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", *args, timeout=300)
    kept = {p.stem: json.loads(p.read_text()) for p in transcripts.glob("*.json")}
    return result, kept


def cassettes(pytester) -> Path:
    return pytester.path / "cassettes" / "test_agents"


def test_every_process_is_recorded_then_replayed_in_order_without_the_server(project, monkeypatch, tmp_path):
    first, live = run(project, monkeypatch, tmp_path, "live")
    first.assert_outcomes(passed=4)
    assert live["one_after_another"] == ["nothing yet", "remembered 1 note(s)", "remembered 2 note(s)", "alpha\nbeta"]
    assert live["at_the_same_time"] == {"first": "first done", "second": "second done", "third": "third done"}
    assert live["two_servers"] == {"mine": "m", "theirs": "t"}

    # One cassette per server, every process in it, never only a journal.
    names = sorted(p.name for p in cassettes(project).iterdir())
    assert names == [f"{t}.json" for t in sorted(TESTS)] + ["test_two_servers.theirs.json"], names
    recorded = json.loads((cassettes(project) / "test_sessions_one_after_another.json").read_text())
    processes = sorted({i.get("process", 0) for i in recorded["interactions"]})
    assert processes == [0, 1, 2, 3], processes
    killed = json.loads((cassettes(project) / "test_a_client_that_kills_its_server.json").read_text())
    assert [i["request"]["method"] for i in killed["interactions"]] == ["initialize", "tools/call"]

    # CI: the server cannot start; the notes file is empty, so a live
    # server would answer otherwise.
    monkeypatch.setenv("NOTES_SERVER", str(tmp_path / "no-such-server"))
    monkeypatch.setenv("CI", "true")
    second, replayed = run(project, monkeypatch, tmp_path, "replayed", "-v")
    second.assert_outcomes(passed=4)
    assert replayed == live


def test_a_miss_in_an_earlier_process_fails_the_test(project, monkeypatch, tmp_path):
    run(project, monkeypatch, tmp_path, "live", "-k", "one_after_another")[0].assert_outcomes(passed=1, deselected=3)
    monkeypatch.setenv("NOTE", "changed")
    monkeypatch.setenv("CI", "true")
    result, _ = run(project, monkeypatch, tmp_path, "replayed", "-k", "one_after_another")
    result.assert_outcomes(failed=1, deselected=3)
    output = result.stdout.str()
    assert "server process 2 of 4" in output, output
    assert "no recorded interaction matches this request" in output, output
    assert '"note": "changed"' in output or '"note":"changed"' in output, output
