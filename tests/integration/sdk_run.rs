//! `mcpcassette run` launched by the MCP client SDKs exactly as they launch
//! servers by default, with their reduced environment (no `CI`, no
//! `MCPCASSETTE_MODE`): in CI (the test process has CI=true) a missing
//! cassette must fail the handshake clearly and never start the server;
//! outside CI (CI=false) the same launch records, which shows the scripts
//! do reach the server when they should.
//!
//! The SDKs are not vendored: `.ci/run` installs them and runs these tests
//! with `MCPCASSETTE_TS_SDK` naming the installed `@modelcontextprotocol/sdk`
//! package directory and `MCPCASSETTE_PYTHON` a Python with the `mcp`
//! package. Without them the tests fail rather than pass vacuously.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use crate::support;

const TS_VARIABLE: &str = "MCPCASSETTE_TS_SDK";
const PYTHON_VARIABLE: &str = "MCPCASSETTE_PYTHON";

/// The path an environment variable names, or a panic saying how to set it.
fn required(variable: &str, example: &str) -> PathBuf {
    let Some(path) = std::env::var_os(variable) else {
        panic!(
            "{variable} is not set. This test needs a package from a registry: run `bash .ci/run`, \
             or install it yourself and set {variable}={example}"
        );
    };
    let path = std::path::absolute(PathBuf::from(path)).unwrap();
    assert!(
        path.exists(),
        "{variable}={} does not exist",
        path.display()
    );
    path
}

/// What the client script saw, and its stderr (with the server's).
struct Launch {
    outcome: Value,
    stderr: String,
}

/// Runs a client script (`client` with its leading arguments) that starts
/// `mcpcassette run --cassette CASSETTE -- sh -c 'touch MARKER; exec demo'`
/// with the SDK's default environment; the script itself gets `CI=ci`.
fn launch(client: Command, dir: &Path, ci: &str) -> Launch {
    let marker = dir.join("server-started");
    let server = format!(
        "touch '{}'; exec '{}'",
        marker.display(),
        support::demo_server_path().display()
    );
    let mut client = client;
    client
        .env("CI", ci)
        .env_remove("MCPCASSETTE_MODE")
        .env_remove("TF_BUILD")
        .current_dir(dir)
        .arg("--")
        .arg(env!("CARGO_BIN_EXE_mcpcassette"))
        .args(["run", "--cassette", "sdk.json", "--", "sh", "-c", &server]);
    let output = client.output().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(
        output.status.success(),
        "the client script failed: {stdout}\n{stderr}"
    );
    let outcome: Value = serde_json::from_str(stdout.lines().last().unwrap_or_default())
        .unwrap_or_else(|e| panic!("the client script printed no JSON ({e}): {stdout}\n{stderr}"));
    Launch { outcome, stderr }
}

/// In CI: no server, no cassette, a failed handshake and a clear message;
/// outside: recorded.
fn check_both(client: impl Fn() -> Command, parent: &str) {
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("server-started");
    let cassette = dir.path().join("sdk.json");

    let ci = launch(client(), dir.path(), "true");
    assert_eq!(
        ci.outcome["connected"], false,
        "{}\n{}",
        ci.outcome, ci.stderr
    );
    assert!(
        !marker.exists(),
        "the server was started in CI: {}",
        ci.stderr
    );
    assert!(!cassette.exists(), "{}", ci.stderr);
    let said = "mode none (auto: CI detected in the environment of process ";
    assert!(ci.stderr.contains(said), "{}", ci.stderr);
    assert!(
        ci.stderr.contains(&format!("({parent})")),
        "names the client: {}",
        ci.stderr
    );
    assert!(
        ci.stderr
            .contains("sdk.json: no such cassette, and mode `none` never records"),
        "{}",
        ci.stderr
    );

    let local = launch(client(), dir.path(), "false");
    assert_eq!(
        local.outcome["connected"], true,
        "{}\n{}",
        local.outcome, local.stderr
    );
    assert_eq!(local.outcome["server"], "mcpcassette-demo");
    assert!(marker.exists(), "{}", local.stderr);
    assert!(
        local
            .stderr
            .contains("mode once (auto: not in CI): cassette missing: recording"),
        "{}",
        local.stderr
    );
    assert!(cassette.exists(), "{}", local.stderr);
}

#[test]
#[ignore = "needs @modelcontextprotocol/sdk from npm (MCPCASSETTE_TS_SDK); .ci/run installs it and runs ignored tests"]
fn typescript_sdk_default_env_in_ci_never_starts_the_server() {
    let sdk = required(
        TS_VARIABLE,
        ".ci/work/node_modules/@modelcontextprotocol/sdk",
    );
    let script = support::root().join("tests/fixtures/ts/default_env_client.mjs");
    check_both(
        || {
            let mut node = Command::new("node");
            node.arg(&script).arg(&sdk);
            node
        },
        "node",
    );
}

#[test]
#[ignore = "needs the Python mcp SDK from PyPI (MCPCASSETTE_PYTHON); .ci/run installs it and runs ignored tests"]
fn python_sdk_default_env_in_ci_never_starts_the_server() {
    let python = required(PYTHON_VARIABLE, ".ci/work/venv/bin/python");
    let script = support::root().join("tests/fixtures/python/default_env_client.py");
    // The process name the kernel shows: the file run (the venv's link),
    // cut to 15 bytes.
    let name: String = python
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
        .chars()
        .take(15)
        .collect();
    check_both(
        || {
            let mut interpreter = Command::new(&python);
            interpreter.arg(&script);
            interpreter
        },
        &name,
    );
}
