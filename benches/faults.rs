//! Replay throughput with a faults overlay whose rules match nothing,
//! against replay without one, measured in the same run: the overlay must
//! cost no more than 5 % (docs/faults.md).
//!
//! Each round replays the same requests (read from a file, answered as fast
//! as replay can) once each way, in turn, so the machine's drift hits both;
//! the figure is the median of the per-round ratios. Run it with
//! `cargo bench --bench faults`; `-- --quick` is CI's smoke test, whose
//! figures mean nothing.

// Shared with the other benches, which use the rest of it.
#[allow(dead_code)]
mod common;

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::json;

/// The least throughput with idle faults ÷ without that passes.
const LEAST: f64 = 0.95;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if !args.iter().any(|a| a == "--bench") {
        println!("faults: skipped; run it with `cargo bench --bench faults`");
        return;
    }
    let quick = args.iter().any(|a| a == "--quick");
    if let Err(e) = run(quick) {
        eprintln!("faults bench failed: {e}");
        std::process::exit(1);
    }
}

fn run(quick: bool) -> io::Result<()> {
    let (calls, rounds) = if quick { (2_000, 1) } else { (200_000, 15) };
    eprintln!("[faults] building binaries…");
    let (mcpcassette, _) = common::build("demo_server")?;
    let scratch = common::Scratch::new()?;
    let cassette = scratch.file("cassette", "json");
    let requests = scratch.file("requests", "jsonl");
    let faults = scratch.file("faults", "json");
    write_inputs(&cassette, &requests, &faults, calls)?;
    let replay = |with_faults: bool| -> io::Result<Duration> {
        let mut command = Command::new(&mcpcassette);
        command.arg("replay").arg(&cassette);
        if with_faults {
            command.arg("--faults").arg(&faults);
        }
        let started = Instant::now();
        let status = command
            .args(["--on-exhausted", "repeat-last"])
            .stdin(File::open(&requests)?)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()?;
        if !status.success() {
            return Err(io::Error::other(format!("replay failed: {status}")));
        }
        Ok(started.elapsed())
    };
    // A warm-up each way (page cache, the binary mapped).
    replay(false)?;
    replay(true)?;
    let mut ratios = Vec::new();
    let (mut plain, mut idle) = (Vec::new(), Vec::new());
    for round in 0..rounds {
        eprintln!("[faults] round {} of {rounds}", round + 1);
        let without = replay(false)?;
        let with = replay(true)?;
        // Throughput ratio: requests per second with ÷ without.
        ratios.push(without.as_secs_f64() / with.as_secs_f64());
        plain.push(without);
        idle.push(with);
    }
    ratios.sort_by(f64::total_cmp);
    plain.sort();
    idle.sort();
    let ratio = common::percentile(&ratios, 50.0);
    let rate = |d: Duration| calls as f64 / d.as_secs_f64();
    println!("{}", common::machine());
    println!("| replay of {calls} calls | median wall | requests/s |");
    println!("|---|---|---|");
    let median = |v: &[Duration]| common::percentile(v, 50.0);
    println!(
        "| without faults | {:.3} s | {:.0} |",
        median(&plain).as_secs_f64(),
        rate(median(&plain))
    );
    println!(
        "| with 8 rules that match nothing | {:.3} s | {:.0} |",
        median(&idle).as_secs_f64(),
        rate(median(&idle))
    );
    let verdict = if ratio >= LEAST { "PASS" } else { "FAIL" };
    println!(
        "\nthroughput with idle faults ÷ without: {ratio:.3} (median of {rounds} paired rounds; target ≥ {LEAST}): {verdict}"
    );
    if !quick && ratio < LEAST {
        return Err(io::Error::other("idle faults cost more than 5 %"));
    }
    Ok(())
}

/// A cassette of `calls` distinct `tools/call`s, the requests that ask
/// each once, and a faults file none of whose rules matches them.
fn write_inputs(cassette: &Path, requests: &Path, faults: &Path, calls: u64) -> io::Result<()> {
    let mut file = BufWriter::new(File::create(cassette)?);
    write!(
        file,
        r#"{{"format_version": 1, "recorded_at": "2026-01-01T00:00:00Z",
"transport": {{"kind": "stdio", "command": ["server"]}},
"protocol": {{"era": "legacy", "version": "2025-11-25"}},
"interactions": [
{{"request": {{"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {{"protocolVersion": "2025-11-25", "capabilities": {{}}, "clientInfo": {{"name": "bench", "version": "1"}}}}}},
 "response": {{"jsonrpc": "2.0", "id": 0, "result": {{"protocolVersion": "2025-11-25", "capabilities": {{"tools": {{}}}}, "serverInfo": {{"name": "bench", "version": "1"}}}}}}}}"#
    )?;
    let mut lines = BufWriter::new(File::create(requests)?);
    writeln!(
        lines,
        "{}",
        json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}}})
    )?;
    for i in 1..=calls {
        let request = json!({"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": {"name": "echo", "arguments": {"n": i}}});
        let response = json!({"jsonrpc": "2.0", "id": i, "result": {"content": [{"type": "text", "text": format!("echo {i}")}]}});
        write!(
            file,
            ",\n{}",
            json!({"request": request, "response": response})
        )?;
        writeln!(lines, "{request}")?;
    }
    writeln!(file, "\n]}}")?;
    file.flush()?;
    lines.flush()?;
    let idle = json!({"seed": 7, "faults": [
        {"method": "resources/read", "error": {"code": -32000, "message": "x"}},
        {"name": "search", "tool_error": "x"},
        {"method": "prompts/get", "delay": 100},
        {"name": "slow", "hang": true},
        {"method": "resources/read", "disconnect": true},
        {"method": "tools/list", "nth": 5, "malformed": "truncated"},
        {"name": "search", "probability": 0.5, "drop_notifications": true},
        {"method": "resources/list", "mutate": [{"op": "remove", "path": "/resources/0"}]},
    ]});
    std::fs::write(faults, serde_json::to_vec_pretty(&idle)?)
}
