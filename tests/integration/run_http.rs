//! `mcpcassette run` with a Streamable HTTP server: `--upstream URL`
//! records through the proxy when the mode records, and replays on
//! `--listen` (default 127.0.0.1:0) when it replays, printing the URL
//! either way; `new-episodes` forwards misses to the server and appends
//! them.

use std::path::Path;
use std::process::Command;

use rmcp::model::CallToolRequestParams;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::{ServiceExt, service::RunningService};
use serde_json::{Value, json};

use crate::support::http::{Served, rmcp_http_server};
use crate::support::mcpcassette;

/// A runtime for the rmcp client.
pub fn block_on<F: Future>(future: F) -> F::Output {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
        .block_on(future)
}

/// An rmcp client session at `url`: `initialize`, or `server/discover`
/// (2026-07-28) when `modern`.
async fn connect_in(url: &str, modern: bool) -> RunningService<rmcp::RoleClient, ()> {
    let transport = StreamableHttpClientTransport::from_uri(url.to_owned());
    let client = if modern {
        let lifecycle = rmcp::ClientLifecycleMode::Discover {
            preferred_versions: vec![rmcp::model::ProtocolVersion::V_2026_07_28],
        };
        rmcp::ClientServiceExt::serve_with_lifecycle((), transport, lifecycle).await
    } else {
        ().serve(transport).await
    };
    client.unwrap_or_else(|e| panic!("handshake with {url} failed: {e}"))
}

/// `echo` with `message`: the text answered, or the error's message.
pub async fn echo(
    client: &RunningService<rmcp::RoleClient, ()>,
    message: &str,
) -> Result<String, String> {
    let call = CallToolRequestParams::new("echo")
        .with_arguments(json!({"message": message}).as_object().unwrap().clone());
    match client.call_tool(call).await {
        Ok(result) => {
            let value = serde_json::to_value(result).unwrap();
            Ok(value
                .pointer("/content/0/text")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned())
        }
        Err(error) => Err(error.to_string()),
    }
}

/// One session that echoes each of `messages`.
pub fn echo_session(url: &str, messages: &[&str]) -> Vec<Result<String, String>> {
    echo_session_in(url, false, messages)
}

/// The same, in the modern era when `modern`.
fn echo_session_in(url: &str, modern: bool, messages: &[&str]) -> Vec<Result<String, String>> {
    block_on(async {
        let client = connect_in(url, modern).await;
        let mut answers = Vec::new();
        for message in messages {
            answers.push(echo(&client, message).await);
        }
        client.cancel().await.unwrap();
        answers
    })
}

/// `mcpcassette run --cassette PATH ARGS`, run from `dir`.
fn run(dir: &Path, cassette: &str, args: &[&str]) -> Command {
    let mut command = mcpcassette();
    command
        .current_dir(dir)
        .env_remove("MCPCASSETTE_MODE")
        .args(["run", "--cassette", cassette])
        .args(args);
    command
}

#[test]
fn run_records_through_the_proxy_then_replays_on_listen() {
    let live = Served::start(rmcp_http_server());
    let dir = tempfile::tempdir().unwrap();

    let recorder = Served::start_capturing_stderr(run(
        dir.path(),
        "c.json",
        &["--mode", "once", "--upstream", &live.url],
    ));
    assert_ne!(recorder.url, live.url, "the proxy's own URL is printed");
    let answers = echo_session(&recorder.url, &["one"]);
    assert_eq!(answers, [Ok("Echo: one".to_owned())]);
    let (status, stderr) = recorder.stop_with_stderr();
    assert!(status.success(), "{stderr}");
    assert!(
        stderr.contains("mode once (from --mode): cassette missing: recording"),
        "{stderr}"
    );
    let recorded = mcpcassette::cassette::load(&dir.path().join("c.json")).unwrap();
    assert!(
        recorded
            .interactions
            .iter()
            .any(|i| i.method() == "tools/call")
    );
    drop(live);

    // The server is gone: the same command line replays.
    for args in [
        &["--mode", "once", "--upstream", "http://127.0.0.1:9/mcp"][..],
        &["--mode", "none", "--listen", "127.0.0.1:0"][..],
    ] {
        let replay = Served::start_capturing_stderr(run(dir.path(), "c.json", args));
        let answers = echo_session(&replay.url, &["one"]);
        assert_eq!(answers, [Ok("Echo: one".to_owned())], "{args:?}");
        let (status, stderr) = replay.stop_with_stderr();
        assert!(status.success(), "{args:?}: {stderr}");
        assert!(stderr.contains("replaying"), "{stderr}");
    }
}

#[test]
fn new_episodes_over_http_replays_what_it_has_and_appends_what_it_had_not() {
    new_episodes_over_http(false);
}

#[test]
fn new_episodes_over_http_in_the_modern_era() {
    new_episodes_over_http(true);
}

fn new_episodes_over_http(modern: bool) {
    let echo_session = |url: &str, messages: &[&str]| echo_session_in(url, modern, messages);
    let live = Served::start(rmcp_http_server());
    let dir = tempfile::tempdir().unwrap();
    let recorder = Served::start(run(
        dir.path(),
        "c.json",
        &["--mode", "all", "--upstream", &live.url],
    ));
    assert_eq!(
        echo_session(&recorder.url, &["one"]),
        [Ok("Echo: one".to_owned())]
    );
    assert!(recorder.stop().success());
    let path = dir.path().join("c.json");
    let before = mcpcassette::cassette::load(&path)
        .unwrap()
        .interactions
        .len();

    let episodes = Served::start_capturing_stderr(run(
        dir.path(),
        "c.json",
        &["--mode", "new-episodes", "--upstream", &live.url],
    ));
    // Two sessions: the second sees the first's new episode too.
    let answers = echo_session(&episodes.url, &["one", "two"]);
    assert_eq!(
        answers,
        [Ok("Echo: one".to_owned()), Ok("Echo: two".to_owned())]
    );
    let answers = echo_session(&episodes.url, &["three"]);
    assert_eq!(answers, [Ok("Echo: three".to_owned())]);
    let (status, stderr) = episodes.stop_with_stderr();
    assert!(status.success(), "{stderr}");
    assert!(stderr.contains("appended 2 new interaction(s)"), "{stderr}");
    let after = mcpcassette::cassette::load(&path).unwrap();
    assert_eq!(after.interactions.len(), before + 2);
    let era = if modern {
        mcpcassette::protocol::Era::Modern
    } else {
        mcpcassette::protocol::Era::Legacy
    };
    assert_eq!(after.protocol.era, era);
    drop(live);

    // Everything replays without the server.
    let replay = Served::start_capturing_stderr(run(
        dir.path(),
        "c.json",
        &["--mode", "none", "--listen", "127.0.0.1:0"],
    ));
    let answers = echo_session(&replay.url, &["one", "two", "three"]);
    assert_eq!(
        answers,
        [
            Ok("Echo: one".to_owned()),
            Ok("Echo: two".to_owned()),
            Ok("Echo: three".to_owned())
        ]
    );
    let (status, stderr) = replay.stop_with_stderr();
    assert!(status.success(), "{stderr}");
}

#[test]
fn new_episodes_over_http_with_the_server_down_fails_the_run() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(
        crate::support::root().join("cassettes/demo-legacy.json"),
        dir.path().join("c.json"),
    )
    .unwrap();
    let episodes = Served::start_capturing_stderr(run(
        dir.path(),
        "c.json",
        &[
            "--mode",
            "new-episodes",
            "--upstream",
            "http://127.0.0.1:9/mcp",
        ],
    ));
    let answers = echo_session(&episodes.url, &["not recorded"]);
    let error = answers[0].as_ref().unwrap_err();
    assert!(
        error.contains("the server for new episodes failed"),
        "{error}"
    );
    let (status, stderr) = episodes.stop_with_stderr();
    assert_eq!(status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("1 request(s) could not be forwarded"),
        "{stderr}"
    );
}

#[test]
fn recording_over_http_needs_the_upstream() {
    let dir = tempfile::tempdir().unwrap();
    let output = run(
        dir.path(),
        "c.json",
        &["--mode", "all", "--listen", "127.0.0.1:0"],
    )
    .output()
    .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("mode all over HTTP needs the server's URL: pass --upstream URL"),
        "{stderr}"
    );
    let output = run(
        dir.path(),
        "c.json",
        &["--upstream", "http://127.0.0.1:9/mcp", "--", "server"],
    )
    .output()
    .unwrap();
    assert_eq!(
        output.status.code(),
        Some(2),
        "--upstream and a command conflict"
    );
}

/// A legacy rmcp client that answers sampling requests with "short".
#[derive(Clone)]
struct Sampler;

// Sampling is a legacy-era feature; rmcp marks its types deprecated.
#[allow(deprecated)]
impl rmcp::ClientHandler for Sampler {
    async fn create_message(
        &self,
        _params: rmcp::model::CreateMessageRequestParams,
        _context: rmcp::service::RequestContext<rmcp::RoleClient>,
    ) -> Result<rmcp::model::CreateMessageResult, rmcp::ErrorData> {
        let message = rmcp::model::SamplingMessage::assistant_text("short");
        Ok(rmcp::model::CreateMessageResult::new(
            message,
            "test-model".into(),
        ))
    }

    fn get_info(&self) -> rmcp::model::ClientInfo {
        let capabilities = rmcp::model::ClientCapabilities::builder()
            .enable_sampling_with(rmcp::model::SamplingCapability::default())
            .build();
        rmcp::model::ClientInfo::new(
            capabilities,
            rmcp::model::Implementation::new("sampler", "1"),
        )
    }
}

/// One session of [`Sampler`] that calls `tool` with `arguments`: the text
/// answered, or the error.
fn sampler_call(url: &str, tool: &str, arguments: Value) -> Result<String, String> {
    block_on(async {
        let transport = StreamableHttpClientTransport::from_uri(url.to_owned());
        let client = Sampler.serve(transport).await.expect("handshake");
        let call = CallToolRequestParams::new(tool.to_owned())
            .with_arguments(arguments.as_object().unwrap().clone());
        let answer = match client.call_tool(call).await {
            Ok(result) => Ok(serde_json::to_value(result).unwrap()["content"][0]["text"]
                .as_str()
                .unwrap_or_default()
                .to_owned()),
            Err(error) => Err(error.to_string()),
        };
        client.cancel().await.unwrap();
        answer
    })
}

#[test]
fn new_episodes_over_http_relays_server_requests_and_records_them() {
    let live = Served::start(rmcp_http_server());
    let dir = tempfile::tempdir().unwrap();
    let recorder = Served::start(run(
        dir.path(),
        "c.json",
        &["--mode", "all", "--upstream", &live.url],
    ));
    let echo = sampler_call(&recorder.url, "echo", json!({"message": "one"}));
    assert_eq!(echo, Ok("Echo: one".to_owned()));
    assert!(recorder.stop().success());

    let episodes = Served::start_capturing_stderr(run(
        dir.path(),
        "c.json",
        &["--mode", "new-episodes", "--upstream", &live.url],
    ));
    let sampled = sampler_call(&episodes.url, "test_sampling", json!({"prompt": "hi"}));
    assert_eq!(sampled, Ok("LLM response: short".to_owned()));
    let (status, stderr) = episodes.stop_with_stderr();
    assert!(status.success(), "{stderr}");
    assert!(stderr.contains("appended 1 new interaction(s)"), "{stderr}");
    let after = mcpcassette::cassette::load(&dir.path().join("c.json")).unwrap();
    let appended = after.interactions.last().unwrap();
    let Some(mcpcassette::cassette::Event::ServerRequest {
        server_request,
        client_response,
    }) = appended.during.first()
    else {
        panic!("the sampling request is recorded: {appended:#?}");
    };
    assert_eq!(server_request["method"], "sampling/createMessage");
    let client_response = client_response.as_ref().expect("with the client's answer");
    assert_eq!(
        client_response["id"], server_request["id"],
        "the server's id"
    );
    drop(live);

    // Replayed without the server: the client is asked again, as recorded.
    let replay = Served::start_capturing_stderr(run(
        dir.path(),
        "c.json",
        &["--mode", "none", "--listen", "127.0.0.1:0"],
    ));
    let sampled = sampler_call(&replay.url, "test_sampling", json!({"prompt": "hi"}));
    assert_eq!(sampled, Ok("LLM response: short".to_owned()));
    let (status, stderr) = replay.stop_with_stderr();
    assert!(status.success(), "{stderr}");
}
