//! Interop with the real reference server,
//! `@modelcontextprotocol/server-everything` from npm (version pinned in
//! `.ci/package.json`). One scripted session runs three times: (a) straight
//! against the server, (b) through `mcpcassette record`, (c) against
//! `mcpcassette replay` of what (b) wrote. The client must not be able to
//! tell the three apart.
//!
//! The server is not vendored: `.ci/run` installs it with `npm ci` and runs
//! these tests with `MCPCASSETTE_EVERYTHING` pointing at its
//! `dist/index.js`. Without that variable the tests fail rather than pass
//! vacuously, so `cargo test -- --ignored` never reports a false success.
//!
//! What the server does on its own, and how the script keeps that
//! deterministic:
//! - right after `notifications/initialized` it sends
//!   `notifications/tools/list_changed` (it registers the tools that depend
//!   on client capabilities), and 350 ms later, from a timer, a `roots/list`
//!   request followed by a log message ("Roots updated: …"). The script
//!   waits for that log message before its first request, so the timer's
//!   traffic always lands in the same place of the session (and of the
//!   cassette: after `notifications/initialized`), never inside whichever
//!   request happened to be in flight at 350 ms.
//! - periodic log messages and resource-update notifications (every 5 s)
//!   only start when a client calls `toggle-simulated-logging` or
//!   `toggle-subscriber-updates`; the script calls neither, so no message
//!   depends on how long the session took.
//!
//! Normalised before comparing (and only these):
//! - JSON-RPC `id`s of responses and server requests: replay gives server
//!   requests fresh ids ([`Exchange::without_ids`]).
//! - the time of day in the dynamic resources
//!   (`demo://resource/dynamic/{text,blob}/N`): the server writes
//!   `new Date().toLocaleTimeString()` into them ("… created at 10:04:05
//!   AM"), in plain text and inside base64 blobs. It differs between the
//!   live run and the recording; replay must give back the recorded one
//!   exactly, so recorded and replayed runs are compared without this
//!   normalisation.
//!
//! Not exercised: `get-env` (prints the environment, which differs between
//! a direct child and one started by `mcpcassette record`), the `*-async`
//! and `simulate-research-query` tools (experimental tasks, answered by
//! polling on a timer), `trigger-url-elicitation` (random elicitation ids),
//! and `gzip-file-as-resource` with a web URL (network).

use std::path::Path;
use std::process::Command;

use serde_json::{Value, json};

use crate::support;
use crate::support::peer::{Exchange, Peer};
use crate::support::pinned::everything_js;

fn server_args(js: &Path) -> Vec<String> {
    vec!["node".into(), js.display().to_string(), "stdio".into()]
}

fn direct(js: &Path) -> Command {
    let args = server_args(js);
    let mut command = Command::new(&args[0]);
    command.args(&args[1..]);
    command
}

fn record(js: &Path, cassette: &Path) -> Command {
    let mut command = support::mcpcassette();
    command
        .arg("record")
        .arg("--cassette")
        .arg(cassette)
        .arg("--")
        .args(server_args(js));
    command
}

fn replay(cassette: &Path) -> Command {
    let mut command = support::mcpcassette();
    command.arg("replay").arg(cassette);
    command
}

/// The client's answers to the server's sampling, elicitation and roots
/// requests: the same in all three runs.
fn respond(request: &Value) -> Value {
    match request["method"].as_str() {
        Some("sampling/createMessage") => json!({
            "role": "assistant",
            "content": {"type": "text", "text": "cassettes all the way down"},
            "model": "test-model",
            "stopReason": "endTurn"
        }),
        Some("elicitation/create") => json!({
            "action": "accept",
            "content": {"name": "Ada Lovelace", "check": true, "integer": 7}
        }),
        Some("roots/list") => {
            json!({"roots": [{"uri": "file:///work/project", "name": "project"}]})
        }
        _ => json!({}),
    }
}

/// One step of the session: what was sent, and everything it brought back.
#[derive(Debug, Clone)]
struct Step {
    label: String,
    exchange: Exchange,
}

/// What one run of the script saw.
#[derive(Debug, Clone)]
struct Transcript {
    steps: Vec<Step>,
    /// The client's answers to server requests, in order.
    answered: Vec<Value>,
}

impl Transcript {
    fn step(&self, label: &str) -> &Exchange {
        &self
            .steps
            .iter()
            .find(|s| s.label == label)
            .unwrap_or_else(|| panic!("no step {label:?} in the transcript"))
            .exchange
    }

    /// Steps as JSON, ids stripped, optionally with the time of day masked.
    fn comparable(&self, mask_time: bool) -> Vec<(String, Value)> {
        let mut out: Vec<(String, Value)> = self
            .steps
            .iter()
            .map(|s| {
                let e = s.exchange.without_ids();
                let mut v = json!({"before": e.before, "response": e.response});
                if mask_time {
                    mask_time_of_day(&mut v);
                }
                (s.label.clone(), v)
            })
            .collect();
        let answered: Vec<Value> = self
            .answered
            .iter()
            .map(|a| a.get("result").cloned().unwrap_or(Value::Null))
            .collect();
        out.push((
            "(client answers to server requests)".into(),
            json!(answered),
        ));
        out
    }
}

/// The scripted session. Labels name each step in failure messages.
fn run_script(command: Command) -> (Transcript, std::process::ExitStatus, String) {
    let mut peer = Peer::spawn(command).respond_with(respond);
    let mut steps = Vec::new();
    let mut step = |label: &str, exchange: Exchange| {
        steps.push(Step {
            label: label.to_owned(),
            exchange,
        });
    };
    let call = |name: &str, arguments: Value| json!({"name": name, "arguments": arguments});

    step(
        "initialize",
        peer.request(
            "initialize",
            json!({
                "protocolVersion": "2025-11-25",
                "capabilities": {
                    "sampling": {},
                    "elicitation": {"form": {}},
                    "roots": {"listChanged": true}
                },
                "clientInfo": {"name": "mcpcassette-everything-test", "version": "1.0.0"}
            }),
        ),
    );
    step("notifications/initialized", after_initialized(&mut peer));
    step(
        "logging/setLevel",
        peer.request("logging/setLevel", json!({"level": "debug"})),
    );
    step("ping", peer.request("ping", json!({})));
    step("tools/list", peer.request("tools/list", json!({})));
    step("resources/list", peer.request("resources/list", json!({})));
    step(
        "resources/templates/list",
        peer.request("resources/templates/list", json!({})),
    );
    step("prompts/list", peer.request("prompts/list", json!({})));

    step(
        "echo",
        peer.request(
            "tools/call",
            call("echo", json!({"message": "hello from mcpcassette"})),
        ),
    );
    // The same request twice: replay hands out the recorded answers in order.
    step(
        "echo again",
        peer.request(
            "tools/call",
            call("echo", json!({"message": "hello from mcpcassette"})),
        ),
    );
    step(
        "get-sum",
        peer.request("tools/call", call("get-sum", json!({"a": 2, "b": 40}))),
    );
    let mut long = call(
        "trigger-long-running-operation",
        json!({"duration": 0.6, "steps": 3}),
    );
    long["_meta"] = json!({"progressToken": "long-op-1"});
    step(
        "trigger-long-running-operation",
        peer.request("tools/call", long),
    );
    step(
        "trigger-sampling-request",
        peer.request(
            "tools/call",
            call(
                "trigger-sampling-request",
                json!({"prompt": "What is a cassette?", "maxTokens": 50}),
            ),
        ),
    );
    step(
        "trigger-elicitation-request",
        peer.request("tools/call", call("trigger-elicitation-request", json!({}))),
    );
    step(
        "get-roots-list",
        peer.request("tools/call", call("get-roots-list", json!({}))),
    );
    step(
        "get-structured-content",
        peer.request(
            "tools/call",
            call("get-structured-content", json!({"location": "Los Angeles"})),
        ),
    );
    step(
        "get-annotated-message",
        peer.request(
            "tools/call",
            call(
                "get-annotated-message",
                json!({"messageType": "error", "includeImage": true}),
            ),
        ),
    );
    step(
        "get-tiny-image",
        peer.request("tools/call", call("get-tiny-image", json!({}))),
    );
    step(
        "get-resource-links",
        peer.request(
            "tools/call",
            call("get-resource-links", json!({"count": 2})),
        ),
    );
    step(
        "get-resource-reference",
        peer.request(
            "tools/call",
            call(
                "get-resource-reference",
                json!({"resourceType": "Text", "resourceId": 3}),
            ),
        ),
    );
    // Registers a session resource: `notifications/resources/list_changed`
    // arrives while the call is in flight. A data: URL keeps it offline.
    step(
        "gzip-file-as-resource",
        peer.request(
            "tools/call",
            call(
                "gzip-file-as-resource",
                json!({"name": "hello.txt.gz", "data": "data:text/plain;base64,aGVsbG8gY2Fzc2V0dGUK", "outputType": "resourceLink"}),
            ),
        ),
    );
    step(
        "unknown tool",
        peer.request("tools/call", call("no-such-tool", json!({}))),
    );
    step(
        "echo with invalid arguments",
        peer.request("tools/call", call("echo", json!({"message": 42}))),
    );

    let read = |uri: &str| json!({"uri": uri});
    step(
        "read instructions.md",
        peer.request(
            "resources/read",
            read("demo://resource/static/document/instructions.md"),
        ),
    );
    step(
        "read dynamic text",
        peer.request("resources/read", read("demo://resource/dynamic/text/1")),
    );
    step(
        "read dynamic blob",
        peer.request("resources/read", read("demo://resource/dynamic/blob/2")),
    );
    step(
        "read session resource",
        peer.request(
            "resources/read",
            read("demo://resource/session/hello.txt.gz"),
        ),
    );
    step(
        "read unknown resource",
        peer.request("resources/read", read("demo://resource/nowhere")),
    );
    step(
        "resources/subscribe",
        peer.request(
            "resources/subscribe",
            read("demo://resource/dynamic/text/1"),
        ),
    );
    step(
        "resources/unsubscribe",
        peer.request(
            "resources/unsubscribe",
            read("demo://resource/dynamic/text/1"),
        ),
    );

    step(
        "simple-prompt",
        peer.request("prompts/get", json!({"name": "simple-prompt"})),
    );
    step(
        "args-prompt",
        peer.request(
            "prompts/get",
            json!({"name": "args-prompt", "arguments": {"city": "Paris", "state": "Texas"}}),
        ),
    );
    step(
        "resource-prompt",
        peer.request(
            "prompts/get",
            json!({"name": "resource-prompt", "arguments": {"resourceType": "Text", "resourceId": "4"}}),
        ),
    );
    step(
        "completion/complete",
        peer.request(
            "completion/complete",
            json!({
                "ref": {"type": "ref/prompt", "name": "completable-prompt"},
                "argument": {"name": "name", "value": "A"},
                "context": {"arguments": {"department": "Engineering"}}
            }),
        ),
    );
    step("final ping", peer.request("ping", json!({})));

    let answered = std::mem::take(&mut peer.answered);
    let (status, stderr) = peer.finish();
    (Transcript { steps, answered }, status, stderr)
}

/// Sends `notifications/initialized` and collects what the server sends
/// unprompted, up to the log message that ends its roots sync (see the
/// module comment). Server requests on the way are answered.
fn after_initialized(peer: &mut Peer) -> Exchange {
    peer.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    let mut before = Vec::new();
    loop {
        let message = peer.recv();
        if message.get("method").is_some() && message.get("id").is_some() {
            let answer =
                json!({"jsonrpc": "2.0", "id": message["id"], "result": respond(&message)});
            peer.send(&answer);
            peer.answered.push(answer);
        }
        let done = message["method"] == "notifications/message"
            && message["params"]["data"]
                .as_str()
                .is_some_and(|d| d.starts_with("Roots updated"));
        before.push(message);
        if done {
            // A notification has no response; `Null` marks that.
            return Exchange {
                before,
                response: Value::Null,
            };
        }
    }
}

/// Masks the time of day the server writes into dynamic resources (see the
/// module comment), in text and in base64 blobs.
fn mask_time_of_day(value: &mut Value) {
    const MARK: &str = " created at ";
    match value {
        Value::String(s) => {
            if let Some(at) = s.find(MARK)
                && s.starts_with("Resource ")
            {
                s.truncate(at + MARK.len());
                s.push_str("<time>");
            }
        }
        Value::Array(items) => items.iter_mut().for_each(mask_time_of_day),
        Value::Object(map) => {
            for (key, item) in map.iter_mut() {
                if key == "blob"
                    && let Some(text) = item
                        .as_str()
                        .and_then(base64_decode)
                        .and_then(|b| String::from_utf8(b).ok())
                        .filter(|t| t.starts_with("Resource ") && t.contains(MARK))
                {
                    let mut text = Value::String(text);
                    mask_time_of_day(&mut text);
                    *item = json!({"decoded": text});
                } else {
                    mask_time_of_day(item);
                }
            }
        }
        _ => {}
    }
}

/// Standard base64 with padding; `None` for anything else.
fn base64_decode(text: &str) -> Option<Vec<u8>> {
    let digit = |c: u8| -> Option<u32> {
        Some(match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return None,
        } as u32)
    };
    let bytes = text.as_bytes();
    if bytes.is_empty() || !bytes.len().is_multiple_of(4) {
        return None;
    }
    let mut out = Vec::with_capacity(bytes.len() / 4 * 3);
    for chunk in bytes.chunks(4) {
        let pad = chunk.iter().rev().take_while(|&&c| c == b'=').count();
        if pad > 2 {
            return None;
        }
        let mut n = 0u32;
        for &c in &chunk[..4 - pad] {
            n = (n << 6) | digit(c)?;
        }
        n <<= 6 * pad as u32;
        let group = [(n >> 16) as u8, (n >> 8) as u8, n as u8];
        out.extend_from_slice(&group[..3 - pad]);
    }
    Some(out)
}

/// Every step where `a` and `b` differ, both sides shown in full.
fn differences(
    a_name: &str,
    a: &Transcript,
    b_name: &str,
    b: &Transcript,
    mask: bool,
) -> Vec<String> {
    let (a, b) = (a.comparable(mask), b.comparable(mask));
    let mut out = Vec::new();
    if a.len() != b.len() {
        out.push(format!(
            "{a_name} has {} steps, {b_name} has {}",
            a.len(),
            b.len()
        ));
    }
    for ((label, x), (_, y)) in a.iter().zip(&b) {
        if x != y {
            out.push(format!(
                "step {label:?} differs\n--- {a_name}:\n{}\n--- {b_name}:\n{}",
                serde_json::to_string_pretty(x).unwrap(),
                serde_json::to_string_pretty(y).unwrap()
            ));
        }
    }
    out
}

fn methods(exchange: &Exchange) -> Vec<&str> {
    exchange
        .before
        .iter()
        .map(|m| m["method"].as_str().unwrap_or("?"))
        .collect()
}

fn texts(exchange: &Exchange) -> Vec<&str> {
    exchange.result()["content"]
        .as_array()
        .unwrap_or_else(|| panic!("no content in {}", exchange.response))
        .iter()
        .filter_map(|c| c["text"].as_str())
        .collect()
}

fn names(exchange: &Exchange, list: &str) -> Vec<String> {
    exchange.result()[list]
        .as_array()
        .unwrap_or_else(|| panic!("no {list} in {}", exchange.response))
        .iter()
        .map(|t| t["name"].as_str().unwrap_or_default().to_owned())
        .collect()
}

/// Concrete facts about the server that any of the three runs must show.
fn check_values(run: &str, t: &Transcript) {
    let init = t.step("initialize").result();
    assert_eq!(init["protocolVersion"], "2025-11-25", "{run}: {init}");
    assert_eq!(
        init["serverInfo"]["name"], "mcp-servers/everything",
        "{run}"
    );
    assert_eq!(init["capabilities"]["tools"]["listChanged"], true, "{run}");
    let instructions = init["instructions"].as_str().expect("instructions");

    let initialized = t.step("notifications/initialized");
    assert_eq!(
        initialized.before.first().map(|m| &m["method"]),
        Some(&json!("notifications/tools/list_changed")),
        "{run}: the tool list changes right after initialized: {:?}",
        methods(initialized)
    );
    assert!(
        methods(initialized).contains(&"roots/list"),
        "{run}: the server asks for roots after initialized, got {:?}",
        methods(initialized)
    );
    assert_eq!(
        initialized.before.last().unwrap()["params"]["data"],
        "Roots updated: 1 root(s) received from client",
        "{run}"
    );
    assert_eq!(t.step("ping").result(), &json!({}), "{run}");

    let tools = names(t.step("tools/list"), "tools");
    for tool in [
        "echo",
        "get-sum",
        "trigger-long-running-operation",
        "trigger-sampling-request",
        "trigger-elicitation-request",
        "get-roots-list",
        "get-structured-content",
        "get-annotated-message",
    ] {
        assert!(
            tools.iter().any(|t| t == tool),
            "{run}: no {tool} in {tools:?}"
        );
    }
    let resources = names(t.step("resources/list"), "resources");
    assert!(
        resources.iter().any(|r| r == "instructions.md"),
        "{run}: {resources:?}"
    );
    assert_eq!(
        names(t.step("resources/templates/list"), "resourceTemplates"),
        ["Dynamic Text Resource", "Dynamic Blob Resource"],
        "{run}"
    );
    let prompts = names(t.step("prompts/list"), "prompts");
    assert_eq!(
        prompts,
        [
            "simple-prompt",
            "args-prompt",
            "completable-prompt",
            "resource-prompt"
        ],
        "{run}"
    );

    assert_eq!(
        t.step("echo").text(),
        "Echo: hello from mcpcassette",
        "{run}"
    );
    assert_eq!(
        t.step("echo again").text(),
        "Echo: hello from mcpcassette",
        "{run}"
    );
    assert_eq!(
        t.step("get-sum").text(),
        "The sum of 2 and 40 is 42.",
        "{run}"
    );

    let long = t.step("trigger-long-running-operation");
    let progress: Vec<(i64, i64)> = long
        .with_method("notifications/progress")
        .iter()
        .map(|p| {
            assert_eq!(p["params"]["progressToken"], "long-op-1", "{run}: {p}");
            (
                p["params"]["progress"].as_i64().unwrap(),
                p["params"]["total"].as_i64().unwrap(),
            )
        })
        .collect();
    assert_eq!(progress, [(1, 3), (2, 3), (3, 3)], "{run}");
    assert_eq!(
        long.text(),
        "Long running operation completed. Duration: 0.6 seconds, Steps: 3.",
        "{run}"
    );

    let sampling = t.step("trigger-sampling-request");
    assert_eq!(methods(sampling), ["sampling/createMessage"], "{run}");
    assert_eq!(sampling.before[0]["params"]["maxTokens"], 50, "{run}");
    assert_eq!(
        sampling.before[0]["params"]["messages"][0]["content"]["text"],
        "Resource trigger-sampling-request context: What is a cassette?",
        "{run}"
    );
    let text = sampling.text();
    assert!(
        text.starts_with("LLM sampling result:")
            && text.contains("cassettes all the way down")
            && text.contains("test-model"),
        "{run}: {text}"
    );

    let elicitation = t.step("trigger-elicitation-request");
    assert_eq!(methods(elicitation), ["elicitation/create"], "{run}");
    assert_eq!(
        texts(elicitation)[1],
        "User inputs:\n- Name: Ada Lovelace\n- Agreed to terms: true\n- Favorite Integer: 7",
        "{run}"
    );

    let roots = t.step("get-roots-list");
    assert!(
        roots.before.is_empty(),
        "{run}: roots were cached at initialization"
    );
    assert!(
        roots
            .text()
            .contains("1. project\n   URI: file:///work/project"),
        "{run}: {}",
        roots.text()
    );

    let weather = t.step("get-structured-content").result();
    assert_eq!(
        weather["structuredContent"],
        json!({"temperature": 73, "conditions": "Sunny / Clear", "humidity": 48}),
        "{run}"
    );

    let annotated = t.step("get-annotated-message").result();
    assert_eq!(
        annotated["content"][0]["text"], "Error: Operation failed",
        "{run}"
    );
    assert_eq!(
        annotated["content"][0]["annotations"]["priority"], 1.0,
        "{run}"
    );
    assert_eq!(annotated["content"][1]["type"], "image", "{run}");
    assert_eq!(
        annotated["content"][1]["annotations"]["audience"],
        json!(["user"]),
        "{run}"
    );

    let image = t.step("get-tiny-image").result();
    assert_eq!(image["content"][1]["mimeType"], "image/png", "{run}");
    let png = base64_decode(image["content"][1]["data"].as_str().unwrap()).unwrap();
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n", "{run}");

    let links = t.step("get-resource-links").result();
    assert_eq!(links["content"][1]["type"], "resource_link", "{run}");
    assert_eq!(
        links["content"][2]["uri"], "demo://resource/dynamic/text/2",
        "{run}"
    );

    let reference = t.step("get-resource-reference").result();
    let embedded = reference["content"][1]["resource"]["text"]
        .as_str()
        .unwrap();
    assert!(
        embedded.starts_with("Resource 3: This is a plaintext resource created at "),
        "{run}: {embedded}"
    );

    let gzip = t.step("gzip-file-as-resource");
    assert_eq!(
        methods(gzip),
        ["notifications/resources/list_changed"],
        "{run}"
    );
    assert_eq!(
        gzip.result()["content"][0]["uri"],
        "demo://resource/session/hello.txt.gz",
        "{run}"
    );
    let session = t.step("read session resource").result();
    let gz = base64_decode(session["contents"][0]["blob"].as_str().unwrap()).unwrap();
    assert_eq!(&gz[..2], b"\x1f\x8b", "{run}: a gzip stream");

    let unknown = &t.step("unknown tool").response;
    let failed = unknown.get("error").is_some() || unknown["result"]["isError"] == true;
    assert!(failed, "{run}: an unknown tool is an error: {unknown}");
    let invalid = &t.step("echo with invalid arguments").response;
    let failed = invalid.get("error").is_some() || invalid["result"]["isError"] == true;
    assert!(failed, "{run}: invalid arguments are an error: {invalid}");

    let doc = t.step("read instructions.md").result();
    assert_eq!(
        doc["contents"][0]["text"], instructions,
        "{run}: instructions.md is what initialize sent"
    );
    assert_eq!(doc["contents"][0]["mimeType"], "text/markdown", "{run}");
    let text = t.step("read dynamic text").result()["contents"][0]["text"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        text.starts_with("Resource 1: This is a plaintext resource created at "),
        "{run}: {text}"
    );
    let blob = t.step("read dynamic blob").result()["contents"][0]["blob"]
        .as_str()
        .unwrap()
        .to_owned();
    let blob = String::from_utf8(base64_decode(&blob).unwrap()).unwrap();
    assert!(
        blob.starts_with("Resource 2: This is a base64 blob created at "),
        "{run}: {blob}"
    );
    let missing = &t.step("read unknown resource").response;
    assert!(
        missing["error"]["code"].is_i64(),
        "{run}: an unknown resource is a JSON-RPC error: {missing}"
    );

    let subscribe = t.step("resources/subscribe");
    assert_eq!(methods(subscribe), ["notifications/message"], "{run}");
    assert!(
        subscribe.before[0]["params"]["data"]
            .as_str()
            .unwrap()
            .starts_with(
                "Received Subscribe Resource request for URI: demo://resource/dynamic/text/1"
            ),
        "{run}: {}",
        subscribe.before[0]
    );
    assert_eq!(
        t.step("resources/unsubscribe").result(),
        &json!({}),
        "{run}"
    );

    let simple = t.step("simple-prompt").result();
    assert_eq!(
        simple["messages"][0]["content"]["text"], "This is a simple prompt without arguments.",
        "{run}"
    );
    let args = t.step("args-prompt").result();
    assert_eq!(
        args["messages"][0]["content"]["text"], "What's weather in Paris, Texas?",
        "{run}"
    );
    let prompt = t.step("resource-prompt").result();
    assert_eq!(
        prompt["messages"][1]["content"]["type"], "resource",
        "{run}"
    );
    assert_eq!(
        prompt["messages"][1]["content"]["resource"]["uri"], "demo://resource/dynamic/text/4",
        "{run}"
    );
    assert_eq!(
        t.step("completion/complete").result()["completion"]["values"],
        json!(["Alice"]),
        "{run}"
    );
    assert_eq!(t.step("final ping").result(), &json!({}), "{run}");

    let answered: Vec<&Value> = t.answered.iter().map(|a| &a["result"]).collect();
    assert_eq!(
        answered.len(),
        3,
        "{run}: roots, sampling and elicitation were answered once each: {answered:?}"
    );
}

#[test]
#[ignore = "needs @modelcontextprotocol/server-everything from npm; .ci/run installs it and runs ignored tests"]
fn everything_live_recorded_and_replayed_sessions_are_identical() {
    let js = everything_js();
    let dir = tempfile::tempdir().unwrap();
    let cassette = dir.path().join("c.json");

    let (live, status, stderr) = run_script(direct(&js));
    assert!(
        status.success(),
        "the server exited with {status}; stderr:\n{stderr}"
    );
    check_values("live", &live);

    let (recorded, status, stderr) = run_script(record(&js, &cassette));
    assert!(
        status.success(),
        "record exited with {status}; stderr:\n{stderr}"
    );
    check_values("recorded", &recorded);

    let (replayed, replay_status, replay_stderr) = run_script(replay(&cassette));

    // Every difference is reported at once, not just the first.
    let mut problems = Vec::new();
    problems.extend(differences("live", &live, "recorded", &recorded, true));
    // Replay must give back exactly what was recorded, timestamps included.
    problems.extend(differences(
        "recorded", &recorded, "replayed", &replayed, false,
    ));
    if !replay_status.success() {
        problems.push(format!(
            "replay exited with {replay_status}; stderr:\n{replay_stderr}"
        ));
    }
    assert!(
        problems.is_empty(),
        "{} difference(s):\n\n{}",
        problems.len(),
        problems.join("\n\n")
    );
    check_values("replayed", &replayed);

    // The cassette itself describes the session.
    let loaded = mcpcassette::cassette::load(&cassette).unwrap();
    assert_eq!(loaded.protocol.version.as_deref(), Some("2025-11-25"));
    assert_eq!(
        loaded.server.as_ref().unwrap().info["name"],
        "mcp-servers/everything"
    );
    // One interaction per client message: every step sent exactly one.
    assert_eq!(loaded.interactions.len(), recorded.steps.len());
    let sampling = loaded
        .interactions
        .iter()
        .find(|i| {
            i.request()
                .is_some_and(|r| r["params"]["name"] == "trigger-sampling-request")
        })
        .expect("the sampling call is recorded");
    let [
        mcpcassette::cassette::Event::ServerRequest {
            server_request,
            client_response: Some(answer),
        },
    ] = sampling.during.as_slice()
    else {
        panic!(
            "the sampling request and its answer are filed under the call: {:?}",
            sampling.during
        )
    };
    assert_eq!(server_request["method"], "sampling/createMessage");
    assert_eq!(answer["result"]["model"], "test-model");
}

#[test]
#[ignore = "needs @modelcontextprotocol/server-everything from npm; .ci/run installs it and runs ignored tests"]
fn everything_replay_needs_no_server() {
    // A cassette recorded from the real server replays after the server is
    // gone: the replay command line names no server at all, and a request
    // that was never recorded gets the documented miss instead of hanging.
    let js = everything_js();
    let dir = tempfile::tempdir().unwrap();
    let cassette = dir.path().join("short.json");
    let script = |command: Command| {
        let mut peer = Peer::spawn(command).respond_with(respond);
        let init = peer.request(
            "initialize",
            json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}),
        );
        peer.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        let echo = peer.request(
            "tools/call",
            json!({"name": "echo", "arguments": {"message": "once"}}),
        );
        (peer, init, echo)
    };
    let (peer, _, live_echo) = script(record(&js, &cassette));
    let (status, stderr) = peer.finish();
    assert!(
        status.success(),
        "record exited with {status}; stderr:\n{stderr}"
    );
    assert_eq!(live_echo.text(), "Echo: once");

    let (mut peer, init, echo) = script(replay(&cassette));
    assert_eq!(
        init.result()["serverInfo"]["name"],
        "mcp-servers/everything"
    );
    assert_eq!(echo.without_ids(), live_echo.without_ids());
    let miss = peer.request(
        "tools/call",
        json!({"name": "echo", "arguments": {"message": "never recorded"}}),
    );
    assert!(
        miss.response.get("error").is_some(),
        "an unrecorded request is answered with an error: {}",
        miss.response
    );
    let (status, _) = peer.finish();
    assert_eq!(status.code(), Some(1), "replay exits 1 after a miss");
}

/// The handshake of a client with roots that waits for what the server
/// sends on its own after `initialized` (its `roots/list`, 350 ms later,
/// then "Roots updated").
fn handshake_with_roots(peer: &mut Peer) {
    peer.request(
        "initialize",
        json!({"protocolVersion": "2025-11-25", "capabilities": {"roots": {"listChanged": true}}, "clientInfo": {"name": "t", "version": "1"}}),
    );
    peer.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    loop {
        let message = peer.recv();
        if message["method"] == "roots/list" {
            peer.send(&json!({"jsonrpc": "2.0", "id": message["id"], "result": respond(&message)}));
        }
        let data = message["params"]["data"].as_str().unwrap_or_default();
        if data.starts_with("Roots updated") {
            return;
        }
    }
}

#[test]
#[ignore = "needs @modelcontextprotocol/server-everything from npm; .ci/run installs it and runs ignored tests"]
fn everything_new_episodes_keep_its_roots_request_out_of_appended_interactions() {
    let js = everything_js();
    let dir = tempfile::tempdir().unwrap();
    let cassette = dir.path().join("roots.json");
    let echo = |peer: &mut Peer, message: &str| {
        peer.request(
            "tools/call",
            json!({"name": "echo", "arguments": {"message": message}}),
        )
    };
    let mut peer = Peer::spawn(record(&js, &cassette)).respond_with(respond);
    handshake_with_roots(&mut peer);
    assert_eq!(echo(&mut peer, "old").text(), "Echo: old");
    let (status, stderr) = peer.finish();
    assert!(status.success(), "record: {status}\n{stderr}");
    let before = mcpcassette::cassette::load(&cassette).unwrap();

    let mut command = support::mcpcassette();
    command
        .env_remove("MCPCASSETTE_MODE")
        .args(["run", "--mode", "new-episodes", "--cassette"])
        .arg(&cassette)
        .arg("--")
        .args(server_args(&js));
    let mut peer = Peer::spawn(command).respond_with(respond);
    handshake_with_roots(&mut peer);
    let new = echo(&mut peer, "new");
    assert_eq!(new.text(), "Echo: new");
    assert!(
        new.before.is_empty(),
        "nothing but the answer: {:?}",
        new.before
    );
    let (status, stderr) = peer.finish();
    assert!(status.success(), "new episodes: {status}\n{stderr}");

    let after = mcpcassette::cassette::load(&cassette).unwrap();
    assert_eq!(after.interactions.len(), before.interactions.len() + 1);
    let appended = after.interactions.last().unwrap();
    assert!(
        appended.during.is_empty() && appended.after.is_empty(),
        "{appended:?}"
    );
    // `verify` sends its next request without waiting 350 ms for the
    // server's roots timer, so the handshake's own traffic may move; the
    // appended call must compare the same.
    let verify = support::mcpcassette()
        .env("MCPCASSETTE_UPDATE", "no")
        .args(["verify", "--json"])
        .arg(&cassette)
        .output()
        .unwrap();
    let report: Value = serde_json::from_slice(&verify.stdout).unwrap_or_else(|e| {
        panic!(
            "verify --json: {e}: {}",
            String::from_utf8_lossy(&verify.stderr)
        )
    });
    let last = after.interactions.len() - 1;
    let compared = report["report"]["interactions"]
        .as_array()
        .and_then(|all| all.iter().find(|i| i["index"] == last))
        .unwrap_or_else(|| panic!("interaction {last} in {report:#}"));
    assert_eq!(compared["status"], "same", "{compared:#}");
}
