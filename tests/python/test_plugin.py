"""What a user's pytest run sees with the mcpcassette plugin: recording,
replay without the server, CI without a cassette, a miss, drift."""

import json
import os
from pathlib import Path

import pytest

SUITE = (Path(__file__).parent / "suite.py").read_text()
TESTS = ["test_mcp_stdio", "test_mcp_http", "test_fastmcp_stdio", "test_fastmcp_http"]


@pytest.fixture
def project(pytester, monkeypatch, demo_server, http_server):
    """A scratch project holding the user's suite, outside CI."""
    pytester.makepyfile(test_clients=SUITE)
    for name in ("CI", "TF_BUILD", "MCPCASSETTE_MODE", "DEMO_SERVER_DRIFT", "MESSAGE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("DEMO_SERVER", demo_server)
    monkeypatch.setenv("HTTP_URL", http_server.url)
    return pytester


def cassette(pytester, test):
    return pytester.path / "cassettes" / "test_clients" / f"{test}.json"


def run(pytester, *args):
    return pytester.runpytest_subprocess("-p", "no:cacheprovider", *args, timeout=300)


def test_the_first_run_records_and_the_second_replays_without_the_servers(project, monkeypatch, http_server, tmp_path):
    first = run(project)
    first.assert_outcomes(passed=4)
    for test in TESTS:
        recorded = json.loads(cassette(project, test).read_text())
        methods = [(i.get("request") or i["notification"])["method"] for i in recorded["interactions"]]
        assert "tools/call" in methods, (test, methods)

    # The servers are gone: a stdio command that cannot start, nothing on
    # the HTTP port.
    http_server.stop()
    monkeypatch.setenv("DEMO_SERVER", str(tmp_path / "no-such-server"))
    second = run(project, "-v")
    second.assert_outcomes(passed=4)


def test_ci_without_a_cassette_fails_each_test_without_starting_its_server(project, monkeypatch, demo_server, tmp_path):
    started = tmp_path / "started"
    wrapper = tmp_path / "server.sh"
    wrapper.write_text(f"#!/bin/sh\ntouch {started}\nexec {demo_server}\n")
    wrapper.chmod(0o755)
    monkeypatch.setenv("DEMO_SERVER", str(wrapper))
    monkeypatch.setenv("CI", "true")
    result = run(project)
    result.assert_outcomes(failed=4)
    result.stdout.fnmatch_lines(["*no cassette at *test_clients/test_mcp_stdio.json*mode `none` (CI detected)*"])
    assert not started.exists(), "the stdio server was started"
    for test in TESTS:
        assert not cassette(project, test).exists()


def test_a_changed_argument_fails_the_test_with_the_miss_report(project, monkeypatch):
    run(project).assert_outcomes(passed=4)
    monkeypatch.setenv("MESSAGE", "changed")
    monkeypatch.setenv("CI", "true")
    result = run(project)
    result.assert_outcomes(failed=4)
    output = result.stdout.str()
    for test in TESTS:
        assert f"FAILED test_clients.py::{test}" in output, output
    assert output.count("no recorded interaction matches this request") >= 4, output
    assert '"message": "changed"' in output or '"message":"changed"' in output, output
    assert "How to fix it" in output and "mcpcassette run --mode new-episodes" in output, output


def test_new_episodes_records_the_changed_call_beside_the_old_one(project, monkeypatch):
    run(project, "-k", "stdio").assert_outcomes(passed=2, deselected=2)
    monkeypatch.setenv("MESSAGE", "another")
    run(project, "-k", "stdio", "--mcp-record-mode=new-episodes").assert_outcomes(passed=2, deselected=2)
    recorded = json.loads(cassette(project, "test_mcp_stdio").read_text())
    messages = [
        i["request"]["params"]["arguments"]["message"]
        for i in recorded["interactions"]
        if i.get("request", {}).get("method") == "tools/call"
    ]
    assert messages == ["hello", "another"], messages


def test_verify_fails_the_test_whose_server_drifted(project, monkeypatch):
    run(project, "-k", "stdio").assert_outcomes(passed=2, deselected=2)
    run(project, "-k", "stdio", "--mcp-verify").assert_outcomes(passed=2, deselected=2)

    monkeypatch.setenv("DEMO_SERVER_DRIFT", "1")
    result = run(project, "-k", "stdio", "--mcp-verify")
    result.assert_outcomes(failed=2, deselected=2)
    output = result.stdout.str()
    assert "mcpcassette verify: drift in" in output, output
    assert "BREAKING tool `echo`" in output and "new required property `volume`" in output, output


def test_a_marker_names_the_cassette_and_fail_on_unused_fails_the_test(project, monkeypatch, demo_server):
    project.makepyfile(
        test_marked="""
        import os
        import anyio
        import pytest
        from mcp import ClientSession
        from mcp.client.stdio import stdio_client

        async def session(server, call):
            async with stdio_client(server.parameters()) as (read, write):
                async with ClientSession(read, write) as s:
                    await s.initialize()
                    if call:
                        await s.call_tool("echo", {"message": "hi"})

        @pytest.mark.mcp_cassette("shared")
        def test_records(mcp_cassette):
            anyio.run(session, mcp_cassette.stdio(os.environ["DEMO_SERVER"]), True)

        @pytest.mark.mcp_cassette("shared", fail_on_unused=True)
        def test_uses_less(mcp_cassette):
            anyio.run(session, mcp_cassette.stdio(os.environ["DEMO_SERVER"]), False)
        """
    )
    result = run(project, "test_marked.py")
    result.assert_outcomes(passed=1, failed=1)
    assert (project.path / "cassettes" / "test_marked" / "shared.json").exists()
    result.stdout.fnmatch_lines(["*recorded interactions never used (--mcp-fail-on-unused)*", '*"tools/call"*'])


def readme_block(first_line: str) -> str:
    """The README's fenced Python block that starts with `first_line`."""
    readme = (Path(__file__).parents[2] / "README.md").read_text()
    for block in readme.split("```python\n")[1:]:
        code = block.split("```", 1)[0]
        if code.startswith(first_line + "\n"):
            return code
    raise AssertionError(f"README.md has no Python block starting with {first_line!r}")


def test_the_readme_example_records_then_replays_in_ci(pytester, monkeypatch):
    for name in ("CI", "TF_BUILD", "MCPCASSETTE_MODE"):
        monkeypatch.delenv(name, raising=False)
    pytester.makepyfile(server=readme_block("# server.py"), test_weather=readme_block("# test_weather.py"))
    run(pytester).assert_outcomes(passed=1)
    assert (pytester.path / "cassettes" / "test_weather" / "test_forecast.json").exists()

    # In CI it replays: a server that cannot start proves it is not needed.
    (pytester.path / "server.py").write_text("raise SystemExit('the server was started')\n")
    monkeypatch.setenv("CI", "true")
    run(pytester).assert_outcomes(passed=1)


def test_a_cassette_replay_cannot_read_fails_the_test_with_the_error(project):
    path = cassette(project, "test_mcp_stdio")
    path.parent.mkdir(parents=True)
    path.write_text('{"version": 1, "interactions": [\n  {"request": 3}\n]}\n')
    result = run(project, "-k", "test_mcp_stdio")
    result.assert_outcomes(failed=1, deselected=3)
    result.stdout.fnmatch_lines(["*mcpcassette run failed: *test_mcp_stdio.json:*"])


def test_a_server_its_client_never_closed_is_stopped_and_its_miss_fails_the_teardown(project, monkeypatch):
    project.makepyfile(
        test_open="""
        import json
        import os
        import subprocess

        def test_leaves_it_open(mcp_cassette):
            server = mcp_cassette.stdio(os.environ["DEMO_SERVER"])
            process = subprocess.Popen([server.command, *server.args], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
            for message in (
                {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}},
                {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "echo", "arguments": {"message": os.environ.get("MESSAGE", "hello")}}},
            ):
                process.stdin.write(json.dumps(message).encode() + b"\\n")
                process.stdin.flush()
                process.stdout.readline()
            # The test ends with the server still running: stdin open.
        """
    )
    run(project, "test_open.py").assert_outcomes(passed=1)
    monkeypatch.setenv("MESSAGE", "changed")
    result = run(project, "test_open.py", "--mcp-record-mode=none")
    result.assert_outcomes(passed=1, errors=1)
    output = result.stdout.str()
    assert "ERROR at teardown of test_leaves_it_open" in output, output
    assert "no recorded interaction matches this request" in output, output


def test_the_readme_agent_example_records_every_process_then_replays_in_ci(pytester, monkeypatch):
    for name in ("CI", "TF_BUILD", "MCPCASSETTE_MODE"):
        monkeypatch.delenv(name, raising=False)
    pytester.makepyfile(server=readme_block("# server.py"), test_agent=readme_block("# test_agent.py"))
    run(pytester).assert_outcomes(passed=1)
    cassettes = pytester.path / "cassettes" / "test_agent"
    assert sorted(p.name for p in cassettes.iterdir()) == ["test_two_servers.backup.json", "test_two_servers.json"]
    weather = json.loads((cassettes / "test_two_servers.json").read_text())
    assert {i.get("process", 0) for i in weather["interactions"]} == {0, 1}

    (pytester.path / "server.py").write_text("raise SystemExit('the server was started')\n")
    monkeypatch.setenv("CI", "true")
    run(pytester).assert_outcomes(passed=1)


def test_a_stdio_and_an_http_server_in_one_test_get_a_cassette_each(project, monkeypatch, http_server, tmp_path):
    project.makepyfile(
        test_both="""
        import os
        import anyio
        from mcp import ClientSession
        from mcp.client.stdio import stdio_client
        from mcp.client.streamable_http import streamable_http_client

        async def echo(streams_context):
            async with streams_context as streams:
                async with ClientSession(streams[0], streams[1]) as session:
                    await session.initialize()
                    return (await session.call_tool("echo", {"message": "hi"})).content[0].text

        def test_both(mcp_cassette):
            local = mcp_cassette.stdio(os.environ["DEMO_SERVER"])
            remote = mcp_cassette.http(os.environ["HTTP_URL"])
            again = mcp_cassette.http(os.environ["HTTP_URL"])
            assert again is remote
            assert anyio.run(echo, stdio_client(local.parameters())) == "echo: hi"
            assert anyio.run(echo, streamable_http_client(remote.url)).endswith("hi")
        """
    )
    run(project, "test_both.py").assert_outcomes(passed=1)
    cassettes = project.path / "cassettes" / "test_both"
    assert sorted(p.name for p in cassettes.iterdir()) == ["test_both-2.json", "test_both.json"]
    remote = json.loads((cassettes / "test_both-2.json").read_text())
    assert remote["transport"]["kind"] == "streamable_http", remote["transport"]

    http_server.stop()
    monkeypatch.setenv("DEMO_SERVER", str(tmp_path / "no-such-server"))
    monkeypatch.setenv("CI", "true")
    run(project, "test_both.py").assert_outcomes(passed=1)
