"""Record and replay Model Context Protocol (MCP) traffic from Python tests.

The wheel carries the ``mcpcassette`` binary (on PATH once installed) and
this small module: :func:`find_binary`, :func:`resolve_mode`, and
:class:`Cassette`, which the pytest plugin (``mcpcassette.pytest_plugin``,
on as soon as the package is installed) hands to tests as the
``mcp_cassette`` fixture.
"""

from __future__ import annotations

import os
import shutil
import sys
import sysconfig
from pathlib import Path
from typing import Mapping, Optional

from .cassette import Cassette, Outcome, StdioServer, HttpServer, CassetteError

__all__ = [
    "Cassette",
    "CassetteError",
    "HttpServer",
    "MODES",
    "Outcome",
    "StdioServer",
    "ci_detected",
    "find_binary",
    "resolve_mode",
]

#: The record modes of ``mcpcassette run`` a test can ask for.
MODES = ("once", "new-episodes", "all", "none")


def find_binary() -> str:
    """The ``mcpcassette`` binary: ``MCPCASSETTE_BIN`` when set, else the
    one this package installed (beside this interpreter's scripts), else the
    first on PATH."""
    override = os.environ.get("MCPCASSETTE_BIN")
    if override:
        if not Path(override).is_file():
            raise CassetteError(f"MCPCASSETTE_BIN={override}: no such file")
        return override
    name = "mcpcassette.exe" if sys.platform == "win32" else "mcpcassette"
    for scheme_dir in (sysconfig.get_path("scripts"), str(Path(sys.executable).parent)):
        candidate = Path(scheme_dir) / name
        if candidate.is_file():
            return str(candidate)
    found = shutil.which("mcpcassette")
    if found:
        return found
    raise CassetteError(
        "the mcpcassette binary is not installed: `pip install mcpcassette` puts it "
        "beside this interpreter; or set MCPCASSETTE_BIN to its path"
    )


def ci_detected(environ: Optional[Mapping[str, str]] = None) -> bool:
    """Whether the environment says CI, as ``mcpcassette run`` reads it:
    ``CI`` set to anything but empty, ``0`` or ``false`` (any case), or
    ``TF_BUILD`` set."""
    environ = os.environ if environ is None else environ
    ci = environ.get("CI")
    if ci is not None and ci.strip().lower() not in ("", "0", "false"):
        return True
    return "TF_BUILD" in environ


def resolve_mode(
    explicit: Optional[str] = None,
    marker: Optional[str] = None,
    environ: Optional[Mapping[str, str]] = None,
) -> tuple[str, str]:
    """The record mode and where it came from: ``explicit`` (a command-line
    option), then ``MCPCASSETTE_MODE``, then ``marker`` (the test's own
    default), then ``none`` in CI and ``once`` elsewhere.

    SDK clients start stdio servers with a reduced environment, so the
    mode is resolved here, in the test process, and passed on as a flag.
    """
    environ = os.environ if environ is None else environ
    from_env = environ.get("MCPCASSETTE_MODE")
    for mode, source in (
        (explicit, "--mcp-record-mode"),
        (from_env, "MCPCASSETTE_MODE"),
        (marker, "the test's mcp_cassette marker"),
    ):
        if mode:
            if mode not in MODES:
                raise CassetteError(
                    f"{source}={mode}: not a record mode (expected one of {', '.join(MODES)})"
                )
            return mode, source
    if ci_detected(environ):
        return "none", "CI detected"
    return "once", "default outside CI"
