#!/usr/bin/env python3
"""Startup cost of mcpcassette builds, side by side (docs/benchmarks.md).

Usage: python3 benches/startup.py [--runs N] BINARY...

For each binary, N times each, in turn (so load on the machine falls on all
alike): `BINARY --version`, and a whole replay session over stdio of the
shipped legacy cassette (initialize, notifications/initialized, one
tools/call, then EOF) — what a test pays per replayed server. Prints the
median and the 90th percentile in milliseconds, and the file size.
"""

import argparse
import os
import statistics
import subprocess
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CASSETTE = ROOT / "cassettes" / "demo-legacy.json"
SESSION = (
    b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25",'
    b'"capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}\n'
    b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n'
    b'{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"message":"hello"}}}\n'
)


def timed(argv, stdin=b""):
    start = time.perf_counter()
    done = subprocess.run(argv, input=stdin, capture_output=True)
    elapsed = (time.perf_counter() - start) * 1000
    if done.returncode != 0:
        raise SystemExit(f"{argv[0]} exited {done.returncode}: {done.stderr.decode()[-500:]}")
    return elapsed


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("binaries", nargs="+")
    options = parser.parse_args()
    cases = {
        "--version": lambda b: timed([b, "--version"]),
        "replay session": lambda b: timed([b, "replay", str(CASSETTE)], SESSION),
    }
    env_note = os.environ.get("MCPCASSETTE_LOG")
    results = {(b, c): [] for b in options.binaries for c in cases}
    for _ in range(options.runs):
        for binary in options.binaries:
            for case, run in cases.items():
                results[(binary, case)].append(run(binary))
    print(f"{options.runs} runs each, interleaved" + (f"; MCPCASSETTE_LOG={env_note}" if env_note else ""))
    print(f"{'binary':<48} {'size':>9} {'case':<15} {'p50 ms':>7} {'p90 ms':>7}")
    for binary in options.binaries:
        size = Path(binary).stat().st_size / 1e6
        for case in cases:
            samples = sorted(results[(binary, case)])
            p50 = statistics.median(samples)
            p90 = samples[int(len(samples) * 0.9) - 1]
            print(f"{binary:<48} {size:>7.1f}MB {case:<15} {p50:>7.2f} {p90:>7.2f}")


if __name__ == "__main__":
    main()
