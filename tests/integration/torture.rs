//! Hardening: inputs that once lost a recording, hung replay or were
//! rewritten, each as a regression test, and torture runs (recorders
//! killed at random points, a thousand requests in flight, ten thousand
//! misses). Loopback and the example server only.

use std::io::Write;
use std::process::{Command, Stdio};

use mcpcassette::cassette;
use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;
use serde_json::{Value, json};

use crate::support::peer::Peer;
use crate::support::{initialize_demo, mcpcassette, record_demo, replay, root};

fn demo_cassette() -> String {
    std::fs::read_to_string(root().join("cassettes/demo-legacy.json")).unwrap()
}

/// Runs `command` with `input` on stdin; returns status, stdout, stderr.
fn run_with_input(mut command: Command, input: &[u8]) -> (i32, Vec<u8>, String) {
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let input = input.to_vec();
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(&input);
    });
    let output = child.wait_with_output().unwrap();
    writer.join().unwrap();
    (
        output.status.code().unwrap_or(-1),
        output.stdout,
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

fn assert_check_passes(path: &std::path::Path) {
    let check = mcpcassette().arg("check").arg(path).output().unwrap();
    assert!(
        check.status.success(),
        "{}",
        String::from_utf8_lossy(&check.stdout)
    );
}

fn sigkill(peer: &Peer) {
    kill(Pid::from_raw(peer.pid() as i32), Signal::SIGKILL).unwrap();
}

fn echo(peer: &mut Peer, message: &str) -> String {
    let answer = peer.request(
        "tools/call",
        json!({"name": "echo", "arguments": {"message": message}}),
    );
    answer.text().to_owned()
}

/// A tiny deterministic generator, so a failing run can be repeated.
struct Lcg(u64);

impl Lcg {
    fn below(&mut self, n: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (self.0 >> 33) % n
    }
}

// 1. Lines that are not UTF-8 no longer make a journal unrecoverable.
#[test]
fn a_journal_with_lines_that_are_not_utf8_still_replays() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("c.json");
    let mut peer = Peer::spawn(record_demo(&path));
    initialize_demo(&mut peer);
    assert_eq!(echo(&mut peer, "before"), "echo: before");
    // Forwarded to the server, which answers with a parse error.
    peer.send_raw(b"\xff\xfe not text\n");
    assert_eq!(peer.recv()["error"]["code"], -32700);
    assert_eq!(echo(&mut peer, "after"), "echo: after");
    sigkill(&peer);
    let _ = peer.wait();

    let mut replayed = Peer::spawn(replay(&path));
    initialize_demo(&mut replayed);
    assert_eq!(echo(&mut replayed, "before"), "echo: before");
    assert_eq!(echo(&mut replayed, "after"), "echo: after");
    let (status, stderr) = replayed.finish();
    assert!(status.success(), "{stderr}");
    assert!(stderr.contains("not UTF-8"), "{stderr}");
    assert!(!cassette::journal_path(&path).exists());
}

// 2. A recovered re-recording keeps the cassette's rules.
#[test]
fn a_killed_re_recording_keeps_cases_and_masking() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("c.json");
    let mut original: Value = serde_json::from_str(&demo_cassette()).unwrap();
    original["rules"] = json!({
        "cases": [{"method": "tools/call", "when": {"name": "by-hand"},
                   "result": {"content": [{"type": "text", "text": "written by hand"}]}}]
    });
    std::fs::write(&path, serde_json::to_string_pretty(&original).unwrap()).unwrap();

    let mut command = mcpcassette();
    command
        .args(["record", "--redact-env", "TORTURE_VALUE", "--cassette"])
        .arg(&path)
        .arg("--")
        .arg(crate::support::demo_server_path())
        .env("TORTURE_VALUE", "plum-4417");
    let mut peer = Peer::spawn(command);
    initialize_demo(&mut peer);
    assert_eq!(echo(&mut peer, "plum-4417"), "echo: plum-4417");
    sigkill(&peer);
    let _ = peer.wait();

    let mut command = replay(&path);
    command.env("TORTURE_VALUE", "plum-4417");
    let mut replayed = Peer::spawn(command);
    initialize_demo(&mut replayed);
    let masked = replayed.request(
        "tools/call",
        json!({"name": "echo", "arguments": {"message": "plum-4417"}}),
    );
    assert!(
        masked.text().contains("[REDACTED:TORTURE_VALUE]"),
        "the live request is masked as the recorded one was: {:?}",
        masked.response
    );
    let by_hand = replayed.request("tools/call", json!({"name": "by-hand"}));
    assert_eq!(by_hand.text(), "written by hand");
    let (status, stderr) = replayed.finish();
    assert!(status.success(), "{stderr}");
    let recovered = cassette::load(&path).unwrap();
    assert_eq!(recovered.rules.redact_env, vec!["TORTURE_VALUE".to_owned()]);
    assert!(
        !std::fs::read_to_string(&path)
            .unwrap()
            .contains("plum-4417")
    );
}

// 3. A recorder killed before its first message leaves the old cassette.
#[test]
fn a_recorder_killed_before_its_first_message_keeps_the_cassette_it_replaced() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("c.json");
    std::fs::write(&path, demo_cassette()).unwrap();
    let before = std::fs::read(&path).unwrap();
    let peer = Peer::spawn(record_demo(&path));
    crate::support::process::eventually("the journal to be created", || {
        cassette::journal_path(&path).exists()
    });
    sigkill(&peer);
    let _ = peer.wait();

    let mut replayed = Peer::spawn(replay(&path));
    initialize_demo(&mut replayed);
    assert_eq!(echo(&mut replayed, "hello"), "echo: hello");
    let (status, stderr) = replayed.finish();
    assert!(status.success(), "{stderr}");
    assert!(stderr.contains("was left as it was"), "{stderr}");
    assert_eq!(std::fs::read(&path).unwrap(), before);
}

/// A `tools/call` whose arguments nest `depth` levels inside the message.
fn deep_call(id: u64, depth: usize) -> Value {
    // The message, params and arguments are three of the levels.
    let mut value = json!("bottom");
    for _ in 0..depth - 3 {
        value = json!([value]);
    }
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
           "params": {"name": "echo", "arguments": {"message": value}}})
}

// 4. One nesting limit: what records, replays and passes `check`; deeper
//    is refused by name everywhere.
#[test]
fn messages_nested_to_the_limit_record_replay_and_check() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("c.json");
    let limit = mcpcassette::MAX_DEPTH;
    let mut peer = Peer::spawn(record_demo(&path));
    initialize_demo(&mut peer);
    // The example server reads JSON with serde_json, which stops one
    // level short of our limit; replay reads the limit itself (below).
    let deep = deep_call(100, limit - 1);
    peer.send(&deep);
    let recorded_answer = peer.until_response(&json!(100)).response;
    let (status, stderr) = peer.finish();
    assert!(status.success(), "{stderr}");

    assert_check_passes(&path);
    let mut replayed = Peer::spawn(replay(&path));
    initialize_demo(&mut replayed);
    replayed.send(&deep);
    assert_eq!(
        replayed.until_response(&json!(100)).response,
        recorded_answer
    );
    // At the limit: read, and answered (a miss, since it was not recorded).
    replayed.send(&deep_call(102, limit));
    let at_limit = replayed.until_response(&json!(102)).response;
    assert_eq!(at_limit["error"]["code"], -32000, "{at_limit}");
    // One level deeper: refused, by depth, with the id it carried.
    let text = serde_json::to_string(&deep_call(101, limit + 1)).unwrap();
    replayed.send_raw(format!("{text}\n").as_bytes());
    let refused = replayed.until_response(&json!(101)).response;
    assert_eq!(refused["error"]["code"], -32600, "{refused}");
    let message = refused["error"]["message"].as_str().unwrap();
    assert!(
        message.contains(&format!("nested {} levels", limit + 1)),
        "{message}"
    );
    let (status, stderr) = replayed.finish();
    // The call at the limit was a miss.
    assert_eq!(status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("1 request(s) had no recorded answer"),
        "{stderr}"
    );
}

#[test]
fn a_cassette_nested_too_deep_is_refused_alike_by_check_and_replay() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("deep.json");
    let mut doc: Value = serde_json::from_str(&demo_cassette()).unwrap();
    let limit = mcpcassette::MAX_DEPTH;
    doc["interactions"][4]["request"] = deep_call(9, limit + 1);
    std::fs::write(&path, serde_json::to_string_pretty(&doc).unwrap()).unwrap();
    let check = mcpcassette().arg("check").arg(&path).output().unwrap();
    let report = String::from_utf8_lossy(&check.stdout);
    assert!(!check.status.success(), "{report}");
    assert!(
        report.contains(&format!("nested {} levels", limit + 1)),
        "{report}"
    );
    let (code, _, stderr) = run_with_input(replay(&path), b"");
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains(&format!("nested {} levels", limit + 1)),
        "{stderr}"
    );
    assert!(stderr.contains("/interactions/4/request"), "{stderr}");
}

// 5. Requests that share an id in flight are paired in order.
#[test]
fn requests_sharing_an_id_are_recorded_and_replayed_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("c.json");
    // The server takes 300 ms over each, so the second is sure to arrive
    // while the first is still in flight (two quick echoes may not overlap).
    let call = || {
        json!({"jsonrpc": "2.0", "id": 77, "method": "tools/call",
               "params": {"name": "sleep", "arguments": {"ms": 300}}})
    };
    let mut peer = Peer::spawn(record_demo(&path));
    initialize_demo(&mut peer);
    peer.send(&call());
    peer.send(&call());
    let mut texts = vec![peer.recv(), peer.recv()];
    let (status, stderr) = peer.finish();
    assert!(status.success(), "{stderr}");
    assert!(stderr.contains("still in flight"), "{stderr}");
    let recorded = cassette::load(&path).unwrap();
    let answered = recorded
        .interactions
        .iter()
        .filter(|i| i.label() == "tools/call sleep" && i.response.is_some())
        .count();
    assert_eq!(answered, 2, "both requests keep their answers");

    let mut replayed = Peer::spawn(replay(&path));
    initialize_demo(&mut replayed);
    replayed.send(&call());
    replayed.send(&call());
    let mut again = vec![replayed.recv(), replayed.recv()];
    let (status, stderr) = replayed.finish();
    assert!(status.success(), "{stderr}");
    let key = |v: &Value| {
        v["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .to_owned()
    };
    texts.sort_by_key(key);
    again.sort_by_key(key);
    assert_eq!(texts, again);
}

#[test]
fn replay_never_exits_zero_with_a_request_it_left_unanswered() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("c.json");
    let mut doc: Value = serde_json::from_str(&demo_cassette()).unwrap();
    let echo_call = doc["interactions"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .find(|i| i["request"]["params"]["name"] == "echo")
        .unwrap();
    echo_call.as_object_mut().unwrap().remove("response");
    std::fs::write(&path, serde_json::to_string_pretty(&doc).unwrap()).unwrap();
    let mut replayed = Peer::spawn(replay(&path));
    initialize_demo(&mut replayed);
    replayed.send(&json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call",
        "params": {"name": "echo", "arguments": {"message": "hello"}}}));
    let (status, stderr) = replayed.finish();
    assert_eq!(status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("never answered"), "{stderr}");
    assert!(stderr.contains("id 5"), "{stderr}");
}

// 11. A large unmatched request is answered with a bounded report.
#[test]
fn a_large_unmatched_request_gets_a_bounded_report() {
    let numbers: Vec<u64> = (0..100_000).collect();
    let mut input = Vec::new();
    for message in [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "echo", "arguments": {"message": numbers}}}),
    ] {
        input.extend(serde_json::to_vec(&message).unwrap());
        input.push(b'\n');
    }
    assert!(input.len() > 580_000);
    let (code, stdout, stderr) =
        run_with_input(replay(&root().join("cassettes/demo-legacy.json")), &input);
    assert_eq!(code, 1, "{stderr}");
    let answers: Vec<Value> = stdout
        .split(|b| *b == b'\n')
        .filter(|l| !l.is_empty())
        .map(|l| serde_json::from_slice(l).unwrap())
        .collect();
    let miss = &answers[1];
    assert_eq!(miss["id"], 2);
    assert_eq!(miss["error"]["code"], -32000);
    assert!(
        stdout.len() < 32 * 1024,
        "the answer repeats the request: {} bytes",
        stdout.len()
    );
    assert!(
        stderr.len() < 32 * 1024,
        "the report repeats the request: {} bytes",
        stderr.len()
    );
    assert!(stderr.contains("lines not shown"), "{stderr}");
    assert!(
        String::from_utf8_lossy(&stdout).contains("shortened"),
        "the answer says its params were shortened"
    );
}

// 12. Ids come back byte for byte.
#[test]
fn ids_come_back_exactly_as_written() {
    let ids = [
        "1000000000000000000000000000001",
        "18446744073709551616",
        "1e2",
        "-0",
        "2.50",
        "\"s\\u00e9\"",
    ];
    let mut input = Vec::new();
    for id in ids {
        input.extend(format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"ping"}}"#).bytes());
        input.push(b'\n');
        input.extend(format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"nope/missing"}}"#).bytes());
        input.push(b'\n');
    }
    let (_, stdout, stderr) =
        run_with_input(replay(&root().join("cassettes/demo-legacy.json")), &input);
    let stdout = String::from_utf8(stdout).unwrap();
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 2 * ids.len(), "{stdout}\n{stderr}");
    for (n, id) in ids.iter().enumerate() {
        for line in &lines[2 * n..2 * n + 2] {
            assert!(
                line.starts_with(&format!(r#"{{"jsonrpc":"2.0","id":{id},"#)),
                "{id}: {line}"
            );
        }
    }
}

/// Broken cassettes that `check` and replay must both refuse, each with
/// what the messages must say.
fn broken_cassettes() -> Vec<(&'static str, Vec<u8>, &'static str)> {
    let doc: Value = serde_json::from_str(&demo_cassette()).unwrap();
    let edit = |f: &dyn Fn(&mut Value)| {
        let mut doc = doc.clone();
        f(&mut doc);
        serde_json::to_vec_pretty(&doc).unwrap()
    };
    let mut not_utf8 = serde_json::to_vec_pretty(&doc).unwrap();
    let at = not_utf8
        .windows(5)
        .position(|w| w == b"hello")
        .expect("the echo call");
    not_utf8[at] = 0xFF;
    vec![
        ("a byte that is not UTF-8", not_utf8, "not UTF-8"),
        (
            "format_version 0",
            edit(&|d| d["format_version"] = json!(0)),
            "format_version",
        ),
        (
            "a request that is a string",
            edit(&|d| d["interactions"][4]["request"] = json!("tools/call")),
            "must be a JSON-RPC message",
        ),
        (
            "a request without a method",
            edit(&|d| {
                d["interactions"][4]["request"]
                    .as_object_mut()
                    .unwrap()
                    .remove("method");
            }),
            "has no `method`",
        ),
        (
            "a request and a notification",
            edit(&|d| {
                d["interactions"][4]["notification"] =
                    json!({"jsonrpc": "2.0", "method": "notifications/initialized"})
            }),
            "not both",
        ),
        (
            "a case without an answer",
            edit(&|d| d["rules"] = json!({"cases": [{"method": "tools/call"}]})),
            "invalid rules",
        ),
    ]
}

// 13. One loader decides for `check` and replay, naming file and line.
#[test]
fn check_and_replay_refuse_the_same_cassettes() {
    let dir = tempfile::tempdir().unwrap();
    for (what, bytes, says) in broken_cassettes() {
        let path = dir.path().join("broken.json");
        std::fs::write(&path, &bytes).unwrap();
        let check = mcpcassette()
            .args(["check", "--json"])
            .arg(&path)
            .output()
            .unwrap();
        let report = String::from_utf8_lossy(&check.stdout);
        assert!(!check.status.success(), "{what}: check passed it: {report}");
        assert!(report.contains(says), "{what}: {report}");
        assert!(report.contains("\"line\":"), "{what}: {report}");
        let (code, _, stderr) = run_with_input(replay(&path), b"");
        assert_eq!(code, 2, "{what}: {stderr}");
        assert!(stderr.contains(says), "{what}: {stderr}");
        let named = format!("{}:", path.display());
        assert!(stderr.contains(&named), "{what}: names no file: {stderr}");
        assert!(
            !stderr.contains("variant") && !stderr.contains("untagged"),
            "{what}: serde jargon: {stderr}"
        );
    }
}

// 14. Messages and small refusals.
#[test]
fn a_byte_order_mark_is_read_past() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bom.json");
    let mut bytes = b"\xEF\xBB\xBF".to_vec();
    bytes.extend(demo_cassette().bytes());
    std::fs::write(&path, bytes).unwrap();
    assert_check_passes(&path);
    let mut replayed = Peer::spawn(replay(&path));
    initialize_demo(&mut replayed);
    assert_eq!(echo(&mut replayed, "hello"), "echo: hello");
    let (status, stderr) = replayed.finish();
    assert!(status.success(), "{stderr}");
}

#[test]
fn a_lone_surrogate_is_read_and_answered_by_id() {
    let mut replayed = Peer::spawn(replay(&root().join("cassettes/demo-legacy.json")));
    initialize_demo(&mut replayed);
    replayed.send_raw(
        br#"{"jsonrpc":"2.0","id":31,"method":"tools/call","params":{"name":"echo","arguments":{"message":"\ud800"}}}"#,
    );
    replayed.send_raw(b"\n");
    let answer = replayed.until_response(&json!(31)).response;
    // Read (as U+FFFD), so it is a miss with the request's id, not a
    // parse error without one.
    assert_eq!(answer["error"]["code"], -32000, "{answer}");
    assert!(
        answer["error"]["message"]
            .as_str()
            .unwrap()
            .contains('\u{fffd}')
    );
}

#[test]
fn listen_accepts_localhost() {
    let served = crate::support::cli::Cli::replay(&root().join("cassettes/demo-legacy.json"))
        .args(["--listen", "localhost:0"])
        .start();
    assert!(
        served.url.starts_with("http://127.0.0.1:"),
        "{}",
        served.url
    );
    let status = served.stop();
    assert!(status.success() || status.code() == Some(130));
}

#[test]
fn invalid_rules_files_are_named() {
    let dir = tempfile::tempdir().unwrap();
    let rules = dir.path().join("rules.json");
    std::fs::write(&rules, r#"{"cases": [{"method": "tools/call"}]}"#).unwrap();
    let mut command = replay(&root().join("cassettes/demo-legacy.json"));
    command.arg("--rules").arg(&rules);
    let (code, _, stderr) = run_with_input(command, b"");
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains(&format!("{}: invalid rules", rules.display())),
        "{stderr}"
    );
}

// Torture: SIGKILL at 20 points of a 200-call recording; nothing the
// client saw answered is lost.
#[test]
fn a_recorder_killed_anywhere_loses_no_completed_interaction() {
    let mut random = Lcg(0x5eed_1234);
    let dir = tempfile::tempdir().unwrap();
    for round in 0..20 {
        let path = dir.path().join(format!("killed-{round}.json"));
        let calls = random.below(200) as usize;
        let mut peer = Peer::spawn(record_demo(&path));
        initialize_demo(&mut peer);
        for n in 0..calls {
            assert_eq!(echo(&mut peer, &format!("m{n}")), format!("echo: m{n}"));
        }
        // Some rounds die with a request in flight.
        if round % 2 == 1 {
            peer.send(
                &json!({"jsonrpc": "2.0", "id": 9999, "method": "tools/call",
                "params": {"name": "sleep", "arguments": {"ms": 2000}}}),
            );
        }
        sigkill(&peer);
        let _ = peer.wait();
        let recovery = cassette::recover(&path).unwrap().pop().expect("a journal");
        // initialize + initialized + the calls.
        assert_eq!(recovery.interactions, 2 + calls, "round {round}");
        let recorded = cassette::load(&path).unwrap();
        let echoed: Vec<String> = recorded
            .interactions
            .iter()
            .filter(|i| i.label() == "tools/call echo")
            .filter_map(|i| i.response.as_ref())
            .map(|r| {
                r["result"]["content"][0]["text"]
                    .as_str()
                    .unwrap()
                    .to_owned()
            })
            .collect();
        let expected: Vec<String> = (0..calls).map(|n| format!("echo: m{n}")).collect();
        assert_eq!(echoed, expected, "round {round}");
    }
}

// Torture: a long recording, 64 calls in flight, killed while the
// recorder has moved settled interactions out of memory (it files them
// every 100 ms); the journal still holds every answered one.
#[test]
fn a_long_pipelined_recording_killed_midway_loses_no_answer() {
    const CALLS: u64 = 3000;
    const IN_FLIGHT: u64 = 64;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("long.json");
    let mut peer = Peer::spawn(record_demo(&path));
    initialize_demo(&mut peer);
    let call = |n: u64| {
        json!({"jsonrpc": "2.0", "id": 10 + n, "method": "tools/call",
               "params": {"name": "echo", "arguments": {"message": format!("m{n}")}}})
    };
    let mut answered = std::collections::BTreeSet::new();
    let mut sent = 0;
    while sent < IN_FLIGHT {
        peer.send(&call(sent));
        sent += 1;
    }
    while answered.len() < (CALLS as usize) * 2 / 3 {
        let answer = peer.recv();
        answered.insert(answer["id"].as_u64().unwrap());
        if sent < CALLS {
            peer.send(&call(sent));
            sent += 1;
        }
        if answered.len() == CALLS as usize / 3 {
            // Long enough for the recorder to file (and spill) what it has.
            std::thread::sleep(std::time::Duration::from_millis(300));
        }
    }
    sigkill(&peer);
    let _ = peer.wait();
    let recovery = cassette::recover(&path).unwrap().pop().expect("a journal");
    assert!(
        recovery.interactions >= 2 + answered.len(),
        "{} recovered, {} answered",
        recovery.interactions,
        answered.len()
    );
    let recorded = cassette::load(&path).unwrap();
    let with_answers: std::collections::BTreeSet<u64> = recorded
        .interactions
        .iter()
        .filter(|i| i.response.is_some())
        .filter_map(|i| i.request()?["id"].as_u64())
        .collect();
    let lost: Vec<&u64> = answered.difference(&with_answers).collect();
    assert!(lost.is_empty(), "answered but not recovered: {lost:?}");
    assert_check_passes(&path);
}

// Torture: a thousand requests in flight, answered out of order.
#[test]
fn a_thousand_requests_in_flight_answered_out_of_order_replay_exactly() {
    const N: u64 = 1000;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("flight.json");
    let call = |i: u64| {
        json!({"jsonrpc": "2.0", "id": 1000 + i, "method": "tools/call",
               "params": {"name": "sleep", "arguments": {"ms": (N - i) % 250}}})
    };
    let collect = |peer: &mut Peer| {
        let mut answers = std::collections::BTreeMap::new();
        let mut order = Vec::new();
        for _ in 0..N {
            let answer = peer.recv();
            let id = answer["id"].as_u64().unwrap();
            order.push(id);
            answers.insert(id, answer["result"].clone());
        }
        (answers, order)
    };
    let mut peer = Peer::spawn(record_demo(&path));
    initialize_demo(&mut peer);
    for i in 0..N {
        peer.send(&call(i));
    }
    let (recorded, order) = collect(&mut peer);
    let (status, stderr) = peer.finish();
    assert!(status.success(), "{stderr}");
    assert!(
        order.windows(2).any(|w| w[0] > w[1]),
        "the server answered out of order"
    );

    let mut replayed = Peer::spawn(replay(&path));
    initialize_demo(&mut replayed);
    for i in 0..N {
        replayed.send(&call(i));
    }
    let (replayed_answers, _) = collect(&mut replayed);
    let (status, stderr) = replayed.finish();
    assert!(status.success(), "{stderr}");
    assert_eq!(replayed_answers, recorded);
    for (id, result) in &recorded {
        let ms = (N - (id - 1000)) % 250;
        assert_eq!(result["content"][0]["text"], format!("slept {ms} ms"));
    }
}

fn resident_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap()
}

// Torture: ten thousand misses cost bounded memory.
#[test]
fn ten_thousand_misses_cost_bounded_memory() {
    let mut replayed = Peer::spawn(replay(&root().join("cassettes/demo-legacy.json")));
    initialize_demo(&mut replayed);
    let miss = |peer: &mut Peer, n: u64| {
        peer.send(
            &json!({"jsonrpc": "2.0", "id": 100_000 + n, "method": "tools/call",
            "params": {"name": "echo", "arguments": {"message": format!("{n:0>64}")}}}),
        );
        assert_eq!(peer.recv()["error"]["code"], -32000);
    };
    for n in 0..1_000 {
        miss(&mut replayed, n);
    }
    let after_first = resident_kib(replayed.pid());
    for n in 1_000..10_000 {
        miss(&mut replayed, n);
    }
    let after_all = resident_kib(replayed.pid());
    let (status, stderr) = replayed.finish();
    assert_eq!(status.code(), Some(1));
    assert!(
        stderr.contains("10000 request(s) had no recorded answer"),
        "{}",
        &stderr[stderr.len().saturating_sub(500)..]
    );
    assert!(
        after_all < after_first + 8 * 1024,
        "9 000 more misses grew replay from {after_first} KiB to {after_all} KiB"
    );
}
