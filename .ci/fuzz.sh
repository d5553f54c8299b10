#!/usr/bin/env bash
# Fuzz smoke: builds every cargo-fuzz target in fuzz/ and runs each for a
# few seconds from the seed corpora (fuzz/seed.py). A crash, a failed
# property or a leak fails the run; the reproducer is left in
# fuzz/artifacts/TARGET/ (run it with `cargo fuzz run TARGET FILE`).
#
# Usage: bash .ci/fuzz.sh [SECONDS_PER_TARGET]   (default 20)
#
# Needs cargo-fuzz (installed into .ci/work/ when missing) and a compiler
# that takes -Z flags: the nightly toolchain when rustup has one, else the
# stable one with RUSTC_BOOTSTRAP=1 (libFuzzer needs the sanitizer flags).
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
seconds="${1:-20}"
work="$PWD/.ci/work"

if ! command -v cargo-fuzz >/dev/null; then
    if [ ! -x "$work/cargo-fuzz/bin/cargo-fuzz" ]; then
        cargo install cargo-fuzz --version 0.13.2 --locked --root "$work/cargo-fuzz"
    fi
    export PATH="$work/cargo-fuzz/bin:$PATH"
fi

if rustup toolchain list 2>/dev/null | grep -q '^nightly'; then
    fuzz=(cargo +nightly fuzz)
    echo "$(cargo fuzz --version), $(rustc +nightly --version)"
else
    export RUSTC_BOOTSTRAP=1
    fuzz=(cargo fuzz)
    echo "$(cargo fuzz --version), $(rustc --version) with RUSTC_BOOTSTRAP=1"
fi

corpus="$work/fuzz-corpus"
rm -rf "$corpus"
python3 fuzz/seed.py "$corpus"

"${fuzz[@]}" build -O
log="$(mktemp)"
for target in $("${fuzz[@]}" list); do
    echo "--- $target: ${seconds}s"
    mkdir -p "$corpus/$target"
    status=0
    "${fuzz[@]}" run -O "$target" "$corpus/$target" -- \
        -max_total_time="$seconds" -rss_limit_mb=2048 -print_final_stats=1 >"$log" 2>&1 || status=$?
    grep -E '^(stat::number_of_executed_units|stat::peak_rss_mb)' "$log" || true
    if [ "$status" -ne 0 ]; then
        tail -n 60 "$log"
        echo "error: fuzz target $target failed (exit status $status); the input is in fuzz/artifacts/$target/" >&2
        exit "$status"
    fi
done
rm -f "$log"
