//! Interop with the official Python MCP SDK, the `mcp` package from PyPI
//! (version pinned in `.ci/requirements.txt`), on both sides of the wire:
//!
//! - its client (`ClientSession` over `stdio_client`,
//!   `tests/peers/python/client.py`) against `replay` of the shipped
//!   cassettes, against `serve` of a fixture, and through `record`;
//! - its high-level server (`MCPServer`, formerly `FastMCP`,
//!   `tests/peers/python/server.py`) recorded by `record`, replayed by
//!   `replay`, and its real traffic checked by `check`.
//!
//! The client script runs one fixed session (handshake, tools, `echo` and
//! `add`, the first resource, the first prompt) and prints what the SDK
//! parsed as one JSON document; runs are compared as whole documents, so
//! any field replay adds, drops or changes is a difference. Both eras are
//! exercised: `initialize` (legacy, 2025-11-25, what `ClientSession`
//! negotiates by default) and `server/discover` (2026-07-28).
//!
//! The SDK is not vendored: `.ci/run` installs it into a virtualenv and runs
//! these tests with `MCPCASSETTE_PYTHON` naming that venv's interpreter.
//! Without the variable the tests fail rather than pass vacuously, so
//! `cargo test -- --ignored` never reports a false success.

use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus};
use std::time::Duration;

use serde_json::{Value, json};

use crate::support;
use crate::support::pinned::python;

/// How long one run of the client script may take (it takes about a
/// second; the SDK waits up to 2 s for a server to exit after stdin closes).
const TIMEOUT: Duration = Duration::from_secs(60);

/// A script under `tests/peers/python/`.
fn script(name: &str) -> PathBuf {
    support::root().join("tests/peers/python").join(name)
}

/// `python server.py`: the SDK's server.
fn python_server(python: &Path) -> Command {
    let mut command = Command::new(python);
    command.arg(script("server.py"));
    command
}

/// What one run of the client script saw, and the server side's stderr
/// (the client passes its server's stderr through).
struct Run {
    transcript: Value,
    stderr: String,
}

/// Runs the client script in `era` against `server` (its program, arguments
/// and environment changes), which must succeed.
fn client(python: &Path, era: &str, server: &Command) -> Run {
    let mut command = Command::new(python);
    command
        .arg(script("client.py"))
        .args(["--era", era, "--"])
        .arg(server.get_program())
        .args(server.get_args());
    // The script hands its whole environment to the server.
    for (key, value) in server.get_envs() {
        match value {
            Some(value) => command.env(key, value),
            None => command.env_remove(key),
        };
    }
    let what = format!("the Python client ({era}) against {server:?}");
    let (status, stdout, stderr) = run(command, &what);
    assert!(
        status.success(),
        "{what} exited with {status}; stderr:\n{stderr}"
    );
    let transcript = serde_json::from_str(&stdout)
        .unwrap_or_else(|e| panic!("{what} printed no JSON ({e}):\n{stdout}\nstderr:\n{stderr}"));
    Run { transcript, stderr }
}

/// Runs `command` to the end with a deadline; returns its status, stdout
/// and stderr.
fn run(command: Command, what: &str) -> (ExitStatus, String, String) {
    let done = support::process::run_with_deadline(command, TIMEOUT, what);
    (done.status, done.stdout, done.stderr)
}

/// `mcpcassette replay --report REPORT CASSETTE`.
fn replay(cassette: &Path, report: &Path) -> Command {
    let mut command = support::mcpcassette();
    command
        .arg("replay")
        .arg("--report")
        .arg(report)
        .arg(cassette);
    command
}

/// The report `replay --report` wrote.
fn read_report(path: &Path) -> Value {
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("replay wrote no report at {}: {e}", path.display()));
    serde_json::from_str(&text).unwrap()
}

/// Methods of the recorded requests the report lists as never used.
fn unused_methods(report: &Value) -> Vec<String> {
    report["unused"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| u["message"]["method"].as_str().unwrap_or("?").to_owned())
        .collect()
}

/// The official schema of `version` (test data beside the repository, as
/// for `schema_crosscheck`); a panic when it is missing.
fn official_schema(version: &str) -> PathBuf {
    let dir = support::pinned::schema_dir();
    let path = dir.join(version).join("schema.json");
    assert!(
        path.is_file(),
        "the official MCP schema {} is missing (set MCPCASSETTE_SCHEMA_DIR to the folder \
         holding <version>/schema.json)",
        path.display()
    );
    path
}

/// The text of the first content item of a result in a transcript.
fn text(result: &Value) -> &str {
    result["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("no text content in {result}"))
}

/// What the client saw of the example server (live or replayed): the
/// answers the shipped cassettes hold.
fn assert_demo_answers(t: &Value) {
    assert_eq!(
        t["calls"]["echo"]["content"],
        json!([{"type": "text", "text": "echo: hello"}])
    );
    assert_eq!(
        t["calls"]["add"]["content"],
        json!([{"type": "text", "text": "42"}])
    );
    assert_eq!(t["calls"]["add"]["structuredContent"], json!({"sum": 42}));
    assert_eq!(t["read"]["uri"], "demo://readme");
    assert_eq!(
        t["read"]["result"]["contents"][0]["text"],
        "# mcpcassette demo\nA tiny server used by mcpcassette's tests."
    );
    assert_eq!(t["prompt"]["name"], "greet");
    assert_eq!(
        t["prompt"]["result"]["messages"],
        json!([{"role": "user", "content": {"type": "text", "text": "Say hello to Ada."}}])
    );
}

/// The Python client against the example server live and against replay of
/// a shipped cassette: the same document, from recorded answers only.
fn client_replays_shipped(era: &str, cassette_name: &str, version: &str) {
    let python = python();
    let dir = tempfile::tempdir().unwrap();
    let report = dir.path().join("report.json");
    let cassette = support::root().join("cassettes").join(cassette_name);

    let live = client(&python, era, &support::demo_server());
    let replayed = client(&python, era, &replay(&cassette, &report));
    assert_eq!(
        replayed.transcript, live.transcript,
        "replay of {cassette_name} differs from the live example server; replay's stderr:\n{}",
        replayed.stderr
    );
    assert_demo_answers(&replayed.transcript);

    // The SDK negotiated the cassette's own version: what it offers
    // (2025-11-25 by `initialize`, 2026-07-28 by `server/discover`) is what
    // was recorded, so replay had no version to refuse or downgrade.
    let loaded = mcpcassette::cassette::load(&cassette).unwrap();
    assert_eq!(loaded.protocol.version.as_deref(), Some(version));
    assert_eq!(replayed.transcript["protocolVersion"], version);

    // Every request the SDK sent was answered from the recording; nothing
    // missed, the handshake included, although the SDK's handshake differs
    // from the recorded one (another clientInfo, no capabilities; replay
    // answers handshakes whatever they say). The SDK sends its list
    // requests without `params`, recorded with `params: {}`; they match.
    let handshake = if era == "modern" {
        "server/discover"
    } else {
        "initialize"
    };
    let recorded = loaded
        .interactions
        .iter()
        .find(|i| i.method() == handshake)
        .and_then(|i| i.request())
        .expect("the cassette holds the handshake");
    let recorded_client = if era == "modern" {
        &recorded["params"]["_meta"]["io.modelcontextprotocol/clientInfo"]
    } else {
        &recorded["params"]["clientInfo"]
    };
    assert_eq!(
        recorded_client["name"], "demo_client",
        "the cassette was recorded by another client than the SDK's"
    );
    let report = read_report(&report);
    assert_eq!(report["misses"], json!([]), "replay missed requests");
    let unused = unused_methods(&report);
    assert!(
        !unused.iter().any(|m| m == handshake),
        "the recorded {handshake} answered the SDK's: unused {unused:?}"
    );
    // The SDK asked each list once; the cassette has each once.
    for method in ["tools/list", "resources/list", "prompts/list"] {
        assert!(
            !unused.iter().any(|m| m == method),
            "{method} was answered from the recording: unused {unused:?}"
        );
    }
}

#[test]
#[ignore = "needs the Python mcp SDK from PyPI; .ci/run installs it and runs ignored tests"]
fn python_sdk_client_replays_the_shipped_cassette() {
    client_replays_shipped("legacy", "demo-legacy.json", "2025-11-25");
}

#[test]
#[ignore = "needs the Python mcp SDK from PyPI; .ci/run installs it and runs ignored tests"]
fn python_sdk_client_replays_the_shipped_modern_cassette() {
    client_replays_shipped("modern", "demo-modern.json", "2026-07-28");
}

#[test]
#[ignore = "needs the Python mcp SDK from PyPI; .ci/run installs it and runs ignored tests"]
fn python_sdk_server_records_and_replays() {
    let python = python();
    let dir = tempfile::tempdir().unwrap();
    for (era, version) in [("legacy", "2025-11-25"), ("modern", "2026-07-28")] {
        let cassette = dir.path().join(format!("{era}.json"));
        let report = dir.path().join(format!("{era}-report.json"));

        // The SDK's client against the SDK's server: live, through record,
        // and from replay of what record wrote.
        let live = client(&python, era, &python_server(&python));
        let mut record = support::mcpcassette();
        record
            .arg("record")
            .arg("--cassette")
            .arg(&cassette)
            .arg("--")
            .arg(&python)
            .arg(script("server.py"));
        let recorded = client(&python, era, &record);
        let replayed = client(&python, era, &replay(&cassette, &report));
        assert_eq!(
            recorded.transcript, live.transcript,
            "{era}: through record differs from live; record's stderr:\n{}",
            recorded.stderr
        );
        assert_eq!(
            replayed.transcript, recorded.transcript,
            "{era}: replay differs from the recording; replay's stderr:\n{}",
            replayed.stderr
        );

        // What the SDK's server answers (and so what replay gave back).
        let t = &replayed.transcript;
        assert_eq!(t["protocolVersion"], version);
        assert_eq!(text(&t["calls"]["echo"]), "echo: hello");
        assert_eq!(
            t["calls"]["add"]["structuredContent"],
            json!({"result": 42})
        );
        assert_eq!(
            t["read"]["result"]["contents"][0]["text"],
            "Recorded once, replayed forever."
        );
        assert_eq!(
            t["prompt"]["result"]["messages"][0]["content"]["text"],
            "Say hello to Ada."
        );

        // The cassette describes the session, and replay used all of it.
        let loaded = mcpcassette::cassette::load(&cassette).unwrap();
        assert_eq!(loaded.protocol.version.as_deref(), Some(version));
        assert_eq!(
            loaded.server.as_ref().unwrap().info["name"],
            "mcpcassette-python-fixture"
        );
        let report = read_report(&report);
        assert_eq!(report["misses"], json!([]), "{era}: replay missed requests");
        assert_eq!(
            report["unused"],
            json!([]),
            "{era}: recorded but not replayed"
        );

        // The SDK's real traffic passes `check`: the built-in rules and the
        // official schema of the negotiated version.
        for schema in [None, Some(official_schema(version))] {
            let mut check = support::mcpcassette();
            check.arg("check");
            let rules = match &schema {
                Some(schema) => {
                    check.arg("--schema").arg(schema);
                    format!("--schema {}", schema.display())
                }
                None => "(built-in rules)".to_owned(),
            };
            let output = check.arg(&cassette).output().unwrap();
            assert!(
                output.status.success(),
                "{era}: check {rules} rejects the SDK's traffic ({}):\n{}{}",
                output.status,
                String::from_utf8_lossy(&output.stdout),
                String::from_utf8_lossy(&output.stderr)
            );
        }
    }
}

/// A fixture with a case for `echo`, a tool without answers (`add`, which
/// gets the generated result), a text resource and a prompt with a case.
const FIXTURE: &str = r#"{
  "fixture_version": 1,
  "server": {"name": "python-interop-fixture", "version": "1.0.0"},
  "tools": [
    {
      "name": "echo",
      "description": "Echoes a message back.",
      "inputSchema": {"type": "object", "properties": {"message": {"type": "string"}}, "required": ["message"]},
      "cases": [
        {"when": {"message": "hello"},
         "result": {"content": [{"type": "text", "text": "the fixture says hello"}]}}
      ],
      "result": {"content": [{"type": "text", "text": "the fixture says something"}]}
    },
    {
      "name": "add",
      "inputSchema": {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}, "required": ["a", "b"]}
    }
  ],
  "resources": [
    {"uri": "fixture://motd", "name": "motd", "mimeType": "text/plain", "text": "served from a fixture"}
  ],
  "prompts": [
    {"name": "greet", "arguments": [{"name": "name", "required": true}],
     "cases": [{"when": {"name": "Ada"},
                "result": {"messages": [{"role": "user", "content": {"type": "text", "text": "Hello, Ada."}}]}}]}
  ]
}
"#;

#[test]
#[ignore = "needs the Python mcp SDK from PyPI; .ci/run installs it and runs ignored tests"]
fn python_sdk_client_against_a_fixture() {
    let python = python();
    let dir = tempfile::tempdir().unwrap();
    let fixture = dir.path().join("fixture.json");
    std::fs::write(&fixture, FIXTURE).unwrap();
    let checked = support::mcpcassette()
        .arg("check")
        .arg(&fixture)
        .output()
        .unwrap();
    assert!(
        checked.status.success(),
        "the fixture passes check:\n{}",
        String::from_utf8_lossy(&checked.stdout)
    );

    for (era, version) in [("legacy", "2025-11-25"), ("modern", "2026-07-28")] {
        let mut serve = support::mcpcassette();
        serve.arg("serve").arg(&fixture);
        let t = client(&python, era, &serve).transcript;

        assert_eq!(t["protocolVersion"], version, "{era}");
        let names: Vec<&Value> = t["tools"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| &t["name"])
            .collect();
        assert_eq!(names, ["echo", "add"], "{era}");
        // The case's answer, not the fallback.
        assert_eq!(text(&t["calls"]["echo"]), "the fixture says hello", "{era}");
        // No answer defined: the generated one, naming the arguments.
        assert_eq!(text(&t["calls"]["add"]), r#"add({"a":2,"b":40})"#, "{era}");
        let mut read = json!({"uri": "fixture://motd", "result": {"contents": [
            {"uri": "fixture://motd", "mimeType": "text/plain", "text": "served from a fixture"}
        ]}});
        if era == "modern" {
            // The 2026-07-28 fields `serve` adds to a complete, cacheable result.
            read["result"]["resultType"] = json!("complete");
            read["result"]["ttlMs"] = json!(0);
            read["result"]["cacheScope"] = json!("private");
        }
        assert_eq!(t["read"], read, "{era}");
        assert_eq!(
            t["prompt"]["result"]["messages"],
            json!([{"role": "user", "content": {"type": "text", "text": "Hello, Ada."}}]),
            "{era}"
        );
    }
}

/// The Python client of each era against replay of the cassette recorded
/// in the other era: what the SDK parsed is what it parses from the live
/// example server in its own era, but for what a legacy recording cannot
/// hold: caching hints (`ttlMs`, `cacheScope`) and every version the
/// server supports (it holds the one negotiated).
#[test]
#[ignore = "needs the Python mcp SDK from PyPI; .ci/run installs it and runs ignored tests"]
fn python_sdk_clients_replay_cassettes_of_the_other_era() {
    let python = python();
    for (era, other) in [
        ("legacy", "demo-modern.json"),
        ("modern", "demo-legacy.json"),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let report = dir.path().join("report.json");
        let cassette = support::root().join("cassettes").join(other);
        let mut live = client(&python, era, &support::demo_server()).transcript;
        let replayed = client(&python, era, &replay(&cassette, &report));
        let mut transcript = replayed.transcript.clone();
        for t in [&mut live, &mut transcript] {
            support::across_eras(t, &["ttlMs", "cacheScope", "supportedVersions"], &[]);
        }
        assert_eq!(
            transcript, live,
            "a {era} client against {other} differs from the live server; replay's stderr:\n{}",
            replayed.stderr
        );
        assert_demo_answers(&replayed.transcript);
        assert!(
            replayed
                .stderr
                .contains("handshakes and results are translated"),
            "{}",
            replayed.stderr
        );
        assert_eq!(
            read_report(&report)["misses"],
            json!([]),
            "replay missed requests"
        );
    }
}
