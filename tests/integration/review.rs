//! Pending cassettes from the command line: `pending`, `accept`, `reject`,
//! and `review` both without a terminal and interactively through a
//! pseudo-terminal (util-linux `script`).

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use mcpcassette::cassette::{self, Cassette};
use mcpcassette::cli_support::pending::{self, Pending};
use serde_json::{Value, json};

use crate::support::{self, mcpcassette};

/// The interactions the pending cassette changes, and their labels.
const CHANGED: [(usize, &str); 3] = [
    (4, "tools/call echo"),
    (5, "tools/call add"),
    (9, "tools/call summarize"),
];

/// A copy of the shipped legacy cassette as `cassettes/demo.json` under
/// `dir`, and a pending version in which the server answers echo, add and
/// summarize differently.
fn setup(dir: &Path) -> (PathBuf, PathBuf, Cassette) {
    let accepted = dir.join("cassettes").join("demo.json");
    std::fs::create_dir_all(accepted.parent().unwrap()).unwrap();
    std::fs::copy(
        support::root().join("cassettes").join("demo-legacy.json"),
        &accepted,
    )
    .unwrap();
    let mut live = cassette::load(&accepted).unwrap();
    live.recorded_at = "2027-01-01T00:00:00Z".into();
    let answers = [
        json!({"content": [{"type": "text", "text": "echo: hello!"}]}),
        json!({"content": [{"type": "text", "text": "43"}], "structuredContent": {"sum": 43}}),
        json!({"content": [{"type": "text", "text": "summary: a longer summary"}]}),
    ];
    for ((index, label), result) in CHANGED.iter().zip(answers) {
        let interaction = &mut live.interactions[*index];
        assert_eq!(interaction.label(), *label);
        interaction
            .response
            .as_mut()
            .unwrap()
            .modify(|response| response["result"] = result);
    }
    let pending_path = pending::write(&accepted, &live, None).unwrap();
    assert_eq!(pending_path, dir.join("cassettes").join("demo.json.new"));
    (accepted, pending_path, live)
}

fn run(command: &mut Command) -> (i32, String, String) {
    let output = command.stdin(Stdio::null()).output().unwrap();
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

#[test]
fn pending_json_lists_the_changed_interactions() {
    let tmp = tempfile::tempdir().unwrap();
    setup(tmp.path());
    let (code, stdout, stderr) = run(mcpcassette()
        .current_dir(tmp.path())
        .args(["pending", "--json"]));
    assert_eq!(code, 0, "{stderr}");
    let list: Value = serde_json::from_str(&stdout).unwrap();
    let changes: Vec<Value> = CHANGED
        .iter()
        .map(|(index, label)| json!({"index": index, "label": label}))
        .collect();
    assert_eq!(
        list,
        json!([{
            "accepted": "cassettes/demo.json",
            "pending": "cassettes/demo.json.new",
            "changes": changes,
        }])
    );

    // Text, for a path given explicitly.
    let (code, stdout, _) = run(mcpcassette().arg("pending").arg(tmp.path()));
    assert_eq!(code, 0);
    assert!(stdout.contains("3 changed interactions"), "{stdout}");
    assert!(stdout.contains("#9    tools/call summarize"), "{stdout}");
}

#[test]
fn accept_makes_the_accepted_cassette_the_pending_one() {
    let tmp = tempfile::tempdir().unwrap();
    let (accepted, pending_path, live) = setup(tmp.path());
    let (code, stdout, stderr) = run(mcpcassette().arg("accept").arg(tmp.path()));
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stdout.contains("accepted 3 changed interactions"),
        "{stdout}"
    );
    assert_eq!(cassette::load(&accepted).unwrap(), live);
    assert_eq!(
        std::fs::read_to_string(&accepted).unwrap(),
        cassette::to_text(&live)
    );
    assert!(!pending_path.exists());

    // Nothing left: a note, still success.
    let (code, stdout, _) = run(mcpcassette().arg("accept").arg(tmp.path()));
    assert_eq!(code, 0);
    assert!(stdout.contains("nothing pending"), "{stdout}");
}

#[test]
fn reject_leaves_the_accepted_cassette_byte_identical() {
    let tmp = tempfile::tempdir().unwrap();
    let (accepted, pending_path, _) = setup(tmp.path());
    let before = std::fs::read(&accepted).unwrap();
    let (code, stdout, stderr) = run(mcpcassette().arg("reject").arg(&accepted));
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stdout.contains("rejected 3 changed interactions"),
        "{stdout}"
    );
    assert_eq!(std::fs::read(&accepted).unwrap(), before);
    assert!(!pending_path.exists());
}

#[test]
fn accept_of_a_missing_path_is_an_error() {
    let tmp = tempfile::tempdir().unwrap();
    let (code, _, stderr) = run(mcpcassette()
        .arg("accept")
        .arg(tmp.path().join("missing.json")));
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("missing.json"), "{stderr}");
}

#[test]
fn review_without_a_terminal_says_what_to_run_and_changes_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let (accepted, pending_path, _) = setup(tmp.path());
    let (before, pending_before) = (
        std::fs::read(&accepted).unwrap(),
        std::fs::read(&pending_path).unwrap(),
    );
    let (code, stdout, stderr) = run(mcpcassette().current_dir(tmp.path()).arg("review"));
    assert_eq!(code, 0, "{stderr}");
    for expected in [
        "needs a terminal",
        "cassettes/demo.json: 3 changed interactions",
        "mcpcassette accept cassettes/demo.json",
        "mcpcassette reject cassettes/demo.json",
        "`mcpcassette review` in a terminal",
    ] {
        assert!(stdout.contains(expected), "no {expected:?} in:\n{stdout}");
    }
    assert_eq!(std::fs::read(&accepted).unwrap(), before);
    assert_eq!(std::fs::read(&pending_path).unwrap(), pending_before);
}

/// A child in a pseudo-terminal, its output collected as it comes.
struct Pty {
    child: std::process::Child,
    output: Arc<Mutex<String>>,
}

impl Pty {
    /// Runs `command` (a shell command line) under `script`, which gives it
    /// a pseudo-terminal as stdin and stdout.
    fn spawn(command: &str) -> Pty {
        let available = Command::new("script")
            .arg("--version")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
        assert!(
            available.is_ok_and(|s| s.success()),
            "this test needs util-linux `script` to run `review` in a pseudo-terminal; \
             install util-linux (bsdutils on Debian and Ubuntu)"
        );
        // As `support::mcpcassette()` sets up the binary's environment.
        let mut child = Command::new("script")
            .env("MCPCASSETTE_LOG", "info")
            .env_remove("CI")
            .args(["-qfec", command, "/dev/null"])
            .env("TERM", "xterm")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let mut stdout = child.stdout.take().unwrap();
        let output = Arc::new(Mutex::new(String::new()));
        let sink = output.clone();
        std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n) = stdout.read(&mut buf) {
                if n == 0 {
                    break;
                }
                sink.lock()
                    .unwrap()
                    .push_str(&String::from_utf8_lossy(&buf[..n]));
            }
        });
        Pty { child, output }
    }

    /// The output so far, without colours.
    fn text(&self) -> String {
        console::strip_ansi_codes(&self.output.lock().unwrap()).into_owned()
    }

    /// Waits until `needle` has appeared `times` times.
    fn wait_for(&self, needle: &str, times: usize) {
        let deadline = Instant::now() + Duration::from_secs(30);
        while self.text().matches(needle).count() < times {
            assert!(
                Instant::now() < deadline,
                "timed out waiting for {needle:?} ×{times}; output so far:\n{}",
                self.text()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    fn press(&mut self, keys: &str) {
        let stdin = self.child.stdin.as_mut().unwrap();
        stdin.write_all(keys.as_bytes()).unwrap();
        stdin.flush().unwrap();
    }

    /// Waits for the child to exit; returns its status code.
    fn finish(mut self) -> (i32, String) {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                // Let the reader drain what is left.
                std::thread::sleep(Duration::from_millis(100));
                return (status.code().unwrap_or(-1), self.text());
            }
            if Instant::now() > deadline {
                let _ = self.child.kill();
                panic!("review did not finish; output:\n{}", self.text());
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

fn quote(path: &Path) -> String {
    format!("'{}'", path.display().to_string().replace('\'', r"'\''"))
}

/// Accept the first change (after hiding and showing the diff), reject the
/// second, skip the third: the accepted cassette gets exactly the first;
/// the pending file stays, holding only the skipped third, so nothing
/// skipped is lost.
#[test]
fn interactive_review_accepts_rejects_and_skips() {
    let tmp = tempfile::tempdir().unwrap();
    let (accepted, pending_path, live) = setup(tmp.path());
    let original = cassette::load(&accepted).unwrap();
    let command = format!(
        "{} review {}",
        quote(Path::new(env!("CARGO_BIN_EXE_mcpcassette"))),
        quote(tmp.path())
    );
    let mut pty = Pty::spawn(&command);
    let prompt = "[q] quit";
    pty.wait_for("demo.json · interaction 1/3 · tools/call echo", 1);
    pty.wait_for(prompt, 1);
    // The diff is shown: the old answer and the new one.
    assert!(pty.text().contains("echo: hello!"), "{}", pty.text());
    pty.press("d");
    pty.wait_for("interaction 1/3", 2);
    pty.wait_for(prompt, 2);
    pty.press("a");
    pty.wait_for("interaction 2/3 · tools/call add", 1);
    pty.wait_for(prompt, 3);
    pty.press("r");
    pty.wait_for("interaction 3/3 · tools/call summarize", 1);
    pty.wait_for(prompt, 4);
    pty.press("s");
    let (code, text) = pty.finish();
    assert_eq!(code, 0, "{text}");
    assert!(
        text.contains("accepted 1, rejected 1, skipped 1"),
        "no summary in:\n{text}"
    );

    let result = cassette::load(&accepted).unwrap();
    for (index, interaction) in result.interactions.iter().enumerate() {
        let expected = if index == 4 {
            &live.interactions[index]
        } else {
            &original.interactions[index]
        };
        assert_eq!(interaction, expected, "interaction {index}");
    }
    assert_eq!(result.interactions.len(), original.interactions.len());

    let left = Pending::load(&accepted, None)
        .unwrap()
        .expect("still pending");
    assert_eq!(left.pending_path, pending_path);
    let changes: Vec<(usize, String)> = left
        .changes()
        .into_iter()
        .map(|c| (c.index, c.label))
        .collect();
    assert_eq!(changes, [(9, "tools/call summarize".to_string())]);
    assert_eq!(left.pending.interactions[9], live.interactions[9]);
}

/// `A` accepts every remaining change of the cassette at once.
#[test]
fn interactive_review_accept_all_remaining() {
    let tmp = tempfile::tempdir().unwrap();
    let (accepted, pending_path, live) = setup(tmp.path());
    let command = format!(
        "{} review {}",
        quote(Path::new(env!("CARGO_BIN_EXE_mcpcassette"))),
        quote(&accepted)
    );
    let mut pty = Pty::spawn(&command);
    pty.wait_for("[q] quit", 1);
    pty.press("r");
    pty.wait_for("[q] quit", 2);
    pty.press("A");
    let (code, text) = pty.finish();
    assert_eq!(code, 0, "{text}");
    assert!(text.contains("accepted 2, rejected 1, skipped 0"), "{text}");
    assert!(!pending_path.exists());
    let result = cassette::load(&accepted).unwrap();
    assert_ne!(result.interactions[4], live.interactions[4]);
    assert_eq!(result.interactions[5], live.interactions[5]);
    assert_eq!(result.interactions[9], live.interactions[9]);
}

/// An accepted cassette whose echo answer carries a timestamp, and a
/// pending one in which the timestamp moved on and echo's input schema
/// gained a required property (a breaking change).
fn setup_volatile_and_breaking(dir: &Path) -> PathBuf {
    let accepted = dir.join("cassettes").join("demo.json");
    std::fs::create_dir_all(accepted.parent().unwrap()).unwrap();
    let mut recorded =
        cassette::load(&support::root().join("cassettes").join("demo-legacy.json")).unwrap();
    let echo =
        |at: &str| json!({"content": [{"type": "text", "text": format!("echo: hello at {at}")}]});
    let set_result = |response: &mut Option<mcpcassette::RawMessage>, result: Value| {
        response
            .as_mut()
            .unwrap()
            .modify(|response| response["result"] = result);
    };
    set_result(
        &mut recorded.interactions[4].response,
        echo("2026-11-30T10:00:00Z"),
    );
    cassette::save(&accepted, &recorded).unwrap();
    let mut live = recorded.clone();
    set_result(
        &mut live.interactions[4].response,
        echo("2026-12-01T07:41:00.123Z"),
    );
    live.interactions[3]
        .response
        .as_mut()
        .unwrap()
        .modify(|response| {
            let tool = &mut response["result"]["tools"][0];
            assert_eq!(tool["name"], "echo");
            tool["inputSchema"]["properties"]["volume"] = json!({"type": "number"});
            tool["inputSchema"]["required"] = json!(["message", "volume"]);
        });
    pending::write(&accepted, &live, None).unwrap();
    accepted
}

/// The hint for the echo answer's timestamp, as review and verify print it.
const ECHO_HINT: &str = r#"hint: /result/content/*/text looks like a timestamp that changes every run; to ignore it, add to "normalize" in the cassette's "rules": {"selector":"/result/content/*/text","regex":"#;

#[test]
fn review_shows_breaking_changes_and_normalize_hints() {
    let tmp = tempfile::tempdir().unwrap();
    setup_volatile_and_breaking(tmp.path());
    let (code, stdout, stderr) = run(mcpcassette().current_dir(tmp.path()).arg("review"));
    assert_eq!(code, 0, "{stderr}");
    for expected in [
        "#3    tools/list",
        "BREAKING",
        "new required property `volume`",
        "#4    tools/call echo",
        ECHO_HINT,
    ] {
        assert!(stdout.contains(expected), "no {expected:?} in:\n{stdout}");
    }

    // The same in a terminal, above each change's diff.
    let command = format!(
        "{} review {}",
        quote(Path::new(env!("CARGO_BIN_EXE_mcpcassette"))),
        quote(tmp.path())
    );
    let mut pty = Pty::spawn(&command);
    pty.wait_for("interaction 1/2 · tools/list", 1);
    pty.wait_for("[q] quit", 1);
    assert!(pty.text().contains("BREAKING"), "{}", pty.text());
    pty.press("s");
    pty.wait_for("interaction 2/2 · tools/call echo", 1);
    pty.wait_for("[q] quit", 2);
    assert!(pty.text().contains(ECHO_HINT), "{}", pty.text());
    pty.press("s");
    let (code, text) = pty.finish();
    assert_eq!(code, 0, "{text}");
}
