//! `mcpcassette verify`: the shipped cassettes match the example server;
//! the drifting variant produces the expected report and a pending
//! cassette; accepting makes the next verify pass; rejecting and the update
//! modes leave the accepted cassette byte-identical; the Rust assertion
//! fails with the same report.

use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::{Value, json};

use crate::support::{self, demo_server_path, mcpcassette};

/// A copy of a shipped cassette in a fresh directory.
fn copy(name: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(name);
    std::fs::copy(support::root().join("cassettes").join(name), &path).unwrap();
    (dir, path)
}

fn verify(path: &Path, drift: bool, extra_env: &[(&str, &str)], args: &[&str]) -> Output {
    let mut command = mcpcassette();
    command
        .arg("verify")
        .arg(path)
        .args(args)
        .arg("--")
        .arg(demo_server_path())
        .env("DEMO_SERVER_DRIFT", if drift { "1" } else { "0" })
        .env_remove("MCPCASSETTE_UPDATE")
        .env("NO_COLOR", "1");
    for (name, value) in extra_env {
        command.env(name, value);
    }
    command.output().unwrap()
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

#[test]
fn shipped_cassettes_have_no_drift() {
    for name in ["demo-legacy.json", "demo-modern.json"] {
        // The recorded command, run from the repository's root.
        let output = mcpcassette()
            .current_dir(support::root())
            .args(["verify", &format!("cassettes/{name}")])
            .env("DEMO_SERVER_DRIFT", "0")
            .env("MCPCASSETTE_UPDATE", "no")
            .output()
            .unwrap();
        assert_eq!(
            output.status.code(),
            Some(0),
            "{name}:\n{}\n{}",
            stdout(&output),
            String::from_utf8_lossy(&output.stderr)
        );
        assert!(stdout(&output).contains("no drift"), "{}", stdout(&output));
    }
}

#[test]
fn drift_is_reported_and_left_pending() {
    let (dir, path) = copy("demo-legacy.json");
    let before = std::fs::read(&path).unwrap();
    let output = verify(&path, true, &[], &[]);
    assert_eq!(
        output.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let report = stdout(&output).replace(&dir.path().display().to_string(), "[dir]");
    insta::assert_snapshot!(report);
    assert_eq!(
        std::fs::read(&path).unwrap(),
        before,
        "verify never writes the accepted cassette"
    );
    let pending = dir.path().join("demo-legacy.json.new");
    assert!(pending.exists());
    // The pending cassette is a whole cassette with the live answers.
    let live = mcpcassette::cassette::load(&pending).unwrap();
    let echo = live
        .interactions
        .iter()
        .find(|i| i.request().and_then(|r| r.pointer("/params/name")) == Some(&json!("echo")))
        .unwrap();
    assert_eq!(
        echo.response.as_ref().unwrap()["result"]["content"][0]["text"],
        "echo v2: hello"
    );
}

#[test]
fn the_json_report_classifies_tool_changes() {
    let (_dir, path) = copy("demo-legacy.json");
    let output = verify(&path, true, &[("MCPCASSETTE_UPDATE", "no")], &["--json"]);
    assert_eq!(output.status.code(), Some(1));
    let json: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(json["drift"], json!(true));
    assert_eq!(json["pending"], Value::Null);
    let counts = &json["report"]["counts"];
    assert_eq!(counts["changed"], json!(2), "{counts}");
    assert_eq!(counts["missing"], json!(0));
    let list = json["report"]["interactions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["label"] == "tools/list")
        .unwrap();
    assert_eq!(list["status"], "changed");
    let change = &list["tool_changes"][0];
    assert_eq!(change["change"], "input_schema_changed", "{change}");
    assert_eq!(change["tool"], "echo");
    assert_eq!(change["breaking"], json!(true));
}

#[test]
fn accepting_makes_the_next_verify_pass_and_rejecting_changes_nothing() {
    let (dir, path) = copy("demo-legacy.json");
    assert_eq!(verify(&path, true, &[], &[]).status.code(), Some(1));
    let before = std::fs::read(&path).unwrap();
    let reject = mcpcassette().arg("reject").arg(&path).output().unwrap();
    assert!(
        reject.status.success(),
        "{}",
        String::from_utf8_lossy(&reject.stderr)
    );
    assert_eq!(
        std::fs::read(&path).unwrap(),
        before,
        "reject leaves the cassette byte-identical"
    );
    assert!(!dir.path().join("demo-legacy.json.new").exists());

    assert_eq!(verify(&path, true, &[], &[]).status.code(), Some(1));
    let accept = mcpcassette().arg("accept").arg(&path).output().unwrap();
    assert!(
        accept.status.success(),
        "{}",
        String::from_utf8_lossy(&accept.stderr)
    );
    let output = verify(&path, true, &[], &[]);
    assert_eq!(output.status.code(), Some(0), "{}", stdout(&output));
    // And the original server now drifts from the accepted cassette.
    assert_eq!(
        verify(&path, false, &[("MCPCASSETTE_UPDATE", "no")], &[])
            .status
            .code(),
        Some(1)
    );
}

#[test]
fn update_modes_follow_insta() {
    for (env, pending, overwritten) in [
        (vec![("MCPCASSETTE_UPDATE", "no")], false, false),
        (vec![("MCPCASSETTE_UPDATE", "new")], true, false),
        (vec![("MCPCASSETTE_UPDATE", "always")], false, true),
        (
            vec![("MCPCASSETTE_UPDATE", "auto"), ("CI", "true")],
            false,
            false,
        ),
        (vec![("MCPCASSETTE_UPDATE", "auto")], true, false),
    ] {
        let (dir, path) = copy("demo-legacy.json");
        let before = std::fs::read(&path).unwrap();
        let output = verify(&path, true, &env, &[]);
        assert_eq!(output.status.code(), Some(1), "{env:?}");
        assert_eq!(
            dir.path().join("demo-legacy.json.new").exists(),
            pending,
            "{env:?}"
        );
        assert_eq!(
            std::fs::read(&path).unwrap() != before,
            overwritten,
            "{env:?}"
        );
    }
    let (_dir, path) = copy("demo-legacy.json");
    let output = verify(&path, true, &[("MCPCASSETTE_UPDATE", "sometimes")], &[]);
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("MCPCASSETTE_UPDATE"));
}

#[test]
fn pending_dir_holds_pending_cassettes() {
    let (dir, path) = copy("demo-legacy.json");
    let pending_dir = dir.path().join("pending");
    let output = verify(
        &path,
        true,
        &[],
        &["--pending-dir", pending_dir.to_str().unwrap()],
    );
    assert_eq!(output.status.code(), Some(1));
    assert!(!dir.path().join("demo-legacy.json.new").exists());
    let found: Vec<_> = walk(&pending_dir);
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(found[0].to_string_lossy().ends_with("demo-legacy.json.new"));
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.extend(walk(&path));
        } else {
            out.push(path);
        }
    }
    out
}

#[test]
fn normalised_fields_do_not_drift_and_are_listed() {
    let (_dir, path) = copy("demo-legacy.json");
    let mut doc: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    doc["rules"] = json!({"normalize": [
        {"selector": "/result/content/*/text", "regex": "^echo( v2)?:", "replacement": "[echo]:"},
        {"selector": "/result/tools", "replacement": "[tools]"}
    ]});
    std::fs::write(&path, serde_json::to_string_pretty(&doc).unwrap()).unwrap();
    let output = verify(&path, true, &[("MCPCASSETTE_UPDATE", "no")], &[]);
    let text = stdout(&output);
    assert_eq!(output.status.code(), Some(0), "{text}");
    assert!(
        text.contains("/result/content/*/text =~ /^echo( v2)?:/ → [echo]:"),
        "{text}"
    );
    assert!(text.contains("/result/tools → [tools]"), "{text}");
}

#[test]
fn the_rust_assertion_passes_and_fails_with_the_report() {
    let (_dir, path) = copy("demo-legacy.json");
    let server = demo_server_path().display().to_string();
    let mut config = mcpcassette::verify::VerifyConfig::new(&path);
    config.update = mcpcassette::verify::UpdateMode::No;
    config.target = mcpcassette::verify::Target::Command(vec![
        "env".into(),
        "DEMO_SERVER_DRIFT=0".into(),
        server.clone(),
    ]);
    mcpcassette::verify::assert_verified(&config);

    config.target = mcpcassette::verify::Target::Command(vec![
        "env".into(),
        "DEMO_SERVER_DRIFT=1".into(),
        server,
    ]);
    let panic = std::panic::catch_unwind(|| mcpcassette::verify::assert_verified(&config))
        .expect_err("drift fails the assertion");
    let message = panic.downcast_ref::<String>().unwrap();
    assert!(message.contains("tools/call echo"), "{message}");
    assert!(message.contains("+++ live"), "{message}");
    assert!(!message.contains('\u{1b}'), "plain text: {message}");

    // The macro, with the command recorded in the shipped cassette.
    let previous = std::env::current_dir().unwrap();
    assert_eq!(
        previous,
        support::root(),
        "cargo runs tests from the manifest directory"
    );
    mcpcassette::assert_cassette!(
        "cassettes/demo-modern.json",
        [demo_server_path().display().to_string()]
    );
}
