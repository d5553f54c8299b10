"""The pytest plugin's own tests (run by `.ci/run` from the installed wheel,
never from the source tree): each test writes a small test suite that uses
the `mcp_cassette` fixture with a real SDK client, runs pytest on it in a
subprocess (pytest's `pytester`), and checks what that suite's user sees.

Needs, from the environment (`.ci/run` sets them):
- MCPCASSETTE_DEMO_SERVER: the example stdio server (examples/demo_server.rs);
- MCPCASSETTE_NOTES_SERVER: the example stdio server whose notes outlive
  its process (examples/notes_server.rs);
- MCPCASSETTE_HTTP_SERVER: the example Streamable HTTP server
  (examples/rmcp_http_server.rs).
"""

import os
import subprocess
from pathlib import Path

import pytest

pytest_plugins = ["pytester"]


def _required(name: str) -> str:
    value = os.environ.get(name)
    if not value or not Path(value).is_file():
        pytest.fail(f"{name} must name the built example server (it is {value!r})", pytrace=False)
    return value


@pytest.fixture
def demo_server() -> str:
    return _required("MCPCASSETTE_DEMO_SERVER")


@pytest.fixture
def notes_server() -> str:
    return _required("MCPCASSETTE_NOTES_SERVER")


class HttpServer:
    """The example Streamable HTTP server on 127.0.0.1 and a free port."""

    def __init__(self, binary: str) -> None:
        self.process = subprocess.Popen(
            [binary, "0"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True
        )
        self.url = self.process.stdout.readline().strip()
        assert self.url.startswith("http://127.0.0.1:"), self.url

    def stop(self) -> None:
        self.process.kill()
        self.process.wait()


@pytest.fixture
def http_server():
    server = HttpServer(_required("MCPCASSETTE_HTTP_SERVER"))
    yield server
    server.stop()
