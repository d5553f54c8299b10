//! Redaction: secrets in a live session never reach the cassette, its
//! journal, a log line or an error message, and the redacted cassette still
//! replays. Schema breaks are warned about while recording, and forwarded
//! unchanged.

use std::process::Command;

use base64::Engine as _;
use mcpcassette::cassette;
use serde_json::{Value, json};

use crate::support::peer::Peer;
use crate::support::{
    BROKEN_SERVER, demo_server_path, initialize_demo, list_broken_tools, mcpcassette,
};

const ENV_SECRET: &str = "s3cr3t-Value-0042-xyz";
const GITHUB_TOKEN: &str = "ghp_0123456789abcdefghijABCDEFGHIJ012345";
const ACCOUNT: &str = "acct-991234";

fn record(path: &std::path::Path, extra: &[&str]) -> Command {
    let mut command = mcpcassette();
    command
        .arg("record")
        .arg("--cassette")
        .arg(path)
        .args(["--redact", "ACCOUNT=acct-[0-9]{6}"])
        .args(extra)
        .arg("--")
        .arg(demo_server_path())
        .env("DEMO_API_TOKEN", ENV_SECRET);
    command
}

/// A message that carries every kind of secret, in several encodings.
fn secret_message() -> String {
    let basic = base64::engine::general_purpose::STANDARD.encode(format!("me:{ENV_SECRET}"));
    let url_encoded = ENV_SECRET.replace('-', "%2D");
    format!(
        "env {ENV_SECRET}; url {url_encoded}; basic Basic {basic}; gh {GITHUB_TOKEN}; account {ACCOUNT}; Bearer 4f9a8b7c6d5e4f3a2b1c0d9e"
    )
}

fn assert_no_secret(what: &str, text: &str) {
    let basic = base64::engine::general_purpose::STANDARD.encode(format!("me:{ENV_SECRET}"));
    for secret in [
        ENV_SECRET,
        GITHUB_TOKEN,
        ACCOUNT,
        "4f9a8b7c6d5e4f3a2b1c0d9e",
        &basic[4..],
    ] {
        assert!(!text.contains(secret), "{what} holds `{secret}`:\n{text}");
    }
}

#[test]
fn a_session_with_secrets_records_masked_and_replays() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("c.json");
    let mut peer = Peer::spawn(record(&path, &[]));
    initialize_demo(&mut peer);
    let message = secret_message();
    let live = peer.request(
        "tools/call",
        json!({"name": "echo", "arguments": {"message": message}, "_meta": {"progressToken": "acct-555555"}}),
    );
    // Forwarded unchanged: the client saw the real values.
    assert_eq!(live.text(), format!("echo: {message}"));
    let (status, stderr) = peer.finish();
    assert!(status.success(), "{stderr}");
    assert_no_secret("the recorder's log", &stderr);

    let text = std::fs::read_to_string(&path).unwrap();
    assert_no_secret("the cassette", &text);
    for placeholder in [
        "[REDACTED:DEMO_API_TOKEN]",
        "[REDACTED:GITHUB_TOKEN]",
        "[REDACTED:ACCOUNT]",
        "[REDACTED:BEARER_TOKEN]",
    ] {
        assert!(text.contains(placeholder), "no {placeholder} in\n{text}");
    }
    // Protocol fields are never rewritten: the progress token matches the
    // account rule, and stays.
    let recorded = cassette::load(&path).unwrap();
    let call = recorded
        .interactions
        .iter()
        .find(|i| i.method() == "tools/call")
        .unwrap();
    let request = call.request().unwrap();
    assert_eq!(
        request["params"]["_meta"]["progressToken"],
        json!("acct-555555")
    );
    assert_eq!(request["id"], json!(2));
    assert_eq!(request["method"], json!("tools/call"));
    // The rule given on the command line is stored for replay.
    assert_eq!(recorded.rules.redact.len(), 1);

    // Replay masks the live request the same way before matching.
    let mut replayed = Peer::spawn({
        let mut command = mcpcassette();
        command
            .arg("replay")
            .arg(&path)
            .env("DEMO_API_TOKEN", ENV_SECRET);
        command
    });
    initialize_demo(&mut replayed);
    let answer = replayed.request(
        "tools/call",
        json!({"name": "echo", "arguments": {"message": message}, "_meta": {"progressToken": "acct-555555"}}),
    );
    assert!(
        answer
            .text()
            .starts_with("echo: env [REDACTED:DEMO_API_TOKEN]"),
        "{}",
        answer.text()
    );
    // An unmatched request carrying a secret: the report masks it.
    let miss = replayed.request(
        "tools/call",
        json!({"name": "echo", "arguments": {"message": format!("other {GITHUB_TOKEN}")}}),
    );
    assert!(miss.response.get("error").is_some());
    assert_no_secret("the miss error", &miss.response.to_string());
    let (status, stderr) = replayed.finish();
    assert_eq!(status.code(), Some(1), "{stderr}");
    assert_no_secret("replay's log", &stderr);
    assert!(stderr.contains("[REDACTED:GITHUB_TOKEN]"), "{stderr}");
}

#[test]
fn selector_rules_mask_whole_values_and_let_other_values_match() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("c.json");
    let mut peer = Peer::spawn(record(&path, &["--redact", "/params/arguments/message"]));
    initialize_demo(&mut peer);
    peer.request(
        "tools/call",
        json!({"name": "echo", "arguments": {"message": "private words"}}),
    );
    let (status, stderr) = peer.finish();
    assert!(status.success(), "{stderr}");
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(!text.contains("\"private words\""), "{text}");
    assert!(
        text.contains("\"message\": \"[REDACTED:MESSAGE]\""),
        "{text}"
    );

    // Any value at the selector matches the masked recording.
    let mut replayed = Peer::spawn({
        let mut command = mcpcassette();
        command.arg("replay").arg(&path);
        command
    });
    initialize_demo(&mut replayed);
    let answer = replayed.request(
        "tools/call",
        json!({"name": "echo", "arguments": {"message": "other words"}}),
    );
    assert_eq!(answer.text(), "echo: private words");
    let (status, stderr) = replayed.finish();
    assert!(status.success(), "{stderr}");
}

#[test]
fn the_journal_never_holds_a_secret() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("c.json");
    let mut peer = Peer::spawn(record(&path, &[]));
    initialize_demo(&mut peer);
    peer.request(
        "tools/call",
        json!({"name": "echo", "arguments": {"message": secret_message()}}),
    );
    let journal = cassette::journal_path(&path);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while !std::fs::read_to_string(&journal).is_ok_and(|j| j.contains("echo: env")) {
        assert!(
            std::time::Instant::now() < deadline,
            "the journal never held the answer"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let text = std::fs::read_to_string(&journal).unwrap();
    assert_no_secret("the journal", &text);
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(peer.pid() as i32),
        nix::sys::signal::Signal::SIGKILL,
    )
    .unwrap();
    let _ = peer.wait();
}

#[test]
fn error_messages_are_masked() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join(format!("{GITHUB_TOKEN}.json"));
    let output = mcpcassette().arg("replay").arg(&missing).output().unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("[REDACTED:GITHUB_TOKEN]"), "{stderr}");
    assert_no_secret("replay's error", &stderr);

    let output = mcpcassette().arg("check").arg(&missing).output().unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert_no_secret("check's error", &String::from_utf8_lossy(&output.stdout));
}

#[test]
fn record_warns_about_schema_breaks_and_forwards_them_unchanged() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("c.json");
    let mut command = mcpcassette();
    command
        .arg("record")
        .arg("--cassette")
        .arg(&path)
        .args(["--", "sh", "-c", BROKEN_SERVER]);
    let (peer, list) = list_broken_tools(command);
    assert_eq!(
        list.response,
        serde_json::from_str::<Value>(
            r#"{"jsonrpc":"2.0","id":2,"result":{"tools":[{"name":"t","inputSchema":{"type":"array"}}]}}"#
        )
        .unwrap()
    );
    let (_, stderr) = peer.finish();
    assert!(
        stderr.contains("the response to `tools/list` from the server breaks the 2025-11-25 schema at /result/tools/0/inputSchema"),
        "{stderr}"
    );
}

// Issue 12: secrets hidden by `\u` escapes, numeric and newly shaped ones,
// the recorded server command, and transport.url.

const GO_SECRET: &str = "a&b<c>-Go-Secret-77";
/// How Go's encoding/json writes [`GO_SECRET`].
const GO_ESCAPED: &str = r"a\u0026b\u003cc\u003e-Go-Secret-77";
const PIN: &str = "8675309123";
const PG_PASSWORD: &str = "pg-Pass-2024-x";
const STRIPE: &str = "sk_live_ErQHQwjyaxErPZDS3MoJaQNj";
const PEM: &str =
    "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n-----END PRIVATE KEY-----";

/// The parts of each secret that must never be seen again.
const LEFTOVERS: [&str; 11] = [
    "abc123DEF456ghi789JKL012mno345",
    "0123456789abcdefghijABCDEFGHIJ012345",
    "Go-Secret-77",
    PIN,
    PG_PASSWORD,
    "ErQHQwjyaxErPZDS3MoJaQNj",
    "MIIEvQIBADANBgkqhkiG9w0BAQEFAASC",
    "hunter2pw",
    "abcdefghijklmnopqrstuvwx",
    ENV_SECRET,
    "svc-Secret-F6-value",
];

fn assert_no_leftover(what: &str, text: &str) {
    for secret in LEFTOVERS {
        assert!(!text.contains(secret), "{what} holds `{secret}`:\n{text}");
    }
}

/// The environment the secrets come from.
fn with_secret_env(command: &mut Command) -> &mut Command {
    command
        .env("DEMO_API_TOKEN", ENV_SECRET)
        .env("MY_SERVICE_TOKEN", GO_SECRET)
        .env("PIN_SECRET", PIN)
        .env("PGPASSWORD", PG_PASSWORD)
}

/// A `tools/call` of `echo` written by hand: shapes with `\u` escapes in
/// them, an env value as Go writes it, a numeric secret as a number, and
/// shapes the redactor did not know before.
fn escaped_call(id: i64) -> String {
    let message = format!(
        r"openai \u0073k-proj-abc123DEF456ghi789JKL012mno345; gh gh\u0070_0123456789abcdefghijABCDEFGHIJ012345; go {GO_ESCAPED}; pg {PG_PASSWORD}; stripe {STRIPE}; pem {}; db postgres://u:hunter2pw@db/x; auth bearer abcdefghijklmnopqrstuvwx",
        PEM.replace('\n', r"\n")
    );
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"echo","arguments":{{"message":"{message}","pin":{PIN}}}}}}}"#
    ) + "\n"
}

#[test]
fn escaped_numeric_and_newly_shaped_secrets_never_reach_the_disk_or_a_log() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("c.json");
    let mut command = record(&path, &[]);
    with_secret_env(&mut command);
    let mut peer = Peer::spawn(command);
    initialize_demo(&mut peer);
    let id = peer.next_id();
    peer.send_raw(escaped_call(id).as_bytes());
    let live = peer.until_response(&json!(id));
    // Forwarded unchanged: the client saw the real values.
    assert!(live.text().contains(GO_SECRET), "{}", live.text());

    // The journal, while recording (items 6, 8, 9).
    let journal = cassette::journal_path(&path);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while !std::fs::read_to_string(&journal).is_ok_and(|j| j.contains("echo: openai")) {
        assert!(std::time::Instant::now() < deadline, "no answer journalled");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert_no_leftover("the journal", &std::fs::read_to_string(&journal).unwrap());
    let (status, stderr) = peer.finish();
    assert!(status.success(), "{stderr}");
    assert_no_leftover("the recorder's log", &stderr);

    let text = std::fs::read_to_string(&path).unwrap();
    assert_no_leftover("the cassette", &text);
    for placeholder in [
        "[REDACTED:OPENAI_KEY]",
        "[REDACTED:GITHUB_TOKEN]",
        "[REDACTED:MY_SERVICE_TOKEN]",
        "[REDACTED:PIN_SECRET]",
        "[REDACTED:PGPASSWORD]",
        "[REDACTED:STRIPE_KEY]",
        "[REDACTED:PRIVATE_KEY]",
        "[REDACTED:URL_PASSWORD]",
        "[REDACTED:BEARER_TOKEN]",
    ] {
        assert!(text.contains(placeholder), "no {placeholder} in\n{text}");
    }

    // `check` finds nothing left (MC401).
    let mut check = mcpcassette();
    with_secret_env(check.arg("check").arg(&path));
    let output = check.output().unwrap();
    let report = String::from_utf8_lossy(&output.stdout);
    assert!(!report.contains("MC401"), "{report}");

    // Replay masks the same escaped request the same way and answers it;
    // a miss carrying the secrets shows none of them, nor does --report.
    let report_path = dir.path().join("report.json");
    let mut replay = mcpcassette();
    with_secret_env(
        replay
            .arg("replay")
            .arg(&path)
            .arg("--report")
            .arg(&report_path),
    );
    let mut replayed = Peer::spawn(replay);
    initialize_demo(&mut replayed);
    let id = replayed.next_id();
    replayed.send_raw(escaped_call(id).as_bytes());
    let answer = replayed.until_response(&json!(id));
    assert!(
        answer
            .text()
            .starts_with("echo: openai [REDACTED:OPENAI_KEY]"),
        "{}",
        answer.text()
    );
    let id = replayed.next_id();
    replayed.send_raw(escaped_call(id).replace("openai", "other").as_bytes());
    let miss = replayed.until_response(&json!(id));
    assert!(miss.response.get("error").is_some(), "{}", miss.response);
    assert_no_leftover("the miss error", &miss.response.to_string());
    let (status, stderr) = replayed.finish();
    assert_eq!(status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("no recorded interaction matches"),
        "{stderr}"
    );
    assert_no_leftover("replay's log", &stderr);
    assert_no_leftover(
        "the report",
        &std::fs::read_to_string(&report_path).unwrap(),
    );
}

/// `sh -c 'exec "$0"' DEMO_SERVER ARGS…`: the example server, with
/// arguments that only the recorded command sees.
fn server_with_args(args: &[&str]) -> Vec<String> {
    let mut command = vec![
        "sh".to_owned(),
        "-c".to_owned(),
        r#"exec "$0""#.to_owned(),
        demo_server_path().display().to_string(),
    ];
    command.extend(args.iter().map(|a| a.to_string()));
    command
}

#[test]
fn the_recorded_command_keeps_no_secret_in_the_cassette_log_fixes_or_report() {
    // Issue 12, item 7.
    let args = [
        "--accessToken",
        "tok-A1-secret",
        "--apiToken=tok-B2-secret",
        "-p",
        "pw-C3-secret",
        "--header=X-Api-Key: key-D4-secret",
        "PGPASSWORD=pw-E5-secret",
        "svc-Secret-F6-value",
        "--port",
        "8080",
    ];
    let clear = [
        "tok-A1",
        "tok-B2",
        "pw-C3",
        "key-D4",
        "pw-E5",
        "svc-Secret-F6",
    ];
    let assert_clean = |what: &str, text: &str| {
        for secret in clear {
            assert!(!text.contains(secret), "{what} holds `{secret}`:\n{text}");
        }
    };
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("c.json");
    let mut command = mcpcassette();
    command
        .arg("record")
        .arg("--cassette")
        .arg(&path)
        .arg("--")
        .args(server_with_args(&args))
        .env("MY_SERVICE_TOKEN", "svc-Secret-F6-value");
    let mut peer = Peer::spawn(command);
    initialize_demo(&mut peer);
    peer.request(
        "tools/call",
        json!({"name": "echo", "arguments": {"message": "hi"}}),
    );
    let (status, stderr) = peer.finish();
    assert!(status.success(), "{stderr}");
    assert_clean("the recorder's log", &stderr);
    let text = std::fs::read_to_string(&path).unwrap();
    assert_clean("the cassette", &text);
    let recorded = cassette::load(&path).unwrap();
    let cassette::Transport::Stdio { command, .. } = &recorded.transport else {
        panic!("not stdio: {:?}", recorded.transport);
    };
    assert_eq!(
        command[4..],
        [
            "--accessToken",
            "[REDACTED]",
            "--apiToken=[REDACTED]",
            "-p",
            "[REDACTED]",
            "--header=X-Api-Key: [REDACTED]",
            "PGPASSWORD=[REDACTED]",
            "[REDACTED]",
            "--port",
            "8080",
        ]
    );

    // A miss: the fixes repeat the (masked) command, on stderr and in the
    // report. A cassette from an older version, with the command in clear,
    // is masked again when replay loads it.
    let run_miss = |path: &std::path::Path, report: &std::path::Path| {
        let mut replay = mcpcassette();
        replay
            .arg("replay")
            .arg(path)
            .arg("--report")
            .arg(report)
            .env("MY_SERVICE_TOKEN", "svc-Secret-F6-value");
        let mut replayed = Peer::spawn(replay);
        initialize_demo(&mut replayed);
        let miss = replayed.request(
            "tools/call",
            json!({"name": "echo", "arguments": {"message": "unrecorded"}}),
        );
        assert!(miss.response.get("error").is_some(), "{}", miss.response);
        let (status, stderr) = replayed.finish();
        assert_eq!(status.code(), Some(1), "{stderr}");
        (stderr, std::fs::read_to_string(report).unwrap())
    };
    let (stderr, report) = run_miss(&path, &dir.path().join("report.json"));
    assert!(
        stderr.contains("mcpcassette run --mode new-episodes"),
        "{stderr}"
    );
    assert!(stderr.contains("put them back"), "{stderr}");
    assert_clean("replay's fixes", &stderr);
    assert!(report.contains("--accessToken '[REDACTED]'"), "{report}");
    assert_clean("the report", &report);

    let mut old: Value = serde_json::from_str(&text).unwrap();
    old["transport"]["command"] = json!(server_with_args(&args));
    let old_path = dir.path().join("old.json");
    std::fs::write(&old_path, serde_json::to_string_pretty(&old).unwrap()).unwrap();
    let (stderr, report) = run_miss(&old_path, &dir.path().join("old-report.json"));
    assert!(stderr.contains("--accessToken '[REDACTED]'"), "{stderr}");
    assert_clean("replay's fixes for an older cassette", &stderr);
    assert_clean("the report for an older cassette", &report);
}

#[test]
fn credential_query_parameters_are_masked_in_transport_url() {
    // Issue 12, item 10.
    let unused = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = unused.local_addr().unwrap().port();
    drop(unused);
    let upstream = format!(
        "http://127.0.0.1:{port}/mcp?sv=2022-11-02&sig=sig-G7-secret%3D&code=code-H8-secret&page=2#access_token=tok-I9-secret"
    );
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("http.json");
    let served = crate::support::cli::Cli::record(&path)
        .upstream(&upstream)
        .listen()
        .capture_stderr()
        .start();
    let (_, stderr) = served.stop_with_stderr();
    for secret in ["sig-G7", "code-H8", "tok-I9"] {
        assert!(
            !stderr.contains(secret),
            "the log holds {secret}:\n{stderr}"
        );
    }
    let text = std::fs::read_to_string(&path)
        .or_else(|_| std::fs::read_to_string(cassette::journal_path(&path)))
        .unwrap_or_else(|e| panic!("no cassette nor journal: {e}\n{stderr}"));
    for secret in ["sig-G7", "code-H8", "tok-I9"] {
        assert!(
            !text.contains(secret),
            "the cassette holds {secret}:\n{text}"
        );
    }
    let expected = format!(
        "http://127.0.0.1:{port}/mcp?sv=2022-11-02&sig=[REDACTED]&code=[REDACTED]&page=2#access_token=[REDACTED]"
    );
    assert!(text.contains(&expected), "{text}");
}

/// A server whose instructions and tool list carry secrets: a token shape,
/// and `$MY_SERVICE_TOKEN` from its environment.
const LEAKY_SERVER: &str = r#"
read line
printf '%s\n' '{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"leaky","version":"1"},"instructions":"token ghp_0123456789abcdefghijABCDEFGHIJ012345"}}'
read line
read line
printf '%s\n' "{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"tools\":[{\"name\":\"t\",\"description\":\"calls with $MY_SERVICE_TOKEN\",\"inputSchema\":{\"type\":\"object\",\"properties\":{\"key\":{\"default\":\"sk_live_ErQHQwjyaxErPZDS3MoJaQNj\"}}}}]}}"
read line
"#;

#[test]
fn stub_fixtures_hold_no_secret() {
    let dir = tempfile::tempdir().unwrap();
    let fixture = dir.path().join("fixture.json");
    let output = mcpcassette()
        .arg("stub")
        .arg("-o")
        .arg(&fixture)
        .args(["--", "sh", "-c", LEAKY_SERVER])
        .env("MY_SERVICE_TOKEN", "svc-Secret-F6-value")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    let text = std::fs::read_to_string(&fixture).unwrap();
    assert_no_leftover("the fixture", &text);
    assert_no_leftover("stub's log", &stderr);
    for placeholder in [
        "[REDACTED:GITHUB_TOKEN]",
        "[REDACTED:MY_SERVICE_TOKEN]",
        "[REDACTED:STRIPE_KEY]",
    ] {
        assert!(text.contains(placeholder), "no {placeholder} in\n{text}");
    }
}
