//! Errors say each cause once: an OS error wrapped by one of our
//! errors is not repeated by the chain printed after it.

use std::process::Stdio;

use crate::support::{mcpcassette, root};

#[test]
fn a_missing_file_is_reported_once_per_command() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing.json");
    let missing = missing.to_str().unwrap();
    let cases: [&[&str]; 5] = [
        &["verify", missing],
        &["replay", missing],
        &["check", missing],
        &[
            "run",
            "--mode",
            "all",
            "--cassette",
            missing,
            "--",
            "/nonexistent/mcpcassette-server",
        ],
        &["serve", missing],
    ];
    for args in cases {
        let output = mcpcassette().args(args).output().unwrap();
        // `check` reports an unreadable file with its findings, on stdout.
        let stderr = String::from_utf8_lossy(&output.stderr).into_owned()
            + &String::from_utf8_lossy(&output.stdout);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {stderr}");
        assert_eq!(
            stderr.matches("(os error 2)").count(),
            1,
            "{args:?}: said once:\n{stderr}"
        );
        assert!(
            stderr.contains("No such file or directory (os error 2)"),
            "{args:?}: {stderr}"
        );
    }
}

/// The error line of a failed command: the message after `ERROR` (our
/// log) or `error:` (clap's), trimmed.
fn error_line(stderr: &str) -> Option<&str> {
    stderr.lines().find_map(|line| {
        let line = line.trim_start();
        line.strip_prefix("ERROR ")
            .or_else(|| line.strip_prefix("error: "))
            .map(str::trim)
    })
}

#[test]
fn no_error_says_a_cause_twice() {
    let dir = tempfile::tempdir().unwrap();
    let demo = root().join("cassettes/demo-legacy.json");
    let demo = demo.to_str().unwrap();
    let folder = dir.path().to_str().unwrap();
    let not_rules = dir.path().join("not-rules.json");
    std::fs::write(&not_rules, r#"{"strategy": 3}"#).unwrap();
    let not_rules = not_rules.to_str().unwrap();
    let bad_rules = dir.path().join("bad-rules.json");
    std::fs::write(&bad_rules, r#"{"redact": [{"regex": "acct-["}]}"#).unwrap();
    let bad_rules = bad_rules.to_str().unwrap();
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let taken = taken.local_addr().unwrap().to_string();
    let cassette = dir.path().join("new.json");
    let cassette = cassette.to_str().unwrap();
    // Each command, and what its error must still say of the cause.
    let cases: [(&[&str], &str); 7] = [
        // An unreadable cassette: the OS's reason.
        (&["replay", folder], "(os error 21)"),
        // Rules that are not rules: serde's reason.
        (&["replay", demo, "--rules", not_rules], "expected"),
        // Rules that do not build: the regex's reason.
        (&["replay", demo, "--rules", bad_rules], "acct-["),
        // A `--key` whose selector does not parse: the selector's reason.
        (&["replay", demo, "--key", "tools/call=params"], "`params`"),
        // An unreachable server: the connection's reason.
        (
            &["stub", "--url", "http://127.0.0.1:9/mcp", "--timeout", "5"],
            "(os error",
        ),
        // A server that cannot start: the OS's reason.
        (
            &[
                "run",
                "--mode",
                "all",
                "--cassette",
                cassette,
                "--",
                "/nonexistent/mcpcassette-server",
            ],
            "(os error 2)",
        ),
        // An address taken already: the OS's reason.
        (
            &[
                "record",
                "--cassette",
                cassette,
                "--upstream",
                "http://127.0.0.1:9/mcp",
                "--listen",
                &taken,
            ],
            "(os error",
        ),
    ];
    for (args, cause) in cases {
        let output = mcpcassette()
            .args(args)
            .stdin(Stdio::null())
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {stderr}");
        let line = error_line(&stderr).unwrap_or_else(|| panic!("{args:?}: no error:\n{stderr}"));
        assert!(line.contains(cause), "{args:?}: the cause is lost: {line}");
        let segments: Vec<&str> = line.split(": ").collect();
        for (at, segment) in segments.iter().enumerate() {
            assert!(
                !segments[at + 1..].contains(segment),
                "{args:?}: `{segment}` is said twice: {line}"
            );
        }
    }
}
