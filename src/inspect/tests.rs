use std::io::Write;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};

use super::*;

const C2S: Direction = Direction::ClientToServer;
const S2C: Direction = Direction::ServerToClient;

/// A writer whose bytes the test can read back.
#[derive(Clone, Default)]
struct Shared(Arc<Mutex<Vec<u8>>>);

impl Write for Shared {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Shared {
    fn text(&self) -> String {
        String::from_utf8(self.0.lock().unwrap().clone()).unwrap()
    }

    fn events(&self) -> Vec<Value> {
        self.text()
            .lines()
            .map(|line| serde_json::from_str(line).unwrap())
            .collect()
    }
}

fn logging() -> (Inspector, Shared) {
    let out = Shared::default();
    let inspector = Inspector::new(Redactor::defaults(), Output::Log(Box::new(out.clone())));
    (inspector, out)
}

fn send(inspector: &Inspector, direction: Direction, ms: u64, message: &Value) {
    let mut line = serde_json::to_vec(message).unwrap();
    line.push(b'\n');
    inspector.seen_at(direction, &line, Duration::from_millis(ms));
}

fn request(id: Value, method: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": {}})
}

fn result(id: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "result": {}})
}

fn handshake(inspector: &Inspector) {
    send(
        inspector,
        C2S,
        0,
        &json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}}}),
    );
    send(
        inspector,
        S2C,
        1,
        &json!({"jsonrpc": "2.0", "id": 0, "result": {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}}, "serverInfo": {"name": "s", "version": "1"}}}),
    );
    send(
        inspector,
        C2S,
        2,
        &json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    );
}

#[test]
fn responses_pair_with_requests_by_id_and_direction() {
    let (inspector, out) = logging();
    // Both sides use id 1: the server's request is answered by the client.
    send(&inspector, C2S, 10, &request(json!(1), "tools/call"));
    send(&inspector, S2C, 12, &request(json!(1), "roots/list"));
    send(&inspector, C2S, 15, &result(json!(1)));
    send(&inspector, S2C, 30, &result(json!(1)));
    let events = out.events();
    assert_eq!(events.len(), 4);
    assert_eq!(events[2]["dir"], "c2s");
    assert_eq!(events[2]["method"], "roots/list");
    assert_eq!(events[2]["latency_ms"], 3.0);
    assert_eq!(events[3]["dir"], "s2c");
    assert_eq!(events[3]["method"], "tools/call");
    assert_eq!(events[3]["latency_ms"], 20.0);
    assert!(events[0].get("latency_ms").is_none());
    let summary = inspector.summary();
    assert_eq!(summary.totals.unanswered, 0);
    assert_eq!(summary.totals.requests, 2);
    assert_eq!(summary.totals.responses, 2);
}

#[test]
fn a_response_that_overtakes_its_request_is_reported_after_it() {
    let (inspector, out) = logging();
    // The server's answer reached the inspector first (two threads).
    send(&inspector, S2C, 5, &result(json!("a")));
    assert!(out.text().is_empty(), "held until its request comes");
    send(&inspector, C2S, 4, &request(json!("a"), "ping"));
    let events = out.events();
    assert_eq!(events[0]["kind"], "request");
    assert_eq!(events[1]["kind"], "response");
    assert_eq!(events[1]["method"], "ping");
    assert_eq!(events[1]["latency_ms"], 1.0);
    // One whose request never comes is written out by the summary.
    send(&inspector, S2C, 6, &result(json!(99)));
    let summary = inspector.summary();
    let events = out.events();
    assert_eq!(events.len(), 3);
    assert_eq!(events[2]["method"], Value::Null);
    assert_eq!(summary.totals.responses, 2);
}

#[test]
fn per_method_stats_have_counts_errors_and_percentiles() {
    let (inspector, _out) = logging();
    for i in 1..=100u64 {
        send(&inspector, C2S, i * 1000, &request(json!(i), "tools/call"));
        let answer = if i == 7 {
            json!({"jsonrpc": "2.0", "id": i, "error": {"code": -32602, "message": "bad"}})
        } else {
            result(json!(i))
        };
        send(&inspector, S2C, i * 1000 + i, &answer);
    }
    send(&inspector, C2S, 200_000, &request(json!("x"), "ping"));
    send(
        &inspector,
        S2C,
        200_001,
        &json!({"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": 1, "progress": 1}}),
    );
    let summary = inspector.summary();
    let call = summary
        .methods
        .iter()
        .find(|m| m.method == "tools/call")
        .unwrap();
    assert_eq!(call.count, 100);
    assert_eq!(call.answered, 100);
    assert_eq!(call.errors, 1);
    let latency = call.latency_ms.unwrap();
    assert_eq!(latency.mean, 50.5);
    assert_eq!(latency.p50, 50.0);
    assert_eq!(latency.p99, 99.0);
    assert_eq!(latency.max, 100.0);
    let ping = summary.methods.iter().find(|m| m.method == "ping").unwrap();
    assert_eq!((ping.count, ping.answered, ping.latency_ms), (1, 0, None));
    assert_eq!(summary.totals.unanswered, 1);
    assert_eq!(summary.totals.notifications, 1);
    assert_eq!(summary.totals.errors, 1);
    assert_eq!(summary.totals.messages, 202);

    let table = summary.render();
    let row = table
        .lines()
        .find(|line| line.starts_with("tools/call"))
        .unwrap();
    let cells: Vec<&str> = row.split_whitespace().collect();
    assert_eq!(cells, ["tools/call", "100", "1", "50.50", "50.00", "99.00"]);
    let row = table
        .lines()
        .find(|line| line.starts_with("notifications/progress"))
        .unwrap();
    assert_eq!(
        row.split_whitespace().collect::<Vec<_>>(),
        ["notifications/progress", "1", "-", "-", "-", "-"]
    );
    assert!(table.contains("unanswered requests: 1"), "{table}");
    assert!(table.contains("schema violations: none"), "{table}");
}

#[test]
fn violations_are_flagged_with_check_codes_and_counted() {
    let (inspector, out) = logging();
    handshake(&inspector);
    send(&inspector, C2S, 3, &request(json!(2), "tools/list"));
    send(
        &inspector,
        S2C,
        4,
        &json!({"jsonrpc": "2.0", "id": 2, "result": {"tools": [{"name": "t", "inputSchema": {"type": "array"}}]}}),
    );
    // A custom method is legal: not flagged.
    send(&inspector, C2S, 5, &request(json!(3), "x/custom"));
    let events = out.events();
    let list = &events[4];
    assert_eq!(list["method"], "tools/list");
    let violations = list["violations"].as_array().unwrap();
    assert_eq!(violations.len(), 1, "{list}");
    assert_eq!(violations[0]["code"], "MC206");
    let pointer = violations[0]["pointer"].as_str().unwrap();
    assert!(
        pointer.starts_with("/result/tools/0/inputSchema"),
        "{pointer}"
    );
    assert!(
        violations[0]["message"]
            .as_str()
            .unwrap()
            .contains("object")
    );
    assert!(events[5].get("violations").is_none());
    let summary = inspector.summary();
    assert_eq!(summary.protocol_version.as_deref(), Some("2025-11-25"));
    assert_eq!(summary.violations, 1);
    assert_eq!(summary.violation_codes["MC206"], 1);
    assert!(summary.render().contains("schema violations: 1 (MC206 ×1"));
}

#[test]
fn nothing_is_flagged_before_the_version_is_known() {
    let (inspector, out) = logging();
    send(&inspector, C2S, 1, &request(json!(2), "tools/list"));
    send(
        &inspector,
        S2C,
        2,
        &json!({"jsonrpc": "2.0", "id": 2, "result": {"tools": "none"}}),
    );
    assert!(out.events()[1].get("violations").is_none());
    assert_eq!(inspector.summary().violations, 0);
}

#[test]
fn log_lines_have_the_documented_shape() {
    let (inspector, out) = logging();
    let call: &[u8] = b"{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\",\"arguments\":{\"text\":\"hi\"}}}\n";
    let progress: &[u8] = b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":1,\"progress\":1}}";
    let error: &[u8] =
        b"{\"jsonrpc\":\"2.0\",\"id\":7,\"error\":{\"code\":-32602,\"message\":\"no\"}}\r\n";
    inspector.seen_at(C2S, call, Duration::from_micros(1500));
    inspector.seen_at(S2C, progress, Duration::from_micros(2000));
    inspector.seen_at(S2C, error, Duration::from_micros(4250));
    let text = out.text();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines,
        [
            format!(
                r#"{{"t_ms":1.5,"dir":"c2s","kind":"request","method":"tools/call","id":7,"bytes":{}}}"#,
                call.len() - 1
            ),
            format!(
                r#"{{"t_ms":2.0,"dir":"s2c","kind":"notification","method":"notifications/progress","id":null,"bytes":{}}}"#,
                progress.len()
            ),
            format!(
                r#"{{"t_ms":4.25,"dir":"s2c","kind":"error","method":"tools/call","id":7,"bytes":{},"latency_ms":2.75}}"#,
                error.len() - 2
            ),
        ]
    );
    assert!(!text.contains("echo") && !text.contains("hi"), "no params");
}

#[test]
fn batches_are_split_and_other_lines_are_counted_as_invalid() {
    let (inspector, out) = logging();
    let batch = json!([request(json!(1), "ping"), request(json!(2), "ping")]);
    send(&inspector, C2S, 1, &batch);
    inspector.seen_at(S2C, b"server log line\n", Duration::from_millis(2));
    inspector.seen_at(S2C, b"\n", Duration::from_millis(2));
    let events = out.events();
    assert_eq!(events.len(), 3);
    assert_eq!(events[0]["id"], 1);
    assert_eq!(events[1]["id"], 2);
    assert_eq!(
        events[0]["bytes"],
        serde_json::to_vec(&batch[0]).unwrap().len()
    );
    assert_eq!(events[2]["kind"], "invalid");
    assert_eq!(events[2]["bytes"], 15);
    assert_eq!(inspector.summary().totals.invalid, 1);
}

#[test]
fn lines_for_people_show_direction_method_id_size_and_latency() {
    let out = Shared::default();
    let inspector = Inspector::new(Redactor::defaults(), Output::Lines(Box::new(out.clone())));
    handshake(&inspector);
    send(&inspector, C2S, 3, &request(json!(2), "tools/list"));
    send(
        &inspector,
        S2C,
        5,
        &json!({"jsonrpc": "2.0", "id": 2, "result": {"tools": [{"name": "t", "inputSchema": {"type": "array"}}]}}),
    );
    let text = out.text();
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines[0].contains("→ initialize id=0 "), "{text}");
    assert!(
        lines[1].contains("← response to initialize id=0 ") && lines[1].ends_with(" in 1.00 ms"),
        "{text}"
    );
    assert!(lines[2].contains("→ notifications/initialized "), "{text}");
    assert!(
        lines[4].contains("← response to tools/list id=2 ") && lines[4].ends_with(" in 2.00 ms"),
        "{text}"
    );
    assert!(
        lines[5]
            .trim_start()
            .starts_with("! MC206 at /result/tools/0/inputSchema"),
        "{text}"
    );
    assert!(lines[0].starts_with("[   0.000s]"), "{text}");
}

#[test]
fn secrets_in_ids_and_methods_are_masked() {
    let (inspector, out) = logging();
    let token = "ghp_0123456789abcdefghijklmnopqrstuvwxyz";
    send(
        &inspector,
        C2S,
        1,
        &request(json!(token), &format!("x/{token}")),
    );
    let text = out.text();
    assert!(!text.contains(token), "{text}");
    assert!(text.contains("[REDACTED"), "{text}");
}
