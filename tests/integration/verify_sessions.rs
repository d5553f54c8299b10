//! `verify` of a Streamable HTTP recording with several client sessions
//! (the MCP Inspector's CLI connects anew on every run) and with a probe the
//! server rejected at the HTTP level (fastmcp's `server/discover`, which a
//! legacy server answers with 400 and an error whose id is `null`). The
//! live server here (in this process, on loopback) keeps sessions as the
//! TypeScript SDK's does: a second `initialize` in one session and a
//! request without one are refused.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use http::{Method, Request, Response};
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use mcpcassette::cassette::{self, Builder, Cassette, Direction, HttpEndpointBehaviour, Transport};
use serde_json::{Value, json};

use crate::support::cli::Cli;
use crate::support::http_client::post;
use crate::support::loopback::{self, Body};
use crate::support::mcpcassette;

/// How the live server behaves.
#[derive(Debug, Clone, Copy)]
struct Behaviour {
    /// The status of its rejection of a request without a session.
    rejection: u16,
    /// From this session on (counting from 1), `tools/list` says otherwise.
    changed_from: Option<usize>,
}

const AS_RECORDED: Behaviour = Behaviour {
    rejection: 400,
    changed_from: None,
};

/// What the live server saw.
#[derive(Debug, Default)]
struct Seen {
    /// Sessions issued.
    sessions: usize,
    /// `initialize` refused because the session already had one.
    refused_initialize: usize,
    /// `tools/list` calls, with the session they carried.
    lists: Vec<String>,
}

fn reply(status: u16, session: Option<&str>, message: Option<&Value>) -> Response<Body> {
    let mut response = Response::builder().status(status);
    if let Some(session) = session {
        response = response.header("mcp-session-id", session);
    }
    let body = match message {
        Some(message) => {
            response = response.header("content-type", "application/json");
            Bytes::from(message.to_string())
        }
        None => Bytes::new(),
    };
    response.body(Full::new(body).boxed()).unwrap()
}

fn rejection(message: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32000, "message": message}})
}

fn initialize_result() -> Value {
    json!({"protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
           "serverInfo": {"name": "sessions", "version": "1"}})
}

fn tools_result(changed: bool) -> Value {
    let description = if changed {
        "Says hello twice."
    } else {
        "Says hello."
    };
    json!({"tools": [{"name": "hello", "description": description,
                      "inputSchema": {"type": "object"}}]})
}

async fn handle(
    behaviour: Behaviour,
    seen: Arc<Mutex<Seen>>,
    request: Request<Incoming>,
) -> Response<Body> {
    let session = request
        .headers()
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    match *request.method() {
        Method::GET => return reply(405, None, None),
        Method::DELETE => return reply(200, None, None),
        _ => {}
    }
    let body = request.into_body().collect().await.unwrap().to_bytes();
    let message: Value = serde_json::from_slice(&body).unwrap();
    let id = message["id"].clone();
    let mut seen = seen.lock().unwrap();
    let known = session
        .as_deref()
        .and_then(|s| s.strip_prefix("session-"))
        .and_then(|n| n.parse::<usize>().ok())
        .filter(|n| (1..=seen.sessions).contains(n));
    match (message["method"].as_str(), known) {
        (Some("initialize"), Some(_)) => {
            seen.refused_initialize += 1;
            reply(400, None, Some(&rejection("Server already initialized")))
        }
        (Some("initialize"), None) => {
            seen.sessions += 1;
            let issued = format!("session-{}", seen.sessions);
            let answer = json!({"jsonrpc": "2.0", "id": id, "result": initialize_result()});
            reply(200, Some(&issued), Some(&answer))
        }
        (_, None) => reply(behaviour.rejection, None, Some(&rejection("no session id"))),
        (Some("tools/list"), Some(n)) => {
            seen.lists.push(session.unwrap_or_default());
            let changed = behaviour.changed_from.is_some_and(|from| n >= from);
            let answer = json!({"jsonrpc": "2.0", "id": id, "result": tools_result(changed)});
            reply(200, None, Some(&answer))
        }
        // Notifications.
        _ => reply(202, None, None),
    }
}

/// Serves on a loopback port until the returned runtime is dropped.
fn serve(behaviour: Behaviour) -> (tokio::runtime::Runtime, SocketAddr, Arc<Mutex<Seen>>) {
    let seen = Arc::new(Mutex::new(Seen::default()));
    let shared = Arc::clone(&seen);
    let (runtime, addr) =
        loopback::serve(move |request| handle(behaviour, Arc::clone(&shared), request));
    (runtime, addr, seen)
}

/// Two client runs against the server at `url`, as `record --upstream`
/// files them: each probes `server/discover` without a session (refused
/// with 400), then initializes a session of its own and lists the tools.
fn recording(url: &str) -> Cassette {
    use Direction::{ClientToServer as C, ServerToClient as S};
    let transport = Transport::StreamableHttp {
        url: url.to_owned(),
        endpoint: "/mcp".into(),
        behaviour: HttpEndpointBehaviour {
            get_status: Some(405),
            delete_status: Some(200),
            ..Default::default()
        },
    };
    let mut builder = Builder::new("2026-12-01T00:00:00Z".into(), transport);
    for run in 0..2 {
        let id = |n: u64| json!(run * 10 + n);
        let probe = builder.next_interaction();
        builder.observe(
            C,
            json!({"jsonrpc": "2.0", "id": id(1), "method": "server/discover", "params": {
                "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}}}),
        );
        builder.respond_to(&id(1), rejection("no session id"));
        let http = builder.http_mut(probe).unwrap();
        http.status = 400;
        http.content_type = Some("application/json".into());
        http.body = Some(rejection("no session id").to_string());

        let init = builder.next_interaction();
        builder.observe(
            C,
            json!({"jsonrpc": "2.0", "id": id(2), "method": "initialize", "params": {
                "protocolVersion": "2025-11-25", "capabilities": {},
                "clientInfo": {"name": "verify-sessions", "version": "1"}}}),
        );
        builder.observe(
            S,
            json!({"jsonrpc": "2.0", "id": id(2), "result": initialize_result()}),
        );
        let http = builder.http_mut(init).unwrap();
        http.status = 200;
        http.content_type = Some("application/json".into());
        http.issued_session = true;

        let initialized = builder.next_interaction();
        builder.observe(
            C,
            json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        );
        let http = builder.http_mut(initialized).unwrap();
        http.status = 202;
        http.had_session = true;

        let list = builder.next_interaction();
        builder.observe(
            C,
            json!({"jsonrpc": "2.0", "id": id(3), "method": "tools/list"}),
        );
        builder.observe(
            S,
            json!({"jsonrpc": "2.0", "id": id(3), "result": tools_result(false)}),
        );
        let http = builder.http_mut(list).unwrap();
        http.status = 200;
        http.content_type = Some("application/json".into());
        http.had_session = true;
    }
    builder.finish()
}

/// `mcpcassette verify PATH --json`, leaving the cassette as it is.
fn verify_json(path: &std::path::Path) -> std::process::Output {
    mcpcassette()
        .arg("verify")
        .arg(path)
        .arg("--json")
        .env("MCPCASSETTE_UPDATE", "no")
        .output()
        .unwrap()
}

/// Verifies the two-run recording against a live server behaving as
/// `behaviour`: exit code, JSON report, and what the server saw.
fn verify(behaviour: Behaviour) -> (Option<i32>, Value, String, Seen) {
    let (server, addr, seen) = serve(behaviour);
    let url = format!("http://{addr}/mcp");
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sessions.json");
    cassette::save(&path, &recording(&url)).unwrap();
    let output = verify_json(&path);
    drop(server);
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    let report = serde_json::from_slice(&output.stdout).unwrap_or_else(|e| {
        panic!(
            "not JSON ({e}): {}{stderr}",
            String::from_utf8_lossy(&output.stdout)
        )
    });
    let seen = std::mem::take(&mut *seen.lock().unwrap());
    (output.status.code(), report, stderr, seen)
}

/// The indices of the interactions that drifted.
fn drifted(report: &Value) -> Vec<u64> {
    report["report"]["interactions"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|i| i["status"] != "same")
        .map(|i| i["index"].as_u64().unwrap())
        .collect()
}

#[test]
fn each_recorded_session_is_verified_in_a_live_session_of_its_own() {
    let (code, report, stderr, seen) = verify(AS_RECORDED);
    assert_eq!(code, Some(0), "{report:#}\n{stderr}");
    assert_eq!(report["drift"], false);
    assert_eq!(report["report"]["counts"]["same"], 8, "{report:#}");
    assert_eq!(seen.sessions, 2, "{seen:?}");
    assert_eq!(seen.refused_initialize, 0, "{seen:?}");
    assert_eq!(seen.lists, ["session-1", "session-2"], "{seen:?}");
    assert!(stderr.contains("2 client sessions"), "{stderr}");
}

#[test]
fn drift_in_the_second_session_only_is_reported_there() {
    let behaviour = Behaviour {
        changed_from: Some(2),
        ..AS_RECORDED
    };
    let (code, report, stderr, seen) = verify(behaviour);
    assert_eq!(code, Some(1), "{report:#}\n{stderr}");
    assert_eq!(drifted(&report), [7], "{report:#}");
    let list = &report["report"]["interactions"][7];
    assert_eq!(list["label"], "tools/list");
    assert_eq!(
        list["live"]["response"]["result"]["tools"][0]["description"],
        "Says hello twice."
    );
    assert_eq!(seen.sessions, 2, "{seen:?}");
}

#[test]
fn a_recorded_http_rejection_is_an_answer_compared_as_recorded() {
    let (code, report, stderr, _) = verify(AS_RECORDED);
    assert_eq!(code, Some(0), "{report:#}\n{stderr}");
    assert!(!stderr.contains("ERROR"), "{stderr}");
    for probe in [0, 4] {
        let probe = &report["report"]["interactions"][probe];
        assert_eq!(probe["label"], "server/discover");
        assert_eq!(probe["status"], "same", "{probe:#}");
        assert_eq!(probe["live"]["http_error"]["status"], 400, "{probe:#}");
        assert_eq!(
            probe["live"]["response"]["error"]["message"],
            "no session id"
        );
    }
}

#[test]
fn a_rejection_with_another_status_is_drift() {
    let behaviour = Behaviour {
        rejection: 404,
        ..AS_RECORDED
    };
    let (code, report, stderr, _) = verify(behaviour);
    assert_eq!(code, Some(1), "{report:#}\n{stderr}");
    assert_eq!(drifted(&report), [0, 4], "{report:#}");
    let probe = &report["report"]["interactions"][0];
    assert_eq!(probe["recorded"]["http_error"]["status"], 400);
    assert_eq!(probe["live"]["http_error"]["status"], 404);
}

/// Two client runs through `record --upstream`, as a client that probes
/// `server/discover` first sends them: the rejections are filed as the
/// probes' answers without a warning, and the cassette verifies clean.
#[test]
fn a_recorded_multi_session_cassette_with_rejected_probes_verifies_clean() {
    let (server, addr, seen) = serve(AS_RECORDED);
    let upstream = format!("http://{addr}/mcp");
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("recorded.json");
    let recorder = Cli::record(&path)
        .upstream(&upstream)
        .listen()
        .capture_stderr()
        .start();
    let proxy = recorder.url.clone();
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(async {
            for run in 0..2u64 {
                let id = |n: u64| json!(run * 10 + n);
                let probe = json!({"jsonrpc": "2.0", "id": id(1), "method": "server/discover",
                    "params": {"_meta": {
                        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                        "io.modelcontextprotocol/clientInfo": {"name": "verify-sessions", "version": "1"},
                        "io.modelcontextprotocol/clientCapabilities": {}}}});
                post(&proxy, &probe, &[]).await;
                let init = json!({"jsonrpc": "2.0", "id": id(2), "method": "initialize", "params": {
                    "protocolVersion": "2025-11-25", "capabilities": {},
                    "clientInfo": {"name": "verify-sessions", "version": "1"}}});
                let session = post(&proxy, &init, &[]).await.session();
                let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
                post(&proxy, &initialized, &[("mcp-session-id", &session)]).await;
                let list = json!({"jsonrpc": "2.0", "id": id(3), "method": "tools/list"});
                post(&proxy, &list, &[("mcp-session-id", &session)]).await;
            }
        });
    let (status, stderr) = recorder.stop_with_stderr();
    assert!(status.success(), "{stderr}");
    assert!(!stderr.contains("not in flight"), "{stderr}");
    assert!(!stderr.contains("WARN"), "{stderr}");
    assert_eq!(seen.lock().unwrap().sessions, 2);

    let recorded = cassette::load(&path).unwrap();
    assert_eq!(recorded.interactions.len(), 8);
    for probe in [0, 4] {
        let probe = &recorded.interactions[probe];
        assert_eq!(probe.method(), "server/discover");
        assert_eq!(probe.response, Some(rejection("no session id").into()));
        assert_eq!(probe.http.as_ref().unwrap().status, 400);
    }

    let output = verify_json(&path);
    drop(server);
    let stderr = String::from_utf8_lossy(&output.stderr);
    let report: Value = serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {stderr}"));
    assert_eq!(output.status.code(), Some(0), "{report:#}\n{stderr}");
    assert_eq!(report["report"]["counts"]["same"], 8, "{report:#}");
    assert_eq!(seen.lock().unwrap().sessions, 4, "two more, for verify");
    assert_eq!(seen.lock().unwrap().refused_initialize, 0);
}
