//! `replay --auth oauth`: rmcp's OAuth client runs its whole code path
//! (401 challenge, protected-resource and authorization-server discovery,
//! dynamic registration, authorization with PKCE, code exchange, refresh)
//! against replay's built-in authorization server, offline, and the session
//! then replays as without authentication.

use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::auth::AuthorizationRequest;
use serde_json::json;

use crate::support::cli::Cli;
use crate::support::http::Served;
use crate::support::oauth::{REDIRECT, authorized_session, code_of, start_sign_in};
use crate::support::root;

fn replay(auth: &str) -> Served {
    Cli::replay(&root().join("cassettes/demo-legacy.json"))
        .listen()
        .args(["--auth", auth])
        .capture_stderr()
        .start()
}

/// The authorization URL's redirect, as a browser would follow it: the
/// callback URL carrying the code.
async fn approve(authorization_url: &str) -> String {
    let client = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let response = client.get(authorization_url).send().await.unwrap();
    assert_eq!(response.status(), 302, "auto-approved");
    let location = response.headers()["location"].to_str().unwrap().to_owned();
    assert!(location.starts_with(REDIRECT), "{location}");
    location
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rmcps_oauth_client_authorizes_against_replay_and_the_session_replays() {
    let replayer = replay("oauth");
    let url = replayer.url.clone();

    // Without a token: refused, as the recorded server never was.
    let plain = ().serve(StreamableHttpClientTransport::from_uri(url.clone())).await;
    assert!(plain.is_err(), "a client without a token is refused");

    let (mut state, authorization_url) = start_sign_in(
        &url,
        AuthorizationRequest::new(REDIRECT).with_client_name("mcpcassette-oauth-test"),
        "discovery and dynamic registration",
    )
    .await;
    assert!(
        authorization_url.contains("code_challenge_method=S256"),
        "{authorization_url}"
    );
    let callback = approve(&authorization_url).await;
    state
        .handle_callback_url(&callback)
        .await
        .expect("the code exchange");
    let manager = state.into_authorization_manager().expect("authorized");
    let first = manager.get_access_token().await.unwrap();
    manager.refresh_token().await.expect("the refresh grant");
    let refreshed = manager.get_access_token().await.unwrap();
    assert_ne!(first, refreshed, "a new token");

    let session = authorized_session(manager, &url).await;
    let tools = session.list_all_tools().await.unwrap();
    assert!(tools.iter().any(|t| t.name == "echo"), "{tools:?}");
    let echo = session
        .call_tool(
            CallToolRequestParams::new("echo")
                .with_arguments(json!({"message": "hello"}).as_object().unwrap().clone()),
        )
        .await
        .unwrap();
    assert_eq!(
        serde_json::to_value(&echo).unwrap()["content"][0]["text"],
        "echo: hello"
    );
    session.cancel().await.unwrap();

    let (_, stderr) = replayer.stop_with_stderr();
    for secret in [&first, &refreshed] {
        assert!(
            !stderr.contains(secret.as_str()),
            "tokens are never logged: {stderr}"
        );
    }
}

/// Without Node: `replay --auth oauth` is an OAuth-protected upstream of
/// its own (resource metadata, an authorization server, tokens it checks),
/// recorded through the proxy by rmcp's OAuth client.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rmcps_oauth_client_records_a_protected_server_through_the_proxy() {
    let upstream = replay("oauth");
    let dir = tempfile::tempdir().unwrap();
    let cassette = dir.path().join("protected.json");
    let recorder = Cli::record(&cassette)
        .upstream(&upstream.url)
        .listen()
        .capture_stderr()
        .start();
    let url = recorder.url.clone();

    let (mut state, authorization_url) = start_sign_in(
        &url,
        AuthorizationRequest::new(REDIRECT).with_client_name("mcpcassette-oauth-test"),
        "discovery through the proxy's stand-in",
    )
    .await;
    let proxy_origin = url.trim_end_matches("/mcp");
    assert!(
        authorization_url.starts_with(proxy_origin),
        "the client authorizes at the stand-in: {authorization_url}"
    );
    // The stand-in redirects to the real authorization endpoint, which
    // approves and redirects to the callback.
    let client = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let hop = client.get(&authorization_url).send().await.unwrap();
    assert_eq!(hop.status(), 302);
    let real = hop.headers()["location"].to_str().unwrap().to_owned();
    let upstream_origin = upstream.url.trim_end_matches("/mcp");
    assert!(real.starts_with(upstream_origin), "{real}");
    let resource = format!("resource={}", urlencode(&upstream.url));
    assert!(real.contains(&resource), "the upstream's resource: {real}");
    // The real server answers to the stand-in's callback, which sends the
    // browser on to the client's, with `iss` naming the stand-in.
    let hop = client.get(&real).send().await.unwrap();
    assert_eq!(hop.status(), 302);
    let back = hop.headers()["location"].to_str().unwrap().to_owned();
    assert!(back.starts_with(proxy_origin), "{back}");
    let hop = client.get(&back).send().await.unwrap();
    assert_eq!(hop.status(), 302);
    let callback = hop.headers()["location"].to_str().unwrap().to_owned();
    assert!(callback.starts_with(REDIRECT), "{callback}");
    state
        .handle_callback_url(&callback)
        .await
        .expect("the code exchange through the stand-in");
    let manager = state.into_authorization_manager().expect("authorized");
    let token = manager.get_access_token().await.unwrap();

    let session = authorized_session(manager, &url).await;
    let tools = session.list_all_tools().await.unwrap();
    assert!(tools.iter().any(|t| t.name == "echo"), "{tools:?}");
    session.cancel().await.unwrap();

    let journal = std::fs::read_to_string(dir.path().join("protected.json.journal")).unwrap();
    let (status, stderr) = recorder.stop_with_stderr();
    assert!(status.success(), "{stderr}");
    let code = code_of(&callback);
    let text = std::fs::read_to_string(&cassette).unwrap();
    for (what, written) in [("cassette", &text), ("journal", &journal), ("log", &stderr)] {
        assert!(!written.contains(&token), "the token is in the {what}");
        assert!(!written.contains(&code), "the code is in the {what}");
    }
    let recorded: serde_json::Value = serde_json::from_str(&text).unwrap();
    let methods: Vec<&str> = recorded["interactions"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|i| i["request"]["method"].as_str())
        .collect();
    assert_eq!(
        methods,
        ["initialize", "tools/list"],
        "no challenge is an interaction"
    );
    assert!(
        recorded["transport"]["behaviour"]["auth"]["refresh_tokens"] == true,
        "{}",
        recorded["transport"]
    );
}

fn urlencode(text: &str) -> String {
    text.replace(':', "%3A").replace('/', "%2F")
}
