//! rmcp's OAuth client, as the OAuth tests drive it: sign-in started
//! against an MCP URL, and a session over the token it ends with.

use rmcp::service::RunningService;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::auth::{AuthClient, AuthorizationManager, AuthorizationRequest, OAuthState};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{RoleClient, ServiceExt};

/// The redirect URI every test client registers (nothing listens there:
/// the tests follow the redirects themselves).
pub const REDIRECT: &str = "http://127.0.0.1:9/callback";

/// Discovery and registration against `url` with `request`: the state to
/// finish the sign-in with, and the authorization URL to open. `what` names
/// the step in a failure.
pub async fn start_sign_in(
    url: &str,
    request: AuthorizationRequest,
    what: &str,
) -> (OAuthState, String) {
    let manager = AuthorizationManager::new_allowing_private_addresses(url)
        .await
        .unwrap();
    let mut state = OAuthState::Unauthorized(manager);
    state
        .start_authorization(request)
        .await
        .unwrap_or_else(|e| panic!("{what}: {e:?}"));
    let authorization_url = state.get_authorization_url().await.unwrap();
    (state, authorization_url)
}

/// An MCP session with `url` carrying `manager`'s token.
pub async fn authorized_session(
    manager: AuthorizationManager,
    url: &str,
) -> RunningService<RoleClient, ()> {
    let client = AuthClient::new(reqwest::Client::new(), manager);
    let transport = StreamableHttpClientTransport::with_client(
        client,
        StreamableHttpClientTransportConfig::with_uri(url.to_owned()),
    );
    ().serve(transport).await.expect("an authorized session")
}

/// The authorization code on a callback URL.
pub fn code_of(callback: &str) -> String {
    callback
        .split(['?', '&'])
        .find_map(|pair| pair.strip_prefix("code="))
        .expect("the callback carries a code")
        .to_owned()
}
