//! `verify` and `check` of a cassette that holds several server processes
//! of one test, recorded through `run --scope` (docs/processes.md).
//!
//! `verify` starts the recorded server once per recorded process, one after
//! another, and drives each with its process's client side, so state the
//! server keeps outside its process (examples/notes_server.rs keeps notes
//! in the file named on its command line) carries over as it did while
//! recording; drift is reported by process. `check` judges what concerns
//! one session within its process, and warns about processes out of order
//! (MC308).

use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::{Value, json};

use crate::support::notes::{call, finish_scope, notes_server, run_scoped, started};
use crate::support::peer::Peer;
use crate::support::{demo_server_path, initialize_demo, mcpcassette};

/// A recording of the notes server through `run --scope`, the way a
/// test-runner integration starts it: one command line for every process.
/// The server runs behind a script that logs each start, so a test can
/// count the servers `verify` started.
struct Notes {
    dir: tempfile::TempDir,
    cassette: PathBuf,
    /// The notes file, the server's argument: recorded, so `verify` uses
    /// it too. Fresh for each test (its own temporary folder).
    notes: PathBuf,
    /// One line per server start.
    starts: PathBuf,
    server: PathBuf,
}

impl Notes {
    fn new() -> Notes {
        let dir = tempfile::tempdir().unwrap();
        let starts = dir.path().join("starts.log");
        let server = dir.path().join("notes-server.sh");
        std::fs::write(
            &server,
            format!(
                "#!/bin/sh\necho started >> '{}'\nexec '{}' \"$@\"\n",
                starts.display(),
                notes_server().display()
            ),
        )
        .unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&server, std::fs::Permissions::from_mode(0o755)).unwrap();
        Notes {
            cassette: dir.path().join("cassettes/test.json"),
            notes: dir.path().join("notes.txt"),
            starts,
            server,
            dir,
        }
    }

    /// Records one test: each of `calls` in a server process of its own,
    /// one after another (langchain-mcp-adapters' way); returns the
    /// answers.
    fn record(&self, calls: &[(&str, Value)]) -> Vec<String> {
        let scope = self.dir.path().join("scope");
        let answers = calls
            .iter()
            .map(|(tool, arguments)| {
                let command = run_scoped(&self.cassette, &scope, &self.server, &self.notes);
                let mut peer = started(command);
                let answer = call(&mut peer, tool, arguments.clone());
                let (status, stderr) = peer.finish();
                assert!(status.success(), "{stderr}");
                answer
            })
            .collect();
        finish_scope(&scope);
        answers
    }

    /// The usual test: recall, remember, recall, each in a process of its
    /// own, so each process's answer depends on the one before.
    fn record_three(&self) {
        let answers = self.record(&[
            ("recall", json!({})),
            ("remember", json!({"note": "alpha"})),
            ("recall", json!({})),
        ]);
        assert_eq!(answers, ["nothing yet", "remembered 1 note(s)", "alpha"]);
        assert_eq!(
            processes(&self.recorded()),
            [0, 0, 0, 1, 1, 1, 2, 2, 2],
            "each process: initialize, initialized, its call"
        );
    }

    /// Leaves the server's state as it was when recording began (none),
    /// and forgets the starts so far.
    fn fresh_state(&self) {
        let _ = std::fs::remove_file(&self.notes);
        let _ = std::fs::remove_file(&self.starts);
    }

    fn starts(&self) -> usize {
        std::fs::read_to_string(&self.starts)
            .unwrap_or_default()
            .lines()
            .count()
    }

    fn recorded(&self) -> Value {
        read_json(&self.cassette)
    }

    fn edit(&self, edit: impl FnOnce(&mut Value)) {
        let mut cassette = self.recorded();
        edit(&mut cassette);
        std::fs::write(
            &self.cassette,
            serde_json::to_string_pretty(&cassette).unwrap(),
        )
        .unwrap();
    }

    fn verify(&self, args: &[&str]) -> Output {
        mcpcassette()
            .arg("verify")
            .args(args)
            .arg(&self.cassette)
            .env("MCPCASSETTE_UPDATE", "new")
            .output()
            .unwrap()
    }
}

/// `mcpcassette finish --scope DIR`, which must succeed.
fn read_json(path: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

/// The `process` of each interaction (absent: 0).
fn processes(cassette: &Value) -> Vec<u64> {
    cassette["interactions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i.get("process").and_then(Value::as_u64).unwrap_or(0))
        .collect()
}

/// The text of the `tools/call` answer of process `process`.
fn call_text(cassette: &mut Value, process: u64) -> &mut Value {
    let call = cassette["interactions"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .find(|i| {
            i.get("process").and_then(Value::as_u64).unwrap_or(0) == process
                && i["request"]["method"] == "tools/call"
        })
        .unwrap();
    &mut call["response"]["result"]["content"][0]["text"]
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// Whether a diff in `text` has a line signed `sign` that holds `what`.
fn diff_line(text: &str, sign: char, what: &str) -> bool {
    text.lines()
        .any(|line| line.starts_with(sign) && line.contains(what))
}

fn both(output: &Output) -> String {
    format!(
        "{}\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

#[test]
fn verify_drives_one_live_server_per_recorded_process_in_order_without_drift() {
    let notes = Notes::new();
    notes.record_three();
    notes.fresh_state();

    let output = notes.verify(&["--json"]);
    assert_eq!(output.status.code(), Some(0), "{}", both(&output));
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(report["drift"], false, "{report:#}");
    let reported: Vec<u64> = (report["report"]["interactions"].as_array().unwrap())
        .iter()
        .map(|i| i.get("process").and_then(Value::as_u64).unwrap_or(0))
        .collect();
    assert_eq!(reported, [0, 0, 0, 1, 1, 1, 2, 2, 2]);
    assert_eq!(notes.starts(), 3, "a live server per recorded process");
    assert!(
        String::from_utf8_lossy(&output.stderr).contains("3 server processes"),
        "{}",
        both(&output)
    );
    // The live state ended as the recorded one did.
    assert_eq!(std::fs::read_to_string(&notes.notes).unwrap(), "alpha\n");
}

#[test]
fn verify_names_the_process_of_a_changed_answer_and_the_pending_cassette_keeps_the_processes() {
    let notes = Notes::new();
    notes.record_three();
    let accepted = notes.recorded();
    notes.edit(|cassette| *call_text(cassette, 1) = json!("remembered 7 note(s)"));
    notes.fresh_state();

    let output = notes.verify(&[]);
    assert_eq!(output.status.code(), Some(1), "{}", both(&output));
    let text = stdout(&output);
    assert!(
        text.contains("process 1, interaction 5 · tools/call remember · changed"),
        "{text}"
    );
    assert!(diff_line(&text, '-', "\"remembered 7 note(s)\""), "{text}");
    assert!(diff_line(&text, '+', "\"remembered 1 note(s)\""), "{text}");
    assert!(
        !text.contains("process 0,") && !text.contains("process 2,"),
        "only process 1 drifted: {text}"
    );
    assert!(text.contains("8 same, 1 changed, 0 missing"), "{text}");

    // The live version, pending for review, is filed by process as the
    // recording was; accepting it restores the recording.
    let pending = notes.cassette.with_file_name("test.json.new");
    assert_eq!(processes(&read_json(&pending)), [0, 0, 0, 1, 1, 1, 2, 2, 2]);
    let accept = mcpcassette()
        .arg("accept")
        .arg(&notes.cassette)
        .output()
        .unwrap();
    assert!(accept.status.success(), "{}", both(&accept));
    let mut now = notes.recorded();
    assert_eq!(processes(&now), [0, 0, 0, 1, 1, 1, 2, 2, 2]);
    assert_eq!(*call_text(&mut now, 1), "remembered 1 note(s)");
    assert_eq!(now["interactions"], accepted["interactions"]);
}

#[test]
fn verify_against_a_server_whose_state_differs_reports_the_drift_of_each_process() {
    let notes = Notes::new();
    notes.record_three();
    notes.fresh_state();
    // The live server starts with a note the recording's did not have.
    std::fs::write(&notes.notes, "stale\n").unwrap();

    let output = notes.verify(&[]);
    assert_eq!(output.status.code(), Some(1), "{}", both(&output));
    let text = stdout(&output);
    for header in [
        "process 0, interaction 2 · tools/call recall · changed",
        "process 1, interaction 5 · tools/call remember · changed",
        "process 2, interaction 8 · tools/call recall · changed",
    ] {
        assert!(text.contains(header), "{header}: {text}");
    }
    assert!(diff_line(&text, '+', "\"stale\\nalpha\""), "{text}");
    assert_eq!(notes.starts(), 3);
}

/// A recording of the demo server: three processes, each its handshake,
/// `tools/list` and a call, one after another.
fn demo_recording(dir: &Path) -> PathBuf {
    let cassette = dir.join("demo.json");
    let scope = dir.join("demo-scope");
    for message in ["one", "two", "three"] {
        let mut command = mcpcassette();
        command
            .args(["run", "--mode", "once", "--cassette"])
            .arg(&cassette)
            .arg("--scope")
            .arg(&scope)
            .arg("--")
            .arg(demo_server_path());
        let mut peer = Peer::spawn(command);
        initialize_demo(&mut peer);
        peer.request("tools/list", json!({}));
        let echo = peer.request(
            "tools/call",
            json!({"name": "echo", "arguments": {"message": message}}),
        );
        assert_eq!(echo.text(), format!("echo: {message}"));
        let (status, stderr) = peer.finish();
        assert!(status.success(), "{stderr}");
    }
    finish_scope(&scope);
    cassette
}

fn check(cassette: &Path) -> Value {
    let output = mcpcassette()
        .args(["check", "--json"])
        .arg(cassette)
        .output()
        .unwrap();
    let report: Value =
        serde_json::from_slice(&output.stdout).unwrap_or_else(|e| panic!("{e}: {}", both(&output)));
    assert_eq!(output.status.code(), Some(0), "{report:#}");
    report
}

/// The findings of `check --json` on one file, as `(code, pointer)`.
fn findings(report: &Value) -> Vec<(String, String)> {
    let files = report
        .get("files")
        .and_then(Value::as_array)
        .map_or_else(|| vec![report.clone()], Clone::clone);
    files
        .iter()
        .flat_map(|file| file["findings"].as_array().cloned().unwrap_or_default())
        .map(|f| {
            (
                f["code"].as_str().unwrap().to_owned(),
                f["pointer"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

/// `cassette` cut into a cassette per process, as separate recordings
/// would have been.
fn separately(cassette: &Path) -> Vec<PathBuf> {
    let whole = read_json(cassette);
    let mut numbers = processes(&whole);
    numbers.dedup();
    numbers
        .into_iter()
        .map(|process| {
            let mut part = whole.clone();
            part["interactions"] = Value::Array(
                (whole["interactions"].as_array().unwrap().iter())
                    .filter(|i| i.get("process").and_then(Value::as_u64).unwrap_or(0) == process)
                    .map(|i| {
                        let mut i = i.clone();
                        i.as_object_mut().unwrap().remove("process");
                        i
                    })
                    .collect(),
            );
            let path = cassette.with_extension(format!("{process}.json"));
            std::fs::write(&path, serde_json::to_string_pretty(&part).unwrap()).unwrap();
            path
        })
        .collect()
}

#[test]
fn check_judges_each_process_as_the_separate_recording_it_would_have_been() {
    let notes = Notes::new();
    let answers = notes.record(&[
        ("remember", json!({"note": "alpha"})),
        ("recall", json!({})),
    ]);
    assert_eq!(answers, ["remembered 1 note(s)", "alpha"]);
    let demo = demo_recording(notes.dir.path());
    assert_eq!(
        processes(&read_json(&demo)),
        [0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2]
    );
    for cassette in [&notes.cassette, &demo] {
        let alone: Vec<(String, String)> = separately(cassette)
            .iter()
            .flat_map(|part| findings(&check(part)))
            .collect();
        assert_eq!(alone, [], "{}", cassette.display());
        let report = check(cassette);
        assert_eq!(
            findings(&report),
            alone,
            "{}: {report:#}",
            cassette.display()
        );
    }
}

#[test]
fn check_warns_about_an_interaction_hand_moved_out_of_its_process() {
    let notes = Notes::new();
    notes.record_three();
    // Process 0's call moved to the end of the file, after process 2's.
    notes.edit(|cassette| {
        let interactions = cassette["interactions"].as_array_mut().unwrap();
        let moved = interactions.remove(2);
        interactions.push(moved);
    });
    let report = check(&notes.cassette);
    assert_eq!(
        findings(&report),
        [("MC308".to_owned(), "/interactions/8".to_owned())],
        "{report:#}"
    );
    let output = mcpcassette()
        .arg("check")
        .arg(&notes.cassette)
        .output()
        .unwrap();
    let text = stdout(&output);
    assert!(
        text.contains("warning[MC308] process-order: interaction 8 (`tools/call recall`) is server process 0's but follows process 2's"),
        "{text}"
    );

    // Replay and verify still play it in its process: no drift.
    notes.fresh_state();
    let output = notes.verify(&[]);
    assert_eq!(output.status.code(), Some(0), "{}", both(&output));
    assert_eq!(notes.starts(), 3);
}
