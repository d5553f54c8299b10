//! Shared test support, one place for what several test files need:
//!
//! - here: the binaries under test (`mcpcassette`, the examples) and the
//!   demo server's handshake;
//! - [`cli`]: `mcpcassette replay|record|serve|inspect` started as a child
//!   process, built fluently (`Cli::replay(&path).listen().start()`);
//! - [`http`]: HTTP servers run as child processes ([`http::Served`]);
//! - [`http_client`]: a plain HTTP client (POST, GET streams, SSE) and the
//!   JSON-RPC messages sent through it;
//! - [`peer`]: a scripted stdio client of a child process;
//! - [`clients`]: the hand-written clients the library's `TestClient`
//!   cannot replace, and why;
//! - [`pinned`]: where the ignored interop tests find Node, the npm
//!   packages and the Python interpreters (`MCPCASSETTE_*` variables);
//! - [`process`]: running a child to the end with a deadline;
//! - [`loopback`]: scripted in-process HTTP servers; [`recorder`]: the
//!   HTTP recorder in-process; [`notes`]: the notes server through
//!   `run --scope`; [`oauth`]: rmcp's OAuth client as the OAuth tests
//!   drive it.

pub mod cli;
pub mod clients;
pub mod http;
pub mod http_client;
pub mod loopback;
pub mod notes;
pub mod oauth;
pub mod peer;
pub mod pinned;
pub mod process;
pub mod recorder;

use std::path::PathBuf;
use std::process::Command;
use std::sync::OnceLock;

use serde_json::json;

use peer::{Exchange, Peer};

/// The `mcpcassette` binary under test.
pub fn mcpcassette() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_mcpcassette"));
    command.env("MCPCASSETTE_LOG", "info").env_remove("CI");
    command
}

/// The example server. `cargo test` builds the examples next to the test
/// binaries; when a runner does not (e.g. nextest), they are built here once.
pub fn demo_server_path() -> PathBuf {
    static PATH: OnceLock<PathBuf> = OnceLock::new();
    PATH.get_or_init(|| {
        let exe = std::env::current_exe().unwrap();
        let profile_dir = exe.parent().unwrap().parent().unwrap();
        let path = profile_dir.join("examples").join("demo_server");
        if !path.exists() || !path.with_file_name("demo_client").exists() {
            let status = Command::new(env!("CARGO"))
                .args(["build", "--examples"])
                .status()
                .unwrap();
            assert!(status.success(), "building the examples failed");
        }
        path
    })
    .clone()
}

/// A command that runs the example server.
pub fn demo_server() -> Command {
    Command::new(demo_server_path())
}

/// The repository's root.
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The example client, which runs one full session against a command and
/// prints the transcript as JSON.
pub fn demo_client_transcript(era: &str, command: &Command) -> serde_json::Value {
    let path = demo_server_path().with_file_name("demo_client");
    let output = Command::new(path)
        .args(["--era", era, "--json", "--"])
        .arg(command.get_program())
        .args(command.get_args())
        .envs(command.get_envs().filter_map(|(k, v)| Some((k, v?))))
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "demo_client failed: {}\n{}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).unwrap()
}

/// `mcpcassette record --cassette PATH -- demo_server` (the
/// [`cli::Cli`] builder's command, for a test that adds to it).
pub fn record_demo(cassette: &std::path::Path) -> Command {
    cli::Cli::record(cassette)
        .arg("--")
        .arg(demo_server_path())
        .command()
}

/// `mcpcassette replay PATH` (the [`cli::Cli`] builder's command).
pub fn replay(cassette: &std::path::Path) -> Command {
    cli::Cli::replay(cassette).command()
}

/// The handshake with the example server: `initialize`, answered by the
/// example, then `notifications/initialized`.
pub fn initialize_demo(peer: &mut Peer) {
    let init = peer.request(
        "initialize",
        json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}),
    );
    assert_eq!(init.result()["serverInfo"]["name"], "mcpcassette-demo");
    peer.notify("notifications/initialized", json!({}));
}

/// A stdio "server" for `sh -c` that answers `initialize` properly and
/// `tools/list` with a tool whose inputSchema is not an object schema (a
/// result the schema rejects), then exits with status 3.
pub const BROKEN_SERVER: &str = r#"
read line
printf '%s\n' '{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"broken","version":"1"}}}'
read line
read line
printf '%s\n' '{"jsonrpc":"2.0","id":2,"result":{"tools":[{"name":"t","inputSchema":{"type":"array"}}]}}'
read line
exit 3
"#;

/// Spawns `command` (in front of [`BROKEN_SERVER`]), does the handshake
/// and asks for `tools/list`; returns the peer and that answer.
pub fn list_broken_tools(command: Command) -> (Peer, Exchange) {
    let mut peer = Peer::spawn(command);
    peer.request(
        "initialize",
        json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}),
    );
    peer.notify("notifications/initialized", json!({}));
    let list = peer.request("tools/list", json!({}));
    (peer, list)
}

/// `value` without what two protocol eras spell differently, at any depth:
/// members named in `dropped` are left out, and the objects named in
/// `unnamed` (a server's names for its input requests) become the list of
/// their values, so only the requests and answers themselves compare.
pub fn across_eras(value: &mut serde_json::Value, dropped: &[&str], unnamed: &[&str]) {
    match value {
        serde_json::Value::Object(map) => {
            for key in dropped {
                map.shift_remove(*key);
            }
            for key in unnamed {
                if let Some(serde_json::Value::Object(named)) = map.get(*key) {
                    let values: Vec<serde_json::Value> = named.values().cloned().collect();
                    map.insert((*key).into(), values.into());
                }
            }
            map.values_mut()
                .for_each(|v| across_eras(v, dropped, unnamed));
        }
        serde_json::Value::Array(items) => items
            .iter_mut()
            .for_each(|v| across_eras(v, dropped, unnamed)),
        _ => {}
    }
}
