//! Recording an OAuth-protected upstream with the client's own OAuth flow
//! going through the proxy, and replaying it offline with `--auth oauth`.
//!
//! The upstream (`tests/peers/tsdk/oauth_server.mjs`) is written with
//! the TypeScript SDK's auth parts: its own authorization server, tokens
//! bound to the resource they were asked for (so a token for the proxy's
//! URL is refused), a tool that echoes the caller's token, and one that
//! needs a wider scope (403 `insufficient_scope`, step-up). The clients
//! are the TS SDK's (`oauth_client.mjs`, its own `OAuthClientProvider`)
//! and rmcp's `AuthorizationManager`.
//!
//! The SDK is not vendored: `.ci/run` installs it with `npm ci` and runs
//! these tests with `MCPCASSETTE_NODE_MODULES` naming that `node_modules`
//! (Node 22 from it when present, else `node` on PATH).

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use rmcp::model::CallToolRequestParams;
use rmcp::transport::auth::AuthorizationRequest;
use serde_json::{Value, json};

use crate::support::cli::Cli;
use crate::support::http::Served;
use crate::support::oauth::{REDIRECT, authorized_session, code_of, start_sign_in};
use crate::support::pinned::{SDK, node, node_modules};
use crate::support::{mcpcassette, root};

fn script(name: &str) -> PathBuf {
    root().join("tests/peers/tsdk").join(name)
}

/// A loopback port nothing listens on (the upstream needs its two ports
/// before it starts, for its URLs).
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// The OAuth test upstream; its URL is the MCP endpoint's.
fn upstream(modules: &Path) -> Served {
    let mut server = node(modules);
    server
        .arg(script("oauth_server.mjs"))
        .arg("--node-modules")
        .arg(modules)
        .args(["--port", &free_port().to_string()])
        .args(["--auth-port", &free_port().to_string()]);
    Served::start_announced(server, Stdio::null(), "", Duration::from_secs(30))
}

/// Runs the TS SDK client against `url`: what its session saw, and every
/// credential of its flow.
fn ts_client(modules: &Path, url: &str) -> Value {
    let output = node(modules)
        .arg(script("oauth_client.mjs"))
        .arg("--node-modules")
        .arg(modules)
        .arg(url)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "the TS SDK client against {url}: {}\n{stdout}\n{}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_str(stdout.trim()).unwrap_or_else(|e| panic!("{e}: {stdout}"))
}

/// Every credential a client run saw.
fn credentials(run: &Value) -> Vec<String> {
    let seen = &run["seen"];
    let mut all = Vec::new();
    for kind in [
        "accessTokens",
        "refreshTokens",
        "codes",
        "verifiers",
        "clientSecrets",
    ] {
        for value in seen[kind].as_array().unwrap() {
            all.push(value.as_str().unwrap().to_owned());
        }
    }
    all
}

/// Asserts that no credential shows in `text` (named `what`).
fn assert_none_in(secrets: &[String], what: &str, text: &str) {
    assert!(!text.is_empty(), "{what} is empty: nothing was checked");
    for secret in secrets {
        assert!(
            !text.contains(secret.as_str()),
            "{what} holds a credential of the OAuth flow ({} chars)",
            secret.len()
        );
    }
}

/// The session as a test compares it, without its credentials.
fn session(run: &Value) -> Value {
    json!({"tools": run["tools"], "echo": run["echo"], "admin": run["admin"]})
}

#[test]
#[ignore = "needs @modelcontextprotocol/sdk from npm (MCPCASSETTE_NODE_MODULES); .ci/run installs it and runs ignored tests"]
fn ts_sdk_oauth_flow_records_through_the_proxy_without_credentials_and_replays_offline() {
    let modules = node_modules(&[SDK]);
    let dir = tempfile::tempdir().unwrap();
    let cassette = dir.path().join("oauth.json");
    let live_upstream = upstream(&modules);
    let live = ts_client(&modules, &live_upstream.url);
    assert_eq!(
        live["admin"], "reset done",
        "the step-up works live: {live}"
    );
    assert_eq!(live["seen"]["accessTokens"].as_array().unwrap().len(), 2);

    // Through the recording proxy: the client discovers the proxy as the
    // resource, the real authorization server issues the tokens.
    let recorder = Cli::record(&cassette)
        .upstream(&live_upstream.url)
        .listen()
        .capture_stderr()
        .start();
    let recorded = ts_client(&modules, &recorder.url);
    assert_eq!(session(&recorded), session(&live), "{recorded}");
    let proxy_host = recorder
        .url
        .trim_start_matches("http://")
        .split('/')
        .next()
        .unwrap();
    for host in recorded["seen"]["authorizeHosts"].as_array().unwrap() {
        assert_eq!(
            host, proxy_host,
            "the client authorized at the proxy's stand-in"
        );
    }
    let token = recorded["seen"]["accessTokens"][0].as_str().unwrap();
    assert!(
        recorded["whoami"].as_str().unwrap().ends_with(token),
        "answers reach the client unchanged: {recorded}"
    );
    let journal = std::fs::read_to_string(dir.path().join("oauth.json.journal")).unwrap();
    let (status, stderr) = recorder.stop_with_stderr();
    assert!(status.success(), "{stderr}");
    let secrets = credentials(&recorded);
    assert!(
        secrets.len() >= 7,
        "tokens, codes, verifiers, a secret: {recorded}"
    );
    let text = std::fs::read_to_string(&cassette).unwrap();
    assert_none_in(&secrets, "the cassette", &text);
    assert_none_in(&secrets, "the journal", &journal);
    assert_none_in(&secrets, "the recorder's log", &stderr);

    // Challenges are not interactions; what they asked for is kept.
    let recorded_cassette: Value = serde_json::from_str(&text).unwrap();
    let interactions = recorded_cassette["interactions"].as_array().unwrap();
    assert!(
        interactions
            .iter()
            .all(|i| i["http"]["status"].as_u64().is_some_and(|s| s < 400)),
        "no 401 or 403 is recorded: {text}"
    );
    assert_eq!(
        recorded_cassette["transport"]["behaviour"]["auth"],
        json!({
            "scopes_supported": ["mcp:tools", "mcp:admin"],
            "scope": "mcp:tools",
            "step_up": [{"method": "tools/call", "name": "admin_reset", "scope": "mcp:tools mcp:admin"}],
            "refresh_tokens": false,
        })
    );
    let check = mcpcassette().arg("check").arg(&cassette).output().unwrap();
    assert!(
        check.status.success(),
        "{}",
        String::from_utf8_lossy(&check.stdout)
    );

    // `inspect` is the same proxy, observing: nothing of the flow in its
    // log or its summary.
    let log = dir.path().join("inspect.jsonl");
    let mut inspect = mcpcassette();
    inspect
        .arg("inspect")
        .args(["--upstream", &live_upstream.url, "--listen", "127.0.0.1:0"])
        .arg("--log")
        .arg(&log);
    let inspector = Served::start_capturing_stderr(inspect);
    let inspected = ts_client(&modules, &inspector.url);
    assert_eq!(session(&inspected), session(&live));
    let (_, stderr) = inspector.stop_with_stderr();
    let inspected_secrets = credentials(&inspected);
    assert_none_in(
        &inspected_secrets,
        "inspect's log",
        &std::fs::read_to_string(&log).unwrap(),
    );
    assert_none_in(&inspected_secrets, "inspect's stderr", &stderr);
    drop(live_upstream);

    // Offline: replay's own authorization server runs the same flow, with
    // the recorded step-up.
    let report = dir.path().join("report.json");
    let replayer = Cli::replay(&cassette)
        .listen()
        .args(["--auth", "oauth"])
        .arg("--report")
        .arg(&report)
        .capture_stderr()
        .start();
    let replayed = ts_client(&modules, &replayer.url);
    assert_eq!(session(&replayed), session(&live), "{replayed}");
    let whoami = interactions
        .iter()
        .find(|i| i["request"]["params"]["name"] == "whoami")
        .unwrap();
    assert_eq!(
        replayed["whoami"], whoami["response"]["result"]["content"][0]["text"],
        "the masked echo, as recorded"
    );
    assert!(
        replayed["whoami"].as_str().unwrap().contains("[REDACTED:"),
        "{replayed}"
    );
    assert_eq!(
        replayed["seen"]["accessTokens"].as_array().unwrap().len(),
        2,
        "a first sign-in, then the step-up to mcp:admin: {replayed}"
    );
    let replay_host = replayer
        .url
        .trim_start_matches("http://")
        .split('/')
        .next()
        .unwrap();
    assert_eq!(replayed["seen"]["authorizeHosts"][1], replay_host);
    let (status, stderr) = replayer.stop_with_stderr();
    assert!(status.success(), "every request matched: {stderr}");
    let mut all = secrets.clone();
    all.extend(credentials(&replayed));
    assert_none_in(
        &all,
        "replay's report",
        &std::fs::read_to_string(&report).unwrap(),
    );
    assert_none_in(&all, "replay's log", &stderr);
}

/// The authorization URL's redirects, as a browser follows them, until
/// the callback with the code.
async fn approve(authorization_url: &str) -> String {
    let client = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let mut next = authorization_url.to_owned();
    for _ in 0..5 {
        let response = client.get(&next).send().await.unwrap();
        assert!(response.status().is_redirection(), "{}", response.status());
        next = response.headers()["location"].to_str().unwrap().to_owned();
        if next.starts_with(REDIRECT) {
            return next;
        }
    }
    panic!("no redirect to the callback: {next}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs @modelcontextprotocol/sdk from npm (MCPCASSETTE_NODE_MODULES); .ci/run installs it and runs ignored tests"]
async fn rmcps_oauth_client_records_through_the_proxy_without_credentials() {
    let modules = node_modules(&[SDK]);
    let dir = tempfile::tempdir().unwrap();
    let cassette = dir.path().join("rmcp-oauth.json");
    let live_upstream = upstream(&modules);
    let recorder = Cli::record(&cassette)
        .upstream(&live_upstream.url)
        .listen()
        .capture_stderr()
        .start();
    let url = recorder.url.clone();

    let (mut state, authorization_url) = start_sign_in(
        &url,
        AuthorizationRequest::new(REDIRECT)
            .with_client_name("mcpcassette-rmcp-oauth")
            .with_scopes(["mcp:tools"]),
        "discovery through the proxy, and registration",
    )
    .await;
    let callback = approve(&authorization_url).await;
    let code = code_of(&callback);
    state
        .handle_callback_url(&callback)
        .await
        .expect("the code exchange, for the upstream's resource");
    let manager = state.into_authorization_manager().expect("authorized");
    let token = manager.get_access_token().await.unwrap();

    let session = authorized_session(manager, &url).await;
    let tools = session.list_all_tools().await.unwrap();
    assert!(tools.iter().any(|t| t.name == "whoami"), "{tools:?}");
    let whoami = session
        .call_tool(CallToolRequestParams::new("whoami"))
        .await
        .unwrap();
    let whoami = serde_json::to_value(&whoami).unwrap();
    assert!(
        whoami["content"][0]["text"]
            .as_str()
            .unwrap()
            .ends_with(&token),
        "the client sees the upstream's answer unchanged: {whoami}"
    );
    session.cancel().await.unwrap();

    let journal = std::fs::read_to_string(dir.path().join("rmcp-oauth.json.journal")).unwrap();
    let (status, stderr) = recorder.stop_with_stderr();
    assert!(status.success(), "{stderr}");
    let secrets = [token, code];
    let text = std::fs::read_to_string(&cassette).unwrap();
    assert_none_in(&secrets, "the cassette", &text);
    assert_none_in(&secrets, "the journal", &journal);
    assert_none_in(&secrets, "the recorder's log", &stderr);
    assert!(
        text.contains("\"whoami\""),
        "the session was recorded: {text}"
    );
}
