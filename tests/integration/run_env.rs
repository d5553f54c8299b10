//! `mcpcassette run` started the way MCP client SDKs start servers: with a
//! reduced environment, so `CI` and `MCPCASSETTE_MODE` set for the test run
//! do not reach it. The mode must come from `--mode`, the project file
//! (`mcpcassette.toml`) or the environment of the processes above `run`.
//!
//! These tests assume the test process itself has no `MCPCASSETTE_MODE`
//! (its value would reach `run` through the ancestor chain, as it should).

use std::path::Path;
use std::process::{Command, Output};

use serde_json::json;

use crate::support::peer::Peer;
use crate::support::{demo_server_path, initialize_demo};

/// `sh` with only `parent_env` (and PATH) runs `run ARGS` with the
/// environment the TypeScript SDK gives a server (HOME, LOGNAME, PATH,
/// SHELL, TERM, USER; here PATH and HOME), and waits for it: the shell
/// stays `run`'s parent, with the variables `run` does not get.
pub fn stripped_run(parent_env: &[(&str, &str)], cwd: &Path, args: &[&str]) -> Command {
    assert!(
        std::env::var_os("MCPCASSETTE_MODE").is_none(),
        "unset MCPCASSETTE_MODE to run these tests: it would reach `run` as an ancestor's"
    );
    let mut command = Command::new("sh");
    command
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .envs(parent_env.iter().copied())
        .current_dir(cwd)
        .arg("-c")
        // Not the last command, so the shell cannot exec it.
        .arg(r#"env -i PATH="$PATH" HOME=/nonexistent "$@"; status=$?; exit $status"#)
        .arg("sh")
        .arg(env!("CARGO_BIN_EXE_mcpcassette"))
        .arg("run")
        .args(args);
    command
}

/// A server command that leaves `marker` behind if it is ever started.
fn marking_server(marker: &Path) -> Vec<String> {
    vec![
        "sh".to_owned(),
        "-c".to_owned(),
        format!(
            "touch '{}'; exec '{}'",
            marker.display(),
            demo_server_path().display()
        ),
    ]
}

fn args<'a>(words: &'a [&'a str], server: &'a [String]) -> Vec<&'a str> {
    let mut all = words.to_vec();
    all.push("--");
    all.extend(server.iter().map(String::as_str));
    all
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

#[test]
fn ci_of_the_parent_keeps_a_stripped_run_from_starting_the_server() {
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("server-started");
    let server = marking_server(&marker);
    let output = stripped_run(
        &[("CI", "true"), ("API_TOKEN", "tok-never-shown")],
        dir.path(),
        &args(&["--cassette", "missing.json"], &server),
    )
    .output()
    .unwrap();
    let stderr = stderr(&output);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(!marker.exists(), "the server was started: {stderr}");
    assert!(
        stderr.contains("mode none (auto: CI detected in the environment of process "),
        "{stderr}"
    );
    assert!(stderr.contains("(sh)"), "names the process: {stderr}");
    assert!(
        stderr.contains("missing.json: no such cassette, and mode `none` never records"),
        "{stderr}"
    );
    assert!(!stderr.contains("tok-never-shown"), "{stderr}");
    assert!(!dir.path().join("missing.json").exists());
}

#[test]
fn the_nearest_ancestor_with_ci_decides() {
    // CI=false just above `run` wins over a CI=true further up (the test
    // runner's, in CI): the stripped run records.
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("server-started");
    let server = marking_server(&marker);
    let mut peer = Peer::spawn(stripped_run(
        &[("CI", "false")],
        dir.path(),
        &args(&["--cassette", "c.json"], &server),
    ));
    initialize_demo(&mut peer);
    let (status, stderr) = peer.finish();
    assert!(status.success(), "{stderr}");
    assert!(
        stderr.contains("mode once (auto: not in CI): cassette missing: recording"),
        "{stderr}"
    );
    assert!(marker.exists());
    assert!(dir.path().join("c.json").exists());
}

#[test]
fn mcpcassette_mode_of_the_parent_reaches_a_stripped_run() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("c.json");
    for _ in 0..2 {
        let mut peer = Peer::spawn(stripped_run(
            &[("MCPCASSETTE_MODE", "all"), ("CI", "true")],
            dir.path(),
            &args(
                &["--cassette", "c.json"],
                &[demo_server_path().display().to_string()],
            ),
        ));
        initialize_demo(&mut peer);
        let (status, stderr) = peer.finish();
        assert!(status.success(), "{stderr}");
        assert!(
            stderr.contains("mode all (from MCPCASSETTE_MODE in the environment of process "),
            "{stderr}"
        );
        assert!(stderr.contains("recording afresh"), "{stderr}");
    }
    assert!(path.exists());
}

#[test]
fn the_flag_beats_every_environment() {
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("server-started");
    let server = marking_server(&marker);
    let output = stripped_run(
        &[("MCPCASSETTE_MODE", "all"), ("CI", "false")],
        dir.path(),
        &args(&["--mode", "none", "--cassette", "missing.json"], &server),
    )
    .output()
    .unwrap();
    let stderr = stderr(&output);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("mode none (from --mode)"), "{stderr}");
    assert!(!marker.exists());
}

#[test]
fn the_project_file_sets_the_mode_from_any_subdirectory() {
    let root = tempfile::tempdir().unwrap();
    std::fs::write(
        root.path().join("mcpcassette.toml"),
        "# project settings\nmode = \"none\"\n",
    )
    .unwrap();
    let sub = root.path().join("packages/client");
    std::fs::create_dir_all(&sub).unwrap();
    let marker = root.path().join("server-started");
    let server = marking_server(&marker);
    // Not in CI, as far as any process can tell.
    let output = stripped_run(
        &[("CI", "false")],
        &sub,
        &args(&["--cassette", "missing.json"], &server),
    )
    .output()
    .unwrap();
    let stderr = stderr(&output);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(!marker.exists(), "{stderr}");
    let location = format!(
        "mode none (from {}:2)",
        root.path().join("mcpcassette.toml").display()
    );
    assert!(stderr.contains(&location), "{stderr}");
}

#[test]
fn the_project_file_is_also_found_from_the_cassette() {
    let project = tempfile::tempdir().unwrap();
    std::fs::write(project.path().join("mcpcassette.toml"), "mode = \"none\"\n").unwrap();
    let elsewhere = tempfile::tempdir().unwrap();
    let cassette = project.path().join("tests/missing.json");
    std::fs::create_dir_all(cassette.parent().unwrap()).unwrap();
    let marker = project.path().join("server-started");
    let server = marking_server(&marker);
    let cassette = cassette.display().to_string();
    let output = stripped_run(
        &[("CI", "false")],
        elsewhere.path(),
        &args(&["--cassette", &cassette], &server),
    )
    .output()
    .unwrap();
    let stderr = stderr(&output);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(!marker.exists(), "{stderr}");
    assert!(stderr.contains("mcpcassette.toml:1)"), "{stderr}");
}

#[test]
fn the_project_file_gives_the_cassette_dir_and_replay_defaults() {
    let root = tempfile::tempdir().unwrap();
    std::fs::write(
        root.path().join("mcpcassette.toml"),
        "mode = \"once\"\ncassette_dir = \"tests/cassettes\"\n\n[replay]\non_exhausted = \"repeat-last\"\n",
    )
    .unwrap();
    let server = [demo_server_path().display().to_string()];
    let session = |expect: &str| {
        let mut peer = Peer::spawn(stripped_run(
            &[("CI", "true")],
            root.path(),
            &args(&["--cassette", "demo.json"], &server),
        ));
        initialize_demo(&mut peer);
        for _ in 0..2 {
            let answer = peer.request(
                "tools/call",
                json!({"name": "echo", "arguments": {"message": "again"}}),
            );
            assert_eq!(answer.text(), "echo: again");
        }
        let (status, stderr) = peer.finish();
        assert!(status.success(), "{stderr}");
        assert!(stderr.contains(expect), "{stderr}");
    };
    // Recorded once, into cassette_dir...
    session("cassette missing: recording");
    let path = root.path().join("tests/cassettes/demo.json");
    let recorded = mcpcassette::cassette::load(&path).unwrap();
    assert_eq!(
        recorded
            .interactions
            .iter()
            .filter(|i| i.method() == "tools/call")
            .count(),
        2
    );
    // ...then replayed, a third echo answered by repeat-last.
    let mut peer = Peer::spawn(stripped_run(
        &[("CI", "true")],
        root.path(),
        &args(&["--cassette", "demo.json"], &server),
    ));
    initialize_demo(&mut peer);
    for _ in 0..3 {
        let answer = peer.request(
            "tools/call",
            json!({"name": "echo", "arguments": {"message": "again"}}),
        );
        assert_eq!(answer.text(), "echo: again", "{:?}", answer.response);
    }
    let (status, stderr) = peer.finish();
    assert!(status.success(), "{stderr}");
    assert!(stderr.contains("mode once (from "), "{stderr}");
    assert!(stderr.contains("replaying"), "{stderr}");
}

#[test]
fn a_bad_project_file_is_an_error_naming_file_and_line() {
    let root = tempfile::tempdir().unwrap();
    let file = root.path().join("mcpcassette.toml");
    for (text, at) in [
        (
            "mode = \"none\"\n\nstrategy = \"keyed\"\n",
            ":3:1: unknown field `strategy`",
        ),
        ("mode = \"recorded\"\n", ":1:8: unknown mode `recorded`"),
    ] {
        std::fs::write(&file, text).unwrap();
        let output = stripped_run(&[("CI", "true")], root.path(), &["--cassette", "c.json"])
            .output()
            .unwrap();
        let stderr = stderr(&output);
        assert_eq!(output.status.code(), Some(2), "{stderr}");
        assert!(
            stderr.contains(&format!("{}{at}", file.display())),
            "{text:?}: {stderr}"
        );
    }
}
