//! The library API: replay served in-process to an `rmcp` client over a
//! `tokio::io::duplex`, no processes involved.

use mcpcassette::cassette;
use mcpcassette::replay::{Engine, serve};
use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use serde_json::json;

use crate::support::root;

#[tokio::test]
async fn rmcp_client_talks_to_an_in_process_replay() {
    let path = root().join("cassettes/demo-legacy.json");
    let engine = Engine::new(cassette::load(&path).unwrap(), &path);
    let (client_side, server_side) = tokio::io::duplex(64 * 1024);
    let (read, write) = tokio::io::split(server_side);
    let server = tokio::spawn(serve(engine, read, write));

    let client = ().serve(client_side).await.expect("initialize against replay");
    let info = client
        .peer_info()
        .expect("server info from the recorded initialize");
    assert_eq!(info.server_info.as_ref().unwrap().name, "mcpcassette-demo");
    let tools = client.list_all_tools().await.unwrap();
    assert!(tools.iter().any(|t| t.name == "summarize"), "{tools:?}");
    let arguments = json!({"message": "hello"}).as_object().unwrap().clone();
    let echo = client
        .call_tool(CallToolRequestParams::new("echo").with_arguments(arguments))
        .await
        .unwrap();
    assert_eq!(
        serde_json::to_value(&echo.content).unwrap()[0]["text"],
        "echo: hello"
    );
    client.cancel().await.unwrap();

    let summary = server.await.unwrap().unwrap();
    assert!(summary.misses.is_empty(), "{:?}", summary.misses);
    assert!(
        !summary.unused.is_empty(),
        "the session used only part of the cassette"
    );
}

/// Code written against the former module names still compiles and reaches
/// the same items (with a deprecation warning where it is not allowed).
#[test]
#[allow(deprecated)]
fn former_module_paths_reach_the_renamed_modules() {
    use std::any::TypeId;
    assert_eq!(
        TypeId::of::<mcpcassette::client::LiveError>(),
        TypeId::of::<mcpcassette::client::LiveError>()
    );
    assert_eq!(
        TypeId::of::<mcpcassette::server::StdioConfig>(),
        TypeId::of::<mcpcassette::server::StdioConfig>()
    );
    assert_eq!(
        TypeId::of::<mcpcassette::verify::VerifyConfig>(),
        TypeId::of::<mcpcassette::verify::VerifyConfig>()
    );
    assert_eq!(
        TypeId::of::<mcpcassette::replay::http::HttpReplayConfig>(),
        TypeId::of::<mcpcassette::replay::HttpReplayConfig>()
    );
}
