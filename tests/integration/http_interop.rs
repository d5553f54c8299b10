//! rmcp's Streamable HTTP client against a real rmcp server (the
//! `rmcp_http_server` example) directly, through `record --upstream`, and
//! against `replay --listen` of that recording, in both eras.

use mcpcassette::cassette;
use mcpcassette::protocol::Era as CassetteEra;
use rmcp::model::{CallToolRequestParams, ProtocolVersion};
use rmcp::service::RunningService;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::{ClientLifecycleMode, ClientServiceExt, RoleClient, ServiceExt};
use serde_json::{Value, json};

use crate::support::cli::Cli;
use crate::support::http::{Served, rmcp_http_server};

#[derive(Debug, Clone, Copy)]
enum Era {
    Legacy,
    Modern,
}

async fn connect(url: &str, era: Era) -> RunningService<RoleClient, ()> {
    let transport = StreamableHttpClientTransport::from_uri(url.to_owned());
    let running = match era {
        Era::Legacy => ().serve(transport).await,
        Era::Modern => {
            let lifecycle = ClientLifecycleMode::Discover {
                preferred_versions: vec![ProtocolVersion::V_2026_07_28],
            };
            ().serve_with_lifecycle(transport, lifecycle).await
        }
    };
    running.unwrap_or_else(|e| panic!("{era:?} handshake with {url} failed: {e}"))
}

/// What the client sees: server identity, tools, and two calls.
async fn session(url: &str, era: Era) -> Value {
    let client = connect(url, era).await;
    let info = client
        .peer_info()
        .map(|i| json!({"server": i.server_info, "capabilities": i.capabilities}));
    let tools = client.list_all_tools().await.expect("tools/list");
    let call = |name: &str, arguments: Value| {
        CallToolRequestParams::new(name.to_owned())
            .with_arguments(arguments.as_object().unwrap().clone())
    };
    let echo = client
        .call_tool(call("echo", json!({"message": "hello"})))
        .await
        .expect("echo");
    let add = client
        .call_tool(call("add", json!({"a": 2, "b": 40})))
        .await
        .expect("add");
    client.cancel().await.expect("client shut down");
    json!({"info": info, "tools": tools, "echo": echo, "add": add})
}

async fn three_ways(era: Era) {
    let live = Served::start(rmcp_http_server());
    let direct = session(&live.url, era).await;

    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("rmcp.json");
    let recorder = Cli::record(&path).upstream(&live.url).listen().start();
    let recorded = session(&recorder.url, era).await;
    assert!(recorder.stop().success());
    drop(live);

    let replayer = Cli::replay(&path).listen().start();
    let replayed = session(&replayer.url, era).await;
    if let Era::Legacy = era {
        // A new session (a new initialize) sees the recording from the top.
        let again = session(&replayer.url, era).await;
        assert_eq!(again, replayed, "the second session saw something else");
    }
    assert!(replayer.stop().success(), "replay had misses");

    assert_eq!(
        direct, recorded,
        "{era:?}: the proxy changed what the client saw"
    );
    assert_eq!(
        direct, replayed,
        "{era:?}: replay differs from the live server"
    );
    assert_eq!(
        direct["echo"]["content"][0]["text"], "Echo: hello",
        "{direct}"
    );
    assert_eq!(direct["add"]["structuredContent"]["sum"], 42.0);
    let saved = cassette::load(&path).unwrap();
    let expected = match era {
        Era::Legacy => CassetteEra::Legacy,
        Era::Modern => CassetteEra::Modern,
    };
    assert_eq!(saved.protocol.era, expected);
    assert!(
        saved
            .interactions
            .iter()
            .all(|i| i.request().is_none() || i.http.is_some()),
        "HTTP metadata on every request"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rmcp_http_client_legacy_direct_recorded_replayed() {
    three_ways(Era::Legacy).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rmcp_http_client_modern_direct_recorded_replayed() {
    three_ways(Era::Modern).await;
}

/// Records one legacy session through `record --upstream`.
async fn recorded_legacy_session(path: &std::path::Path) {
    let live = Served::start(rmcp_http_server());
    let recorder = Cli::record(path).upstream(&live.url).listen().start();
    session(&recorder.url, Era::Legacy).await;
    assert!(recorder.stop().success());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replay_listen_serves_every_session_unless_told_to_share() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("rmcp.json");
    recorded_legacy_session(&path).await;
    let replay = |sessions: &str| {
        Cli::replay(&path)
            .listen()
            .args(["--fail-on-unused", "--sessions", sessions])
            .capture_stderr()
            .start()
    };

    // Isolated (the default): three clients, each the whole recording; and
    // nothing is unused, though each session used everything once.
    let replayer = replay("isolated");
    let first = session(&replayer.url, Era::Legacy).await;
    for _ in 0..2 {
        assert_eq!(session(&replayer.url, Era::Legacy).await, first);
    }
    let (status, stderr) = replayer.stop_with_stderr();
    assert!(status.success(), "{stderr}");

    // Shared: the second client finds the answers given away.
    let replayer = replay("shared");
    session(&replayer.url, Era::Legacy).await;
    let client = connect(&replayer.url, Era::Legacy).await;
    let error = client.list_all_tools().await.unwrap_err().to_string();
    assert!(error.contains("answered 1 time(s)"), "{error}");
    client.cancel().await.expect("client shut down");
    let (status, stderr) = replayer.stop_with_stderr();
    assert_eq!(status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("had no recorded answer"), "{stderr}");
}

/// One era's recording over HTTP, replayed to rmcp's client of the other
/// era: it sees what it sees from the live server in its own era (but for
/// the caching hints a legacy recording cannot hold).
async fn across_eras(recorded: Era, client: Era) {
    let live = Served::start(rmcp_http_server());
    let mut direct = session(&live.url, client).await;

    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("rmcp.json");
    let recorder = Cli::record(&path).upstream(&live.url).listen().start();
    session(&recorder.url, recorded).await;
    assert!(recorder.stop().success());
    drop(live);

    let replayer = Cli::replay(&path).listen().capture_stderr().start();
    let mut replayed = session(&replayer.url, client).await;
    let (status, stderr) = replayer.stop_with_stderr();
    assert!(status.success(), "replay had misses: {stderr}");
    assert!(stderr.contains("translated"), "said once: {stderr}");

    for transcript in [&mut direct, &mut replayed] {
        crate::support::across_eras(transcript, &["ttlMs", "cacheScope"], &[]);
    }
    assert_eq!(
        direct, replayed,
        "{client:?} client of a {recorded:?} recording differs from the live server"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rmcp_http_modern_client_replays_a_legacy_recording() {
    across_eras(Era::Legacy, Era::Modern).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rmcp_http_legacy_client_replays_a_modern_recording() {
    across_eras(Era::Modern, Era::Legacy).await;
}
