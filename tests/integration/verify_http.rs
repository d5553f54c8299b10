//! Re-running an HTTP recording against the live server with
//! [`HttpLive`]: a session of rmcp's Streamable HTTP client with the
//! `rmcp_http_server` example is recorded through `record --upstream`, then
//! driven again, straight at the example, in both eras.

use mcpcassette::cassette::{self, Cassette};
use mcpcassette::client::HttpLive;
use mcpcassette::protocol::Era;
use mcpcassette::verify::compare;
use mcpcassette::verify::{DriveConfig, drive};
use rmcp::model::{
    CallToolRequestParams, GetPromptRequestParams, ProtocolVersion, ReadResourceRequestParams,
};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::{ClientLifecycleMode, ClientServiceExt, ServiceExt};
use serde_json::{Value, json};

use crate::support::http::{Served, rmcp_http_server};
use crate::support::mcpcassette;

/// The session recorded: handshake (or discovery), the tool list, calls
/// (one whose argument travels in an `Mcp-Param-Value` header in the modern
/// era), a resource and a prompt.
async fn session(url: &str, era: Era) {
    let transport = StreamableHttpClientTransport::from_uri(url.to_owned());
    let client = match era {
        Era::Modern => {
            let lifecycle = ClientLifecycleMode::Discover {
                preferred_versions: vec![ProtocolVersion::V_2026_07_28],
            };
            ().serve_with_lifecycle(transport, lifecycle).await
        }
        _ => ().serve(transport).await,
    }
    .unwrap_or_else(|e| panic!("{era:?} handshake with {url} failed: {e}"));
    client.list_all_tools().await.expect("tools/list");
    let call = |name: &str, arguments: Value| {
        CallToolRequestParams::new(name.to_owned())
            .with_arguments(arguments.as_object().unwrap().clone())
    };
    client
        .call_tool(call("echo", json!({"message": "héllo"})))
        .await
        .expect("echo");
    client
        .call_tool(call("add", json!({"a": 2, "b": 40})))
        .await
        .expect("add");
    client
        .call_tool(call("test_custom_header", json!({"value": "eu-west"})))
        .await
        .expect("test_custom_header");
    client
        .read_resource(ReadResourceRequestParams::new("demo://greeting"))
        .await
        .expect("resources/read");
    let greet = GetPromptRequestParams::new("greet")
        .with_arguments(json!({"name": "Ada"}).as_object().unwrap().clone());
    client.get_prompt(greet).await.expect("prompts/get");
    client.cancel().await.expect("client shut down");
}

/// Records `session` against `live` through `mcpcassette record`.
fn record(live: &Served, era: Era, path: &std::path::Path) -> Cassette {
    let mut command = mcpcassette();
    command.arg("record").arg("--cassette").arg(path).args([
        "--upstream",
        &live.url,
        "--listen",
        "127.0.0.1:0",
    ]);
    let recorder = Served::start(command);
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
        .block_on(session(&recorder.url, era));
    assert!(recorder.stop().success(), "record failed");
    cassette::load(path).unwrap()
}

/// Records a session, drives the live server with it, and compares.
fn verify_against_live(era: Era) {
    let live = Served::start(rmcp_http_server());
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("rmcp.json");
    let recorded = record(&live, era, &path);
    assert_eq!(recorded.protocol.era, era);

    let mut connection = HttpLive::connect(&live.url, recorded.protocol.era).unwrap();
    let observed = drive(&recorded, &mut connection, &DriveConfig::default())
        .unwrap_or_else(|e| panic!("{era:?}: driving the live server failed: {e}"));

    assert_eq!(
        observed.interactions.len(),
        recorded.interactions.len(),
        "{era:?}: a different number of interactions"
    );
    let mut answered = 0;
    for (index, (was, now)) in recorded
        .interactions
        .iter()
        .zip(&observed.interactions)
        .enumerate()
    {
        assert_eq!(was.client.message(), now.client.message(), "#{index}");
        let result = |response: Option<&Value>| response.map(|r| r["result"].clone());
        assert_eq!(
            result(was.response.as_deref()),
            result(now.response.as_deref()),
            "{era:?}: interaction #{index} ({}) answered differently",
            was.client.message()["method"]
        );
        answered += usize::from(now.response.is_some());
    }
    // The handshake or discovery, tools/list and the five calls.
    assert!(answered >= 7, "{era:?}: only {answered} answers");
    let calls: Vec<&Value> = observed
        .interactions
        .iter()
        .filter(|i| i.client.message()["method"] == "tools/call")
        .filter_map(|i| i.response.as_deref())
        .collect();
    assert_eq!(calls[0]["result"]["content"][0]["text"], "Echo: héllo");
    assert_eq!(calls[1]["result"]["structuredContent"]["sum"], 42.0);
    assert!(
        calls[2]["result"].get("isError") != Some(&Value::Bool(true)),
        "{}",
        calls[2]
    );

    let report = compare(&path, &recorded, &observed, &recorded.rules.normalize);
    assert!(
        !report.has_drift(),
        "{era:?}: drift against the server the recording came from: {:#?}",
        report.drifted().collect::<Vec<_>>()
    );
}

#[test]
fn verify_http_legacy_session_against_the_live_server() {
    verify_against_live(Era::Legacy);
}

#[test]
fn verify_http_modern_session_against_the_live_server() {
    verify_against_live(Era::Modern);
}
