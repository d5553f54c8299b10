//! Tasks (the 2026-07-28 `io.modelcontextprotocol/tasks` extension) with
//! rmcp's client against the rmcp example server, live, through `record
//! --upstream` and from `replay --listen`: a task created by a tool call is
//! polled with `tasks/get` until it completes, and a client that polls
//! faster or slower than the recording did still completes with the
//! recorded result.

use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, ClientCapabilities, ClientConfig, GetTaskParams,
    Implementation, ProtocolVersion, TaskPayload,
};
use rmcp::service::RunningService;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::{ClientLifecycleMode, ClientServiceExt, RoleClient};
use serde_json::{Value, json};

use crate::support::cli::Cli;
use crate::support::http::{Served, rmcp_http_server};

/// A modern client that declares the tasks extension.
async fn connect(url: &str) -> RunningService<RoleClient, ClientConfig> {
    let transport = StreamableHttpClientTransport::from_uri(url.to_owned());
    let lifecycle = ClientLifecycleMode::Discover {
        preferred_versions: vec![ProtocolVersion::V_2026_07_28],
    };
    let info = ClientConfig::new(
        ClientCapabilities::builder().enable_tasks().build(),
        Implementation::new("tasks-test", "1.0.0"),
    );
    info.serve_with_lifecycle(transport, lifecycle)
        .await
        .unwrap_or_else(|e| panic!("handshake with {url} failed: {e}"))
}

/// Calls `slow_compute` for a second as a task and polls it every `every`
/// until it ends: the final task's payload, and how many polls it took.
async fn run_task(url: &str, every: Duration) -> (Value, usize) {
    let client = connect(url).await;
    let arguments = json!({"seconds": 1, "label": "polled"});
    let response = client
        .call_tool_once(
            CallToolRequestParams::new("slow_compute")
                .with_arguments(arguments.as_object().unwrap().clone()),
        )
        .await
        .expect("tools/call");
    let CallToolResponse::Task(created) = response else {
        panic!("a task, not {response:?}");
    };
    let task_id = created.task.task_id.clone();
    let mut polls = 0;
    let payload = loop {
        tokio::time::sleep(every).await;
        polls += 1;
        assert!(polls < 200, "the task never ended");
        let got = client
            .peer()
            .get_task(GetTaskParams::new(task_id.clone()))
            .await
            .expect("tasks/get");
        if got.task.status().is_terminal() {
            break got.task.payload;
        }
    };
    let TaskPayload::Completed { result } = payload else {
        panic!("completed, not {payload:?}");
    };
    client.cancel().await.expect("client shut down");
    (Value::Object(result), polls)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_polled_faster_or_slower_than_recorded_still_completes() {
    let live = Served::start(rmcp_http_server());
    let (direct, _) = run_task(&live.url, Duration::from_millis(100)).await;
    assert_eq!(direct["content"][0]["text"], "Computed polled", "{direct}");

    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("task.json");
    let recorder = Cli::record(&path).upstream(&live.url).listen().start();
    let (recorded, recorded_polls) = run_task(&recorder.url, Duration::from_millis(100)).await;
    assert!(recorder.stop().success());
    drop(live);
    assert_eq!(direct, recorded, "the proxy changed the result");
    assert!(
        recorded_polls > 2,
        "a second at 100 ms: {recorded_polls} polls"
    );

    let replayer = Cli::replay(&path)
        .listen()
        .arg("--fail-on-unused")
        .capture_stderr()
        .start();
    // Faster: as many polls as recorded would have been answered; more
    // get the final status again.
    let (fast, _) = run_task(&replayer.url, Duration::from_millis(1)).await;
    assert_eq!(fast, direct, "polling faster");
    let (slow, _) = run_task(&replayer.url, Duration::from_millis(150)).await;
    assert_eq!(slow, direct, "polling slower");
    let (status, stderr) = replayer.stop_with_stderr();
    assert!(status.success(), "no misses, nothing unused: {stderr}");
}
