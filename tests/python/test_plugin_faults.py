"""Faults from pytest: a test states its failure scenario (`faults=[...]`
on the `mcp_cassette` marker or on `stdio()`), replays a cassette another
test recorded, misbehaving as the rules say, and asserts through the
plugin that its failure path was exercised. Each test writes a small
suite (the official `mcp` SDK client against the example server) and runs
pytest on it in a subprocess (pytester), as test_plugin.py does.
"""

import json
from pathlib import Path

import pytest

# The user's suite. `test_records` records the cassette (two echo calls);
# every other test replays it with faults.
SUITE = '''
import os

import anyio
import pytest
from mcp import ClientSession
from mcp.client.stdio import stdio_client
from mcp.shared.exceptions import MCPError

DEMO = os.environ["DEMO_SERVER"]


async def session(server, body):
    async with stdio_client(server.parameters()) as (read, write):
        async with ClientSession(read, write) as s:
            await s.initialize()
            return await body(s)


async def agent(s, messages):
    """An agent's tool loop: each result goes into the transcript; a tool
    error is surfaced to the user and ends the loop."""
    transcript = []
    for message in messages:
        result = await s.call_tool("echo", {"message": message})
        text = result.content[0].text
        if result.is_error:
            transcript.append(f"the echo tool failed: {text}")
            break
        transcript.append(text)
    return transcript


def test_records(mcp_cassette):
    transcript = anyio.run(session, mcp_cassette.stdio(DEMO), lambda s: agent(s, ["a", "b"]))
    assert transcript == ["echo: a", "echo: b"]


@pytest.mark.mcp_cassette(
    "test_records", faults=[{"method": "tools/call", "name": "echo", "nth": 2, "tool_error": "rate limited"}]
)
def test_agent_surfaces_a_tool_error(mcp_cassette):
    transcript = anyio.run(session, mcp_cassette.stdio(DEMO), lambda s: agent(s, ["a", "b"]))
    assert transcript == ["echo: a", "the echo tool failed: rate limited"]
    fired = mcp_cassette.faults_fired
    assert [(f["fault"], f["kind"], f["request"]) for f in fired] == [(0, "tool_error", "tools/call echo")]


@pytest.mark.mcp_cassette("test_records")
def test_client_times_out_on_a_hang(mcp_cassette):
    server = mcp_cassette.stdio(DEMO, faults=[{"name": "echo", "hang": True}])

    async def body(s):
        with pytest.raises(MCPError) as raised:
            await s.call_tool("echo", {"message": "a"}, read_timeout_seconds=0.5)
        return raised.value.error.code

    assert anyio.run(session, server, body) == -32001
    faults = mcp_cassette.faults(server)
    assert [(h["fault"], h["request"], h["cancelled"]) for h in faults["hung"]] == [(0, "tools/call echo", True)]
    assert faults["unused"] == []


# The error stands in for the recorded answer of its request (as a real
# server's error would have taken its place): the retry gets the last
# recorded answer again.
@pytest.mark.mcp_cassette(
    "test_records",
    on_exhausted="repeat-last",
    faults={"seed": 7, "faults": [{"name": "echo", "nth": 2, "error": {"code": -32000, "message": "busy, retry"}}]},
)
def test_a_retry_after_an_error_succeeds(mcp_cassette):
    async def body(s):
        answers, errors = [], []
        for message in ("a", "b"):
            for _attempt in range(3):
                try:
                    answers.append((await s.call_tool("echo", {"message": message})).content[0].text)
                    break
                except MCPError as error:
                    errors.append((error.error.code, error.error.message))
        return answers, errors

    answers, errors = anyio.run(session, mcp_cassette.stdio(DEMO), body)
    assert answers == ["echo: a", "echo: b"]
    assert errors == [(-32000, "busy, retry")]
    assert [(f["kind"], f["did"]) for f in mcp_cassette.faults_fired] == [("error", "error -32000: busy, retry")]


@pytest.mark.mcp_cassette("test_records", faults=[{"name": "echo", "nth": 2, "disconnect": {"exit": 3}}])
def test_a_server_that_hangs_up(mcp_cassette):
    async def body(s):
        first = (await s.call_tool("echo", {"message": "a"})).content[0].text
        with pytest.raises(MCPError):
            await s.call_tool("echo", {"message": "b"})
        return first

    try:
        assert anyio.run(session, mcp_cassette.stdio(DEMO), body) == "echo: a"
    except Exception:  # the SDK may also raise as the session closes
        pass
    faults = mcp_cassette.faults()
    assert faults["disconnected"] == 3
    assert [f["kind"] for f in faults["fired"]] == ["disconnect"]


@pytest.mark.mcp_cassette("test_records", faults=[{"name": "echo", "nth": 5, "tool_error": "never"}])
def test_a_fault_that_never_fires(mcp_cassette):
    transcript = anyio.run(session, mcp_cassette.stdio(DEMO), lambda s: agent(s, ["a", "b"]))
    assert transcript == ["echo: a", "echo: b"]
    assert mcp_cassette.faults_fired == []
    assert mcp_cassette.faults()["unused"] == [0]
'''

REPLAYS = [
    "test_agent_surfaces_a_tool_error",
    "test_client_times_out_on_a_hang",
    "test_a_retry_after_an_error_succeeds",
    "test_a_server_that_hangs_up",
    "test_a_fault_that_never_fires",
]


@pytest.fixture
def project(pytester, monkeypatch, demo_server):
    """A scratch project holding the user's suite, outside CI."""
    pytester.makepyfile(test_faults=SUITE)
    for name in ("CI", "TF_BUILD", "MCPCASSETTE_MODE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("DEMO_SERVER", demo_server)
    return pytester


def run(pytester, *args):
    return pytester.runpytest_subprocess("-p", "no:cacheprovider", *args, timeout=300)


def recorded(pytester) -> Path:
    return pytester.path / "cassettes" / "test_faults" / "test_records.json"


def test_each_test_replays_the_recording_with_its_faults(project, monkeypatch, tmp_path):
    first = run(project, "-v")
    first.assert_outcomes(passed=1 + len(REPLAYS))
    cassette = json.loads(recorded(project).read_text())
    answers = [
        json.dumps(i["response"]) for i in cassette["interactions"] if i.get("request", {}).get("method") == "tools/call"
    ]
    # No fault reached the cassette: it holds the two real answers only.
    assert len(answers) == 2 and all("isError" not in a and "rate limited" not in a for a in answers), answers
    assert sorted(p.name for p in recorded(project).parent.iterdir()) == ["test_records.json"]

    # In CI the server cannot even start: every failure path is replayed.
    monkeypatch.setenv("DEMO_SERVER", str(tmp_path / "no-such-server"))
    monkeypatch.setenv("CI", "true")
    again = run(project, "-v")
    again.assert_outcomes(passed=1 + len(REPLAYS))


def test_a_fault_that_never_fires_fails_the_test_under_fail_on_unused(project):
    run(project, "-k", "test_records").assert_outcomes(passed=1, deselected=len(REPLAYS))
    result = run(project, "-k", "never_fires", "--mcp-fail-on-unused")
    result.assert_outcomes(failed=1, deselected=len(REPLAYS))
    result.stdout.fnmatch_lines(
        ["*fault rules never fired (--mcp-fail-on-unused):*", '*#0 name echo nth 5: tool error "never"*']
    )
    # Every interaction was used: the rule alone fails it.
    assert "recorded interactions never used" not in result.stdout.str()


def test_faults_are_refused_while_recording_without_starting_the_server(project, monkeypatch, demo_server, tmp_path):
    started = tmp_path / "started"
    wrapper = tmp_path / "server.sh"
    wrapper.write_text(f"#!/bin/sh\ntouch {started}\nexec {demo_server}\n")
    wrapper.chmod(0o755)
    monkeypatch.setenv("DEMO_SERVER", str(wrapper))

    # The cassette the faults would replay was never recorded: mode once
    # would record it.
    result = run(project, "-k", "tool_error")
    result.assert_outcomes(failed=1, deselected=len(REPLAYS))
    output = result.stdout.str()
    assert "faults are given, but the cassette" in output, output
    assert "test_faults/test_records.json does not exist, so mode `once` would record it" in output, output
    assert "faults apply only when replaying" in output, output
    assert "Record the cassette without faults first" in output, output
    assert not started.exists(), "the server was started"
    assert not recorded(project).exists()

    # Recorded, then re-recorded on purpose: mode all refuses them too.
    run(project, "-k", "test_records").assert_outcomes(passed=1, deselected=len(REPLAYS))
    started.unlink()
    result = run(project, "-k", "tool_error", "--mcp-record-mode=all")
    result.assert_outcomes(failed=1, deselected=len(REPLAYS))
    result.stdout.fnmatch_lines(["*faults are given, but mode `all` re-records *test_records.json (--mcp-record-mode)*"])
    assert not started.exists(), "the server was started"


def test_faults_that_are_not_a_list_fail_the_test(project):
    project.makepyfile(
        test_bad="""
        import os
        import pytest

        @pytest.mark.mcp_cassette("test_records", faults="hang")
        def test_bad(mcp_cassette):
            mcp_cassette.stdio(os.environ["DEMO_SERVER"])
        """
    )
    result = run(project, "test_bad.py")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*the mcp_cassette marker's faults: expected a list of fault rules*"])


def test_an_http_server_replays_with_its_faults(project, http_server, monkeypatch):
    project.makepyfile(
        test_http_faults="""
        import os
        import anyio
        import pytest
        from mcp import ClientSession
        from mcp.client.streamable_http import streamable_http_client

        async def echo(url):
            async with streamable_http_client(url) as streams:
                async with ClientSession(streams[0], streams[1]) as session:
                    await session.initialize()
                    result = await session.call_tool("echo", {"message": "hi"})
                    return result.is_error, result.content[0].text

        def test_http_records(mcp_cassette):
            is_error, text = anyio.run(echo, mcp_cassette.http(os.environ["HTTP_URL"]).url)
            assert not is_error and text.endswith("hi")

        @pytest.mark.mcp_cassette("test_http_records")
        def test_http_tool_error(mcp_cassette):
            proxy = mcp_cassette.http(os.environ["HTTP_URL"], faults=[{"name": "echo", "tool_error": "down"}])
            assert anyio.run(echo, proxy.url) == (True, "down")
            # Reading the faults of an HTTP server stops it: its report is final then.
            faults = mcp_cassette.faults(proxy)
            assert [(f["kind"], f["request"]) for f in faults["fired"]] == [("tool_error", "tools/call echo")]
        """
    )
    monkeypatch.setenv("HTTP_URL", http_server.url)
    run(project, "test_http_faults.py").assert_outcomes(passed=2)
    http_server.stop()
    monkeypatch.setenv("CI", "true")
    run(project, "test_http_faults.py").assert_outcomes(passed=2)


def docs_block(first_line: str) -> str:
    """The fenced Python block of docs/faults.md that starts with `first_line`."""
    docs = (Path(__file__).parents[2] / "docs" / "faults.md").read_text()
    for block in docs.split("```python\n")[1:]:
        code = block.split("```", 1)[0]
        if code.startswith(first_line + "\n"):
            return code
    raise AssertionError(f"docs/faults.md has no Python block starting with {first_line!r}")


def readme_block(first_line: str) -> str:
    readme = (Path(__file__).parents[2] / "README.md").read_text()
    for block in readme.split("```python\n")[1:]:
        code = block.split("```", 1)[0]
        if code.startswith(first_line + "\n"):
            return code
    raise AssertionError(f"README.md has no Python block starting with {first_line!r}")


def test_the_docs_example_runs_as_written(pytester, monkeypatch):
    # docs/faults.md's pytest example, with the README's server.py.
    for name in ("CI", "TF_BUILD", "MCPCASSETTE_MODE"):
        monkeypatch.delenv(name, raising=False)
    # The README's weather server, which the example's test records.
    pytester.makepyfile(server=readme_block("# server.py"), test_weather_faults=docs_block("# test_weather_faults.py"))
    first = run(pytester, "-v")
    first.assert_outcomes(passed=3)
    assert (pytester.path / "cassettes" / "test_weather_faults" / "test_forecast.json").exists()

    # In CI it replays, faults and all, with the server gone.
    (pytester.path / "server.py").write_text("raise SystemExit('the server was started')\n")
    monkeypatch.setenv("CI", "true")
    run(pytester, "-v").assert_outcomes(passed=3)
