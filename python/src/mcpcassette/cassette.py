"""The cassettes of one test: the server commands and URLs handed to the
test's MCP clients, and what became of them.

Each stdio server the test hands out runs as ``mcpcassette run --mode MODE
--cassette PATH --scope DIR``. Agent frameworks start that command more
than once (a probe, then the session; a process per tool call), one after
another or at the same time: every process of one server joins the scope,
records into (or replays from) the one cassette as a process of its own,
and writes its report there. When the test ends, ``mcpcassette finish
--scope DIR`` completes the cassette (a client that killed its server
left a journal) and gives every process's outcome, so a miss in any of
them fails the test.

A Streamable HTTP server runs as one ``mcpcassette run --upstream URL
--report REPORT`` process the fixture starts and stops itself.

A server given ``faults`` (a faults overlay, docs/faults.md) replays its
cassette misbehaving as the rules say: they are written to a JSON file
beside the reports and passed as ``run --faults FILE``. Faults apply only
when replaying, so a server that would record refuses them at once.
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
from typing import Any, Mapping, Optional, Sequence, Union

#: A faults overlay as a test gives it: a list of rules, or
#: ``{"seed": N, "faults": [...]}`` (the format of ``run --faults FILE``).
FaultsSpec = Union[Sequence[Mapping[str, Any]], Mapping[str, Any]]


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
    #: The folder its processes share (``run --scope``); names the server
    #: in :meth:`Cassette.faults`.
    scope: Optional[str] = field(default=None, repr=False, compare=False)

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
    path: Path
    existed: bool
    http: Optional[HttpServer] = None
    upstream: Optional[str] = None
    faults: Optional[Path] = None


@dataclass
class _Stdio:
    """One stdio server of the test: its cassette and the scope its
    processes share."""

    path: Path
    scope: Path
    existed: bool
    faults: Optional[Path] = None


class Cassette:
    """The cassette a test records to or replays from, and the servers it
    handed out.

    ``options`` are extra ``run`` flags (``--strategy sequential``,
    ``--ignore SELECTOR``); ``report_dir`` is where the reports go;
    ``faults`` the faults overlay of every server that is not given its own.
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
        faults: Optional[FaultsSpec] = None,
    ) -> None:
        from . import find_binary

        self.path = Path(path).absolute()
        self.mode = mode
        self.mode_source = mode_source
        self.fail_on_unused = fail_on_unused
        self.options = list(options)
        self.binary = binary or find_binary()
        self._report_dir = Path(report_dir)
        self.faults_spec = _check_faults(faults, "the mcp_cassette marker's faults") if faults is not None else None
        self._faults_files = 0
        self._started: list[_Started] = []
        self._stdio: dict[tuple, _Stdio] = {}
        #: Every server the test asked for, by command, URL or name: its cassette.
        self._paths: dict[tuple, Path] = {}
        self._http: dict[tuple, HttpServer] = {}
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
        *,
        name: Optional[str] = None,
        faults: Optional[FaultsSpec] = None,
    ) -> StdioServer:
        """The stdio server ``command args`` behind mcpcassette: recorded,
        or replayed without ever being started, as the mode says. However
        many times the client starts it, one after another or at once,
        every process goes into one cassette.

        A test with several servers gets a cassette per server: the test's
        own for the first, ``<test>-2.json`` for the second (numbered in
        the order the test asks for them, whatever order they start in),
        ``<test>.<name>.json`` for one given a ``name``. Asking again for
        the same command (or name) gives the same server.

        ``faults`` (a list of fault rules, or ``{"seed": N, "faults":
        [...]}``; default the marker's) makes the replay misbehave as they
        say (docs/faults.md); :meth:`faults` tells which fired. A server
        that would record (its cassette missing) refuses them: point the
        test at a cassette recorded without faults."""
        server = self._stdio_server(command, args, name, faults)
        argv = ["run", "--mode", self.mode, "--cassette", str(server.path), "--scope", str(server.scope)]
        if self.fail_on_unused:
            argv.append("--fail-on-unused")
        if server.faults is not None:
            argv += ["--faults", str(server.faults)]
        argv += self.options + ["--", command, *args]
        return StdioServer(
            command=self.binary,
            args=argv,
            env=dict(env) if env is not None else None,
            cwd=str(cwd) if cwd is not None else None,
            scope=str(server.scope),
        )

    def http(
        self,
        upstream: str,
        *,
        timeout: float = 10.0,
        name: Optional[str] = None,
        faults: Optional[FaultsSpec] = None,
    ) -> HttpServer:
        """A Streamable HTTP endpoint in front of the server at
        ``upstream``: a recording proxy, or a replay that never contacts it.
        Listens on 127.0.0.1 and a free port. A second server in the test
        gets a cassette of its own, as with :meth:`stdio`; asking again for
        the same URL (or name) gives the same endpoint. ``faults`` as
        with :meth:`stdio` (and ``"http"`` faults: statuses over HTTP)."""
        key = ("name", name) if name else ("http", upstream)
        if key in self._http:
            return self._http[key]
        path = self._path_for(key, name)
        existed = path.exists()
        faults_file = self._faults_file(path, faults)
        report = self._next_report()
        argv = [self.binary, *self._run_args(report, path), "--upstream", upstream, "--listen", "127.0.0.1:0"]
        if faults_file is not None:
            argv += ["--faults", str(faults_file)]
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
        self._started.append(
            _Started(report=report, path=path, existed=existed, http=server, upstream=upstream, faults=faults_file)
        )
        self._http[key] = server
        return server

    @property
    def paths(self) -> list[Path]:
        """Every cassette the test's servers use, in the order it asked."""
        return list(self._paths.values())

    def _path_for(self, key: tuple, name: Optional[str]) -> Path:
        """The cassette of the server ``key``: the test's own for the first
        unnamed one, ``<test>-N.json`` for the N-th, ``<test>.<name>.json``
        for a named one."""
        path = self._paths.get(key)
        if path is not None:
            return path
        if name:
            path = self.path.with_name(f"{self.path.stem}.{_safe(name)}.json")
        else:
            unnamed = sum(1 for k in self._paths if k[0] != "name")
            path = self.path if unnamed == 0 else self.path.with_name(f"{self.path.stem}-{unnamed + 1}.json")
        if self.mode == "none" and not path.exists():
            raise CassetteError(
                f"no cassette at {path}, and mode `none` ({self.mode_source or 'asked for'}) "
                "never records, so the server was not started. Record it outside CI "
                "(`pytest --mcp-record-mode=once`, the default there) and commit it."
            )
        self._paths[key] = path
        return path

    def _stdio_server(
        self, command: str, args: Sequence[str], name: Optional[str], faults: Optional[FaultsSpec]
    ) -> _Stdio:
        key = ("name", name) if name else ("command", command, tuple(args))
        server = self._stdio.get(key)
        if server is not None:
            return server
        path = self._path_for(key, name)
        faults_file = self._faults_file(path, faults)
        self._report_dir.mkdir(parents=True, exist_ok=True)
        scope = self._report_dir / f"scope-{len(self._stdio) + 1}"
        server = _Stdio(path=path, scope=scope, existed=path.exists(), faults=faults_file)
        self._stdio[key] = server
        return server

    def _faults_file(self, path: Path, faults: Optional[FaultsSpec]) -> Optional[Path]:
        """The server's faults (its own, else the marker's) as a file for
        ``run --faults``; ``None`` without faults. Refuses them at once
        when the server would record: ``run`` applies faults only when
        replaying, so that no fault reaches a cassette."""
        if faults is not None:
            faults = _check_faults(faults, "faults=")
        else:
            faults = self.faults_spec
        if faults is None:
            return None
        replays = self.mode == "none" or (self.mode == "once" and path.exists())
        if not replays:
            if self.mode == "once":
                why = f"the cassette {path} does not exist, so mode `once` would record it"
            elif self.mode == "all":
                why = f"mode `all` re-records {path}"
            else:
                why = f"mode `{self.mode}` records what is missing in {path}"
            source = f" ({self.mode_source})" if self.mode_source else ""
            raise CassetteError(
                f"mcpcassette: faults are given, but {why}{source}: faults apply only when "
                "replaying, so that a fault never reaches a cassette. Record the cassette "
                "without faults first (a test of its own, or this one without faults=), then "
                "point this test at it: @pytest.mark.mcp_cassette(\"<that test's cassette name>\", "
                "faults=[...]) replays it with the faults. The server was not started."
            )
        self._report_dir.mkdir(parents=True, exist_ok=True)
        self._faults_files += 1
        file = self._report_dir / f"faults-{self._faults_files}.json"
        file.write_text(json.dumps(faults, indent=2))
        return file

    # What became of it.

    def faults(self, server: Optional[Any] = None, timeout: float = 5.0) -> dict:
        """What the faults overlay of ``server`` (a :meth:`stdio` or
        :meth:`http` result; default the test's one server with faults)
        did, as ``run --report`` says it: ``rules`` (each as a few words),
        ``fired`` (``{"fault": index, "kind", "session", "request", "id",
        "did"}`` in order), ``fired_not_kept``, ``unused`` (the indexes of
        rules that never fired), ``hung`` (``{"fault", "request", "id",
        "cancelled"}``) and ``disconnected`` (the exit status of a
        ``disconnect``, or ``None``); every process of a stdio server
        together (a rule is unused when it fired in none of them).

        Waits up to ``timeout`` seconds for the server's processes to end
        (close the client first). An HTTP server is stopped first: its
        report is final only then."""
        stdio = list(self._stdio.values())
        http = list(self._started)
        if server is not None:
            scope = getattr(server, "scope", None)
            stdio = [s for s in stdio if scope is not None and str(s.scope) == scope]
            http = [s for s in http if s.http is server]
            if not stdio and not http:
                raise CassetteError(f"{server!r} is not a server of this test")
        with_faults = [s for s in stdio if s.faults is not None] + [s for s in http if s.faults is not None]
        if not with_faults:
            raise CassetteError("no server of this test was given faults")
        if len(with_faults) > 1:
            raise CassetteError(
                "several servers of this test have faults: pass the one whose faults you want, "
                "mcp_cassette.faults(server)"
            )
        chosen = with_faults[0]
        if isinstance(chosen, _Stdio):
            _wait_scope(chosen.scope, timeout)
            reports = _scope_reports(chosen.scope)
        else:
            if chosen.http is not None:
                chosen.http.close()
            report = _wait(chosen.report, timeout)
            reports = [report] if report is not None else []
        return _merge_faults([r.get("faults") for r in reports if r.get("faults")])

    @property
    def faults_fired(self) -> list[dict]:
        """The faults that fired, in order (``faults()["fired"]``)."""
        return self.faults()["fired"]


    def stop_http(self) -> None:
        """Stops the HTTP servers the test started."""
        for started in self._started:
            if started.http is not None:
                started.http.close()

    def unfinished(self) -> bool:
        """Whether a server process that started has not ended yet."""
        http = any(
            (report := _read(s.report)) is not None and not report.get("finished")
            for s in self._started
        )
        return http or any(_running(r) for s in self._stdio.values() for r in _scope_reports(s.scope))

    def outcomes(self, timeout: float = 5.0, stop: bool = False) -> list[Outcome]:
        """Each started server's outcome, waiting up to ``timeout`` seconds
        for those still running; with ``stop``, one still running then
        (its client never closed it) is stopped with SIGTERM, which makes
        it write its report, and waited for as long again."""
        out = []
        for server in self._stdio.values():
            out += self._stdio_outcomes(server, timeout, stop)
        for started in self._started:
            report = _wait(started.report, timeout)
            if stop and report is not None and not report.get("finished") and report.get("pid"):
                try:
                    os.kill(int(report["pid"]), signal.SIGTERM)
                except (OSError, ValueError):
                    pass
                report = _wait(started.report, timeout)
            out.append(Outcome(started.path, report, self._problems(report)))
        return out

    def failure(self, timeout: float = 5.0, stop: bool = False) -> Optional[str]:
        """The text a failing test shows, or ``None`` when every server the
        test started ended well (see :meth:`outcomes` for ``stop``)."""
        by_cassette: dict[Path, list[str]] = {}
        for outcome in self.outcomes(timeout, stop):
            if outcome.problems:
                by_cassette.setdefault(outcome.cassette, []).extend(outcome.problems)
        if not by_cassette:
            return None
        mode = f"mode {self.mode}, {self.mode_source}" if self.mode_source else f"mode {self.mode}"
        return "\n\n".join(
            f"mcpcassette: cassette {path} ({mode})\n\n" + "\n\n".join(problems)
            for path, problems in by_cassette.items()
        )

    def verify(self, timeout: float = 120.0) -> Optional[str]:
        """Re-runs the test's cassettes against the live servers
        (``mcpcassette verify``); the drift reports, or ``None`` when every
        server answers as recorded. A cassette recorded by this very test
        is not verified."""
        targets: list[tuple[Path, list[str]]] = []
        for server in self._stdio.values():
            if server.existed and server.path.exists():
                targets.append((server.path, []))
        for started in self._started:
            if started.upstream and started.existed and started.path.exists():
                targets.append((started.path, ["--url", started.upstream]))
        failures = []
        env = dict(os.environ, NO_COLOR="1")
        for path, extra in targets:
            argv = [self.binary, "verify", str(path), *extra]
            done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, env=env)
            if done.returncode == 0:
                continue
            what = "drift" if done.returncode == 1 else f"cannot verify (exit {done.returncode})"
            failures.append(f"mcpcassette verify: {what} in {path}\n{done.stdout}{done.stderr}")
        return "\n\n".join(failures) or None

    # Helpers.

    def _stdio_outcomes(self, server: _Stdio, timeout: float, stop: bool) -> list[Outcome]:
        """Every process of one stdio server: waits up to ``timeout`` for
        those still running (with ``stop``, then stops them with SIGTERM and
        waits as long again), then finishes the scope, which completes the
        cassette of a killed recorder and marks killed processes."""
        if not server.scope.exists():
            return []
        _wait_scope(server.scope, timeout)
        if stop:
            for report in _scope_reports(server.scope):
                if _running(report):
                    try:
                        os.kill(int(report["pid"]), signal.SIGTERM)
                    except (OSError, ValueError, KeyError):
                        pass
            _wait_scope(server.scope, timeout)
        done = subprocess.run(
            [self.binary, "finish", "--scope", str(server.scope)], capture_output=True, text=True
        )
        if done.returncode != 0:
            problem = f"mcpcassette finish failed (exit {done.returncode}): {done.stderr.strip()}"
            return [Outcome(server.path, None, [problem])]
        processes = json.loads(done.stdout).get("processes", [])
        out = []
        for number, report in enumerate(processes, start=1):
            problems = self._problems(report)
            if len(processes) > 1:
                problems = [f"(server process {number} of {len(processes)}) {p}" for p in problems]
            out.append(Outcome(server.path, report, problems))
        return out

    def _next_report(self) -> Path:
        self._report_dir.mkdir(parents=True, exist_ok=True)
        report = self._report_dir / f"report-{len(self._started) + 1}.json"
        if report.exists():
            report.unlink()
        return report

    def _run_args(self, report: Path, path: Path) -> list[str]:
        argv = ["run", "--mode", self.mode, "--cassette", str(path), "--report", str(report)]
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
        faults = report.get("faults") or {}
        if faults.get("disconnected") is not None and code == faults["disconnected"] and not report.get("misses"):
            # A `disconnect` fault ended the replay as asked.
            code = 0
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
        if faults.get("unused") and self.fail_on_unused:
            rules = faults.get("rules", [])
            listed = "\n".join(
                f"  {rules[i] if isinstance(i, int) and i < len(rules) else f'#{i}'}" for i in faults["unused"]
            )
            problems.append(f"fault rules never fired (--mcp-fail-on-unused):\n{listed}")
        for mismatch in report.get("answer_mismatches", []):
            problems.append(f"client answer unlike the recorded one:\n{mismatch.get('diff', mismatch)}")
        if not problems:
            problems.append(f"mcpcassette run exited {code}")
        return problems


def _check_faults(faults: Any, what: str) -> Any:
    """``faults`` as ``run --faults`` reads it (the rules themselves are
    checked by ``run``, which names the JSON pointer of a bad one)."""
    if isinstance(faults, Mapping):
        if not isinstance(faults.get("faults"), (list, tuple)):
            raise CassetteError(f'{what}: expected a list of fault rules, or {{"seed": N, "faults": [...]}}')
        return {**faults, "faults": [dict(rule) for rule in faults["faults"]]}
    if isinstance(faults, (list, tuple)):
        return [dict(rule) for rule in faults]
    raise CassetteError(
        f'{what}: expected a list of fault rules, or {{"seed": N, "faults": [...]}}, not {type(faults).__name__}'
    )


def _merge_faults(summaries: list[dict]) -> dict:
    """The faults summaries of a server's processes as one."""
    merged: dict = {"rules": [], "fired": [], "fired_not_kept": 0, "unused": [], "hung": [], "disconnected": None}
    if not summaries:
        return merged
    merged["rules"] = list(summaries[0].get("rules", []))
    unused: Optional[set] = None
    for summary in summaries:
        merged["fired"] += summary.get("fired", [])
        merged["fired_not_kept"] += summary.get("fired_not_kept", 0)
        merged["hung"] += summary.get("hung", [])
        if merged["disconnected"] is None:
            merged["disconnected"] = summary.get("disconnected")
        mine = set(summary.get("unused", []))
        unused = mine if unused is None else unused & mine
    merged["unused"] = sorted(unused or ())
    return merged


def _safe(name: str) -> str:
    """A server's name as part of a file name."""
    safe = "".join(c if c.isalnum() or c in "._-" else "_" for c in name).strip("._")
    return safe or "server"


def _scope_reports(scope: Path) -> list[dict]:
    """The reports the processes of a scope wrote so far."""
    if not scope.exists():
        return []
    return [r for p in sorted(scope.glob("*.report.json")) if (r := _read(p)) is not None]


def _running(report: dict) -> bool:
    """Whether the process a report names has not ended (nor died)."""
    if report.get("finished"):
        return False
    try:
        os.kill(int(report["pid"]), 0)
    except (OSError, ValueError, KeyError):
        return False
    return True


def _wait_scope(scope: Path, timeout: float) -> None:
    """Waits up to ``timeout`` seconds for a scope's processes to end."""
    deadline = time.monotonic() + timeout
    while any(_running(r) for r in _scope_reports(scope)) and time.monotonic() < deadline:
        time.sleep(0.02)


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
