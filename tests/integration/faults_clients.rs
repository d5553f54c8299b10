//! Every fault kind of the faults overlay (`replay --faults`) against the
//! real MCP clients CI runs, over stdio and Streamable HTTP, from a legacy
//! and a 2026-07-28 cassette: what the *client* sees is asserted (the
//! exception type and code its SDK raises, `isError`, a client-side timeout
//! and the report's `cancelled`, the error after a hang-up, 404 and 503
//! handling, `list_changed` and the changed `tools/list`, dropped progress, a
//! mutated result, a delay measured by the client).
//!
//! | test | client | eras |
//! |---|---|---|
//! | `faults_clients_ts` | `@modelcontextprotocol/sdk` 1.32.2 (`tests/peers/faults/ts_client.mjs`) | legacy client only (1.x has no 2026-07-28); the modern cassette is served to it across eras |
//! | `faults_clients_mcp` | Python `mcp` 2.3.0 `ClientSession` (`py_client.py --sdk mcp`) | `initialize` on the legacy cassette, `discover()` on the modern one |
//! | `faults_clients_fastmcp` | fastmcp 4.2.3 `Client` (`py_client.py --sdk fastmcp`) | `mode="legacy"` on the legacy cassette, its default `mode="auto"` on the modern one |
//! | `faults_clients_rmcp` | rmcp 3.11 (in process) | `initialize` on the legacy cassette, `Discover` on the modern one |
//!
//! Each client runs one scenario per process (a scenario is an `op`: `echo`,
//! `count` with progress, or `changed`: echo, wait for list_changed,
//! tools/list, call the removed tool) and prints one JSON outcome; the table
//! [`SCENARIOS`] pairs each fault with its op and `expect` says what each
//! client must have seen. `http` faults and the SSE hang-up exist only over
//! HTTP (replay refuses an `http` rule over stdio). Cells listed in
//! [`KNOWN_BUGS`] are bugs of ours: they are run and printed, and fail the
//! test once they pass (so the list is kept true).
//!
//! Needs (`.ci/run` sets them): `MCPCASSETTE_NODE_MODULES`,
//! `MCPCASSETTE_PYTHON` (mcp 2.3.0), `MCPCASSETTE_FASTMCP_PYTHON`. The rmcp
//! test needs nothing but is ignored too, to run with its siblings:
//! `cargo test --test integration -- --ignored faults_clients`.

#![allow(deprecated)]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support;
use crate::support::http::Served;
use crate::support::pinned::{fastmcp_python, node_modules, python};
use crate::support::process::run_with_deadline;

/// How long one client run may take (a scenario takes well under 5 s).
const CLIENT_DEADLINE: Duration = Duration::from_secs(60);
/// How many cells of a client run at once.
const PARALLEL: usize = 8;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Transport {
    Stdio,
    Http,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Era {
    Legacy,
    Modern,
}

impl Era {
    fn name(self) -> &'static str {
        match self {
            Era::Legacy => "legacy",
            Era::Modern => "modern",
        }
    }
    fn cassette(self) -> PathBuf {
        support::root().join(match self {
            Era::Legacy => "cassettes/demo-legacy.json",
            Era::Modern => "cassettes/demo-modern.json",
        })
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Sdk {
    Ts,
    Mcp,
    Fastmcp,
    Rmcp,
}

impl Sdk {
    fn name(self) -> &'static str {
        match self {
            Sdk::Ts => "ts",
            Sdk::Mcp => "mcp",
            Sdk::Fastmcp => "fastmcp",
            Sdk::Rmcp => "rmcp",
        }
    }
}

/// One row of the matrix: a fault (its rules), what the client does, with
/// which request timeout, over which transports.
struct Scenario {
    name: &'static str,
    rules: fn() -> Value,
    op: &'static str,
    timeout_ms: u64,
    http_only: bool,
}

/// The schema `tools_changed` gives `echo`.
fn changed_schema() -> Value {
    json!({"type": "object", "properties": {"text": {"type": "string"}}})
}

const SCENARIOS: &[Scenario] = &[
    Scenario {
        name: "error",
        rules: || json!([{"method": "tools/call", "name": "echo", "error": {"code": -32050, "message": "injected fault", "data": {"why": "test"}}}]),
        op: "echo",
        timeout_ms: 5000,
        http_only: false,
    },
    Scenario {
        name: "tool_error",
        rules: || json!([{"name": "echo", "tool_error": "injected failure"}]),
        op: "echo",
        timeout_ms: 5000,
        http_only: false,
    },
    Scenario {
        name: "delay",
        rules: || json!([{"name": "echo", "delay": 600}]),
        op: "echo",
        timeout_ms: 5000,
        http_only: false,
    },
    Scenario {
        name: "hang",
        rules: || json!([{"name": "echo", "hang": true}]),
        op: "echo",
        timeout_ms: 500,
        http_only: false,
    },
    Scenario {
        name: "disconnect",
        rules: || json!([{"name": "echo", "disconnect": {"exit": 3}}]),
        op: "echo",
        timeout_ms: 3000,
        http_only: false,
    },
    Scenario {
        name: "disconnect_sse",
        rules: || json!([{"name": "count", "disconnect": {"after": 1}}]),
        op: "count",
        timeout_ms: 1500,
        http_only: true,
    },
    Scenario {
        name: "malformed",
        rules: || json!([{"name": "echo", "malformed": "not_json"}]),
        op: "echo",
        timeout_ms: 800,
        http_only: false,
    },
    Scenario {
        name: "http_503",
        rules: || json!([{"name": "echo", "http": {"status": 503, "retry_after": 7, "body": "busy"}}]),
        op: "echo",
        timeout_ms: 3000,
        http_only: true,
    },
    Scenario {
        name: "http_404",
        rules: || json!([{"name": "echo", "session": 1, "http": 404}]),
        op: "echo",
        timeout_ms: 3000,
        http_only: true,
    },
    Scenario {
        name: "progress_control",
        rules: || json!([]),
        op: "count",
        timeout_ms: 5000,
        http_only: false,
    },
    Scenario {
        name: "drop_notifications",
        rules: || json!([{"name": "count", "drop_notifications": ["notifications/progress"]}]),
        op: "count",
        timeout_ms: 5000,
        http_only: false,
    },
    Scenario {
        name: "tools_changed",
        rules: || json!([{"name": "echo", "tools_changed": {"remove": ["add"], "change": {"echo": {"inputSchema": changed_schema()}}}}]),
        op: "changed",
        timeout_ms: 5000,
        http_only: false,
    },
    Scenario {
        name: "mutate",
        rules: || json!([{"name": "echo", "mutate": [{"op": "replace", "path": "/content/0/text", "value": "mutated"}]}]),
        op: "echo",
        timeout_ms: 5000,
        http_only: false,
    },
];

/// Cells that fail because of a bug on our side: (sdk, scenario, transport
/// or None for both, era, the bug).
const KNOWN_BUGS: &[(Sdk, &str, Option<Transport>, Era, &str)] = &[];

/// What one cell produced.
struct Cell {
    outcome: Value,
    report: Value,
    log: String,
}

fn get<'a>(v: &'a Value, pointer: &str) -> &'a Value {
    v.pointer(pointer).unwrap_or(&Value::Null)
}

fn check(cond: bool, what: impl Into<String>, failures: &mut Vec<String>) {
    if !cond {
        failures.push(what.into());
    }
}

/// A JSON array of numbers (1 and 1.0 alike); empty when it is none.
fn numbers(v: &Value) -> Vec<f64> {
    v.as_array()
        .map_or(Vec::new(), |a| a.iter().filter_map(Value::as_f64).collect())
}

/// The text of a result's first content item (the shapes of all clients).
fn first_text(result: &Value) -> Option<&str> {
    result.pointer("/content/0/text").and_then(Value::as_str)
}

/// What `sdk` must have seen for `scenario`; the failures, empty when all holds.
fn expect(sdk: Sdk, scenario: &str, transport: Transport, era: Era, cell: &Cell) -> Vec<String> {
    let o = &cell.outcome;
    let mut f = Vec::new();
    let err_type = get(o, "/error/type").as_str().unwrap_or("");
    let err_code = get(o, "/error/code").as_i64();
    let err_msg = get(o, "/error/message").as_str().unwrap_or("");
    let text = first_text(get(o, "/result"));
    let report_faults = &cell.report["faults"];
    let fired = report_faults["fired"].as_array().map_or(0, Vec::len);
    if scenario != "progress_control" {
        check(fired >= 1, "the report lists no fired rule", &mut f);
    }
    match scenario {
        "error" => {
            check(err_code == Some(-32050), "error code -32050", &mut f);
            let want = match sdk {
                Sdk::Ts => "McpError",
                Sdk::Mcp | Sdk::Fastmcp => "MCPError",
                Sdk::Rmcp => "McpError",
            };
            check(err_type == want, format!("error type {want}"), &mut f);
            check(err_msg.contains("injected fault"), "error message", &mut f);
        }
        "tool_error" => match sdk {
            // fastmcp raises ToolError with the content's text by default.
            Sdk::Fastmcp => {
                check(err_type == "ToolError", "fastmcp raises ToolError", &mut f);
                check(err_msg == "injected failure", "ToolError message", &mut f);
            }
            _ => {
                check(
                    get(o, "/result/isError") == &json!(true),
                    "isError true",
                    &mut f,
                );
                check(
                    text == Some("injected failure"),
                    "the tool_error text",
                    &mut f,
                );
            }
        },
        "delay" => {
            check(text == Some("echo: hello"), "the recorded echo", &mut f);
            let elapsed = get(o, "/elapsedMs").as_u64().unwrap_or(0);
            check(
                elapsed >= 600,
                format!("elapsed {elapsed} ms >= 600"),
                &mut f,
            );
        }
        "hang" => {
            match sdk {
                Sdk::Rmcp => check(err_type == "Timeout", "rmcp ServiceError::Timeout", &mut f),
                Sdk::Ts => {
                    check(
                        err_type == "McpError" && err_code == Some(-32001),
                        "McpError -32001",
                        &mut f,
                    );
                    check(
                        err_msg == "MCP error -32001: Request timed out",
                        "timeout message",
                        &mut f,
                    );
                }
                Sdk::Mcp | Sdk::Fastmcp => {
                    check(
                        err_type == "MCPError" && err_code == Some(-32001),
                        "MCPError -32001",
                        &mut f,
                    );
                    check(
                        err_msg == "Request 'tools/call' timed out",
                        "timeout message",
                        &mut f,
                    );
                }
            }
            let elapsed = get(o, "/elapsedMs").as_u64().unwrap_or(0);
            check(
                elapsed >= 500,
                "the client's timeout fired after 500 ms",
                &mut f,
            );
            check(
                report_faults["hung"][0]["cancelled"] == json!(true),
                "the report shows the hung request cancelled",
                &mut f,
            );
        }
        "disconnect" => {
            match (sdk, transport) {
                (Sdk::Ts, Transport::Stdio) => {
                    check(
                        err_type == "McpError" && err_code == Some(-32000),
                        "McpError -32000",
                        &mut f,
                    );
                    check(
                        get(o, "/closed") == &json!(true),
                        "client.onclose called",
                        &mut f,
                    );
                }
                (Sdk::Ts, Transport::Http) => {
                    check(
                        err_type == "TypeError" && err_msg == "fetch failed",
                        "TypeError fetch failed",
                        &mut f,
                    );
                }
                (Sdk::Mcp | Sdk::Fastmcp, Transport::Stdio) => {
                    check(
                        err_type == "MCPError" && err_code == Some(-32000),
                        "MCPError -32000",
                        &mut f,
                    );
                    check(err_msg == "Connection closed", "Connection closed", &mut f);
                }
                (Sdk::Mcp, Transport::Http) => {
                    // httpx's RemoteProtocolError is not caught by the SDK:
                    // it tears the transport down and escapes from
                    // `streamable_http_client` as an exception group.
                    check(
                        get(o, "/fatal/type") == &json!("RemoteProtocolError")
                            && get(o, "/fatal/group") == &json!(true),
                        "RemoteProtocolError in an exception group from the transport",
                        &mut f,
                    );
                    check(get(o, "/result").is_null(), "no result", &mut f);
                }
                (Sdk::Fastmcp, Transport::Http) => {
                    // fastmcp watches its session task: the call fails.
                    check(
                        err_type == "MCPError" && err_code == Some(-32000),
                        "MCPError -32000",
                        &mut f,
                    );
                    check(err_msg == "Connection closed", "Connection closed", &mut f);
                }
                (Sdk::Rmcp, Transport::Stdio) => {
                    check(
                        err_type == "TransportClosed",
                        "rmcp TransportClosed",
                        &mut f,
                    );
                }
                (Sdk::Rmcp, Transport::Http) => {
                    check(
                        err_type == "TransportSend" || err_type == "TransportClosed",
                        "rmcp transport error",
                        &mut f,
                    );
                }
            }
            if transport == Transport::Stdio {
                check(
                    report_faults["disconnected"] == json!(3),
                    "the report's disconnected exit 3",
                    &mut f,
                );
            }
        }
        "disconnect_sse" => {
            check(
                numbers(get(o, "/progress")) == [1.0],
                "the one progress event before the hang-up",
                &mut f,
            );
            check(get(o, "/result").is_null(), "no result", &mut f);
            match sdk {
                Sdk::Ts => check(
                    err_code == Some(-32001),
                    "TS waits for its timeout (-32001)",
                    &mut f,
                ),
                Sdk::Mcp | Sdk::Fastmcp => check(
                    err_type == "MCPError" && err_code.is_some_and(|c| c == -32000 || c == -32001),
                    "MCPError -32000 (stream ended) or -32001",
                    &mut f,
                ),
                Sdk::Rmcp => check(!err_type.is_empty(), "an rmcp error", &mut f),
            }
        }
        "malformed" => match (sdk, transport) {
            (Sdk::Ts, Transport::Stdio) => {
                check(
                    get(o, "/onerror/0") == &json!("SyntaxError"),
                    "onerror(SyntaxError)",
                    &mut f,
                );
                check(
                    err_code == Some(-32001),
                    "the request then times out",
                    &mut f,
                );
            }
            (Sdk::Ts, Transport::Http) => check(
                err_type == "SyntaxError",
                "SyntaxError from response.json()",
                &mut f,
            ),
            (Sdk::Mcp | Sdk::Fastmcp, Transport::Stdio) => {
                check(
                    get(o, "/handlerErrors/0") == &json!("ValidationError"),
                    "message_handler got the ValidationError",
                    &mut f,
                );
                check(
                    err_code == Some(-32001),
                    "the request then times out",
                    &mut f,
                );
            }
            (Sdk::Mcp | Sdk::Fastmcp, Transport::Http) => {
                check(
                    err_type == "MCPError" && err_code == Some(-32700),
                    "MCPError -32700",
                    &mut f,
                );
                check(
                    err_msg.starts_with("Failed to parse JSON response"),
                    "parse message",
                    &mut f,
                );
            }
            (Sdk::Rmcp, Transport::Stdio) => {
                check(err_type == "Timeout", "ignored line, then Timeout", &mut f)
            }
            (Sdk::Rmcp, Transport::Http) => check(
                err_type == "TransportSend" && err_msg.contains("could not parse JSON"),
                "TransportSend: could not parse JSON response",
                &mut f,
            ),
        },
        "http_503" => match sdk {
            Sdk::Ts => {
                check(
                    err_type == "StreamableHTTPError" && err_code == Some(503),
                    "StreamableHTTPError 503",
                    &mut f,
                );
                check(err_msg.ends_with("busy"), "the body in the message", &mut f);
            }
            Sdk::Mcp | Sdk::Fastmcp => {
                check(
                    err_type == "MCPError" && err_code == Some(-32603),
                    "MCPError -32603",
                    &mut f,
                );
                check(
                    err_msg == "Server returned an error response",
                    "message",
                    &mut f,
                );
            }
            Sdk::Rmcp => {
                check(err_type == "TransportSend", "TransportSend", &mut f);
                check(err_msg.contains("503"), "status 503", &mut f);
                check(
                    err_msg.contains("retry_after: Some(\"7\")"),
                    "Retry-After read: 7",
                    &mut f,
                );
            }
        },
        "http_404" => match (sdk, era) {
            (Sdk::Ts, _) => check(
                err_type == "StreamableHTTPError" && err_code == Some(404),
                "StreamableHTTPError 404",
                &mut f,
            ),
            // The 404's body is a JSON-RPC error (as the TS SDK's servers
            // send): the SDK raises that error, not its own "Session
            // terminated" (-32600), which is only for a body that is not one.
            (Sdk::Mcp | Sdk::Fastmcp, _) => {
                check(
                    err_type == "MCPError" && err_code == Some(-32001),
                    "MCPError -32001",
                    &mut f,
                );
                check(err_msg == "Session not found", "Session not found", &mut f);
            }
            // rmcp re-initializes on 404 and retries once: the call succeeds
            // in a second session.
            (Sdk::Rmcp, Era::Legacy) => {
                check(
                    text == Some("echo: hello"),
                    "re-initialized, then the recorded echo",
                    &mut f,
                );
                check(
                    report_faults["fired"][0]["session"] == json!(1),
                    "the 404 in session 1",
                    &mut f,
                );
            }
            // Without a session to renew (2026-07-28 is sessionless) rmcp
            // neither surfaces the 404 nor recovers: its own timeout fires.
            (Sdk::Rmcp, Era::Modern) => {
                check(err_type == "Timeout", "rmcp waits for its timeout", &mut f)
            }
        },
        "progress_control" => {
            check(
                numbers(get(o, "/progress")) == [1.0, 2.0, 3.0],
                "3 progress events without the fault",
                &mut f,
            );
            check(text == Some("counted 3 steps"), "the count result", &mut f);
        }
        "drop_notifications" => {
            check(
                get(o, "/progress") == &json!([]),
                "no progress event (the control sees 3)",
                &mut f,
            );
            check(
                text == Some("counted 3 steps"),
                "the count result still arrives",
                &mut f,
            );
        }
        "tools_changed" => {
            check(
                text == Some("echo: hello"),
                "the hit request answered as recorded",
                &mut f,
            );
            check(
                get(o, "/listChanged") == &json!(true),
                "notifications/tools/list_changed seen",
                &mut f,
            );
            let tools = get(o, "/toolsAfter");
            check(
                tools
                    .as_array()
                    .is_some_and(|t| t.contains(&json!("echo")) && !t.contains(&json!("add"))),
                "tools/list without add",
                &mut f,
            );
            check(
                get(o, "/changedSchema") == &changed_schema(),
                "echo's changed inputSchema",
                &mut f,
            );
            check(
                get(o, "/afterChange/error/code") == &json!(-32602),
                "calling the removed tool: -32602",
                &mut f,
            );
        }
        "mutate" => check(text == Some("mutated"), "the mutated text", &mut f),
        other => panic!("no expectation for {other}"),
    }
    f
}

// ---------------------------------------------------------------------------
// Running cells
// ---------------------------------------------------------------------------

/// `mcpcassette replay CASSETTE --faults F --report R --on-exhausted
/// repeat-last` (the Python SDKs list tools before calls: a cassette
/// recorded with one `tools/list` answers them all).
fn replay_args(era: Era, faults: &Path, report: &Path) -> Vec<std::ffi::OsString> {
    vec![
        "replay".into(),
        era.cassette().into(),
        "--faults".into(),
        faults.into(),
        "--report".into(),
        report.into(),
        "--on-exhausted".into(),
        "repeat-last".into(),
    ]
}

fn read_report(path: &Path) -> Value {
    let mut last = String::new();
    let deadline = Instant::now() + Duration::from_secs(10);
    while Instant::now() < deadline {
        if let Ok(text) = std::fs::read_to_string(path) {
            if let Ok(value) = serde_json::from_str(&text) {
                return value;
            }
            last = text;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    panic!("no report at {} ({last})", path.display())
}

/// The command line of a script client up to its target.
fn script_client(sdk: Sdk, era: Era, op: &str, timeout_ms: u64) -> Command {
    let fixtures = support::root().join("tests/peers/faults");
    match sdk {
        Sdk::Ts => {
            let modules = node_modules(&[]);
            let mut c = Command::new("node");
            c.arg(fixtures.join("ts_client.mjs"))
                .args([
                    "--op",
                    op,
                    "--timeout",
                    &timeout_ms.to_string(),
                    "--node-modules",
                ])
                .arg(modules);
            c
        }
        Sdk::Mcp | Sdk::Fastmcp => {
            let python = if sdk == Sdk::Mcp {
                python()
            } else {
                fastmcp_python()
            };
            let mut c = Command::new(python);
            c.arg(fixtures.join("py_client.py"))
                .args(["--sdk", sdk.name(), "--era", era.name(), "--op", op])
                .args(["--timeout", &format!("{}", timeout_ms as f64 / 1000.0)]);
            c
        }
        Sdk::Rmcp => unreachable!(),
    }
}

fn run_cell(sdk: Sdk, scenario: &Scenario, transport: Transport, era: Era) -> Cell {
    let dir = tempfile::tempdir().unwrap();
    let faults = dir.path().join("faults.json");
    let report = dir.path().join("report.json");
    std::fs::write(&faults, (scenario.rules)().to_string()).unwrap();
    let args = replay_args(era, &faults, &report);
    let binary = PathBuf::from(env!("CARGO_BIN_EXE_mcpcassette"));
    let what = format!(
        "{} {} {:?} {}",
        sdk.name(),
        scenario.name,
        transport,
        era.name()
    );
    let (outcome, log) = match transport {
        Transport::Stdio => {
            let (outcome, log) = if sdk == Sdk::Rmcp {
                rmcp_client::run(
                    scenario.op,
                    scenario.timeout_ms,
                    era,
                    rmcp_client::Target::Stdio(binary, args),
                )
            } else {
                let mut c = script_client(sdk, era, scenario.op, scenario.timeout_ms);
                c.arg("--stdio").arg("--").arg(&binary).args(&args);
                script_outcome(c, &what)
            };
            (outcome, log)
        }
        Transport::Http => {
            let mut command = support::mcpcassette();
            command.args(&args).args(["--listen", "127.0.0.1:0"]);
            let served =
                Served::start_announced(command, Stdio::null(), "", Duration::from_secs(30));
            let url = served.url.clone();
            let result = if sdk == Sdk::Rmcp {
                rmcp_client::run(
                    scenario.op,
                    scenario.timeout_ms,
                    era,
                    rmcp_client::Target::Http(url),
                )
            } else {
                let mut c = script_client(sdk, era, scenario.op, scenario.timeout_ms);
                c.arg("--http").arg(&url);
                script_outcome(c, &what)
            };
            served.stop();
            result
        }
    };
    let report = read_report(&report);
    Cell {
        outcome,
        report,
        log,
    }
}

fn script_outcome(command: Command, what: &str) -> (Value, String) {
    let done = run_with_deadline(command, CLIENT_DEADLINE, what);
    let line = done.stdout.lines().last().unwrap_or("");
    let outcome = serde_json::from_str(line).unwrap_or_else(|e| {
        panic!(
            "{what}: no JSON outcome ({e}); status {}\nstdout:\n{}\nstderr:\n{}",
            done.status, done.stdout, done.stderr
        )
    });
    (outcome, done.stderr)
}

/// What the client saw, in a few words, for the printed matrix.
fn summary(o: &Value) -> String {
    if let Some(e) = o.get("error").or(o.get("fatal")) {
        let message: String = e["message"]
            .as_str()
            .unwrap_or("")
            .chars()
            .take(70)
            .collect();
        return format!(
            "{} {} {message:?}",
            e["type"].as_str().unwrap_or("?"),
            e["code"]
        );
    }
    let text = first_text(get(o, "/result")).unwrap_or("?");
    format!(
        "result {text:?} isError={} {} ms",
        get(o, "/result/isError"),
        get(o, "/elapsedMs")
    )
}

/// Runs the whole matrix of one client and fails with every difference.
fn matrix(sdk: Sdk) {
    let mut cells = Vec::new();
    for scenario in SCENARIOS {
        for transport in [Transport::Stdio, Transport::Http] {
            if scenario.http_only && transport == Transport::Stdio {
                continue;
            }
            for era in [Era::Legacy, Era::Modern] {
                cells.push((scenario, transport, era));
            }
        }
    }
    let queue = Arc::new(Mutex::new(cells));
    let lines = Arc::new(Mutex::new(Vec::new()));
    let failures = Arc::new(Mutex::new(Vec::new()));
    std::thread::scope(|scope| {
        for _ in 0..PARALLEL {
            let (queue, lines, failures) = (queue.clone(), lines.clone(), failures.clone());
            scope.spawn(move || loop {
                let Some((scenario, transport, era)) = queue.lock().unwrap().pop() else {
                    return;
                };
                let name = format!("{} x {:?} x {} x {}", scenario.name, transport, sdk.name(), era.name());
                let cell = run_cell(sdk, scenario, transport, era);
                let problems = expect(sdk, scenario.name, transport, era, &cell);
                let bug = KNOWN_BUGS.iter().find(|(s, n, t, e, _)| {
                    *s == sdk && *n == scenario.name && *e == era && t.is_none_or(|t| t == transport)
                });
                let verdict = match (problems.is_empty(), bug) {
                    (true, None) => format!("PASS ({})", summary(&cell.outcome)),
                    (false, Some((.., why))) => format!("KNOWN BUG ({why}): {problems:?}"),
                    (true, Some(_)) => {
                        failures.lock().unwrap().push(format!("{name}: listed in KNOWN_BUGS but passes; remove it"));
                        "PASS (but listed as a known bug)".to_owned()
                    }
                    (false, None) => {
                        failures.lock().unwrap().push(format!(
                            "{name}: {problems:?}\noutcome: {}\nreport faults: {}\nclient stderr:\n{}",
                            cell.outcome, cell.report["faults"], cell.log
                        ));
                        "FAIL".to_owned()
                    }
                };
                lines.lock().unwrap().push(format!("{name}: {verdict}"));
            });
        }
    });
    let mut lines = lines.lock().unwrap().clone();
    lines.sort();
    eprintln!("faults matrix, {}:\n  {}", sdk.name(), lines.join("\n  "));
    let failures = failures.lock().unwrap();
    assert!(
        failures.is_empty(),
        "{} cell(s) failed:\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}

#[test]
#[ignore = "needs the TS SDK from npm (.ci/run sets MCPCASSETTE_NODE_MODULES)"]
fn faults_clients_ts() {
    matrix(Sdk::Ts);
}

#[test]
#[ignore = "needs the Python mcp SDK (.ci/run sets MCPCASSETTE_PYTHON)"]
fn faults_clients_mcp() {
    matrix(Sdk::Mcp);
}

#[test]
#[ignore = "needs fastmcp (.ci/run sets MCPCASSETTE_FASTMCP_PYTHON)"]
fn faults_clients_fastmcp() {
    matrix(Sdk::Fastmcp);
}

#[test]
#[ignore = "runs with its siblings in .ci/run's faults step (about 10 s of client timeouts)"]
fn faults_clients_rmcp() {
    matrix(Sdk::Rmcp);
}

/// The rmcp client: the same ops and outcome shape as the scripts.
mod rmcp_client {
    use std::ffi::OsString;
    use std::path::PathBuf;
    use std::process::Stdio;
    use std::sync::{Arc, Mutex};
    use std::time::{Duration, Instant};

    use rmcp::model::{
        CallToolRequest, CallToolRequestParams, ClientRequest, ProgressNotificationParam,
        ProtocolVersion, ServerResult,
    };
    use rmcp::service::{NotificationContext, PeerRequestOptions, RunningService};
    use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
    use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
    use rmcp::{
        ClientHandler, ClientLifecycleMode, ClientServiceExt, RoleClient, ServiceError, ServiceExt,
    };
    use serde_json::{Map, Value, json};

    use super::Era;

    pub enum Target {
        Stdio(PathBuf, Vec<OsString>),
        Http(String),
    }

    #[derive(Clone, Default)]
    struct Handler {
        progress: Arc<Mutex<Vec<f64>>>,
        changed: Arc<Mutex<bool>>,
    }

    impl ClientHandler for Handler {
        async fn on_progress(
            &self,
            params: ProgressNotificationParam,
            _: NotificationContext<RoleClient>,
        ) {
            self.progress.lock().unwrap().push(params.progress);
        }
        async fn on_tool_list_changed(&self, _: NotificationContext<RoleClient>) {
            *self.changed.lock().unwrap() = true;
        }
    }

    fn describe(error: &ServiceError) -> Value {
        let kind = match error {
            ServiceError::McpError(e) => {
                return json!({"type": "McpError", "code": e.code.0, "message": e.message});
            }
            ServiceError::TransportSend(_) => "TransportSend",
            ServiceError::TransportClosed => "TransportClosed",
            ServiceError::Timeout { .. } => "Timeout",
            ServiceError::Cancelled { .. } => "Cancelled",
            ServiceError::UnexpectedResponse => "UnexpectedResponse",
            _ => "Other",
        };
        json!({"type": kind, "code": null, "message": format!("{error} / {error:?}")})
    }

    async fn call(
        client: &RunningService<RoleClient, Handler>,
        name: &'static str,
        arguments: Value,
        timeout: Duration,
    ) -> Value {
        let Value::Object(arguments) = arguments else {
            unreachable!()
        };
        let arguments: Map<String, Value> = arguments;
        let request = ClientRequest::CallToolRequest(CallToolRequest::new(
            CallToolRequestParams::new(name).with_arguments(arguments),
        ));
        let handle = match client
            .send_request_with_option(request, PeerRequestOptions::with_timeout(timeout))
            .await
        {
            Ok(handle) => handle,
            Err(e) => return json!({"error": describe(&e)}),
        };
        match handle.await_response().await {
            Ok(ServerResult::CallToolResult(r)) => json!({"result": r}),
            Ok(other) => {
                json!({"error": {"type": "UnexpectedResult", "code": null, "message": format!("{other:?}")}})
            }
            Err(e) => json!({"error": describe(&e)}),
        }
    }

    pub fn run(op: &str, timeout_ms: u64, era: Era, target: Target) -> (Value, String) {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let outcome = runtime.block_on(async {
            tokio::time::timeout(
                Duration::from_secs(60),
                session(op, timeout_ms, era, target),
            )
            .await
            .unwrap_or_else(|_| json!({"fatal": "rmcp session timed out"}))
        });
        (outcome, String::new())
    }

    async fn session(op: &str, timeout_ms: u64, era: Era, target: Target) -> Value {
        let handler = Handler::default();
        let lifecycle = match era {
            Era::Legacy => None,
            Era::Modern => Some(ClientLifecycleMode::Discover {
                preferred_versions: vec![ProtocolVersion::V_2026_07_28],
            }),
        };
        let client = match target {
            Target::Stdio(program, args) => {
                let mut command = tokio::process::Command::new(program);
                command.args(args);
                let (transport, _) = TokioChildProcess::builder(command)
                    .stderr(Stdio::null())
                    .spawn()
                    .unwrap();
                match lifecycle {
                    None => handler.clone().serve(transport).await,
                    Some(l) => handler.clone().serve_with_lifecycle(transport, l).await,
                }
            }
            Target::Http(url) => {
                let transport = StreamableHttpClientTransport::from_config(
                    StreamableHttpClientTransportConfig::with_uri(url),
                );
                match lifecycle {
                    None => handler.clone().serve(transport).await,
                    Some(l) => handler.clone().serve_with_lifecycle(transport, l).await,
                }
            }
        };
        let client = match client {
            Ok(client) => client,
            Err(e) => return json!({"fatal": e.to_string()}),
        };
        let timeout = Duration::from_millis(timeout_ms);
        let mut out = json!({});
        let started = Instant::now();
        match op {
            "echo" => merge(
                &mut out,
                call(&client, "echo", json!({"message": "hello"}), timeout).await,
            ),
            "count" => {
                merge(
                    &mut out,
                    call(&client, "count", json!({"steps": 3}), timeout).await,
                );
                // Progress is dispatched on its own tasks.
                tokio::time::sleep(Duration::from_millis(200)).await;
                out["progress"] = json!(*handler.progress.lock().unwrap());
            }
            "changed" => {
                merge(
                    &mut out,
                    call(&client, "echo", json!({"message": "hello"}), timeout).await,
                );
                let until = Instant::now() + Duration::from_secs(3);
                while !*handler.changed.lock().unwrap() && Instant::now() < until {
                    tokio::time::sleep(Duration::from_millis(20)).await;
                }
                out["listChanged"] = json!(*handler.changed.lock().unwrap());
                match client.list_all_tools().await {
                    Ok(tools) => {
                        let mut names: Vec<String> =
                            tools.iter().map(|t| t.name.to_string()).collect();
                        names.sort();
                        out["toolsAfter"] = json!(names);
                        out["changedSchema"] = tools
                            .iter()
                            .find(|t| t.name == "echo")
                            .map_or(Value::Null, |t| Value::Object((*t.input_schema).clone()));
                    }
                    Err(e) => out["toolsAfter"] = json!({"error": describe(&e)}),
                }
                out["afterChange"] = call(&client, "add", json!({"a": 2, "b": 40}), timeout).await;
            }
            other => panic!("unknown op {other}"),
        }
        out["elapsedMs"] = json!(started.elapsed().as_millis() as u64);
        let _ = tokio::time::timeout(Duration::from_secs(3), client.cancel()).await;
        out
    }

    fn merge(out: &mut Value, got: Value) {
        if let (Value::Object(out), Value::Object(got)) = (out, got) {
            out.extend(got);
        }
    }
}
