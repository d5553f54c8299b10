"""Shared by the framework tests (run by .ci/frameworks.sh, never from the
source tree):

- ``transcript``: what the agent got from its tools, in order; written to
  ``$FW_TRANSCRIPTS/<file>_<test>.json`` when the test ends, for .ci/frameworks.sh to
  compare across the live, recording and replay runs (with how many server
  processes the test started, from the guard's log);
- ``notes_http`` / ``counter_http``: the URL of a live Streamable HTTP server
  (fastmcp / TypeScript SDK), or, in CI (replay only), of a tripwire that
  marks the run as failed if anything connects to it;
- with ``FW_DIRECT=1``, ``mcp_cassette`` is replaced by a stand-in that hands
  out the server itself: the live baseline, without mcpcassette.
"""

import json
import os
import re
import socket
import subprocess
import threading
import time
from pathlib import Path

import pytest

import mcpcassette
from fwservers import NODE, NOTES_SERVER, COUNTER_SERVER, PYTHON


@pytest.fixture
def anyio_backend():
    return "asyncio"


def _lines(path):
    try:
        return len(Path(path).read_text().splitlines())
    except FileNotFoundError:
        return 0


class Transcript(list):
    """The tool results an agent got, in order (plain JSON values)."""

    def add(self, *entries):
        for entry in entries:
            self.append(json.loads(json.dumps(entry, default=str)))


@pytest.fixture
def transcript(request):
    starts = os.environ.get("FW_STARTS", "")
    before = _lines(starts) if starts else 0
    got = Transcript()
    yield got
    out = os.environ.get("FW_TRANSCRIPTS")
    if out:
        test = f"{Path(str(request.node.path)).name} > {request.node.name}"
        Path(out).mkdir(parents=True, exist_ok=True)
        data = {"test": test, "results": list(got)}
        if starts:
            data["server_starts"] = _lines(starts) - before
        (Path(out) / (re.sub(r"[^A-Za-z0-9._-]+", "_", test) + ".json")).write_text(json.dumps(data, indent=1) + "\n")


if os.environ.get("FW_DIRECT") == "1":

    class _Direct:
        """The live baseline: the server itself, not through mcpcassette."""

        def stdio(self, command, args=(), env=None, cwd=None, name=None):
            return mcpcassette.StdioServer(command=command, args=list(args), env=env, cwd=cwd)

        def http(self, upstream, **_):
            return type("Direct", (), {"url": upstream})()

    @pytest.fixture
    def mcp_cassette():
        return _Direct()


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class _Tripwire:
    """A port that writes to $FW_FORBIDDEN when anything connects."""

    def __init__(self):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen()
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}/mcp"
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self):
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with open(os.environ.get("FW_FORBIDDEN", "/dev/null"), "a") as marker:
                marker.write(f"connection to the HTTP upstream {self.url} during a replay-only run\n")
            conn.close()

    def close(self):
        self.sock.close()


def _http_server(command, args):
    if mcpcassette.ci_detected():
        tripwire = _Tripwire()
        yield tripwire.url
        tripwire.close()
        return
    port = _free_port()
    process = subprocess.Popen([command, *args, "http", str(port)], stdout=subprocess.DEVNULL)
    deadline = time.monotonic() + 30
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            break
        except OSError:
            if process.poll() is not None or time.monotonic() > deadline:
                process.kill()
                raise RuntimeError(f"{command} {args} did not listen on {port}")
            time.sleep(0.1)
    yield f"http://127.0.0.1:{port}/mcp"
    process.terminate()
    try:
        process.wait(10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


@pytest.fixture
def notes_http():
    """The fastmcp notes server over Streamable HTTP (live), or a tripwire in CI."""
    yield from _http_server(PYTHON, [NOTES_SERVER])


@pytest.fixture
def counter_http():
    """The TypeScript SDK counter server over Streamable HTTP (live), or a tripwire in CI."""
    yield from _http_server(NODE, [COUNTER_SERVER])
