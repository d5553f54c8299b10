//! The TypeScript SDK's client sees every progress notification a replay
//! sends, on every run. `@modelcontextprotocol/sdk` 1.32 settles a response
//! at once but dispatches notifications in microtasks, and drops progress
//! for a request already answered: progress that reaches it in the same
//! read as the response is lost. Replay over stdio therefore holds such a
//! response back until the client has read the notifications (see
//! `mcpcassette::replay::StdioConfig`); these tests check it with the real
//! client, 50 replays in a row, each of which must see every event.
//!
//! The cassette is recorded here, through `mcpcassette record`, from a
//! small server written with the same SDK
//! (`tests/peers/tsdk/progress_server.mjs`), by the client script
//! (`tests/peers/tsdk/progress_client.mjs`) that the replays then run.
//!
//! The SDK is not vendored: `.ci/run` installs it with `npm ci` and runs
//! these tests with `MCPCASSETTE_NODE_MODULES` naming that `node_modules`
//! (`node` must be on PATH). Without the variable they fail rather than
//! pass vacuously.

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::support;
use crate::support::pinned::{SDK, node_modules};

/// Replays in a row; each must see every progress event.
const RUNS: usize = 50;

/// Progress events per call.
const STEPS: u64 = 5;

/// How long one client script may take (50 runs take a few seconds).
const TIMEOUT: Duration = Duration::from_secs(180);

fn script(name: &str) -> String {
    support::root()
        .join("tests/peers/tsdk")
        .join(name)
        .display()
        .to_string()
}

fn mcpcassette_path() -> String {
    env!("CARGO_BIN_EXE_mcpcassette").to_owned()
}

/// Runs the client script `runs` times against `target` (`["--url", URL]`
/// or `["--", CMD...]`) and returns what each run saw.
fn client(modules: &Path, runs: usize, target: &[String]) -> Vec<Value> {
    let mut command = Command::new("node");
    command
        .arg(script("progress_client.mjs"))
        .arg("--node-modules")
        .arg(modules)
        .args(["--runs", &runs.to_string(), "--steps", &STEPS.to_string()])
        .args(target)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = command.spawn().expect("node on PATH");
    let mut stdout = child.stdout.take().unwrap();
    let mut stderr = child.stderr.take().unwrap();
    let out = thread::spawn(move || {
        let mut text = String::new();
        stdout.read_to_string(&mut text).map(|_| text)
    });
    let err = thread::spawn(move || {
        let mut text = String::new();
        stderr.read_to_string(&mut text).map(|_| text)
    });
    let status = wait(&mut child, TIMEOUT);
    let out = out.join().unwrap().unwrap();
    let err = err.join().unwrap().unwrap();
    assert!(
        status.is_some_and(|s| s.success()),
        "the client script failed ({status:?}):\n{err}"
    );
    let report: Value = serde_json::from_str(out.trim())
        .unwrap_or_else(|e| panic!("client output is not JSON ({e}): {out}\n{err}"));
    let runs_seen = report["runs"].as_array().unwrap().clone();
    assert_eq!(runs_seen.len(), runs, "{report}");
    runs_seen
}

/// Waits for `child` at most `limit`, killing it after that.
fn wait(child: &mut Child, limit: Duration) -> Option<std::process::ExitStatus> {
    let deadline = Instant::now() + limit;
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return Some(status);
        }
        if Instant::now() >= deadline {
            let _ = child.kill();
            let _ = child.wait();
            return None;
        }
        thread::sleep(Duration::from_millis(20));
    }
}

/// Every run saw progress 1..=STEPS, in order, and the tool's answer.
fn assert_every_run_saw_every_step(runs: &[Value], how: &str) {
    let expected: Vec<u64> = (1..=STEPS).collect();
    let short: Vec<(usize, usize)> = runs
        .iter()
        .enumerate()
        .filter_map(|(n, run)| {
            let seen: Vec<u64> = serde_json::from_value(run["progress"].clone()).unwrap();
            (seen != expected).then_some((n, seen.len()))
        })
        .collect();
    assert!(
        short.is_empty(),
        "{how}: {} of {} runs missed progress (run, events seen): {short:?}",
        short.len(),
        runs.len()
    );
    for run in runs {
        assert_eq!(run["result"], format!("counted {STEPS}"), "{how}: {run}");
    }
}

/// Records the TS server through `mcpcassette record`, driven by the TS
/// client, and checks what was recorded: the call with its progress
/// `during`, timed.
fn record(modules: &Path, dir: &Path) -> PathBuf {
    let cassette = dir.join("tsdk-progress.json");
    let target = [
        "--".to_owned(),
        mcpcassette_path(),
        "record".to_owned(),
        "--cassette".to_owned(),
        cassette.display().to_string(),
        "--".to_owned(),
        "node".to_owned(),
        script("progress_server.mjs"),
        "--node-modules".to_owned(),
        modules.display().to_string(),
    ];
    // Live, the client may itself miss progress: a loaded machine can
    // stall it long enough for the last notification and the response to
    // share a read (the very bug replay must not have). What was recorded
    // is checked instead.
    let live = client(modules, 1, &target);
    assert_eq!(live[0]["result"], format!("counted {STEPS}"), "{live:?}");
    let recorded: Value =
        serde_json::from_str(&std::fs::read_to_string(&cassette).unwrap()).unwrap();
    let call = recorded["interactions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["request"]["method"] == "tools/call")
        .expect("the tools/call was recorded");
    let during = call["during"].as_array().unwrap();
    assert_eq!(during.len(), STEPS as usize, "{call}");
    assert!(
        during
            .iter()
            .all(|e| e["notification"]["method"] == "notifications/progress")
    );
    assert_eq!(
        call["delays_ms"].as_array().map(Vec::len),
        Some(STEPS as usize + 1),
        "stdio recordings time the messages during and the response: {call}"
    );
    cassette
}

#[test]
#[ignore = "needs @modelcontextprotocol/sdk from npm (MCPCASSETTE_NODE_MODULES); .ci/run installs it and runs ignored tests"]
fn every_stdio_replay_sees_every_progress_event() {
    let modules = node_modules(&[SDK]);
    let dir = tempfile::tempdir().unwrap();
    let cassette = record(&modules, dir.path());
    let replay = |extra: &[&str]| {
        let mut target = vec!["--".to_owned(), mcpcassette_path(), "replay".to_owned()];
        target.extend(extra.iter().map(|s| (*s).to_owned()));
        target.push(cassette.display().to_string());
        target
    };
    let runs = client(&modules, RUNS, &replay(&[]));
    assert_every_run_saw_every_step(&runs, "stdio replay");
    let paced = client(&modules, 3, &replay(&["--pace", "recorded"]));
    assert_every_run_saw_every_step(&paced, "stdio replay, --pace recorded");
}

#[test]
#[ignore = "needs @modelcontextprotocol/sdk from npm (MCPCASSETTE_NODE_MODULES); .ci/run installs it and runs ignored tests"]
fn every_http_replay_sees_every_progress_event() {
    let modules = node_modules(&[SDK]);
    let dir = tempfile::tempdir().unwrap();
    let cassette = record(&modules, dir.path());
    // One server, a new session per run; the call is answered again and
    // again (the test is about delivery, not about sessions).
    let mut server = support::mcpcassette()
        .args([
            "replay",
            "--listen",
            "127.0.0.1:0",
            "--on-exhausted",
            "repeat-last",
        ])
        .arg(&cassette)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let mut url = String::new();
    BufReader::new(server.stdout.take().unwrap())
        .read_line(&mut url)
        .unwrap();
    let url = url.trim().to_owned();
    assert!(url.starts_with("http://127.0.0.1:"), "{url}");
    let runs = client(&modules, RUNS, &["--url".to_owned(), url]);
    let _ = server.kill();
    let _ = server.wait();
    assert_every_run_saw_every_step(&runs, "HTTP replay");
}
