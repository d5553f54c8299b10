//! The test kit: a mock and a connected, initialised client per test, in
//! both eras; its assertions pass and fail with messages that say why; its
//! client also talks to replay.

use mcpcassette::RpcError;
use mcpcassette::mock::{MockServer, Respond, Tool};
use mcpcassette::protocol::Era;
use mcpcassette::testkit::{ClientError, TestClient, TestKit};
use serde_json::json;

use crate::support;

fn weather() -> MockServer {
    MockServer::builder()
        .server_info("weather", "1.0.0")
        .tool(
            Tool::new("get_weather")
                .description("Weather for a city")
                .input_schema(json!({"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]})),
            Respond::with(|arguments, _| {
                let city = arguments["city"].as_str().unwrap_or("nowhere");
                Ok(json!({"content": [{"type": "text", "text": format!("sunny in {city}")}]}))
            }),
        )
        .build()
}

/// The panic message of a future that should panic.
async fn panic_message(future: impl Future<Output = ()> + Send + 'static) -> String {
    let error = tokio::spawn(future)
        .await
        .expect_err("the assertion should fail");
    let panic = error.into_panic();
    panic
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_default()
}

#[tokio::test]
async fn assertions_pass_in_both_eras() {
    for era in [Era::Legacy, Era::Modern] {
        let kit = TestKit::start_in(weather(), era).await;
        assert_eq!(kit.client.era(), era);
        kit.assert_tool_exists("get_weather").await;
        kit.assert_tool_returns(
            "get_weather",
            json!({"city": "Paris"}),
            json!({"content": [{"text": "sunny in Paris"}]}),
        )
        .await;
        kit.mock
            .assert_tool_called_with("get_weather", json!({"city": "Paris"}));
        kit.mock.assert_tool_called_times("get_weather", 1);
        if era == Era::Modern {
            assert_eq!(
                kit.client.handshake["resultType"], "complete",
                "{}",
                kit.client.handshake
            );
        } else {
            assert_eq!(kit.client.handshake["serverInfo"]["name"], "weather");
        }
    }
}

#[tokio::test]
async fn assertions_fail_with_what_was_there() {
    let kit = std::sync::Arc::new(TestKit::start(weather()).await);
    let k = kit.clone();
    let message = panic_message(async move { k.assert_tool_exists("get_forecast").await }).await;
    assert!(message.contains("no tool `get_forecast`"), "{message}");
    assert!(message.contains("get_weather"), "{message}");

    let k = kit.clone();
    let message = panic_message(async move {
        k.assert_tool_returns(
            "get_weather",
            json!({"city": "Oslo"}),
            json!({"content": [{"text": "rain in Oslo"}]}),
        )
        .await
    })
    .await;
    assert!(message.contains("/content/0/text"), "{message}");
    assert!(message.contains("sunny in Oslo"), "{message}");
    assert!(
        message.contains("testkit.rs"),
        "the caller's location: {message}"
    );
}

#[tokio::test]
async fn errors_come_back_as_rpc_errors() {
    let mock = MockServer::builder()
        .tool(
            Tool::new("broken"),
            Respond::error(-32010, "broken on purpose"),
        )
        .build();
    let kit = TestKit::start(mock).await;
    match kit.client.call_tool("broken", json!({})).await {
        Err(ClientError::Rpc(RpcError { code, message, .. })) => {
            assert_eq!(code, -32010);
            assert_eq!(message, "broken on purpose");
        }
        other => panic!("expected an error, got {other:?}"),
    }
}

#[tokio::test]
async fn the_client_talks_to_replay_too() {
    let path = support::root().join("cassettes/demo-legacy.json");
    let cassette = mcpcassette::cassette::load(&path).unwrap();
    let engine = mcpcassette::replay::Engine::new(cassette, &path);
    let (ours, theirs) = tokio::io::duplex(64 * 1024);
    let (reader, writer) = tokio::io::split(theirs);
    tokio::spawn(mcpcassette::replay::serve(engine, reader, writer));
    let client = TestClient::connect(ours, Era::Legacy).await.unwrap();
    assert_eq!(client.handshake["serverInfo"]["name"], "mcpcassette-demo");
    let tools = client.list_tools().await.unwrap();
    assert!(tools.iter().any(|t| t["name"] == "echo"));
    let echo = client
        .call_tool("echo", json!({"message": "hello"}))
        .await
        .unwrap();
    assert_eq!(echo["content"][0]["text"], "echo: hello");
}
