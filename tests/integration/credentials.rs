//! Recording an authenticated upstream: the recorder's own credentials
//! (`--header`, `--bearer-env`) reach the upstream and nothing else, and an
//! upstream that echoes credentials (the recorder's or the client's) in
//! results and error bodies gets none of them into the cassette, the
//! journal or the logs, in any encoding.

use std::sync::{Arc, Mutex};

use base64::Engine as _;
use bytes::Bytes;
use http::{HeaderMap, Request, Response, StatusCode};
use http_body_util::{BodyExt, Full};
use serde_json::{Value, json};

use crate::support::cli::Cli;
use crate::support::http_client::{call, post_blocking};
use crate::support::loopback;

const API_KEY: &str = "recorder-api-key-5f2c9a";
const BEARER: &str = "recorder-bearer-7d41e0";
const CLIENT_TOKEN: &str = "client-token-93b7aa";
const CLIENT_COOKIE: &str = "client-cookie-c0ffee42";
const CLIENT_KEY: &str = "client-api-key-1a2b3c";

/// An upstream that echoes the credential headers it gets: in a tool
/// result for `tools/call`, and in a 401 page for anything else.
fn echoing_upstream(seen: Arc<Mutex<Vec<HeaderMap>>>) -> (tokio::runtime::Runtime, String) {
    let (runtime, addr) = loopback::serve(move |request: Request<hyper::body::Incoming>| {
        let seen = Arc::clone(&seen);
        async move {
            let (parts, body) = request.into_parts();
            let body = body.collect().await.unwrap().to_bytes();
            seen.lock().unwrap().push(parts.headers.clone());
            let echo: Vec<String> = ["authorization", "x-api-key", "cookie"]
                .iter()
                .filter_map(|name| parts.headers.get(*name))
                .map(|value| value.to_str().unwrap().to_owned())
                .collect();
            let encoded: Vec<String> = echo
                .iter()
                .map(|v| base64::engine::general_purpose::STANDARD.encode(v))
                .collect();
            let message: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
            let reply = |status: StatusCode, content_type: &str, text: String| {
                Response::builder()
                    .status(status)
                    .header("content-type", content_type)
                    .body(Full::new(Bytes::from(text)).map_err(|e| match e {}).boxed())
                    .unwrap()
            };
            match message["method"].as_str() {
                Some("tools/call") => {
                    let text = format!("you sent {echo:?}, encoded {encoded:?}");
                    let answer = json!({"jsonrpc": "2.0", "id": message["id"],
                        "result": {"content": [{"type": "text", "text": text}],
                                   "structuredContent": {"headers": echo}}});
                    reply(StatusCode::OK, "application/json", answer.to_string())
                }
                _ => reply(
                    StatusCode::UNAUTHORIZED,
                    "text/plain",
                    format!("bad credentials: {echo:?} ({encoded:?})"),
                ),
            }
        }
    });
    (runtime, format!("http://{addr}/mcp"))
}

/// A call of the upstream's one tool.
fn whoami(id: u64) -> Value {
    call(id, "whoami", json!({}))
}

/// `text` holds none of `secrets`, in the forms an echo could take.
fn assert_clean(what: &str, text: &str, secrets: &[&str]) {
    for secret in secrets {
        let encoded = base64::engine::general_purpose::STANDARD.encode(secret);
        for form in [secret.to_string(), encoded] {
            assert!(!text.contains(&form), "{what} holds {form}:\n{text}");
        }
    }
}

#[test]
fn the_recorders_credentials_reach_the_upstream_and_nothing_else() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let (_upstream, url) = echoing_upstream(Arc::clone(&seen));
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("auth.json");
    let recorder = Cli::record(&path)
        .upstream(&url)
        .listen()
        .args(["--header", &format!("X-Api-Key: {API_KEY}")])
        .args(["--bearer-env", "UPSTREAM_BEARER_FOR_TEST"])
        // A name that does not look secret: only --bearer-env makes it so.
        .env("UPSTREAM_BEARER_FOR_TEST", BEARER)
        .capture_stderr()
        .start();

    let (status, body) = post_blocking(&recorder.url, &whoami(1), &[]).status_text();
    assert_eq!(status, StatusCode::OK, "{body}");
    assert!(
        body.contains(API_KEY) && body.contains(BEARER),
        "the client sees the echo: {body}"
    );
    let ping = json!({"jsonrpc": "2.0", "id": 2, "method": "ping"});
    let (status, page) = post_blocking(&recorder.url, &ping, &[]).status_text();
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    assert!(page.contains(API_KEY));
    let journal = std::fs::read_to_string(mcpcassette::cassette::journal_path(&path)).unwrap();
    let (status, stderr) = recorder.stop_with_stderr();
    assert!(status.success(), "{stderr}");

    let sent = seen.lock().unwrap().clone();
    assert!(!sent.is_empty());
    for headers in &sent {
        assert_eq!(headers["x-api-key"], API_KEY);
        assert_eq!(
            headers["authorization"],
            format!("Bearer {BEARER}").as_str()
        );
    }
    let cassette = std::fs::read_to_string(&path).unwrap();
    for (what, text) in [
        ("the cassette", &cassette),
        ("the journal", &journal),
        ("stderr", &stderr),
    ] {
        assert_clean(what, text, &[API_KEY, BEARER]);
    }
    assert!(
        cassette.contains("REDACTED") || cassette.contains("X_API_KEY"),
        "{cassette}"
    );
}

#[test]
fn credentials_a_client_sends_are_never_stored_even_when_echoed() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let (_upstream, url) = echoing_upstream(Arc::clone(&seen));
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("client.json");
    let recorder = Cli::record(&path)
        .upstream(&url)
        .listen()
        .capture_stderr()
        .start();
    let bearer = format!("Bearer {CLIENT_TOKEN}");
    let cookie = format!("sid={CLIENT_COOKIE}; theme=dark");
    let headers = [
        ("authorization", bearer.as_str()),
        ("cookie", cookie.as_str()),
        ("x-api-key", CLIENT_KEY),
    ];
    let (status, body) = post_blocking(&recorder.url, &whoami(1), &headers).status_text();
    assert_eq!(status, StatusCode::OK, "{body}");
    assert!(body.contains(CLIENT_TOKEN), "passed through: {body}");
    let ping = json!({"jsonrpc": "2.0", "id": 2, "method": "ping"});
    let (status, _) = post_blocking(&recorder.url, &ping, &headers).status_text();
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    let journal = std::fs::read_to_string(mcpcassette::cassette::journal_path(&path)).unwrap();
    let (status, stderr) = recorder.stop_with_stderr();
    assert!(status.success(), "{stderr}");

    assert_eq!(seen.lock().unwrap()[0]["authorization"], bearer.as_str());
    let cassette = std::fs::read_to_string(&path).unwrap();
    for (what, text) in [
        ("the cassette", &cassette),
        ("the journal", &journal),
        ("stderr", &stderr),
    ] {
        assert_clean(what, text, &[CLIENT_TOKEN, CLIENT_COOKIE, CLIENT_KEY]);
    }
    let saved = mcpcassette::cassette::load(&path).unwrap();
    assert_eq!(saved.interactions.len(), 2, "both exchanges recorded");
}

/// Replay needs no credentials by default; `--auth bearer` asks for some
/// bearer token (any) and answers 401 without one, as a server behind a
/// static token does.
#[test]
fn replay_accepts_anyone_unless_asked_for_a_bearer_token() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let (upstream, url) = echoing_upstream(Arc::clone(&seen));
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("replayed.json");
    let recorder = Cli::record(&path)
        .upstream(&url)
        .listen()
        .args(["--header", &format!("X-Api-Key: {API_KEY}")])
        .start();
    let (status, _) = post_blocking(&recorder.url, &whoami(1), &[]).status_text();
    assert_eq!(status, StatusCode::OK);
    assert!(recorder.stop().success());
    drop(upstream);

    let replay = |auth: &str| {
        Cli::replay(&path)
            .listen()
            .args(["--auth", auth])
            .capture_stderr()
            .start()
    };
    let open = replay("none");
    let (status, body) = post_blocking(&open.url, &whoami(7), &[]).status_text();
    assert_eq!(status, StatusCode::OK, "no credentials needed: {body}");
    assert!(body.contains("REDACTED"), "the echo stays masked: {body}");
    assert!(!body.contains(API_KEY));
    drop(open);

    let guarded = replay("bearer");
    let (status, body) = post_blocking(&guarded.url, &whoami(7), &[]).status_text();
    assert_eq!(status, StatusCode::UNAUTHORIZED, "{body}");
    let (status, _) = post_blocking(
        &guarded.url,
        &whoami(7),
        &[("authorization", "Basic dXNlcjpwdw==")],
    )
    .status_text();
    assert_eq!(
        status,
        StatusCode::UNAUTHORIZED,
        "a bearer token, not any credential"
    );
    let (status, body) = post_blocking(
        &guarded.url,
        &whoami(7),
        &[("authorization", "Bearer anything")],
    )
    .status_text();
    assert_eq!(status, StatusCode::OK, "{body}");
    let (exit, stderr) = guarded.stop_with_stderr();
    assert!(exit.success(), "{stderr}");
    assert!(
        !stderr.contains("anything"),
        "the token is never logged: {stderr}"
    );
}

/// A cassette can say it is of a protected server (`rules.auth`): replay
/// then asks for credentials unless `--auth` says otherwise.
#[test]
fn the_cassette_can_ask_for_credentials_and_the_flag_wins() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("protected.json");
    let mut cassette: Value = serde_json::from_str(
        &std::fs::read_to_string(crate::support::root().join("cassettes/demo-legacy.json"))
            .unwrap(),
    )
    .unwrap();
    cassette["rules"]["auth"] = json!("bearer");
    std::fs::write(&path, serde_json::to_string_pretty(&cassette).unwrap()).unwrap();
    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"}}});
    let replay = |flags: &[&str]| {
        Cli::replay(&path)
            .listen()
            .args(flags)
            .capture_stderr()
            .start()
    };
    let guarded = replay(&[]);
    let (status, _) = post_blocking(&guarded.url, &initialize, &[]).status_text();
    assert_eq!(status, StatusCode::UNAUTHORIZED, "rules.auth: bearer");
    let (status, body) = post_blocking(
        &guarded.url,
        &initialize,
        &[("authorization", "Bearer t0k3n")],
    )
    .status_text();
    assert_eq!(status, StatusCode::OK, "{body}");
    drop(guarded);
    let open = replay(&["--auth", "none"]);
    let (status, body) = post_blocking(&open.url, &initialize, &[]).status_text();
    assert_eq!(status, StatusCode::OK, "the flag wins: {body}");
}

/// `inspect` learns a client's credentials as `record` does: its log never
/// shows them, even where a message repeats one (here, as a request id).
#[test]
fn inspect_never_shows_a_clients_credentials() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let (_upstream, url) = echoing_upstream(Arc::clone(&seen));
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("inspect.log");
    let inspector = Cli::inspect()
        .upstream(&url)
        .listen()
        .arg("--log")
        .arg(&log)
        .capture_stderr()
        .start();
    let bearer = format!("Bearer {CLIENT_TOKEN}");
    let mut request = whoami(1);
    request["id"] = json!(CLIENT_TOKEN);
    let (status, body) = post_blocking(
        &inspector.url,
        &request,
        &[("authorization", bearer.as_str())],
    )
    .status_text();
    assert_eq!(status, StatusCode::OK, "{body}");
    let (exit, stderr) = inspector.stop_with_stderr();
    assert!(exit.success(), "{stderr}");
    let written = std::fs::read_to_string(&log).unwrap();
    assert!(written.contains("tools/call"), "{written}");
    assert_clean("the inspect log", &written, &[CLIENT_TOKEN]);
    assert_clean("stderr", &stderr, &[CLIENT_TOKEN]);
}
