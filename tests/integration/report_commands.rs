//! Every command a miss report prints is run, as printed, and must do what
//! it says: for a stdio cassette recorded with a relative server command
//! (run from another directory), and for a Streamable HTTP cassette. The
//! commands are taken from the report `--report` writes (the same fixes the
//! stderr report numbers).

use std::path::{Path, PathBuf};
use std::process::Command;

use mcpcassette::cassette::{self, Transport};
use serde_json::{Value, json};

use crate::run_http::echo_session;
use crate::support::http::{Served, rmcp_http_server};
use crate::support::peer::Peer;
use crate::support::{demo_server_path, initialize_demo, mcpcassette};

/// The commands in a report's fixes: the lines that start with
/// `mcpcassette ` or `cd `.
fn printed_commands(report: &Path) -> Vec<String> {
    let report: Value = serde_json::from_str(&std::fs::read_to_string(report).unwrap()).unwrap();
    let mut commands = Vec::new();
    for miss in report["misses"].as_array().unwrap() {
        for fix in miss["fixes"].as_array().unwrap() {
            for line in fix.as_str().unwrap().lines() {
                if line.starts_with("mcpcassette ") || line.starts_with("cd ") {
                    commands.push(line.to_owned());
                }
            }
        }
    }
    commands
}

/// The flags a fix says to pass: `(or pass --flag value)`.
fn printed_flags(report: &Path) -> Vec<Vec<String>> {
    let report: Value = serde_json::from_str(&std::fs::read_to_string(report).unwrap()).unwrap();
    let mut flags = Vec::new();
    for miss in report["misses"].as_array().unwrap() {
        for fix in miss["fixes"].as_array().unwrap() {
            let text = fix.as_str().unwrap();
            if let Some(start) = text.find("(or pass ") {
                let rest = &text[start + "(or pass ".len()..];
                let end = rest.find(')').unwrap();
                flags.push(words(&rest[..end]));
            }
        }
    }
    flags
}

/// Splits a command line as `sh` would, for the quoting the reports use
/// (plain words and single quotes).
fn words(line: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut quoted = false;
    for c in line.chars() {
        match c {
            '\'' => {
                quoted = !quoted;
                in_word = true;
            }
            ' ' if !quoted => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                }
                in_word = false;
            }
            c => {
                word.push(c);
                in_word = true;
            }
        }
    }
    assert!(!quoted, "unbalanced quotes in {line:?}");
    if in_word {
        words.push(word);
    }
    words
}

/// A printed command as a process: `cd DIR && ` becomes its working
/// directory (else `cwd`), `mcpcassette` the binary under test.
fn as_process(line: &str, cwd: &Path) -> Command {
    let mut words = words(line);
    let mut dir = cwd.to_owned();
    if words.first().map(String::as_str) == Some("cd") {
        assert_eq!(words[2], "&&", "{line}");
        dir = PathBuf::from(&words[1]);
        words.drain(..3);
    }
    assert_eq!(words[0], "mcpcassette", "{line}");
    let mut command = mcpcassette();
    command
        .current_dir(dir)
        .env_remove("MCPCASSETTE_MODE")
        .args(&words[1..]);
    command
}

fn echo(peer: &mut Peer, message: &str) -> Value {
    peer.request(
        "tools/call",
        json!({"name": "echo", "arguments": {"message": message}}),
    )
    .response
}

#[test]
fn stdio_report_commands_run_from_another_directory() {
    // A project whose server is started by a relative command.
    let project = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(project.path().join("bin")).unwrap();
    std::os::unix::fs::symlink(demo_server_path(), project.path().join("bin/demo")).unwrap();
    let mut record = mcpcassette();
    record
        .current_dir(project.path())
        .env_remove("MCPCASSETTE_MODE")
        .args([
            "run",
            "--mode",
            "all",
            "--cassette",
            "tests/c.json",
            "--",
            "bin/demo",
        ]);
    let mut peer = Peer::spawn(record);
    initialize_demo(&mut peer);
    assert_eq!(
        echo(&mut peer, "old")["result"]["content"][0]["text"],
        "echo: old"
    );
    assert!(peer.finish().0.success());
    let path = project.path().join("tests/c.json");
    let recorded = cassette::load(&path).unwrap();
    assert_eq!(
        recorded.transport,
        Transport::Stdio {
            command: vec!["bin/demo".into()],
            cwd: Some("..".into()),
        },
        "the working directory is kept, relative to the cassette"
    );

    // Replayed from elsewhere, a request that was not recorded.
    let elsewhere = tempfile::tempdir().unwrap();
    let report = elsewhere.path().join("report.json");
    let mut replay = mcpcassette();
    replay
        .current_dir(elsewhere.path())
        .arg("replay")
        .arg(&path)
        .arg("--report")
        .arg(&report);
    let mut peer = Peer::spawn(replay);
    initialize_demo(&mut peer);
    assert_eq!(echo(&mut peer, "new")["error"]["code"], -32000);
    let (status, stderr) = peer.finish();
    assert_eq!(status.code(), Some(1), "{stderr}");
    let commands = printed_commands(&report);
    assert_eq!(commands.len(), 2, "{commands:#?}");
    for command in &commands {
        assert!(
            stderr.contains(command.as_str()),
            "the stderr report prints the same command: {command}\n{stderr}"
        );
        assert!(
            command.starts_with(&format!(
                "cd {} && mcpcassette run --mode ",
                project.path().display()
            )),
            "a relative command runs from where it was recorded: {command}"
        );
    }

    // 1. new-episodes: the missing request is forwarded and appended.
    let new_episodes = commands
        .iter()
        .find(|c| c.contains("new-episodes"))
        .unwrap();
    let mut peer = Peer::spawn(as_process(new_episodes, elsewhere.path()));
    initialize_demo(&mut peer);
    assert_eq!(
        echo(&mut peer, "old")["result"]["content"][0]["text"],
        "echo: old"
    );
    assert_eq!(
        echo(&mut peer, "new")["result"]["content"][0]["text"],
        "echo: new"
    );
    let (status, stderr) = peer.finish();
    assert!(status.success(), "{new_episodes}: {stderr}");
    assert!(stderr.contains("appended 1 new interaction(s)"), "{stderr}");
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(
        text.contains("echo: old") && text.contains("echo: new"),
        "{text}"
    );

    // The same, typed from elsewhere without the `cd`: the recorded
    // relative command still runs from where it was recorded.
    let mut typed = mcpcassette();
    typed
        .current_dir(elsewhere.path())
        .env_remove("MCPCASSETTE_MODE")
        .args(["run", "--mode", "new-episodes", "--cassette"])
        .arg(&path)
        .args(["--", "bin/demo"]);
    let mut peer = Peer::spawn(typed);
    initialize_demo(&mut peer);
    assert_eq!(
        echo(&mut peer, "typed")["result"]["content"][0]["text"],
        "echo: typed"
    );
    let (status, stderr) = peer.finish();
    assert!(status.success(), "{stderr}");
    assert!(stderr.contains("where it was recorded"), "{stderr}");

    // 2. --mode all: recorded afresh, still from the project directory.
    let all = commands.iter().find(|c| c.contains("--mode all")).unwrap();
    let mut peer = Peer::spawn(as_process(all, elsewhere.path()));
    initialize_demo(&mut peer);
    assert_eq!(
        echo(&mut peer, "fresh")["result"]["content"][0]["text"],
        "echo: fresh"
    );
    let (status, stderr) = peer.finish();
    assert!(status.success(), "{all}: {stderr}");
    let rerecorded = cassette::load(&path).unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(
        text.contains("echo: fresh") && !text.contains("echo: old"),
        "{text}"
    );
    assert_eq!(rerecorded.transport, recorded.transport);

    // verify, from elsewhere, finds the relative server too.
    let (code, stderr) = verify_from(elsewhere.path(), &path);
    assert_eq!(code, Some(0), "{stderr}");
}

/// `mcpcassette verify CASSETTE` run from `dir`, never updating the
/// cassette: its exit code and stderr.
fn verify_from(dir: &Path, cassette: &Path) -> (Option<i32>, String) {
    let output = mcpcassette()
        .current_dir(dir)
        .env("MCPCASSETTE_UPDATE", "no")
        .arg("verify")
        .arg(cassette)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    (output.status.code(), stderr)
}

#[test]
fn stdio_report_flags_do_what_they_say() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("c.json");
    let mut record = mcpcassette();
    record
        .env_remove("MCPCASSETTE_MODE")
        .args(["run", "--mode", "all", "--cassette"])
        .arg(&path)
        .arg("--")
        .arg(demo_server_path());
    let mut peer = Peer::spawn(record);
    initialize_demo(&mut peer);
    echo(&mut peer, "old");
    assert!(peer.finish().0.success());

    // An argument that differs, then an answer asked for twice.
    for (ask, expected_flag) in [
        (&["other"][..], "--ignore"),
        (&["old", "old"][..], "--on-exhausted"),
    ] {
        let report = dir.path().join("report.json");
        let mut replay = mcpcassette();
        replay.arg("replay").arg(&path).arg("--report").arg(&report);
        let mut peer = Peer::spawn(replay);
        initialize_demo(&mut peer);
        for message in ask {
            echo(&mut peer, message);
        }
        assert_eq!(peer.finish().0.code(), Some(1));
        let flags = printed_flags(&report);
        let flags = flags
            .iter()
            .find(|f| f[0] == expected_flag)
            .unwrap_or_else(|| panic!("no {expected_flag} fix: {flags:?}"));
        // With the flag, the same requests are answered.
        let mut replay = mcpcassette();
        replay.arg("replay").arg(&path).args(flags);
        let mut peer = Peer::spawn(replay);
        initialize_demo(&mut peer);
        for message in ask {
            let answer = echo(&mut peer, message);
            assert_eq!(
                answer["result"]["content"][0]["text"], "echo: old",
                "{flags:?}: {answer}"
            );
        }
        let (status, stderr) = peer.finish();
        assert!(status.success(), "{flags:?}: {stderr}");
    }
}

#[test]
fn http_report_commands_run() {
    let live = Served::start(rmcp_http_server());
    let dir = tempfile::tempdir().unwrap();
    let run = |args: &[&str]| {
        let mut command = mcpcassette();
        command
            .current_dir(dir.path())
            .env_remove("MCPCASSETTE_MODE")
            .args(["run", "--cassette", "c.json"])
            .args(args);
        command
    };
    let recorder = Served::start(run(&["--mode", "all", "--upstream", &live.url]));
    assert_eq!(
        echo_session(&recorder.url, &["one"]),
        [Ok("Echo: one".to_owned())]
    );
    assert!(recorder.stop().success());

    let replay = Served::start_capturing_stderr(run(&[
        "--mode",
        "none",
        "--listen",
        "127.0.0.1:0",
        "--report",
        "report.json",
    ]));
    let answers = echo_session(&replay.url, &["two"]);
    assert!(answers[0].is_err(), "{answers:?}");
    let (status, stderr) = replay.stop_with_stderr();
    assert_eq!(status.code(), Some(1), "a miss is not a success: {stderr}");
    let commands = printed_commands(&dir.path().join("report.json"));
    assert_eq!(
        commands,
        [
            format!(
                "mcpcassette run --mode new-episodes --cassette c.json --upstream {}",
                live.url
            ),
            format!(
                "mcpcassette run --mode all --cassette c.json --upstream {}",
                live.url
            ),
        ]
    );
    for command in &commands {
        assert!(stderr.contains(command.as_str()), "{command}\n{stderr}");
    }

    // 1. new-episodes: the missing request is forwarded and appended.
    let episodes = Served::start_capturing_stderr(as_process(&commands[0], dir.path()));
    let answers = echo_session(&episodes.url, &["one", "two"]);
    assert_eq!(
        answers,
        [Ok("Echo: one".to_owned()), Ok("Echo: two".to_owned())]
    );
    let (status, stderr) = episodes.stop_with_stderr();
    assert!(status.success(), "{stderr}");
    assert!(stderr.contains("appended 1 new interaction(s)"), "{stderr}");
    let text = std::fs::read_to_string(dir.path().join("c.json")).unwrap();
    assert!(
        text.contains("Echo: one") && text.contains("Echo: two"),
        "{text}"
    );

    // 2. --mode all: recorded afresh through the proxy it starts.
    let rerecord = Served::start_capturing_stderr(as_process(&commands[1], dir.path()));
    assert_eq!(
        echo_session(&rerecord.url, &["three"]),
        [Ok("Echo: three".to_owned())]
    );
    let (status, stderr) = rerecord.stop_with_stderr();
    assert!(status.success(), "{stderr}");
    let text = std::fs::read_to_string(dir.path().join("c.json")).unwrap();
    assert!(
        text.contains("Echo: three") && !text.contains("Echo: one"),
        "{text}"
    );
}

#[test]
fn verify_says_what_to_run_when_the_recorded_directory_is_gone() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("c.json");
    let mut moved =
        cassette::load(&crate::support::root().join("cassettes/demo-legacy.json")).unwrap();
    moved.transport = Transport::Stdio {
        command: vec!["venv/bin/python".into(), "server.py".into()],
        cwd: Some("/nonexistent/project".into()),
    };
    cassette::save(&path, &moved).unwrap();
    let (code, stderr) = verify_from(dir.path(), &path);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("cannot start the live server `venv/bin/python`"),
        "{stderr}"
    );
    assert!(
        stderr.contains(&format!(
            "The recorded server command is relative and it was recorded in /nonexistent/project, which does not exist here, so it was run from {}",
            dir.path().canonicalize().unwrap().display()
        )),
        "{stderr}"
    );
    assert!(stderr.contains("give the command after `--`"), "{stderr}");
}

#[test]
fn verify_and_review_hints_run_from_where_they_are_printed() {
    // Paths with spaces, and pending cassettes kept in a --pending-dir.
    let root = tempfile::tempdir().unwrap();
    let cassettes = root.path().join("my cassettes");
    std::fs::create_dir_all(&cassettes).unwrap();
    let path = cassettes.join("demo.json");
    std::fs::copy(
        crate::support::root().join("cassettes/demo-legacy.json"),
        &path,
    )
    .unwrap();
    let pending_dir = root.path().join("pending dir");
    let output = mcpcassette()
        .current_dir(root.path())
        .env("MCPCASSETTE_UPDATE", "new")
        .env("DEMO_SERVER_DRIFT", "1")
        .env("NO_COLOR", "1")
        .args([
            "verify",
            "my cassettes/demo.json",
            "--pending-dir",
            "pending dir",
            "--",
        ])
        .arg(demo_server_path())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "drift: {stderr}");
    let commands: Vec<&str> = stderr
        .split('`')
        .skip(1)
        .step_by(2)
        .filter(|quoted| quoted.starts_with("mcpcassette "))
        .collect();
    assert_eq!(commands.len(), 3, "review, accept, reject: {stderr}");
    assert!(
        commands
            .iter()
            .all(|c| c.contains("--pending-dir 'pending dir' 'my cassettes/demo.json'")),
        "{commands:?}"
    );

    // `review` without a terminal changes nothing and prints the same
    // commands, which are valid too.
    let review = as_process(commands[0], root.path()).output().unwrap();
    let review_out = String::from_utf8_lossy(&review.stdout).into_owned()
        + &String::from_utf8_lossy(&review.stderr);
    assert!(review_out.contains("nothing was changed"), "{review_out}");
    let accept = review_out
        .lines()
        .map(str::trim)
        .find(|l| l.starts_with("mcpcassette accept"))
        .map(|l| l.split("    #").next().unwrap().to_owned())
        .unwrap_or_else(|| panic!("no accept line: {review_out}"));
    assert_eq!(accept, commands[1], "review prints what verify printed");

    let before = std::fs::read_to_string(&path).unwrap();
    let accepted = as_process(&accept, root.path()).output().unwrap();
    assert!(
        accepted.status.success(),
        "{}",
        String::from_utf8_lossy(&accepted.stderr)
    );
    assert_ne!(
        std::fs::read_to_string(&path).unwrap(),
        before,
        "the live version was taken"
    );
    fn files(dir: &Path) -> usize {
        std::fs::read_dir(dir)
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| {
                if e.path().is_dir() {
                    files(&e.path())
                } else {
                    1
                }
            })
            .sum()
    }
    assert_eq!(files(&pending_dir), 0, "the pending cassette is gone");
}
