//! `replay --auth oauth`: rmcp's OAuth client runs its whole code path
//! (401 challenge, protected-resource and authorization-server discovery,
//! dynamic registration, authorization with PKCE, code exchange, refresh)
//! against replay's built-in authorization server, offline, and the session
//! then replays as without authentication.

use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::auth::{AuthClient, AuthorizationManager, AuthorizationRequest, OAuthState};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use serde_json::json;

use crate::support::http::{Served, replay_listen};
use crate::support::root;

const REDIRECT: &str = "http://127.0.0.1:9/callback";

fn replay(auth: &str) -> Served {
    let mut replay = replay_listen(&root().join("cassettes/demo-legacy.json"));
    replay.args(["--auth", auth]);
    Served::start_capturing_stderr(replay)
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

    let manager = AuthorizationManager::new_allowing_private_addresses(url.as_str())
        .await
        .unwrap();
    let mut state = OAuthState::Unauthorized(manager);
    state
        .start_authorization(
            AuthorizationRequest::new(REDIRECT).with_client_name("mcpcassette-oauth-test"),
        )
        .await
        .expect("discovery and dynamic registration");
    let authorization_url = state.get_authorization_url().await.unwrap();
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

    let client = AuthClient::new(reqwest::Client::new(), manager);
    let transport = StreamableHttpClientTransport::with_client(
        client,
        StreamableHttpClientTransportConfig::with_uri(url.clone()),
    );
    let session = ().serve(transport).await.expect("an authorized session");
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
