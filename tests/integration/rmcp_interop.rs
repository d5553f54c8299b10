//! The `rmcp` crate as a client: it gets identical results from the demo
//! server directly, through `mcpcassette record`, and from `mcpcassette
//! replay`, in both protocol eras.
//!
//! The runs differ on purpose in what replay must ignore: the recording run
//! sends one extra request first (so every later request id and
//! `_meta.progressToken` is shifted), and each run names itself with its own
//! clientInfo version.

// Sampling and roots are deprecated in rmcp (SEP-2577) but still spoken by
// the demo server, so their types are used here.
#![allow(deprecated)]

use std::path::Path;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::model::{
    ArgumentInfo, CallToolRequest, CallToolRequestParams, CallToolResponse, ClientCapabilities,
    ClientConfig, ClientRequest, CompleteRequestParams, CreateMessageRequestParams,
    CreateMessageResult, ElicitRequestParams, ElicitResult, ElicitationAction,
    ElicitationCapability, FormElicitationCapability, GetPromptRequestParams, Implementation,
    ListRootsResult, LoggingMessageNotificationParam, ProgressNotificationParam, ProtocolVersion,
    ReadResourceRequestParams, Reference, Root, RootsCapabilities, SamplingCapability,
    SamplingMessage, ServerResult,
};
use rmcp::service::{NotificationContext, PeerRequestOptions, RequestContext, RunningService};
use rmcp::transport::TokioChildProcess;
use rmcp::{
    ClientHandler, ClientLifecycleMode, ClientServiceExt, ErrorData, RoleClient, ServiceError,
    ServiceExt,
};
use serde::Serialize;
use serde_json::{Map, Value, json};
use tokio::io::AsyncReadExt;
use tokio::process::{ChildStderr, Command};

use crate::support;

/// What the client's "LLM" answers to every sampling request.
const SAMPLED_TEXT: &str = "rmcp sampled this";
/// The client's only root.
const ROOT_URI: &str = "file:///work/rmcp-interop";
/// A resource the demo server does not have: each era answers its own
/// "resource not found" code.
const UNKNOWN_URI: &str = "demo://missing";
/// A whole session, handshake to shutdown.
const SESSION_TIMEOUT: Duration = Duration::from_secs(60);
/// How long to wait for notifications that rmcp dispatches on their own tasks.
const NOTIFICATION_WAIT: Duration = Duration::from_secs(10);

/// Which lifecycle rmcp uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Era {
    /// `initialize` handshake (rmcp asks for 2026-07-28, accepts 2025-11-25).
    Legacy,
    /// `server/discover`, then per-request `_meta`.
    Modern,
}

/// What one run changes that replay must not care about.
#[derive(Debug, Clone, Copy)]
struct Variation {
    /// The clientInfo version rmcp sends.
    client_version: &'static str,
    /// Sends one unscripted request first, shifting ids and progress tokens.
    warm_up: bool,
}

// ---------------------------------------------------------------------------
// The client handler
// ---------------------------------------------------------------------------

/// An rmcp client handler with canned answers that remembers what the server
/// asked of it and what it was notified of.
#[derive(Clone)]
struct Client {
    info: Implementation,
    /// Server requests (legacy) or `inputRequests` (modern), as `{method, params}`.
    asked: Arc<Mutex<Vec<Value>>>,
    progress: Arc<Mutex<Vec<ProgressNotificationParam>>>,
    logs: Arc<Mutex<Vec<LoggingMessageNotificationParam>>>,
}

impl Client {
    fn new(version: &str) -> Self {
        Client {
            info: Implementation::new("mcpcassette-rmcp-interop", version),
            asked: Arc::default(),
            progress: Arc::default(),
            logs: Arc::default(),
        }
    }

    fn note_asked(&self, method: &str, params: impl Serialize) {
        let params = serde_json::to_value(params).unwrap();
        lock(&self.asked).push(json!({ "method": method, "params": params }));
    }
}

impl ClientHandler for Client {
    async fn create_message(
        &self,
        params: CreateMessageRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<CreateMessageResult, ErrorData> {
        self.note_asked("sampling/createMessage", &params);
        let message = SamplingMessage::assistant_text(SAMPLED_TEXT);
        Ok(CreateMessageResult::new(message, "rmcp-test-model".into())
            .with_stop_reason(CreateMessageResult::STOP_REASON_END_TURN))
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        self.note_asked("elicitation/create", &request);
        Ok(ElicitResult::new(ElicitationAction::Accept).with_content(json!({ "confirm": true })))
    }

    async fn list_roots(
        &self,
        _context: RequestContext<RoleClient>,
    ) -> Result<ListRootsResult, ErrorData> {
        self.note_asked("roots/list", Value::Null);
        Ok(ListRootsResult::new(vec![
            Root::new(ROOT_URI).with_name("interop"),
        ]))
    }

    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        lock(&self.progress).push(params);
    }

    async fn on_logging_message(
        &self,
        params: LoggingMessageNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        lock(&self.logs).push(params);
    }

    fn get_info(&self) -> ClientConfig {
        let capabilities = ClientCapabilities::builder()
            .enable_roots_with(RootsCapabilities::default())
            .enable_sampling_with(SamplingCapability::default())
            .enable_elicitation_with(
                ElicitationCapability::new().with_form(FormElicitationCapability::new()),
            )
            .build();
        ClientConfig::new(capabilities, self.info.clone())
    }
}

type Running = RunningService<RoleClient, Client>;

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

/// Waits until `items` holds at least `count` entries (or the wait is
/// over), then takes them all.
async fn take_at_least<T>(items: &Mutex<Vec<T>>, count: usize) -> Vec<T> {
    let deadline = tokio::time::Instant::now() + NOTIFICATION_WAIT;
    loop {
        {
            let mut items = lock(items);
            if items.len() >= count || tokio::time::Instant::now() >= deadline {
                return std::mem::take(&mut *items);
            }
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

// ---------------------------------------------------------------------------
// One session
// ---------------------------------------------------------------------------

/// A session's transcript and its server's stderr (for failure messages).
struct Run {
    transcript: Value,
    stderr: String,
}

/// Runs the scripted rmcp session against `command` (a stdio MCP server).
async fn session(command: Command, era: Era, variation: Variation) -> Run {
    let (transport, stderr) = TokioChildProcess::builder(command)
        .stderr(Stdio::piped())
        .spawn()
        .expect("cannot start the server");
    let stderr = tokio::spawn(read_all(stderr.expect("stderr is piped")));
    let handler = Client::new(variation.client_version);
    let outcome = tokio::time::timeout(SESSION_TIMEOUT, async {
        let client = connect(handler.clone(), transport, era).await?;
        if variation.warm_up {
            warm_up(&client).await;
        }
        let transcript = script(&client, &handler, era).await;
        client
            .cancel()
            .await
            .map_err(|e| format!("shutting down: {e}"))?;
        Ok::<_, String>(transcript)
    })
    .await;
    let stderr = tokio::time::timeout(Duration::from_secs(10), stderr)
        .await
        .map(Result::unwrap)
        .unwrap_or_else(|_| "(stderr still open)".to_string());
    match outcome {
        Ok(Ok(transcript)) => Run { transcript, stderr },
        Ok(Err(error)) => panic!("rmcp session failed: {error}\nserver stderr:\n{stderr}"),
        Err(_) => panic!("rmcp session timed out\nserver stderr:\n{stderr}"),
    }
}

async fn read_all(mut stderr: ChildStderr) -> String {
    let mut text = String::new();
    let _ = stderr.read_to_string(&mut text).await;
    text
}

/// The handshake: `initialize` (legacy) or `server/discover` (modern).
async fn connect(
    client: Client,
    transport: TokioChildProcess,
    era: Era,
) -> Result<Running, String> {
    let running = match era {
        Era::Legacy => client.serve(transport).await,
        Era::Modern => {
            let lifecycle = ClientLifecycleMode::Discover {
                preferred_versions: vec![ProtocolVersion::V_2026_07_28],
            };
            client.serve_with_lifecycle(transport, lifecycle).await
        }
    };
    running.map_err(|e| format!("{era:?} handshake: {e}"))
}

/// A request only the recording run sends: every later id and progress
/// token of that run is one higher than in the other runs.
async fn warm_up(client: &Running) {
    let params = CompleteRequestParams::new(
        Reference::for_prompt("greet"),
        ArgumentInfo::new("name", "C"),
    );
    client.complete(params).await.expect("warm-up completion");
}

/// Every feature of the demo server, in order, as one JSON object keyed by
/// step name.
async fn script(client: &Running, handler: &Client, era: Era) -> Value {
    let mut steps = Map::new();
    let mut step = |name: &str, value: Value| {
        steps.insert(name.to_string(), value);
    };

    let info = client
        .peer_info()
        .expect("the handshake stored server info");
    step("handshake", serde_json::to_value(&*info).unwrap());
    step("tools/list", outcome(client.list_tools(None).await));

    let plain_tools = [
        ("echo", json!({ "message": "hello" })),
        ("add", json!({ "a": 40, "b": 2 })),
        ("divide", json!({ "a": 1, "b": 0 })),
        ("explode", json!({})),
    ];
    for (name, arguments) in plain_tools {
        step(name, call(client, handler, name, arguments).await);
    }
    step("count", count(client, handler, era).await);

    // Tools that need the client: server requests (legacy) or
    // `input_required` rounds (modern).
    let summarize = json!({ "text": "hello world" });
    if era == Era::Modern {
        let first = first_round(client, "summarize", summarize.clone()).await;
        step("summarize, first round", first);
    }
    let asking_tools = [
        ("summarize", summarize),
        ("confirm", json!({ "action": "deploy" })),
        ("roots", json!({})),
    ];
    for (name, arguments) in asking_tools {
        step(name, call(client, handler, name, arguments).await);
    }

    step("resources/list", outcome(client.list_resources(None).await));
    step(
        "read readme",
        outcome(
            client
                .read_resource(ReadResourceRequestParams::new("demo://readme"))
                .await,
        ),
    );
    step(
        "read note 7",
        outcome(
            client
                .read_resource(ReadResourceRequestParams::new("demo://notes/7"))
                .await,
        ),
    );
    step(
        "read unknown",
        outcome(
            client
                .read_resource(ReadResourceRequestParams::new(UNKNOWN_URI))
                .await,
        ),
    );
    step(
        "resources/templates/list",
        outcome(client.list_resource_templates(None).await),
    );

    step("prompts/list", outcome(client.list_prompts(None).await));
    let greet =
        GetPromptRequestParams::new("greet").with_arguments(object(json!({ "name": "Ada" })));
    step("get greet", outcome(client.get_prompt(greet).await));
    let complete = CompleteRequestParams::new(
        Reference::for_prompt("greet"),
        ArgumentInfo::new("name", "a"),
    );
    step("complete greet", outcome(client.complete(complete).await));

    Value::Object(steps)
}

/// A `tools/call` through rmcp's high-level helper (which answers modern
/// `input_required` rounds with the handler), with what the server asked.
async fn call(client: &Running, handler: &Client, name: &'static str, arguments: Value) -> Value {
    let result = client.call_tool(tool(name, arguments)).await;
    let asked = std::mem::take(&mut *lock(&handler.asked));
    json!({ "outcome": outcome(result), "asked": asked })
}

/// The `count` tool with the progress and log notifications it caused. It
/// goes through `send_request_with_option` to learn the progress token rmcp
/// put on it: progress must come back for that live token, so only its
/// agreement is kept, not the token itself.
async fn count(client: &Running, handler: &Client, era: Era) -> Value {
    let request =
        ClientRequest::CallToolRequest(CallToolRequest::new(tool("count", json!({ "steps": 3 }))));
    let handle = client
        .send_request_with_option(request, PeerRequestOptions::no_options())
        .await
        .expect("count request sent");
    let live_token = handle.progress_token.clone();
    let result = match handle.await_response().await {
        Ok(ServerResult::CallToolResult(result)) => Ok(result),
        Ok(_) => Err(ServiceError::UnexpectedResponse),
        Err(error) => Err(error),
    };
    let mut progress = take_at_least(&handler.progress, 3).await;
    // Legacy sessions log at "info" by default; modern requests ask for no logs.
    let logs = take_at_least(&handler.logs, usize::from(era == Era::Legacy)).await;
    progress.sort_by(|a, b| a.progress.total_cmp(&b.progress));
    let for_live_token = progress.iter().all(|p| p.progress_token == live_token);
    let progress: Vec<Value> = progress
        .iter()
        .map(|p| json!({ "progress": p.progress, "total": p.total, "message": p.message }))
        .collect();
    json!({
        "outcome": outcome(result),
        "progress": progress,
        "progressForLiveToken": for_live_token,
        "logs": logs,
    })
}

/// One `tools/call` round without rmcp's retries: the raw `input_required`.
async fn first_round(client: &Running, name: &'static str, arguments: Value) -> Value {
    match client.call_tool_once(tool(name, arguments)).await {
        Ok(CallToolResponse::InputRequired(result)) => json!({ "inputRequired": result }),
        Ok(CallToolResponse::Complete(result)) => json!({ "complete": result }),
        Ok(other) => json!({ "other": format!("{other:?}") }),
        Err(error) => outcome::<()>(Err(error)),
    }
}

fn tool(name: &'static str, arguments: Value) -> CallToolRequestParams {
    CallToolRequestParams::new(name).with_arguments(object(arguments))
}

fn object(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        other => panic!("expected an object, got {other}"),
    }
}

/// A result as `{"result": ...}`, a JSON-RPC error as `{"error": {code,
/// message, data}}`, anything else rmcp reports as `{"failure": text}`.
fn outcome<T: Serialize>(result: Result<T, ServiceError>) -> Value {
    match result {
        Ok(value) => json!({ "result": value }),
        Err(ServiceError::McpError(error)) => json!({ "error": error }),
        Err(other) => json!({ "failure": other.to_string() }),
    }
}

// ---------------------------------------------------------------------------
// Three ways
// ---------------------------------------------------------------------------

fn demo_server() -> Command {
    Command::new(support::demo_server_path())
}

fn record(cassette: &Path) -> Command {
    let mut command = Command::from(support::mcpcassette());
    command
        .arg("record")
        .arg("--cassette")
        .arg(cassette)
        .arg("--")
        .arg(support::demo_server_path());
    command
}

fn replay(cassette: &Path) -> Command {
    let mut command = Command::from(support::mcpcassette());
    command.arg("replay").arg(cassette);
    command
}

/// The direct, recorded and replayed runs of one era, and the cassette.
async fn three_ways(era: Era) -> (Run, Run, Run, mcpcassette::cassette::Cassette) {
    let dir = tempfile::tempdir().unwrap();
    let cassette = dir.path().join("c.json");
    let direct = session(
        demo_server(),
        era,
        Variation {
            client_version: "1.0.0-direct",
            warm_up: false,
        },
    )
    .await;
    let recorded = session(
        record(&cassette),
        era,
        Variation {
            client_version: "2.0.0-record",
            warm_up: true,
        },
    )
    .await;
    assert!(
        cassette.exists(),
        "record wrote no cassette; its stderr:\n{}",
        recorded.stderr
    );
    let replayed = session(
        replay(&cassette),
        era,
        Variation {
            client_version: "3.0.0-replay",
            warm_up: false,
        },
    )
    .await;
    let loaded = mcpcassette::cassette::load(&cassette).unwrap();
    (direct, recorded, replayed, loaded)
}

/// Compares two transcripts step by step, naming the first step that differs.
fn assert_same(expected: &Run, actual: &Run, what: &str) {
    let (Value::Object(want), Value::Object(got)) = (&expected.transcript, &actual.transcript)
    else {
        unreachable!("transcripts are objects")
    };
    for (name, want) in want {
        let got = got.get(name).unwrap_or(&Value::Null);
        assert!(
            want == got,
            "{what}: step \"{name}\" differs\nexpected: {}\nactual: {}\nserver stderr:\n{}",
            pretty(want),
            pretty(got),
            actual.stderr
        );
    }
    assert_eq!(want.len(), got.len(), "{what}: different steps");
}

fn pretty(value: &Value) -> String {
    serde_json::to_string_pretty(value).unwrap()
}

/// The text of a tool call step's first content block.
fn tool_text(transcript: &Value, step: &str) -> String {
    let text = &transcript[step]["outcome"]["result"]["content"][0]["text"];
    text.as_str()
        .unwrap_or_else(|| panic!("no text in step {step}: {}", transcript[step]))
        .to_string()
}

/// Concrete values, so that three identical wrong transcripts still fail.
fn check_values(t: &Value, era: Era) {
    let version = match era {
        Era::Legacy => "2025-11-25",
        Era::Modern => "2026-07-28",
    };
    assert_eq!(t["handshake"]["protocolVersion"], version);
    assert_eq!(t["handshake"]["serverInfo"]["name"], "mcpcassette-demo");
    let tools: Vec<&Value> = t["tools/list"]["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| &t["name"])
        .collect();
    assert_eq!(tools.len(), 9, "tools: {tools:?}");

    assert_eq!(tool_text(t, "echo"), "echo: hello");
    assert_eq!(tool_text(t, "add"), "42");
    assert_eq!(
        t["add"]["outcome"]["result"]["structuredContent"]["sum"],
        42
    );

    assert_eq!(tool_text(t, "count"), "counted 3 steps");
    assert_eq!(t["count"]["progressForLiveToken"], true);
    let progress = &t["count"]["progress"];
    assert_eq!(
        progress.as_array().unwrap().len(),
        3,
        "progress: {progress}"
    );
    assert_eq!(
        progress[2],
        json!({ "progress": 3.0, "total": 3.0, "message": "step 3 of 3" })
    );
    match era {
        Era::Legacy => assert_eq!(t["count"]["logs"][0]["data"], "counted 3 steps"),
        Era::Modern => assert_eq!(t["count"]["logs"], json!([])),
    }

    assert_eq!(t["divide"]["outcome"]["result"]["isError"], true);
    assert_eq!(tool_text(t, "divide"), "cannot divide 1 by zero");
    assert_eq!(t["explode"]["outcome"]["error"]["code"], -32603);
    assert_eq!(
        t["explode"]["outcome"]["error"]["message"],
        "explode: the tool failed on purpose"
    );

    assert_eq!(
        tool_text(t, "summarize"),
        format!("summary: {SAMPLED_TEXT}")
    );
    let asked = &t["summarize"]["asked"][0];
    assert_eq!(asked["method"], "sampling/createMessage");
    assert_eq!(
        asked["params"]["messages"][0]["content"]["text"],
        "Summarize: hello world"
    );
    assert_eq!(tool_text(t, "confirm"), "confirmed: deploy");
    assert_eq!(
        t["confirm"]["asked"][0]["params"]["message"],
        "Really deploy?"
    );
    assert_eq!(tool_text(t, "roots"), ROOT_URI);
    assert_eq!(t["roots"]["asked"][0]["method"], "roots/list");
    if era == Era::Modern {
        let first = &t["summarize, first round"]["inputRequired"];
        assert_eq!(first["resultType"], "input_required", "{first}");
        assert_eq!(
            first["inputRequests"]["summary"]["method"],
            "sampling/createMessage"
        );
    }

    assert_eq!(
        t["resources/list"]["result"]["resources"][0]["uri"],
        "demo://readme"
    );
    let readme = t["read readme"]["result"]["contents"][0]["text"]
        .as_str()
        .unwrap();
    assert!(readme.starts_with("# mcpcassette demo"), "{readme}");
    assert_eq!(t["read note 7"]["result"]["contents"][0]["text"], "note 7");
    let unknown = &t["read unknown"]["error"];
    assert_eq!(unknown["code"], resource_not_found(era), "{unknown}");
    assert_eq!(unknown["data"]["uri"], UNKNOWN_URI, "{unknown}");
    assert_eq!(
        t["resources/templates/list"]["result"]["resourceTemplates"][0]["uriTemplate"],
        "demo://notes/{id}"
    );
    assert_eq!(t["prompts/list"]["result"]["prompts"][0]["name"], "greet");
    assert_eq!(
        t["get greet"]["result"]["messages"][0]["content"]["text"],
        "Say hello to Ada."
    );
    assert_eq!(
        t["complete greet"]["result"]["completion"]["values"],
        json!(["Alice"])
    );
}

/// The code of "resource not found" in `era`: -32002 up to 2025-11-25
/// (server/resources, "Error Handling"), -32602 from 2026-07-28 on.
fn resource_not_found(era: Era) -> i64 {
    match era {
        Era::Legacy => -32002,
        Era::Modern => -32602,
    }
}

/// Runs one era three ways and checks that rmcp saw the same thing each time.
async fn check_era(era: Era) {
    let (direct, recorded, replayed, cassette) = three_ways(era).await;
    check_values(&direct.transcript, era);
    assert_same(&direct, &recorded, "through record");
    assert_same(&direct, &replayed, "from replay");
    // No unmatched request and no unexpected client answer went unnoticed.
    for level in ["WARN", "ERROR"] {
        assert!(
            !replayed.stderr.contains(level),
            "replay complained:\n{}",
            replayed.stderr
        );
    }
    check_cassette(&cassette, era);
}

/// The cassette holds the recording run as sent: its own clientInfo, and the
/// warm-up request that shifted its ids and progress tokens away from the
/// replay run's.
fn check_cassette(cassette: &mcpcassette::cassette::Cassette, era: Era) {
    let (expected_era, client_info) = match era {
        Era::Legacy => (
            mcpcassette::protocol::Era::Legacy,
            "/params/clientInfo/version",
        ),
        Era::Modern => (
            mcpcassette::protocol::Era::Modern,
            "/params/_meta/io.modelcontextprotocol~1clientInfo/version",
        ),
    };
    assert_eq!(cassette.protocol.era, expected_era);
    let requests: Vec<&Value> = cassette
        .interactions
        .iter()
        .filter_map(|i| i.request())
        .collect();
    assert_eq!(
        requests[0].pointer(client_info),
        Some(&json!("2.0.0-record"))
    );
    assert_eq!(requests[1]["method"], "completion/complete", "the warm-up");
    assert_eq!(requests[1]["params"]["argument"]["value"], "C");
    let count = requests
        .iter()
        .find(|r| r["params"]["name"] == "count")
        .expect("count was recorded");
    assert!(
        count.pointer("/params/_meta/progressToken").is_some(),
        "{count}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rmcp_legacy_session_is_identical_direct_recorded_and_replayed() {
    check_era(Era::Legacy).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rmcp_modern_session_is_identical_direct_recorded_and_replayed() {
    check_era(Era::Modern).await;
}

/// A cassette recorded by an rmcp client of one era, replayed to an rmcp
/// client of the other: that client sees what it sees against the live
/// server in its own era, step by step (handshake, tools, sampling,
/// elicitation, roots, progress, resources and an unknown one, prompts,
/// completions).
async fn check_cross_era(recorded_in: Era, client: Era) {
    let dir = tempfile::tempdir().unwrap();
    let cassette = dir.path().join("c.json");
    let variation = |client_version| Variation {
        client_version,
        warm_up: false,
    };
    let recorded = session(record(&cassette), recorded_in, variation("2.0.0-record")).await;
    assert!(
        cassette.exists(),
        "no cassette; stderr:\n{}",
        recorded.stderr
    );
    let mut direct = session(demo_server(), client, variation("1.0.0-direct")).await;
    let mut replayed = session(replay(&cassette), client, variation("3.0.0-replay")).await;
    check_values(&direct.transcript, client);
    // An error the recorded server answered in its era's code reaches the
    // client in the client's era's code, as the live server answers it.
    let unknown = &replayed.transcript["read unknown"]["error"];
    assert_eq!(
        unknown["code"],
        resource_not_found(client),
        "a {client:?} client reading an unknown resource from a {recorded_in:?} cassette: {unknown}\nreplay stderr:\n{}",
        replayed.stderr
    );
    for run in [&mut direct, &mut replayed] {
        what_both_eras_know(&mut run.transcript, client);
    }
    assert_same(&direct, &replayed, "from a cassette of the other era");
    assert!(
        replayed
            .stderr
            .contains("handshakes and results are translated"),
        "replay did not say it translates:\n{}",
        replayed.stderr
    );
}

/// A transcript without what a recording of the other era cannot hold:
/// caching hints (`ttlMs`, `cacheScope`: legacy servers give none), the
/// names and state a server gives its input requests (only the requests
/// compare), and for a legacy client the log messages its session gets by
/// default, which a 2026-07-28 client never asked for and so never
/// recorded.
fn what_both_eras_know(transcript: &mut Value, client: Era) {
    crate::support::across_eras(
        transcript,
        &["ttlMs", "cacheScope", "requestState"],
        &["inputRequests"],
    );
    if client == Era::Legacy {
        transcript["count"]["logs"] = json!([]);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rmcp_modern_client_replays_a_legacy_cassette() {
    check_cross_era(Era::Legacy, Era::Modern).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rmcp_legacy_client_replays_a_modern_cassette() {
    check_cross_era(Era::Modern, Era::Legacy).await;
}
