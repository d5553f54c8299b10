#!/usr/bin/env bash
# The npm packages and the Vitest helper, tested as a user gets them:
#
#   bash .ci/js.sh target/debug/mcpcassette
#
# copies BINARY into npm/linux-x64/bin/, packs @mcpcassette/linux-x64 and
# mcpcassette into .ci/work/npm-packs/, installs both tarballs with pinned
# vitest and @modelcontextprotocol/sdk into a fresh project in
# .ci/work/js-scratch, copies tests/js there and runs it. The example
# servers come from BINARY's directory (examples/demo_server,
# examples/rmcp_http_server). Exits non-zero on any failure.
set -euo pipefail

VITEST_VERSION=4.1.12          # the current 4.x line runs on Node 20 (5.x needs Node 22)
VITE_VERSION=8.3.8             # vitest's peer, pinned as in .ci/package.json
SDK_VERSION=1.32.2             # as .ci/package.json
TYPESCRIPT_VERSION=6.0.3       # type-checks the tests against index.d.ts / vitest.d.ts (7.x is the native port)
TYPES_NODE_VERSION=20.19.43    # the Node the suite runs on
ZOD_VERSION=4.6.7              # for the README example's server (the SDK's peer)

if [ $# -ne 1 ]; then
    echo "usage: bash .ci/js.sh BINARY   (e.g. bash .ci/js.sh target/debug/mcpcassette)" >&2
    exit 2
fi

ROOT=$(cd "$(dirname "$0")/.." && pwd)
BINARY=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
BIN_DIR=$(dirname "$BINARY")
DEMO_SERVER=$BIN_DIR/examples/demo_server
HTTP_SERVER=$BIN_DIR/examples/rmcp_http_server
NOTES_SERVER=$BIN_DIR/examples/notes_server
for f in "$BINARY" "$DEMO_SERVER" "$HTTP_SERVER" "$NOTES_SERVER"; do
    if [ ! -x "$f" ]; then
        echo "js.sh: $f is missing or not executable (cargo build --bins --examples)" >&2
        exit 2
    fi
done

WORK=$ROOT/.ci/work
PACKS=$WORK/npm-packs
SCRATCH=$WORK/js-scratch
start=$(date +%s)
step() { echo "js.sh: [$(( $(date +%s) - start ))s] $*"; }

node_major=$(node -p 'process.versions.node.split(".")[0]')
if [ "$node_major" -lt 20 ]; then
    echo "js.sh: Node >= 20 is needed (found $(node --version))" >&2
    exit 2
fi

step "copying $BINARY into npm/linux-x64/bin/"
rm -rf "$ROOT/npm/linux-x64/bin"
mkdir -p "$ROOT/npm/linux-x64/bin"
# Without debug info (a debug build is ~170 MB of it): the same program,
# packed and unpacked in seconds instead of half a minute.
if command -v strip >/dev/null 2>&1; then
    strip --strip-debug -o "$ROOT/npm/linux-x64/bin/mcpcassette" "$BINARY"
else
    cp "$BINARY" "$ROOT/npm/linux-x64/bin/mcpcassette"
fi
chmod 755 "$ROOT/npm/linux-x64/bin/mcpcassette"
"$ROOT/npm/linux-x64/bin/mcpcassette" --version >/dev/null

step "packing into $PACKS"
rm -rf "$PACKS"
mkdir -p "$PACKS"
(cd "$ROOT/npm/linux-x64" && npm pack --silent --pack-destination "$PACKS" >/dev/null)
(cd "$ROOT/npm/mcpcassette" && npm pack --silent --pack-destination "$PACKS" >/dev/null)
PLATFORM_TGZ=$PACKS/mcpcassette-linux-x64-0.1.0.tgz
MAIN_TGZ=$PACKS/mcpcassette-0.1.0.tgz
for f in "$PLATFORM_TGZ" "$MAIN_TGZ"; do
    [ -f "$f" ] || { echo "js.sh: npm pack did not write $f" >&2; ls -la "$PACKS" >&2; exit 1; }
done
# The tarball holds what a user gets: the binary (executable), no sources of the tests.
platform_files=$(tar tvzf "$PLATFORM_TGZ")
grep -q -- '^-rwxr-xr-x .* package/bin/mcpcassette$' <<<"$platform_files" \
    || { echo "js.sh: $PLATFORM_TGZ lacks an executable package/bin/mcpcassette" >&2; tar tvzf "$PLATFORM_TGZ" >&2; exit 1; }
main_files=$(tar tzf "$MAIN_TGZ" | sort | tr '\n' ' ')
expected="package/README.md package/bin/mcpcassette.js package/index.d.ts package/index.js package/package.json package/vitest.d.ts package/vitest.js "
if [ "$main_files" != "$expected" ]; then
    echo "js.sh: $MAIN_TGZ holds: $main_files; expected: $expected" >&2
    exit 1
fi

step "creating $SCRATCH"
rm -rf "$SCRATCH"
mkdir -p "$SCRATCH"
cat >"$SCRATCH/package.json" <<EOF
{
  "name": "mcpcassette-js-scratch",
  "private": true,
  "type": "module",
  "devDependencies": {
    "@mcpcassette/linux-x64": "file:$PLATFORM_TGZ",
    "mcpcassette": "file:$MAIN_TGZ",
    "@modelcontextprotocol/sdk": "$SDK_VERSION",
    "@types/node": "$TYPES_NODE_VERSION",
    "typescript": "$TYPESCRIPT_VERSION",
    "vite": "$VITE_VERSION",
    "vitest": "$VITEST_VERSION",
    "zod": "$ZOD_VERSION"
  },
  "overrides": {
    "@mcpcassette/linux-x64": "file:$PLATFORM_TGZ",
    "vite": "$VITE_VERSION"
  }
}
EOF
step "npm install (tarballs, vitest $VITEST_VERSION, @modelcontextprotocol/sdk $SDK_VERSION, typescript $TYPESCRIPT_VERSION)"
(cd "$SCRATCH" && npm install --prefer-offline --no-audit --no-fund --loglevel=error)
# The versions the suite runs with, as installed.
(cd "$SCRATCH" && node -e '
  const want = {vitest: process.argv[1], "@modelcontextprotocol/sdk": process.argv[2], typescript: process.argv[3]};
  for (const [name, version] of Object.entries(want)) {
    const got = require(`./node_modules/${name}/package.json`).version;
    if (got !== version) { console.error(`js.sh: ${name} is ${got}, expected ${version}`); process.exit(1); }
  }' "$VITEST_VERSION" "$SDK_VERSION" "$TYPESCRIPT_VERSION")

step "copying tests/js (and README.md and docs/faults.md, whose examples the suite runs as written)"
cp -R "$ROOT/tests/js/." "$SCRATCH/"
cp "$ROOT/README.md" "$SCRATCH/README.repo.md"
cp "$ROOT/docs/faults.md" "$SCRATCH/faults.repo.md"

step "type-checking the tests (tsc --noEmit)"
(cd "$SCRATCH" && node node_modules/typescript/bin/tsc --noEmit -p tsconfig.json)

step "running the suite (vitest $VITEST_VERSION, Node $(node --version))"
(
    cd "$SCRATCH"
    unset MCPCASSETTE_BIN MCPCASSETTE_MODE
    export MCPCASSETTE_DEMO_SERVER=$DEMO_SERVER MCPCASSETTE_HTTP_SERVER=$HTTP_SERVER MCPCASSETTE_NOTES_SERVER=$NOTES_SERVER
    node node_modules/vitest/vitest.mjs run
)
step "passed"
