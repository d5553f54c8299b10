//! The programmable mock server (`mcpcassette::mock`): every builder
//! behaviour over a raw JSON-RPC client on an in-process duplex, an `rmcp`
//! client in both eras (in-process and over HTTP), and `mcpcassette serve`
//! of a fixture file over stdio and HTTP.

use std::io::{BufRead, BufReader as StdBufReader, Write};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcpcassette::mock::{
    ANY_STATE, EXHAUSTED, MockServer, Outcome, Prompt, Resource, ResourceTemplate, Respond,
    RpcError, Tool, Transition,
};
use rmcp::model::{
    CallToolRequestParams, GetPromptRequestParams, ProtocolVersion, ReadResourceRequestParams,
    ServerNotification, SubscriptionFilter,
};
use rmcp::service::NotificationContext;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::{ClientHandler, ClientLifecycleMode, ClientServiceExt, RoleClient, ServiceExt};
use serde_json::{Map, Value, json};
use tokio::io::AsyncWriteExt;
use tokio::sync::{mpsc, oneshot};
use tokio::time::Instant;

use crate::support;
use crate::support::cli::Cli;
use crate::support::clients::Raw;
use crate::support::http_client::{call, post};

/// How long any one exchange may take before the test calls it stuck.
const PATIENCE: Duration = Duration::from_secs(10);
const MODERN: &str = "2026-07-28";

fn text(response: &Value) -> &str {
    response["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("no text in {response}"))
}

fn error_code(response: &Value) -> i64 {
    response["error"]["code"]
        .as_i64()
        .unwrap_or_else(|| panic!("no error in {response}"))
}

/// The message of a panic `f` raises.
fn panic_message(f: impl FnOnce()) -> String {
    let payload = catch_unwind(AssertUnwindSafe(f)).expect_err("the assertion should fail");
    match payload.downcast::<String>() {
        Ok(text) => *text,
        Err(payload) => payload
            .downcast::<&str>()
            .map_or_else(|_| String::new(), |s| (*s).to_owned()),
    }
}

// ---------------------------------------------------------------------------
// Answers

#[tokio::test]
async fn static_results_text_and_errors_answer_each_kind() {
    let mock = MockServer::builder()
        .server_info("weather", "2.0.0")
        .instructions("ask about the weather")
        .tool(
            Tool::new("fixed").description("A fixed result"),
            Respond::result(json!({
                "content": [{"type": "text", "text": "fixed"}],
                "structuredContent": {"n": 1},
            })),
        )
        .tool(Tool::new("hello"), Respond::text("hello there"))
        .tool(
            Tool::new("typed").output_schema(json!({"type": "object",
                "properties": {"at": {"type": "string", "format": "date-time"}},
                "required": ["at"]})),
            Respond::text("typed text"),
        )
        .tool(Tool::new("broken"), Respond::error(-32050, "it broke"))
        .resource(
            Resource::new("mem://readme", "readme").mime_type("text/markdown"),
            Respond::text("# Readme"),
        )
        .resource_template(
            ResourceTemplate::new("mem://notes/{id}", "notes"),
            Respond::with(|params, _| {
                let uri = params["uri"].as_str().unwrap_or_default();
                Ok(json!({"contents": [{"uri": uri, "text": format!("note at {uri}")}]}))
            }),
        )
        .prompt(
            Prompt::new("greet").argument("name", true),
            Respond::text("Say hi"),
        )
        .completion(Respond::text("Alice"))
        .build();
    let mut client = Raw::new(&mock);
    let init = client.initialize().await;
    assert_eq!(init["protocolVersion"], "2025-06-18");
    assert_eq!(
        init["serverInfo"],
        json!({"name": "weather", "version": "2.0.0"})
    );
    assert_eq!(init["instructions"], "ask about the weather");

    let fixed = client.call("fixed", json!({})).await;
    assert_eq!(fixed["result"]["structuredContent"], json!({"n": 1}));
    assert_eq!(text(&client.call("hello", json!({})).await), "hello there");
    // Text for a tool with an outputSchema: the structured content SDK
    // clients require comes with it, generated from the schema.
    let typed = client.call("typed", json!({})).await;
    assert_eq!(text(&typed), "typed text");
    assert_eq!(
        typed["result"]["structuredContent"],
        json!({"at": "2026-01-01T00:00:00Z"})
    );
    let broken = client.call("broken", json!({})).await;
    assert_eq!(
        broken["error"],
        json!({"code": -32050, "message": "it broke"})
    );
    let unknown = client.call("nope", json!({})).await;
    assert_eq!(error_code(&unknown), -32602);
    let message = unknown["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("nope") && message.contains("hello"),
        "{message}"
    );

    let read = client
        .request("resources/read", json!({"uri": "mem://readme"}))
        .await;
    assert_eq!(
        read["result"]["contents"][0],
        json!({"uri": "mem://readme", "mimeType": "text/markdown", "text": "# Readme"})
    );
    let note = client
        .request("resources/read", json!({"uri": "mem://notes/7"}))
        .await;
    assert_eq!(
        note["result"]["contents"][0]["text"],
        "note at mem://notes/7"
    );
    let missing = client
        .request("resources/read", json!({"uri": "mem://else"}))
        .await;
    assert_eq!(error_code(&missing), -32002, "legacy resource not found");

    let prompt = client
        .request(
            "prompts/get",
            json!({"name": "greet", "arguments": {"name": "Ada"}}),
        )
        .await;
    assert_eq!(prompt["result"]["messages"][0]["content"]["text"], "Say hi");
    let complete = client
        .request(
            "completion/complete",
            json!({"ref": {"type": "ref/prompt", "name": "greet"}, "argument": {"name": "name", "value": "A"}}),
        )
        .await;
    assert_eq!(complete["result"]["completion"]["values"], json!(["Alice"]));

    let lists = [
        ("tools/list", "tools", 4),
        ("resources/list", "resources", 1),
        ("resources/templates/list", "resourceTemplates", 1),
        ("prompts/list", "prompts", 1),
    ];
    for (method, key, count) in lists {
        let list = client.request(method, Value::Null).await;
        let items = list["result"][key].as_array().unwrap();
        assert_eq!(items.len(), count, "{method}: {list}");
    }
    let tools = client.request("tools/list", Value::Null).await;
    assert_eq!(
        tools["result"]["tools"][0],
        json!({"name": "fixed", "inputSchema": {"type": "object"}, "description": "A fixed result"})
    );
    assert_eq!(
        client.request("ping", Value::Null).await["result"],
        json!({})
    );
    let level = client
        .request("logging/setLevel", json!({"level": "debug"}))
        .await;
    assert_eq!(level["result"], json!({}));
    assert_eq!(
        error_code(&client.request("no/such/method", Value::Null).await),
        -32601
    );
}

#[tokio::test]
async fn handlers_see_arguments_state_and_call_numbers() {
    let mock = MockServer::builder()
        .initial_state("fresh")
        .tool(
            Tool::new("flaky"),
            Respond::with(|arguments, context| {
                if context.call_number() == 3 {
                    return Err(RpcError::new(-32010, "third call fails"));
                }
                let echoed = arguments["message"].as_str().unwrap_or_default();
                let text = format!(
                    "{echoed} #{} in {} via {}",
                    context.call_number(),
                    context.state(),
                    context.method()
                );
                Ok(json!({"content": [{"type": "text", "text": text}]}))
            }),
        )
        .build();
    let mut client = Raw::new(&mock);
    client.initialize().await;
    let first = client.call("flaky", json!({"message": "hi"})).await;
    assert_eq!(text(&first), "hi #1 in fresh via tools/call");
    let second = client.call("flaky", json!({"message": "again"})).await;
    assert_eq!(text(&second), "again #2 in fresh via tools/call");
    let third = client.call("flaky", json!({"message": "x"})).await;
    assert_eq!(
        third["error"],
        json!({"code": -32010, "message": "third call fails"})
    );
    let fourth = client.call("flaky", json!({"message": "ok"})).await;
    assert_eq!(text(&fourth), "ok #4 in fresh via tools/call");
}

#[tokio::test(start_paused = true)]
async fn delays_hold_the_answer_back() {
    let mock = MockServer::builder()
        .tool(
            Tool::new("slow"),
            Respond::text("done").delay(Duration::from_millis(1500)),
        )
        .build();
    let mut client = Raw::new(&mock);
    client.initialize().await;
    let start = Instant::now();
    let answer = client.call("slow", json!({})).await;
    assert_eq!(text(&answer), "done");
    assert!(
        start.elapsed() >= Duration::from_millis(1500),
        "answered after {:?}",
        start.elapsed()
    );
    let call = mock.calls().into_iter().last().unwrap();
    assert!(call.duration >= Duration::from_millis(1500), "{call:?}");
}

#[tokio::test(start_paused = true)]
async fn jitter_stays_in_its_range_and_the_seed_repeats_it() {
    async fn delays(seed: u64) -> Vec<Duration> {
        let range = Duration::from_millis(100)..Duration::from_millis(300);
        let mock = MockServer::builder()
            .seed(seed)
            .tool(Tool::new("jittery"), Respond::text("ok").jitter(range))
            .build();
        let mut client = Raw::new(&mock);
        client.initialize().await;
        let mut delays = Vec::new();
        for _ in 0..8 {
            let start = Instant::now();
            client.call("jittery", json!({})).await;
            delays.push(start.elapsed());
        }
        delays
    }
    let first = delays(42).await;
    for delay in &first {
        // Virtual time: the answer comes exactly when its timer fires.
        assert!(
            (Duration::from_millis(100)..Duration::from_millis(301)).contains(delay),
            "{first:?}"
        );
    }
    assert!(
        first.iter().any(|d| *d != first[0]),
        "jitter varies: {first:?}"
    );
    assert_eq!(first, delays(42).await, "the same seed, the same delays");
}

#[tokio::test(start_paused = true)]
async fn never_answers_until_cancelled_and_does_not_block_the_end() {
    let mock = MockServer::builder()
        .tool(Tool::new("hang"), Respond::never())
        .tool(
            Tool::new("slow"),
            Respond::text("late").delay(Duration::from_secs(60)),
        )
        .build();
    let (client_side, server_side) = tokio::io::duplex(64 * 1024);
    let (server_read, server_write) = tokio::io::split(server_side);
    let serving = {
        let mock = mock.clone();
        tokio::spawn(async move { mock.serve(server_read, server_write).await })
    };
    let mut client = Raw::over(client_side);
    client.initialize().await;
    let hung = client
        .start("tools/call", json!({"name": "hang", "arguments": {}}))
        .await;
    let slow = client
        .start("tools/call", json!({"name": "slow", "arguments": {}}))
        .await;
    for id in [hung, slow] {
        client
            .notify(
                "notifications/cancelled",
                json!({"requestId": id, "reason": "test"}),
            )
            .await;
    }
    // Long after the slow answer would have come: only the ping answers.
    tokio::time::sleep(Duration::from_secs(120)).await;
    let pong = client.request("ping", Value::Null).await;
    assert_eq!(pong["result"], json!({}));
    let outcomes: Vec<(String, Outcome)> = mock
        .calls()
        .into_iter()
        .filter(|c| c.method == "tools/call")
        .map(|c| (c.name().unwrap().to_owned(), c.outcome))
        .collect();
    assert_eq!(
        outcomes,
        vec![
            ("hang".to_owned(), Outcome::NoAnswer),
            ("slow".to_owned(), Outcome::NoAnswer)
        ]
    );

    // A hung request left pending does not keep serving alive.
    client
        .start("tools/call", json!({"name": "hang", "arguments": {}}))
        .await;
    client.write.shutdown().await.unwrap();
    drop(client);
    tokio::time::timeout(PATIENCE, serving)
        .await
        .expect("serving ended once the client left")
        .unwrap()
        .unwrap();
}

#[tokio::test]
async fn times_answers_n_times_then_says_it_is_exhausted() {
    let mock = MockServer::builder()
        .tool(Tool::new("twice"), Respond::text("ok").times(2))
        .build();
    let mut client = Raw::new(&mock);
    client.initialize().await;
    for _ in 0..2 {
        assert_eq!(text(&client.call("twice", json!({})).await), "ok");
    }
    let third = client.call("twice", json!({})).await;
    assert_eq!(error_code(&third), EXHAUSTED);
    let message = third["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("`twice`") && message.contains("times(2)") && message.contains("call 3"),
        "{message}"
    );
}

#[tokio::test]
async fn states_choose_answers_and_transitions_move_between_them() {
    let whoami = Respond::by_state(
        [
            ("in", Respond::text("you are alice")),
            ("admin", Respond::text("you are root")),
        ],
        Respond::error(-32011, "log in first"),
    );
    let mock = MockServer::builder()
        .tool(
            Tool::new("login"),
            Respond::with(|_, context| {
                let text = format!("logging in from {}", context.state());
                Ok(json!({"content": [{"type": "text", "text": text}]}))
            }),
        )
        .tool(Tool::new("sudo"), Respond::text("ok"))
        .tool(Tool::new("whoami"), whoami)
        .transition(
            "initial",
            Transition::method("tools/call").params(json!({"name": "login"})),
            "in",
        )
        .transition(
            ANY_STATE,
            Transition::when(|method, params| {
                method == "tools/call" && params["arguments"]["force"] == json!(true)
            }),
            "admin",
        )
        .build();
    let mut client = Raw::new(&mock);
    client.initialize().await;
    assert_eq!(mock.state(), "initial");
    assert_eq!(error_code(&client.call("whoami", json!({})).await), -32011);
    let login = client.call("login", json!({"user": "alice"})).await;
    assert_eq!(
        text(&login),
        "logging in from initial",
        "the handler sees the state before the transition"
    );
    assert_eq!(mock.state(), "in");
    assert_eq!(
        text(&client.call("whoami", json!({})).await),
        "you are alice"
    );
    // Not a login call (params differ): no transition.
    client.call("sudo", json!({})).await;
    assert_eq!(mock.state(), "in");
    client.call("sudo", json!({"force": true})).await;
    assert_eq!(mock.state(), "admin");
    assert_eq!(
        text(&client.call("whoami", json!({})).await),
        "you are root"
    );

    mock.set_state("initial");
    assert_eq!(mock.state(), "initial");
    assert_eq!(error_code(&client.call("whoami", json!({})).await), -32011);
}

#[tokio::test]
async fn interceptors_edit_what_goes_on_the_wire() {
    let mock = MockServer::builder()
        .tool(Tool::new("echo"), Respond::text("fine"))
        .intercept("tools/list", |response| {
            response["result"]["tools"][0]["inputSchema"] = json!("not a schema");
        })
        .intercept("tools/call", |response| {
            response["result"]["content"] = json!("not an array");
        })
        .intercept("*", |response| {
            response["result"]["extra"] = json!(true);
        })
        .build();
    let mut client = Raw::new(&mock);
    client.initialize().await;
    let list = client.request("tools/list", Value::Null).await;
    assert_eq!(list["result"]["tools"][0]["inputSchema"], "not a schema");
    let call = client.call("echo", json!({})).await;
    assert_eq!(call["result"]["content"], "not an array");
    assert_eq!(call["result"]["extra"], true);
    // The log keeps the answer as the handler gave it.
    let logged = mock.calls().into_iter().last().unwrap();
    assert_eq!(
        logged.outcome,
        Outcome::Result(json!({"content": [{"type": "text", "text": "fine"}]}))
    );
}

#[tokio::test]
async fn capabilities_are_derived_or_overridden() {
    let empty = MockServer::builder().build();
    let mut client = Raw::new(&empty);
    assert_eq!(
        client.initialize().await["capabilities"],
        json!({"logging": {}})
    );

    let full = MockServer::builder()
        .tool(Tool::new("t"), Respond::text("t"))
        .resource(Resource::new("mem://r", "r"), Respond::text("r"))
        .prompt(Prompt::new("p"), Respond::text("p"))
        .completion(Respond::text("c"))
        .build();
    let mut client = Raw::new(&full);
    assert_eq!(
        client.initialize().await["capabilities"],
        json!({
            "tools": {"listChanged": true},
            "resources": {"listChanged": true},
            "prompts": {"listChanged": true},
            "completions": {},
            "logging": {},
        })
    );

    let overridden = MockServer::builder()
        .tool(Tool::new("t"), Respond::text("t"))
        .capabilities(json!({"experimental": {"odd": true}}))
        .build();
    let mut client = Raw::new(&overridden);
    assert_eq!(
        client.initialize().await["capabilities"],
        json!({"experimental": {"odd": true}})
    );
    let discover = client.modern("server/discover", Value::Null).await;
    assert_eq!(
        discover["result"]["capabilities"],
        json!({"experimental": {"odd": true}})
    );
}

#[tokio::test]
async fn the_handshake_is_enforced_unless_switched_off() {
    let strict = MockServer::builder()
        .tool(Tool::new("echo"), Respond::text("hi"))
        .build();
    let mut client = Raw::new(&strict);
    let early = client.call("echo", json!({})).await;
    assert_eq!(error_code(&early), -32600);
    let message = early["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("initialize") && message.contains("tools/call"),
        "{message}"
    );
    assert_eq!(
        client.request("ping", Value::Null).await["result"],
        json!({}),
        "ping is always allowed"
    );
    // `initialize` alone is not enough: `notifications/initialized` too.
    client
        .request(
            "initialize",
            json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}}),
        )
        .await;
    assert_eq!(error_code(&client.call("echo", json!({})).await), -32600);
    client
        .notify("notifications/initialized", Value::Null)
        .await;
    assert_eq!(text(&client.call("echo", json!({})).await), "hi");
    // Modern requests never need it.
    let mut modern = Raw::new(&strict);
    let call = modern
        .modern("tools/call", json!({"name": "echo", "arguments": {}}))
        .await;
    assert_eq!(text(&call), "hi");

    let lax = MockServer::builder()
        .require_handshake(false)
        .tool(Tool::new("echo"), Respond::text("hi"))
        .build();
    let mut client = Raw::new(&lax);
    assert_eq!(text(&client.call("echo", json!({})).await), "hi");
}

#[tokio::test]
async fn both_eras_get_their_handshake_and_modern_results_their_type() {
    let mock = MockServer::builder()
        .server_info("dual", "1.0.0")
        .instructions("both eras")
        .tool(Tool::new("echo"), Respond::text("hi"))
        .tool(
            Tool::new("typed"),
            Respond::result(json!({"resultType": "input_required", "inputRequests": {}})),
        )
        .build();
    let mut client = Raw::new(&mock);
    let asks = [
        ("2024-11-05", "2024-11-05"),
        ("2025-11-25", "2025-11-25"),
        (MODERN, "2025-11-25"),
        ("1999-01-01", "2025-11-25"),
    ];
    for (asked, answered) in asks {
        let params = json!({"protocolVersion": asked, "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}});
        let init = client.request("initialize", params).await;
        assert_eq!(init["result"]["protocolVersion"], answered, "asked {asked}");
    }

    let discover = client.modern("server/discover", Value::Null).await["result"].clone();
    assert_eq!(discover["resultType"], "complete");
    assert_eq!(
        discover["supportedVersions"],
        json!([
            MODERN,
            "2025-11-25",
            "2025-06-18",
            "2025-03-26",
            "2024-11-05"
        ])
    );
    assert_eq!(discover["instructions"], "both eras");
    assert_eq!(
        discover["_meta"]["io.modelcontextprotocol/serverInfo"]["name"],
        "dual"
    );
    assert!(discover["capabilities"]["tools"].is_object());

    let call = client
        .modern("tools/call", json!({"name": "echo", "arguments": {}}))
        .await;
    assert_eq!(call["result"]["resultType"], "complete");
    let typed = client
        .modern("tools/call", json!({"name": "typed", "arguments": {}}))
        .await;
    assert_eq!(typed["result"]["resultType"], "input_required");
    let list = client.modern("tools/list", Value::Null).await;
    assert_eq!(list["result"]["resultType"], "complete");
    assert_eq!(
        error_code(&client.modern("ping", Value::Null).await),
        -32601,
        "ping is gone in 2026-07-28"
    );
    let missing = client
        .modern("resources/read", json!({"uri": "mem://none"}))
        .await;
    assert_eq!(error_code(&missing), -32602, "modern resource not found");

    let mut params = json!({"name": "echo", "arguments": {}});
    params["_meta"] = json!({"io.modelcontextprotocol/protocolVersion": "2030-01-01"});
    let unsupported = client.request("tools/call", params).await;
    assert_eq!(error_code(&unsupported), -32022);
    assert_eq!(unsupported["error"]["data"]["requested"], "2030-01-01");

    let legacy_only = MockServer::builder()
        .protocol_versions(&["2025-06-18"])
        .build();
    let mut client = Raw::new(&legacy_only);
    assert_eq!(
        error_code(&client.request("server/discover", Value::Null).await),
        -32601,
        "a legacy-only server does not know server/discover"
    );
    let init = client.initialize().await;
    assert_eq!(init["protocolVersion"], "2025-06-18");
}

#[tokio::test]
async fn runtime_changes_notify_legacy_clients_and_modern_listeners() {
    let mock = MockServer::builder()
        .tool(Tool::new("first"), Respond::text("1"))
        .resource(Resource::new("mem://a", "a"), Respond::text("a"))
        .prompt(Prompt::new("p"), Respond::text("p"))
        .build();
    let mut legacy = Raw::new(&mock);
    legacy.initialize().await;
    let mut modern = Raw::new(&mock);
    let listen = modern
        .start(
            "subscriptions/listen",
            json!({
                "notifications": {"toolsListChanged": true, "promptsListChanged": true},
                "_meta": {
                    "io.modelcontextprotocol/protocolVersion": MODERN,
                    "io.modelcontextprotocol/clientCapabilities": {},
                },
            }),
        )
        .await;
    let ack = modern
        .notification("notifications/subscriptions/acknowledged")
        .await;
    assert_eq!(
        ack["params"],
        json!({
            "_meta": {"io.modelcontextprotocol/subscriptionId": listen},
            "notifications": {"toolsListChanged": true, "promptsListChanged": true},
        })
    );

    mock.add_tool(
        Tool::new("second").description("added later"),
        Respond::text("2"),
    );
    legacy
        .notification("notifications/tools/list_changed")
        .await;
    let note = modern
        .notification("notifications/tools/list_changed")
        .await;
    assert_eq!(
        note["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        listen
    );
    assert_eq!(text(&legacy.call("second", json!({})).await), "2");

    mock.remove_tool("first");
    legacy
        .notification("notifications/tools/list_changed")
        .await;
    let tools = legacy.request("tools/list", Value::Null).await;
    assert_eq!(tools["result"]["tools"][0]["name"], "second");
    assert_eq!(tools["result"]["tools"].as_array().unwrap().len(), 1);

    mock.remove_resource("mem://a");
    legacy
        .notification("notifications/resources/list_changed")
        .await;
    mock.add_prompt(Prompt::new("q"), Respond::text("q"));
    legacy
        .notification("notifications/prompts/list_changed")
        .await;
    // The listener asked for tools and prompts only: resources were not
    // sent to it, prompts were.
    let prompts = modern
        .notification("notifications/prompts/list_changed")
        .await;
    assert_eq!(prompts["method"], "notifications/prompts/list_changed");
    assert!(
        modern
            .notes
            .iter()
            .all(|n| n["method"] != "notifications/resources/list_changed"),
        "{:?}",
        modern.notes
    );

    // Cancelling the listen ends it, unanswered.
    modern
        .notify("notifications/cancelled", json!({"requestId": listen}))
        .await;
    let pong = modern.request("ping", Value::Null).await;
    assert!(pong.get("result").is_some());
    let listen_call = mock
        .calls()
        .into_iter()
        .find(|c| c.method == "subscriptions/listen")
        .unwrap();
    assert_eq!(listen_call.outcome, Outcome::NoAnswer);
}

#[tokio::test]
async fn the_call_log_records_requests_and_notifications_in_order() {
    let mock = MockServer::builder()
        .tool(Tool::new("echo"), Respond::text("hi"))
        .tool(Tool::new("bad"), Respond::error(-32050, "bad"))
        .build();
    let reported = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&reported);
    mock.on_call(move |call| sink.lock().unwrap().push(call.seq));
    let mut client = Raw::new(&mock);
    client.initialize().await;
    client.call("echo", json!({"message": "x"})).await;
    client.call("bad", json!({})).await;
    let calls = mock.calls();
    let methods: Vec<&str> = calls.iter().map(|c| c.method.as_str()).collect();
    assert_eq!(
        methods,
        [
            "initialize",
            "notifications/initialized",
            "tools/call",
            "tools/call"
        ]
    );
    let seqs: Vec<usize> = calls.iter().map(|c| c.seq).collect();
    assert_eq!(seqs, [1, 2, 3, 4]);
    assert!(calls.windows(2).all(|w| w[0].at <= w[1].at));
    assert_eq!(calls[1].outcome, Outcome::Notification);
    assert_eq!(calls[2].params["arguments"], json!({"message": "x"}));
    assert_eq!(calls[2].name(), Some("echo"));
    assert_eq!(
        calls[2].outcome,
        Outcome::Result(json!({"content": [{"type": "text", "text": "hi"}]}))
    );
    assert_eq!(
        calls[3].outcome,
        Outcome::Error(RpcError::new(-32050, "bad"))
    );
    assert_eq!(calls[3].to_json()["outcome"]["error"]["code"], -32050);
    let mut reported = reported.lock().unwrap().clone();
    reported.sort_unstable();
    assert_eq!(reported, [1, 2, 3, 4]);
}

#[tokio::test]
async fn assertions_pass_and_fail_with_the_calls_listed() {
    let mock = MockServer::builder()
        .tool(Tool::new("echo"), Respond::text("hi"))
        .tool(Tool::new("other"), Respond::text("o"))
        .resource(Resource::new("mem://a", "a"), Respond::text("a"))
        .prompt(Prompt::new("greet"), Respond::text("hello"))
        .build();
    mock.assert_no_requests();
    mock.assert_request_count(0);
    let mut client = Raw::new(&mock);
    client.initialize().await;
    client
        .call("echo", json!({"message": "hi", "loud": true}))
        .await;
    client.call("echo", json!({"message": "again"})).await;
    client
        .request("resources/read", json!({"uri": "mem://a"}))
        .await;
    client
        .request("prompts/get", json!({"name": "greet"}))
        .await;

    mock.assert_tool_called("echo");
    mock.assert_tool_called_times("echo", 2);
    mock.assert_tool_called_with("echo", json!({"message": "hi"}));
    mock.assert_tool_not_called("other");
    mock.assert_resource_read("mem://a");
    mock.assert_prompt_retrieved("greet");
    mock.assert_method_called("notifications/initialized");
    mock.assert_request_count(5);

    let failures: Vec<(String, &str)> = vec![
        (
            panic_message(|| mock.assert_tool_called("other")),
            "expected tool `other` to be called",
        ),
        (
            panic_message(|| mock.assert_tool_called_times("echo", 3)),
            "called 3 time(s), but it was called 2 time(s)",
        ),
        (
            panic_message(|| mock.assert_tool_called_with("echo", json!({"message": "bye"}))),
            r#"containing {"message":"bye"}"#,
        ),
        (
            panic_message(|| mock.assert_tool_not_called("echo")),
            "expected tool `echo` not to be called",
        ),
        (
            panic_message(|| mock.assert_resource_read("mem://b")),
            "expected resource `mem://b` to be read",
        ),
        (
            panic_message(|| mock.assert_prompt_retrieved("farewell")),
            "expected prompt `farewell` to be retrieved",
        ),
        (
            panic_message(|| mock.assert_method_called("resources/list")),
            "expected a `resources/list` message",
        ),
        (
            panic_message(|| mock.assert_no_requests()),
            "expected no requests, but 5 arrived",
        ),
        (
            panic_message(|| mock.assert_request_count(1)),
            "expected 1 request(s), but 5 arrived",
        ),
    ];
    for (message, expected) in failures {
        assert!(message.contains(expected), "{expected:?} in:\n{message}");
        // Every failure lists what was actually called.
        assert!(
            message.contains(r#"#3 tools/call echo {"message":"hi","loud":true} -> result"#)
                && message.contains("#5 resources/read mem://a -> result"),
            "{message}"
        );
    }
}

// ---------------------------------------------------------------------------
// rmcp, in-process and over HTTP, both eras

/// An rmcp client handler that reports tools/list_changed.
#[derive(Clone)]
struct Watcher(mpsc::UnboundedSender<&'static str>);

impl ClientHandler for Watcher {
    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        let _ = self.0.send("tools");
    }
}

fn object(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        other => panic!("expected an object, got {other}"),
    }
}

fn rmcp_mock() -> MockServer {
    MockServer::builder()
        .server_info("rmcp-mock", "0.3.0")
        .tool(
            Tool::new("add")
                .description("Adds two numbers")
                .input_schema(json!({
                    "type": "object",
                    "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
                    "required": ["a", "b"],
                }))
                .output_schema(json!({"type": "object", "properties": {"sum": {"type": "number"}}}))
                .annotations(json!({"readOnlyHint": true}))
                .title("Add"),
            Respond::with(|arguments, _| {
                let sum = arguments["a"].as_f64().unwrap_or(0.0) + arguments["b"].as_f64().unwrap_or(0.0);
                Ok(json!({
                    "content": [{"type": "text", "text": sum.to_string()}],
                    "structuredContent": {"sum": sum},
                }))
            }),
        )
        .tool(Tool::new("echo"), Respond::text("echoed"))
        .resource(
            Resource::new("mem://readme", "readme").mime_type("text/plain"),
            Respond::text("read me"),
        )
        .prompt(
            Prompt::new("greet")
                .description("Greets")
                .argument("name", true),
            Respond::with(|arguments, _| {
                let name = arguments["name"].as_str().unwrap_or("nobody");
                Ok(json!({"messages": [{"role": "user", "content": {"type": "text", "text": format!("Hello, {name}")}}]}))
            }),
        )
        .build()
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Era {
    Legacy,
    Modern,
}

/// Lists, calls, reads and gets through rmcp; checks the answers.
async fn exercise<S>(client: &rmcp::service::RunningService<RoleClient, S>, era: Era)
where
    S: rmcp::Service<RoleClient>,
{
    let info = client.peer_info().expect("server info from the handshake");
    assert_eq!(
        info.server_info.as_ref().map(|i| i.name.as_str()),
        Some("rmcp-mock"),
        "{era:?}"
    );
    let tools = client.list_all_tools().await.unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    assert_eq!(names, ["add", "echo"], "{era:?}");
    assert_eq!(tools[0].title.as_deref(), Some("Add"));
    let add = client
        .call_tool(
            CallToolRequestParams::new("add").with_arguments(object(json!({"a": 40, "b": 2}))),
        )
        .await
        .unwrap();
    assert_eq!(
        add.structured_content,
        Some(json!({"sum": 42.0})),
        "{era:?}"
    );
    let echo = client
        .call_tool(CallToolRequestParams::new("echo"))
        .await
        .unwrap();
    assert_eq!(
        serde_json::to_value(&echo.content).unwrap()[0]["text"],
        "echoed"
    );
    let read = client
        .read_resource(ReadResourceRequestParams::new("mem://readme"))
        .await
        .unwrap();
    let read = serde_json::to_value(&read).unwrap();
    assert_eq!(read["contents"][0]["text"], "read me", "{era:?}");
    let prompt = client
        .get_prompt(
            GetPromptRequestParams::new("greet").with_arguments(object(json!({"name": "Ada"}))),
        )
        .await
        .unwrap();
    let prompt = serde_json::to_value(&prompt).unwrap();
    assert_eq!(
        prompt["messages"][0]["content"]["text"], "Hello, Ada",
        "{era:?}"
    );
}

#[tokio::test]
async fn rmcp_clients_use_the_in_process_mock_in_both_eras() {
    // Legacy: initialize, and list_changed through the client handler.
    let mock = rmcp_mock();
    let (tx, mut changes) = mpsc::unbounded_channel();
    let client = Watcher(tx)
        .serve(mock.duplex())
        .await
        .expect("legacy handshake");
    exercise(&client, Era::Legacy).await;
    mock.add_tool(Tool::new("late"), Respond::text("late"));
    let change = tokio::time::timeout(PATIENCE, changes.recv()).await;
    assert_eq!(change.expect("list_changed in time"), Some("tools"));
    client.cancel().await.unwrap();
    mock.assert_method_called("initialize");
    mock.assert_tool_called_with("add", json!({"a": 40}));
    mock.assert_resource_read("mem://readme");
    mock.assert_prompt_retrieved("greet");

    // Modern: server/discover, `_meta` on every request, a listen stream.
    let mock = rmcp_mock();
    let lifecycle = ClientLifecycleMode::Discover {
        preferred_versions: vec![ProtocolVersion::V_2026_07_28],
    };
    let client = ().serve_with_lifecycle(mock.duplex(), lifecycle).await.expect("modern discovery");
    exercise(&client, Era::Modern).await;
    let filter = SubscriptionFilter::builder().tools_list_changed().build();
    let mut subscription = client.listen(filter).await.expect("listen");
    mock.remove_tool("echo");
    let note = tokio::time::timeout(PATIENCE, subscription.next())
        .await
        .expect("list_changed in time")
        .unwrap();
    assert!(
        matches!(
            note,
            Some(ServerNotification::ToolListChangedNotification(_))
        ),
        "{note:?}"
    );
    subscription.cancel().await.unwrap();
    client.cancel().await.unwrap();
    mock.assert_method_called("server/discover");
    mock.assert_tool_called_times("add", 1);
    let initialized = mock.calls().iter().any(|c| c.method == "initialize");
    assert!(!initialized, "the modern client never initialised");
}

/// Serves `mock` over HTTP on a free loopback port until the sender fires.
async fn serve_http(
    mock: &MockServer,
) -> (
    String,
    oneshot::Sender<()>,
    tokio::task::JoinHandle<std::io::Result<()>>,
) {
    let (ready, bound) = oneshot::channel();
    let (stop, stopped) = oneshot::channel::<()>();
    let serving = {
        let mock = mock.clone();
        tokio::spawn(async move {
            mock.serve_http(
                "127.0.0.1:0".parse().unwrap(),
                move |addr| {
                    let _ = ready.send(addr);
                },
                async move {
                    let _ = stopped.await;
                },
            )
            .await
        })
    };
    let addr = tokio::time::timeout(PATIENCE, bound)
        .await
        .expect("bound in time")
        .unwrap();
    (format!("http://{addr}/mcp"), stop, serving)
}

#[tokio::test]
async fn rmcp_clients_use_the_mock_over_http_in_both_eras() {
    let mock = rmcp_mock();
    let (url, stop, serving) = serve_http(&mock).await;

    let (tx, mut changes) = mpsc::unbounded_channel();
    let transport = StreamableHttpClientTransport::from_uri(url.clone());
    let client = Watcher(tx)
        .serve(transport)
        .await
        .expect("legacy handshake over HTTP");
    exercise(&client, Era::Legacy).await;
    mock.add_tool(Tool::new("late"), Respond::text("late"));
    let change = tokio::time::timeout(PATIENCE, changes.recv()).await;
    assert_eq!(
        change.expect("list_changed on the GET stream in time"),
        Some("tools")
    );
    client.cancel().await.unwrap();
    mock.remove_tool("late");

    let transport = StreamableHttpClientTransport::from_uri(url);
    let lifecycle = ClientLifecycleMode::Discover {
        preferred_versions: vec![ProtocolVersion::V_2026_07_28],
    };
    let client =
        ().serve_with_lifecycle(transport, lifecycle)
            .await
            .expect("modern discovery over HTTP");
    exercise(&client, Era::Modern).await;
    let filter = SubscriptionFilter::builder().tools_list_changed().build();
    let mut subscription = client.listen(filter).await.expect("listen over HTTP");
    mock.add_tool(Tool::new("later"), Respond::text("later"));
    let note = tokio::time::timeout(PATIENCE, subscription.next())
        .await
        .expect("list_changed on the listen stream in time")
        .unwrap();
    assert!(
        matches!(
            note,
            Some(ServerNotification::ToolListChangedNotification(_))
        ),
        "{note:?}"
    );
    drop(subscription);
    client.cancel().await.unwrap();

    let _ = stop.send(());
    tokio::time::timeout(PATIENCE, serving)
        .await
        .expect("stopped in time")
        .unwrap()
        .unwrap();
    mock.assert_tool_called_times("add", 2);
}

// ---------------------------------------------------------------------------
// `mcpcassette serve FIXTURE`

const FIXTURE: &str = r#"{
  "fixture_version": 1,
  "server": {"name": "weather", "version": "1.0.0"},
  "tools": [
    {
      "name": "get_weather",
      "inputSchema": {"type": "object", "properties": {"city": {"type": "string"}}},
      "cases": [
        {"when": {"city": "Paris"},
         "result": {"content": [{"type": "text", "text": "sunny, 21 °C"}]}}
      ],
      "result": {"content": [{"type": "text", "text": "cloudy"}]}
    }
  ]
}
"#;

fn fixture_file(dir: &tempfile::TempDir) -> std::path::PathBuf {
    let path = dir.path().join("weather.fixture.json");
    std::fs::write(&path, FIXTURE).unwrap();
    path
}

fn weather_call(id: i64) -> Value {
    call(id, "get_weather", json!({"city": "Paris"}))
}

#[test]
fn serve_answers_from_a_fixture_over_stdio_and_logs_calls() {
    let dir = tempfile::tempdir().unwrap();
    let fixture = fixture_file(&dir);
    let log = dir.path().join("calls.jsonl");
    let mut child = support::mcpcassette()
        .arg("serve")
        .arg(&fixture)
        .arg("--log")
        .arg(&log)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let messages = [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        weather_call(2),
    ];
    let mut stdin = child.stdin.take().unwrap();
    for message in &messages {
        writeln!(stdin, "{message}").unwrap();
    }
    drop(stdin);
    let output = child.wait_with_output().unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let answers: Vec<Value> = String::from_utf8(output.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(answers.len(), 2, "{answers:?}");
    assert_eq!(answers[0]["result"]["serverInfo"]["name"], "weather");
    assert_eq!(text(&answers[1]), "sunny, 21 °C");

    let lines: Vec<Value> = std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 3, "{lines:?}");
    assert_eq!(lines[2]["seq"], 3);
    assert_eq!(lines[2]["method"], "tools/call");
    assert_eq!(lines[2]["params"]["arguments"]["city"], "Paris");
    assert_eq!(
        lines[2]["outcome"]["result"]["content"][0]["text"],
        "sunny, 21 °C"
    );
    assert!(lines[2]["duration_ms"].is_number());
    assert_eq!(lines[1]["outcome"], "notification");
}

#[test]
fn serve_refuses_an_invalid_fixture_with_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("broken.json");
    std::fs::write(&path, "{\"fixture_version\": 1, \"server\": 3}\n").unwrap();
    let output = Cli::serve(&path).output();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("broken.json"), "{stderr}");
}

#[tokio::test]
async fn serve_answers_from_a_fixture_over_http() {
    let dir = tempfile::tempdir().unwrap();
    let fixture = fixture_file(&dir);
    let mut child = support::mcpcassette()
        .arg("serve")
        .arg(&fixture)
        .args(["--listen", "127.0.0.1:0"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let url = tokio::task::spawn_blocking(move || {
        let mut line = String::new();
        StdBufReader::new(stdout).read_line(&mut line).unwrap();
        line.trim().to_owned()
    })
    .await
    .unwrap();
    assert!(
        url.starts_with("http://127.0.0.1:") && url.ends_with("/mcp"),
        "{url}"
    );

    let modern = {
        let mut call = weather_call(7);
        call["params"]["_meta"] = json!({
            "io.modelcontextprotocol/protocolVersion": MODERN,
            "io.modelcontextprotocol/clientCapabilities": {},
        });
        call
    };
    let reply = post(
        &url,
        &modern,
        &[
            ("mcp-protocol-version", MODERN),
            ("mcp-method", "tools/call"),
            ("mcp-name", "get_weather"),
        ],
    )
    .await;
    assert_eq!(reply.status, http::StatusCode::OK);
    let answer = reply.json();
    assert_eq!(text(&answer), "sunny, 21 °C");
    assert_eq!(answer["result"]["resultType"], "complete");
    assert_eq!(answer["id"], 7);

    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(child.id() as i32),
        nix::sys::signal::Signal::SIGTERM,
    )
    .unwrap();
    let status = tokio::task::spawn_blocking(move || child.wait().unwrap())
        .await
        .unwrap();
    assert_eq!(status.code(), Some(0));
}
