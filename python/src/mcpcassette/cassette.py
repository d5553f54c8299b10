"""One cassette of one test: the server commands and URLs handed to the
test's MCP client, and what became of them.

Each server the test starts runs as ``mcpcassette run --mode MODE
--cassette PATH --report REPORT``. The client (an SDK) starts and stops a
stdio server itself, so the outcome is read from the report ``run`` writes:
there as soon as it starts (``"finished": false``), final when it ends.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Optional, Sequence


class CassetteError(Exception):
    """A cassette that cannot be used as asked (a missing cassette in mode
    ``none``, a server URL that never came)."""


@dataclass
class StdioServer:
    """What a stdio MCP client needs to start the server through
    mcpcassette: pass ``command``, ``args`` and ``env`` on, or use
    :meth:`parameters` (the ``mcp`` SDK) or :meth:`fastmcp_transport`."""

    command: str
    args: list[str]
    env: Optional[dict[str, str]] = None
    cwd: Optional[str] = None

    def parameters(self) -> Any:
        """``mcp.StdioServerParameters`` for ``mcp.client.stdio.stdio_client``."""
        from mcp import StdioServerParameters

        return StdioServerParameters(command=self.command, args=self.args, env=self.env, cwd=self.cwd)

    def fastmcp_transport(self) -> Any:
        """``fastmcp.client.transports.StdioTransport`` for ``fastmcp.Client``."""
        from fastmcp.client.transports import StdioTransport

        return StdioTransport(command=self.command, args=self.args, env=self.env, cwd=self.cwd)


@dataclass
class HttpServer:
    """A record proxy or replay server over Streamable HTTP: point the
    client at ``url``. Stopped (and its cassette written) by :meth:`close`,
    which the fixture calls when the test ends."""

    url: str
    process: subprocess.Popen = field(repr=False)
    stderr: list[str] = field(default_factory=list, repr=False)

    def close(self, timeout: float = 10.0) -> Optional[int]:
        """Stops it with SIGTERM (a recording is written then) and returns
        its exit status."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        return self.process.returncode


@dataclass
class Outcome:
    """How one server of the test ended, as its report says."""

    cassette: Path
    report: Optional[dict]
    #: What makes the test fail: misses (as stderr shows them), unused
    #: interactions, errors. Empty when all went well.
    problems: list[str]

    @property
    def started(self) -> bool:
        return self.report is not None


@dataclass
class _Started:
    report: Path
    http: Optional[HttpServer] = None
    upstream: Optional[str] = None


class Cassette:
    """The cassette a test records to or replays from, and the servers it
    handed out.

    ``options`` are extra ``run`` flags (``--strategy sequential``,
    ``--ignore SELECTOR``); ``report_dir`` is where the reports go.
    """

    def __init__(
        self,
        path: os.PathLike | str,
        mode: str,
        *,
        report_dir: os.PathLike | str,
        mode_source: str = "",
        fail_on_unused: bool = False,
        options: Sequence[str] = (),
        binary: Optional[str] = None,
    ) -> None:
        from . import find_binary

        self.path = Path(path).absolute()
        self.mode = mode
        self.mode_source = mode_source
        self.fail_on_unused = fail_on_unused
        self.options = list(options)
        self.binary = binary or find_binary()
        self._report_dir = Path(report_dir)
        self._started: list[_Started] = []
        #: Whether the cassette was there before the test (so it replays).
        self.existed = self.path.exists()

    def __repr__(self) -> str:
        return f"Cassette({str(self.path)!r}, mode={self.mode!r})"

    # What the client is handed.

    def stdio(
        self,
        command: str,
        args: Sequence[str] = (),
        env: Optional[Mapping[str, str]] = None,
        cwd: Optional[os.PathLike | str] = None,
    ) -> StdioServer:
        """The stdio server ``command args`` behind mcpcassette: recorded,
        or replayed without ever being started, as the mode says."""
        report = self._next_report()
        argv = self._run_args(report) + ["--", command, *args]
        self._started.append(_Started(report=report))
        return StdioServer(
            command=self.binary,
            args=argv,
            env=dict(env) if env is not None else None,
            cwd=str(cwd) if cwd is not None else None,
        )

    def http(self, upstream: str, *, timeout: float = 10.0) -> HttpServer:
        """A Streamable HTTP endpoint in front of the server at
        ``upstream``: a recording proxy, or a replay that never contacts it.
        Listens on 127.0.0.1 and a free port."""
        report = self._next_report()
        argv = [self.binary, *self._run_args(report), "--upstream", upstream, "--listen", "127.0.0.1:0"]
        process = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        stderr: list[str] = []
        threading.Thread(target=_collect, args=(process.stderr, stderr), daemon=True).start()
        url = _first_line(process, timeout)
        if not url.startswith("http"):
            process.kill()
            process.wait()
            raise CassetteError(
                f"mcpcassette run gave no URL for {upstream} (exit {process.returncode}):\n"
                + "".join(stderr)
            )
        server = HttpServer(url=url, process=process, stderr=stderr)
        self._started.append(_Started(report=report, http=server, upstream=upstream))
        return server

    # What became of it.

    def stop_http(self) -> None:
        """Stops the HTTP servers the test started."""
        for started in self._started:
            if started.http is not None:
                started.http.close()

    def unfinished(self) -> bool:
        """Whether a server that started has not ended yet."""
        return any(
            (report := _read(s.report)) is not None and not report.get("finished")
            for s in self._started
        )

    def outcomes(self, timeout: float = 5.0, stop: bool = False) -> list[Outcome]:
        """Each started server's outcome, waiting up to ``timeout`` seconds
        for those still running; with ``stop``, one still running then
        (its client never closed it) is stopped with SIGTERM, which makes
        it write its report, and waited for as long again."""
        out = []
        for started in self._started:
            report = _wait(started.report, timeout)
            if stop and report is not None and not report.get("finished") and report.get("pid"):
                try:
                    os.kill(int(report["pid"]), signal.SIGTERM)
                except (OSError, ValueError):
                    pass
                report = _wait(started.report, timeout)
            out.append(Outcome(self.path, report, self._problems(report)))
        return out

    def failure(self, timeout: float = 5.0, stop: bool = False) -> Optional[str]:
        """The text a failing test shows, or ``None`` when every server the
        test started ended well (see :meth:`outcomes` for ``stop``)."""
        problems = [p for o in self.outcomes(timeout, stop) for p in o.problems]
        if not problems:
            return None
        head = f"mcpcassette: cassette {self.path} (mode {self.mode}"
        head += f", {self.mode_source})" if self.mode_source else ")"
        return head + "\n\n" + "\n\n".join(problems)

    def verify(self, timeout: float = 120.0) -> Optional[str]:
        """Re-runs the cassette against the live server (``mcpcassette
        verify``); the drift report, or ``None`` when the server answers as
        recorded. A cassette recorded by this very test is not verified."""
        if not self.existed or not self.path.exists():
            return None
        argv = [self.binary, "verify", str(self.path)]
        upstreams = [s.upstream for s in self._started if s.upstream]
        if upstreams:
            argv += ["--url", upstreams[0]]
        env = dict(os.environ, NO_COLOR="1")
        done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, env=env)
        if done.returncode == 0:
            return None
        what = "drift" if done.returncode == 1 else f"cannot verify (exit {done.returncode})"
        return f"mcpcassette verify: {what} in {self.path}\n{done.stdout}{done.stderr}"

    # Helpers.

    def _next_report(self) -> Path:
        self._report_dir.mkdir(parents=True, exist_ok=True)
        report = self._report_dir / f"report-{len(self._started) + 1}.json"
        if report.exists():
            report.unlink()
        if self.mode == "none" and not self.path.exists():
            raise CassetteError(
                f"no cassette at {self.path}, and mode `none` ({self.mode_source or 'asked for'}) "
                "never records, so the server was not started. Record it outside CI "
                "(`pytest --mcp-record-mode=once`, the default there) and commit it."
            )
        return report

    def _run_args(self, report: Path) -> list[str]:
        argv = ["run", "--mode", self.mode, "--cassette", str(self.path), "--report", str(report)]
        if self.fail_on_unused:
            argv.append("--fail-on-unused")
        return argv + self.options

    def _problems(self, report: Optional[dict]) -> list[str]:
        if report is None:
            return []
        if not report.get("finished"):
            return ["the server through mcpcassette was still running when the test ended"]
        code = report.get("exit_code")
        if report.get("error"):
            return [f"mcpcassette run failed: {report['error']}"]
        if not code:
            return []
        problems = [m.get("text") or json.dumps(m) for m in report.get("misses", [])]
        if report.get("misses_not_kept"):
            problems.append(f"... and {report['misses_not_kept']} more miss(es)")
        for unanswered in report.get("unanswered", []):
            problems.append(f"never answered: {json.dumps(unanswered)}")
        if report.get("unused") and self.fail_on_unused:
            listed = "\n".join(
                f"  #{u['interaction']} {json.dumps(u['message'].get('method'))}" for u in report["unused"]
            )
            problems.append(f"recorded interactions never used (--mcp-fail-on-unused):\n{listed}")
        for mismatch in report.get("answer_mismatches", []):
            problems.append(f"client answer unlike the recorded one:\n{mismatch.get('diff', mismatch)}")
        if not problems:
            problems.append(f"mcpcassette run exited {code}")
        return problems


def _wait(path: Path, timeout: float) -> Optional[dict]:
    """The report at ``path`` once finished, or as it is after ``timeout``
    seconds (``None``: the server never started)."""
    deadline = time.monotonic() + timeout
    report = _read(path)
    while report is not None and not report.get("finished") and time.monotonic() < deadline:
        time.sleep(0.02)
        report = _read(path)
    return report


def _read(path: Path) -> Optional[dict]:
    try:
        return json.loads(path.read_text())
    except FileNotFoundError:
        return None
    except json.JSONDecodeError:
        # Written atomically, so only a foreign file gets here.
        return {"finished": True, "exit_code": 2, "error": f"{path}: not a report"}


def _collect(stream, into: list[str]) -> None:
    for line in stream:
        into.append(line)


def _first_line(process: subprocess.Popen, timeout: float) -> str:
    """The first line of stdout, or "" when none comes within ``timeout``."""
    result: list[str] = []
    reader = threading.Thread(target=lambda: result.append(process.stdout.readline()), daemon=True)
    reader.start()
    reader.join(timeout)
    return result[0].strip() if result else ""
