//! `mcpcassette run`: record modes, CI detection, and new episodes.

use std::path::Path;
use std::process::Command;

use mcpcassette::cassette;
use serde_json::json;

use crate::support::peer::Peer;
use crate::support::{demo_server_path, mcpcassette};

/// `mcpcassette run --cassette PATH [extra] -- demo_server`, with `env`.
fn run(cassette: &Path, extra: &[&str], env: &[(&str, &str)]) -> Command {
    let mut command = mcpcassette();
    command
        .env_remove("MCPCASSETTE_MODE")
        .env_remove("TF_BUILD");
    command
        .arg("run")
        .arg("--cassette")
        .arg(cassette)
        .args(extra)
        .arg("--")
        .arg(demo_server_path());
    command.envs(env.iter().copied());
    command
}

fn session(command: Command, message: &str) -> (Peer, String) {
    let mut peer = Peer::spawn(command);
    let init = peer.request(
        "initialize",
        json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}),
    );
    assert_eq!(init.result()["serverInfo"]["name"], "mcpcassette-demo");
    peer.notify("notifications/initialized", json!({}));
    let text = peer
        .request(
            "tools/call",
            json!({"name": "echo", "arguments": {"message": message}}),
        )
        .text()
        .to_owned();
    (peer, text)
}

#[test]
fn once_records_when_missing_then_replays_without_the_server() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("once.json");
    let (peer, text) = session(run(&path, &["--mode", "once"], &[]), "first");
    assert_eq!(text, "echo: first");
    let (status, stderr) = peer.finish();
    assert!(status.success(), "{stderr}");
    assert!(
        stderr.contains("mode once (from --mode): cassette missing: recording"),
        "{stderr}"
    );
    assert!(path.exists());

    // The second run replays: a server command that cannot start proves it.
    let mut command = mcpcassette();
    command
        .env_remove("MCPCASSETTE_MODE")
        .args(["run", "--mode", "once", "--cassette"])
        .arg(&path)
        .args(["--", "/nonexistent/server"]);
    let (peer, text) = session(command, "first");
    assert_eq!(text, "echo: first");
    let (status, stderr) = peer.finish();
    assert!(status.success(), "{stderr}");
    assert!(
        stderr.contains("mode once (from --mode): replaying"),
        "{stderr}"
    );
}

#[test]
fn auto_is_none_in_ci_and_once_elsewhere() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("auto.json");
    let output = run(&path, &[], &[("CI", "true")]).output().unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("mode none (auto: CI detected)"), "{stderr}");
    assert!(
        stderr.contains("auto.json: no such cassette, and mode `none` never records"),
        "{stderr}"
    );
    assert!(!path.exists());

    let (peer, _) = session(run(&path, &[], &[("CI", "false")]), "x");
    let (status, stderr) = peer.finish();
    assert!(status.success());
    assert!(
        stderr.contains("mode once (auto: not in CI): cassette missing: recording"),
        "{stderr}"
    );
    assert!(path.exists());
}

#[test]
fn mcpcassette_mode_switches_a_whole_suite_and_all_records_afresh() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("all.json");
    let (peer, _) = session(
        run(&path, &[], &[("MCPCASSETTE_MODE", "all"), ("CI", "1")]),
        "one",
    );
    peer.finish();
    let (peer, _) = session(
        run(&path, &[], &[("MCPCASSETTE_MODE", "all"), ("CI", "1")]),
        "two",
    );
    let (_, stderr) = peer.finish();
    assert!(
        stderr.contains("mode all (from MCPCASSETTE_MODE): recording afresh"),
        "{stderr}"
    );
    let recorded = std::fs::read_to_string(&path).unwrap();
    assert!(
        recorded.contains("echo: two") && !recorded.contains("echo: one"),
        "all replaces the cassette"
    );
}

#[test]
fn passthrough_forwards_and_records_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("pass.json");
    let (peer, text) = session(run(&path, &["--mode", "passthrough"], &[]), "live");
    assert_eq!(text, "echo: live");
    let (status, _) = peer.finish();
    assert!(status.success());
    assert!(!path.exists() && !cassette::journal_path(&path).exists());
}

#[test]
fn new_episodes_replays_what_it_has_and_appends_what_it_had_not() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("episodes.json");
    let (peer, _) = session(run(&path, &["--mode", "all"], &[]), "old");
    peer.finish();
    let before = cassette::load(&path).unwrap().interactions.len();

    let (mut peer, text) = session(run(&path, &["--mode", "new-episodes"], &[]), "old");
    assert_eq!(text, "echo: old", "replayed from the cassette");
    let new = peer.request(
        "tools/call",
        json!({"name": "echo", "arguments": {"message": "new"}}),
    );
    assert_eq!(new.text(), "echo: new", "forwarded to the server");
    let progress = peer.request(
        "tools/call",
        json!({"name": "count", "arguments": {"steps": 2}, "_meta": {"progressToken": "p"}}),
    );
    assert_eq!(progress.with_method("notifications/progress").len(), 2);
    let (status, stderr) = peer.finish();
    assert!(status.success(), "{stderr}");
    assert!(stderr.contains("appended 2 new interaction(s)"), "{stderr}");
    let after = cassette::load(&path).unwrap();
    assert_eq!(after.interactions.len(), before + 2);

    // Now everything replays without the server.
    let mut command = mcpcassette();
    command
        .env_remove("MCPCASSETTE_MODE")
        .args(["run", "--mode", "none", "--cassette"])
        .arg(&path);
    let (mut peer, _) = session(command, "old");
    assert_eq!(
        peer.request(
            "tools/call",
            json!({"name": "echo", "arguments": {"message": "new"}})
        )
        .text(),
        "echo: new"
    );
    let (status, stderr) = peer.finish();
    assert!(status.success(), "{stderr}");
}

#[test]
fn modes_that_start_the_server_need_its_command() {
    let dir = tempfile::tempdir().unwrap();
    let output = mcpcassette()
        .env_remove("MCPCASSETTE_MODE")
        .args(["run", "--mode", "all", "--cassette"])
        .arg(dir.path().join("x.json"))
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&output.stderr)
            .contains("mode all needs the server command after `--`")
    );
    let output = mcpcassette()
        .args(["run", "--mode", "sometimes", "--cassette", "x.json"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2), "clap rejects unknown modes");
}

#[test]
fn re_recording_keeps_the_hand_written_rules() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("rules.json");
    let (peer, _) = session(run(&path, &["--mode", "all"], &[]), "a");
    peer.finish();
    let mut edited = cassette::load(&path).unwrap();
    edited.rules =
        serde_json::from_value(json!({"ignore": ["/params/arguments/message"]})).unwrap();
    cassette::save(&path, &edited).unwrap();
    let (peer, _) = session(run(&path, &["--mode", "all"], &[]), "b");
    peer.finish();
    let rerecorded = cassette::load(&path).unwrap();
    assert_eq!(rerecorded.rules, edited.rules);
    assert!(std::fs::read_to_string(&path).unwrap().contains("echo: b"));
}

#[test]
fn new_episodes_whose_server_cannot_start_fails_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("c.json");
    let (peer, _) = session(run(&path, &["--mode", "all"], &[]), "old");
    assert!(peer.finish().0.success());
    let mut command = mcpcassette();
    command
        .env_remove("MCPCASSETTE_MODE")
        .args(["run", "--mode", "new-episodes", "--cassette"])
        .arg(&path)
        .args(["--", "/nonexistent/mcpcassette-server"]);
    let (mut peer, text) = session(command, "old");
    assert_eq!(text, "echo: old", "recorded answers still replay");
    let miss = peer.request(
        "tools/call",
        json!({"name": "echo", "arguments": {"message": "new"}}),
    );
    assert_eq!(
        miss.response["error"]["code"], -32003,
        "{:?}",
        miss.response
    );
    let (status, stderr) = peer.finish();
    assert_eq!(status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("1 request(s) could not be forwarded to the server for new episodes: cannot start server `/nonexistent/mcpcassette-server`"),
        "{stderr}"
    );
}

/// The example server that asks for roots right after `initialized`.
fn roots_server() -> std::path::PathBuf {
    demo_server_path().with_file_name("roots_server")
}

/// The handshake with a client that has roots, waiting (as a careful
/// client does) for what the server sends on its own after `initialized`:
/// `roots/list`, answered, then a log line.
fn roots_handshake(peer: &mut Peer) -> Vec<serde_json::Value> {
    let init = peer.request(
        "initialize",
        json!({"protocolVersion": "2025-11-25", "capabilities": {"roots": {"listChanged": true}}, "clientInfo": {"name": "t", "version": "1"}}),
    );
    assert_eq!(init.result()["serverInfo"]["name"], "roots-server");
    peer.notify("notifications/initialized", json!({}));
    let ask = peer.recv();
    assert_eq!(ask["method"], "roots/list", "{ask}");
    peer.send(&json!({"jsonrpc": "2.0", "id": ask["id"], "result": {"roots": [{"uri": "file:///work", "name": "work"}]}}));
    let log = peer.recv();
    assert_eq!(log["params"]["data"], "roots: 1", "{log}");
    vec![ask, log]
}

/// New episodes start the server mid-session and do its handshake
/// themselves: the `roots/list` it then sends belongs to the session, which
/// the cassette already has. It is answered as recorded, never reaches the
/// client a second time, and is never filed under the forwarded request;
/// so the appended interaction replays as the server answers it, and
/// `verify` finds no drift.
#[test]
fn new_episodes_keep_session_traffic_out_of_appended_interactions() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("roots.json");
    let mut command = mcpcassette();
    command
        .arg("record")
        .arg("--cassette")
        .arg(&path)
        .arg("--")
        .arg(roots_server());
    let mut peer = Peer::spawn(command);
    roots_handshake(&mut peer);
    let old = peer.request(
        "tools/call",
        json!({"name": "echo", "arguments": {"message": "old"}}),
    );
    assert_eq!(old.text(), "echo: old");
    let (status, stderr) = peer.finish();
    assert!(status.success(), "{stderr}");
    let recorded = cassette::load(&path).unwrap();
    let initialized = &recorded.interactions[1];
    assert_eq!(initialized.method(), "notifications/initialized");
    assert_eq!(initialized.after.len(), 2, "{:?}", initialized.after);

    for message in ["new", "newer"] {
        let mut command = mcpcassette();
        command
            .env_remove("MCPCASSETTE_MODE")
            .args(["run", "--mode", "new-episodes", "--cassette"])
            .arg(&path)
            .arg("--")
            .arg(roots_server());
        let mut peer = Peer::spawn(command);
        roots_handshake(&mut peer);
        let new = peer.request(
            "tools/call",
            json!({"name": "echo", "arguments": {"message": message}}),
        );
        assert_eq!(new.text(), format!("echo: {message}"));
        assert_eq!(
            new.before,
            Vec::<serde_json::Value>::new(),
            "nothing but the answer"
        );
        let (status, stderr) = peer.finish();
        assert!(status.success(), "{stderr}");
        assert!(stderr.contains("appended 1 new interaction(s)"), "{stderr}");
    }
    let updated = cassette::load(&path).unwrap();
    assert_eq!(updated.interactions.len(), recorded.interactions.len() + 2);
    assert_eq!(
        updated.interactions[1].after,
        recorded.interactions[1].after
    );
    for appended in &updated.interactions[recorded.interactions.len()..] {
        assert!(
            appended.during.is_empty() && appended.after.is_empty(),
            "{appended:?}"
        );
    }

    // Replay gives the new answer alone, and the live server agrees.
    let mut peer = Peer::spawn(crate::support::replay(&path));
    roots_handshake(&mut peer);
    let new = peer.request(
        "tools/call",
        json!({"name": "echo", "arguments": {"message": "newer"}}),
    );
    assert_eq!(new.text(), "echo: newer");
    assert!(new.before.is_empty(), "{:?}", new.before);
    let (status, stderr) = peer.finish();
    assert!(status.success(), "{stderr}");
    let verify = mcpcassette().arg("verify").arg(&path).output().unwrap();
    assert!(
        verify.status.success(),
        "verify: {}\n{}",
        String::from_utf8_lossy(&verify.stdout),
        String::from_utf8_lossy(&verify.stderr)
    );
}

/// The report test runners read: there as soon as `run` starts, then
/// final when a signal stops the replay (as SDK clients stop servers),
/// with the exit code and each miss as stderr shows it.
#[test]
fn the_report_says_a_run_started_and_how_a_replay_stopped_by_a_signal_ended() {
    let dir = tempfile::tempdir().unwrap();
    let report = dir.path().join("report.json");
    let cassette = Path::new(env!("CARGO_MANIFEST_DIR")).join("cassettes/demo-legacy.json");
    let mut command = mcpcassette();
    command
        .env_remove("MCPCASSETTE_MODE")
        .args(["run", "--mode", "none", "--report"])
        .arg(&report)
        .arg("--cassette")
        .arg(&cassette);
    let mut peer = Peer::spawn(command);
    peer.request(
        "initialize",
        json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}),
    );
    let miss = peer.request(
        "tools/call",
        json!({"name": "echo", "arguments": {"message": "never recorded"}}),
    );
    assert_eq!(
        miss.response["error"]["code"], -32000,
        "{:?}",
        miss.response
    );
    let started: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    assert_eq!(started["finished"], false, "{started}");
    assert_eq!(started["pid"], peer.pid(), "{started}");

    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(peer.pid() as i32),
        nix::sys::signal::Signal::SIGTERM,
    )
    .unwrap();
    let (status, stderr) = peer.wait();
    assert_eq!(status.code(), Some(1), "{stderr}");
    let done: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    assert_eq!(done["finished"], true, "{done}");
    assert_eq!(done["exit_code"], 1, "{done}");
    assert_eq!(done["mode"], "none", "{done}");
    let miss = &done["misses"][0];
    let shown = miss["text"].as_str().unwrap();
    assert!(
        shown.contains("no recorded interaction matches this request")
            && shown.contains("never recorded")
            && shown.contains("How to fix it"),
        "{shown}"
    );
}

/// A run that cannot replay still finishes its report, with the error.
#[test]
fn the_report_of_a_run_that_failed_names_the_error() {
    let dir = tempfile::tempdir().unwrap();
    let report = dir.path().join("report.json");
    let missing = dir.path().join("missing.json");
    let output = mcpcassette()
        .env_remove("MCPCASSETTE_MODE")
        .args(["run", "--mode", "none", "--report"])
        .arg(&report)
        .arg("--cassette")
        .arg(&missing)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let done: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    assert_eq!(done["finished"], true, "{done}");
    assert_eq!(done["exit_code"], 2, "{done}");
    assert!(
        done["error"].as_str().unwrap().contains("no such cassette"),
        "{done}"
    );
}

/// Node spawns children with a socket, not a pipe, for stdin: a replay
/// stopped by a signal while that socket is still open must end too.
#[test]
fn a_replay_whose_stdin_is_an_open_socket_ends_on_sigterm() {
    use std::os::fd::OwnedFd;
    use std::os::unix::net::UnixStream;
    let dir = tempfile::tempdir().unwrap();
    let report = dir.path().join("report.json");
    let cassette = Path::new(env!("CARGO_MANIFEST_DIR")).join("cassettes/demo-legacy.json");
    let (ours, theirs) = UnixStream::pair().unwrap();
    let child = mcpcassette()
        .args(["replay", "--report"])
        .arg(&report)
        .arg(&cassette)
        .stdin(std::process::Stdio::from(OwnedFd::from(
            theirs.try_clone().unwrap(),
        )))
        .stdout(std::process::Stdio::from(OwnedFd::from(theirs)))
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Wait until it serves: a ping is answered.
    use std::io::{BufRead, Write};
    (&ours)
        .write_all(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n")
        .unwrap();
    let mut line = String::new();
    std::io::BufReader::new(&ours).read_line(&mut line).unwrap();
    assert!(line.contains("\"id\":1"), "{line}");

    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(child.id() as i32),
        nix::sys::signal::Signal::SIGTERM,
    )
    .unwrap();
    let child = std::sync::Mutex::new(child);
    crate::support::process::eventually("replay to exit on SIGTERM", || {
        child.lock().unwrap().try_wait().unwrap().is_some()
    });
    assert_eq!(child.lock().unwrap().wait().unwrap().code(), Some(0));
    let done: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    assert_eq!(done["finished"], true, "{done}");
    drop(ours);
}
