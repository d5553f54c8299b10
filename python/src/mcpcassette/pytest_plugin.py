"""The pytest plugin: a ``mcp_cassette`` fixture per test, record modes
as pytest options, misses failing the test that caused them.

On as soon as the ``mcpcassette`` package is installed (entry point
``pytest11``); ``-p no:mcpcassette`` turns it off.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Iterator, Optional

import pytest

from . import MODES, Cassette, CassetteError, resolve_mode

_KEY = pytest.StashKey[Cassette]()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("mcpcassette", "record and replay MCP servers (mcpcassette)")
    group.addoption(
        "--mcp-record-mode",
        choices=MODES,
        default=None,
        help="once: replay, record what is missing; new-episodes: also record new requests; "
        "all: re-record; none: replay only (the default when CI is detected, else once). "
        "Overrides MCPCASSETTE_MODE and the tests' markers.",
    )
    group.addoption(
        "--mcp-fail-on-unused",
        action="store_true",
        default=None,
        help="fail a test whose cassette holds interactions it never used",
    )
    group.addoption(
        "--mcp-verify",
        action="store_true",
        default=False,
        help="after each test, re-run its cassette against the live server (mcpcassette verify) "
        "and fail the test on drift",
    )
    parser.addini(
        "mcp_cassette_dir",
        "where cassettes go, relative to the rootdir (default: `cassettes` beside each test module)",
        default=None,
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "mcp_cassette(name=None, *, record_mode=None, fail_on_unused=None, strategy=None, "
        "on_exhausted=None, ignore=(), options=(), faults=None): the cassette of this test and how to "
        "replay it; faults: fault rules (a list, or {\"seed\": N, \"faults\": [...]}) its servers replay with",
    )


@pytest.fixture
def mcp_cassette(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cassette]:
    """The test's cassette. Hand ``mcp_cassette.stdio(command, args)`` (or
    its ``.parameters()`` / ``.fastmcp_transport()``) to a stdio client, or
    ``mcp_cassette.http(url).url`` to a Streamable HTTP client. With
    ``faults=[...]`` (on the marker, or on ``stdio()`` / ``http()``) the
    replay misbehaves as the rules say; ``mcp_cassette.faults()`` /
    ``.faults_fired`` tell what fired."""
    marker = request.node.get_closest_marker("mcp_cassette")
    kwargs = dict(marker.kwargs) if marker else {}
    name = marker.args[0] if marker and marker.args else kwargs.pop("name", None)
    config = request.config
    try:
        mode, source = resolve_mode(config.getoption("--mcp-record-mode"), kwargs.get("record_mode"))
    except CassetteError as error:
        pytest.fail(str(error), pytrace=False)
    fail_on_unused = config.getoption("--mcp-fail-on-unused")
    if fail_on_unused is None:
        fail_on_unused = bool(kwargs.get("fail_on_unused", False))
    try:
        cassette = Cassette(
            _cassette_path(request, name),
            mode,
            mode_source=source,
            fail_on_unused=fail_on_unused,
            options=_options(kwargs),
            report_dir=tmp_path_factory.mktemp("mcpcassette"),
            faults=kwargs.get("faults"),
        )
    except CassetteError as error:
        pytest.fail(str(error), pytrace=False)
    request.node.stash[_KEY] = cassette
    yield cassette
    # Servers still running when the test returned (a client held by
    # another fixture) have ended now: their outcome fails the teardown.
    cassette.stop_http()
    if request.node.stash.get(_DEFERRED, False):
        failure = cassette.failure(timeout=5.0, stop=True)
        if failure:
            pytest.fail(failure + _PYTEST_FIXES, pytrace=False)


_DEFERRED = pytest.StashKey[bool]()

_PYTEST_FIXES = (
    "\n\nFrom pytest: `pytest --mcp-record-mode=new-episodes` records what is missing, "
    "`--mcp-record-mode=all` re-records (or set MCPCASSETTE_MODE)."
)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Iterator[None]:
    """Fails the test whose servers missed, with the miss report, when the
    test function returns (or adds the report to its own failure)."""
    raised: Optional[BaseException] = None
    try:
        result = yield
    except BaseException as error:  # noqa: BLE001 - re-raised below
        raised = error
        result = None
    if isinstance(raised, CassetteError):
        pytest.fail(str(raised), pytrace=False)
    cassette = item.stash.get(_KEY, None)
    if cassette is None:
        if raised is not None:
            raise raised
        return result
    # HTTP servers are stopped now, so that their cassettes are written and
    # their reports final; stdio servers end when their client closes.
    cassette.stop_http()
    # Give a client that is closing a moment (finished reports are read at
    # once); what is still running is left to the fixture's teardown.
    failure = cassette.failure(timeout=1.0)
    if cassette.unfinished():
        item.stash[_DEFERRED] = True
        failure = None
    if failure is None and raised is None and item.config.getoption("--mcp-verify"):
        failure = cassette.verify()
    if failure is not None:
        failure += _PYTEST_FIXES
        if raised is not None and not isinstance(raised, Exception):
            raise raised
        suffix = f"\n\n(the test itself raised {type(raised).__name__}: {raised})" if raised else ""
        pytest.fail(failure + suffix, pytrace=False)
    if raised is not None:
        raise raised
    return result


def _cassette_path(request: pytest.FixtureRequest, name: Optional[str]) -> Path:
    """``<dir>/<module>/<test>.json``, where ``<dir>`` is the
    ``mcp_cassette_dir`` ini option (relative to the rootdir) or
    ``cassettes`` beside the test module; a marker's name replaces
    ``<test>`` (a name with a slash, or an absolute one, is the path)."""
    module = Path(str(request.node.path))
    configured = request.config.getini("mcp_cassette_dir")
    base = Path(request.config.rootpath) / configured if configured else module.parent / "cassettes"
    if name:
        named = Path(name if name.endswith(".json") else name + ".json")
        if named.is_absolute():
            return named
        if len(named.parts) > 1:
            return base / named
        return base / module.stem / named
    return base / module.stem / (_file_name(_test_name(request.node)) + ".json")


def _test_name(node: pytest.Item) -> str:
    """The test's name with its parameters (``test_x[a-b]``), but without
    the anyio plugin's backend when that is its only parameter: one async
    test, one cassette."""
    callspec = getattr(node, "callspec", None)
    if callspec is not None and set(callspec.params) == {"anyio_backend"}:
        return node.originalname
    return node.name


def _file_name(test: str) -> str:
    """A test's name (``test_x[a-b]``) as a safe file name."""
    return re.sub(r"[^A-Za-z0-9._\-\[\]]+", "_", test).strip("._") or "test"


def _options(kwargs: dict) -> list[str]:
    """The marker's replay options as ``run`` flags."""
    out: list[str] = []
    for key, flag in (("strategy", "--strategy"), ("on_exhausted", "--on-exhausted")):
        if kwargs.get(key):
            out += [flag, str(kwargs[key])]
    ignore = kwargs.get("ignore", ())
    for selector in [ignore] if isinstance(ignore, str) else ignore:
        out += ["--ignore", selector]
    out += [str(option) for option in kwargs.get("options", ())]
    return out
