//! Match rules, strategies and the unmatched-request report, end to end
//! through `mcpcassette replay`.

use std::path::{Path, PathBuf};

use mcpcassette::cassette::{self, Builder, Direction, Transport};
use mcpcassette::replay::{Context, Miss};
use mcpcassette::{Refusal, Rules};
use serde_json::{Value, json};

use crate::support::peer::Peer;
use crate::support::{mcpcassette, root};

/// A cassette of `tools/call` interactions answered with the given texts,
/// with `rules` stored in it.
fn cassette(dir: &Path, calls: &[(Value, &str)], rules: Value) -> PathBuf {
    let mut builder = Builder::new(
        "2026-01-01T00:00:00Z".into(),
        Transport::Stdio {
            command: vec!["server".into()],
            cwd: None,
        },
    );
    for (id, (params, text)) in calls.iter().enumerate() {
        builder.observe(
            Direction::ClientToServer,
            json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params}),
        );
        builder.observe(
            Direction::ServerToClient,
            json!({"jsonrpc": "2.0", "id": id, "result": {"content": [{"type": "text", "text": text}]}}),
        );
    }
    let mut recorded = builder.finish();
    recorded.rules = serde_json::from_value(rules).unwrap();
    let path = dir.join("rules.json");
    cassette::save(&path, &recorded).unwrap();
    path
}

fn replay_with(path: &Path, flags: &[&str]) -> Peer {
    let mut command = mcpcassette();
    command.arg("replay").arg(path).args(flags);
    Peer::spawn(command)
}

fn call(peer: &mut Peer, params: Value) -> Value {
    peer.request("tools/call", params).response
}

fn text(response: &Value) -> &str {
    response["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("no text in {response}"))
}

#[test]
fn ignored_fields_match_whatever_their_value_from_the_cassette_or_the_command_line() {
    let dir = tempfile::tempdir().unwrap();
    let stored = cassette(
        dir.path(),
        &[(
            json!({"name": "log", "arguments": {"at": "09:00", "nested": {"requestId": "r1", "x": 1}}}),
            "logged",
        )],
        json!({"ignore": ["/params/arguments/at", "/params/**/requestId"]}),
    );
    let mut peer = replay_with(&stored, &[]);
    let live =
        json!({"name": "log", "arguments": {"at": "17:45", "nested": {"requestId": "r9", "x": 1}}});
    assert_eq!(text(&call(&mut peer, live)), "logged");
    let (status, stderr) = peer.finish();
    assert!(status.success(), "{stderr}");

    let plain = cassette(
        dir.path(),
        &[(
            json!({"name": "echo", "arguments": {"message": "hi", "ts": 1}}),
            "echo: hi",
        )],
        json!({}),
    );
    let mut peer = replay_with(&plain, &["--ignore", "/params/arguments/ts"]);
    assert_eq!(
        text(&call(
            &mut peer,
            json!({"name": "echo", "arguments": {"message": "hi", "ts": 2}})
        )),
        "echo: hi"
    );
    let mismatch = call(
        &mut peer,
        json!({"name": "echo", "arguments": {"message": "other", "ts": 2}}),
    );
    assert_eq!(
        mismatch["error"]["code"], -32000,
        "only the ignored field is ignored"
    );
}

#[test]
fn per_method_keys_match_on_the_named_parts_only() {
    let dir = tempfile::tempdir().unwrap();
    let path = cassette(
        dir.path(),
        &[(
            json!({"name": "weather", "arguments": {"city": "Paris", "session": "a"}}),
            "sunny",
        )],
        json!({}),
    );
    let mut peer = replay_with(
        &path,
        &["--key", "tools/call=/params/name,/params/arguments/city"],
    );
    assert_eq!(
        text(&call(
            &mut peer,
            json!({"name": "weather", "arguments": {"city": "Paris", "session": "zz"}})
        )),
        "sunny"
    );
}

#[test]
fn hand_written_cases_answer_by_recursive_subset_first_match_wins() {
    let dir = tempfile::tempdir().unwrap();
    let rules = json!({"cases": [
        {"method": "tools/call", "when": {"name": "weather", "arguments": {"city": "Paris", "days": [1, 2]}}, "result": {"content": [{"type": "text", "text": "two sunny days"}]}},
        {"method": "tools/call", "when": {"name": "weather"}, "error": {"code": -32010, "message": "unknown city"}},
        {"method": "tools/call", "when": {"name": "never"}, "result": {"content": []}}
    ]});
    let path = cassette(
        dir.path(),
        &[(
            json!({"name": "echo", "arguments": {"message": "hi"}}),
            "echo: hi",
        )],
        rules,
    );
    let mut peer = replay_with(&path, &[]);
    // Recorded interactions come first.
    assert_eq!(
        text(&call(
            &mut peer,
            json!({"name": "echo", "arguments": {"message": "hi"}})
        )),
        "echo: hi"
    );
    let paris =
        json!({"name": "weather", "arguments": {"city": "Paris", "days": [1, 2], "units": "C"}});
    assert_eq!(
        text(&call(&mut peer, paris)),
        "two sunny days",
        "extra fields in objects are fine"
    );
    let other_days = json!({"name": "weather", "arguments": {"city": "Paris", "days": [1, 2, 3]}});
    assert_eq!(
        call(&mut peer, other_days)["error"]["code"],
        -32010,
        "arrays match by length and position"
    );
    let (status, stderr) = peer.finish();
    assert!(status.success(), "cases answered everything: {stderr}");
    assert!(
        stderr.contains("hand-written case #2 (tools/call) answered nothing"),
        "{stderr}"
    );
}

#[test]
fn keyed_answers_any_order_and_each_key_in_recorded_order() {
    let dir = tempfile::tempdir().unwrap();
    let a = json!({"name": "a"});
    let b = json!({"name": "b"});
    let path = cassette(
        dir.path(),
        &[(a.clone(), "a1"), (b.clone(), "b1"), (a.clone(), "a2")],
        json!({}),
    );
    let mut peer = replay_with(&path, &[]);
    assert_eq!(text(&call(&mut peer, b.clone())), "b1");
    assert_eq!(text(&call(&mut peer, a.clone())), "a1");
    assert_eq!(text(&call(&mut peer, a.clone())), "a2");
    assert_eq!(call(&mut peer, a)["error"]["code"], -32001);
}

#[test]
fn sequential_follows_recorded_order_checking_only_the_method() {
    let dir = tempfile::tempdir().unwrap();
    let path = cassette(
        dir.path(),
        &[
            (json!({"name": "a"}), "first"),
            (json!({"name": "b"}), "second"),
        ],
        json!({"strategy": "sequential"}),
    );
    let mut peer = replay_with(&path, &[]);
    assert_eq!(text(&call(&mut peer, json!({"name": "anything"}))), "first");
    let wrong = peer.request("prompts/get", json!({"name": "b"})).response;
    assert_eq!(wrong["error"]["code"], mcpcassette::replay::OUT_OF_ORDER);
    assert_eq!(text(&call(&mut peer, json!({"name": "else"}))), "second");
}

#[test]
fn strict_needs_order_and_content() {
    let dir = tempfile::tempdir().unwrap();
    let path = cassette(
        dir.path(),
        &[
            (json!({"name": "a"}), "first"),
            (json!({"name": "b"}), "second"),
        ],
        json!({}),
    );
    let mut peer = replay_with(&path, &["--strategy", "strict"]);
    let early = call(&mut peer, json!({"name": "b"}));
    assert_eq!(early["error"]["code"], mcpcassette::replay::OUT_OF_ORDER);
    assert!(
        early["error"]["message"]
            .as_str()
            .unwrap()
            .contains("not the request the recording expects next")
    );
    assert_eq!(text(&call(&mut peer, json!({"name": "a"}))), "first");
    assert_eq!(text(&call(&mut peer, json!({"name": "b"}))), "second");
    let (status, stderr) = peer.finish();
    assert_eq!(status.code(), Some(1));
    assert!(
        stderr.contains(
            "strategy `strict` answers in recorded order and interaction #0 is due first"
        ),
        "{stderr}"
    );
}

#[test]
fn repeat_last_answers_again_when_a_key_runs_out() {
    let dir = tempfile::tempdir().unwrap();
    let a = json!({"name": "a"});
    let path = cassette(
        dir.path(),
        &[(a.clone(), "a1"), (a.clone(), "a2")],
        json!({"on_exhausted": "repeat-last"}),
    );
    for strategy in ["keyed", "sequential", "strict"] {
        let mut peer = replay_with(&path, &["--strategy", strategy]);
        let texts: Vec<String> = (0..4)
            .map(|_| text(&call(&mut peer, a.clone())).to_owned())
            .collect();
        assert_eq!(texts, ["a1", "a2", "a2", "a2"], "{strategy}");
        let (status, _) = peer.finish();
        assert!(status.success(), "{strategy}");
    }
    let mut peer = replay_with(&path, &["--on-exhausted", "error"]);
    call(&mut peer, a.clone());
    call(&mut peer, a.clone());
    assert_eq!(call(&mut peer, a)["error"]["code"], -32001);
}

/// A task recorded as: created, polled twice (working), cancelled, polled
/// twice (working, then cancelled). Each `tasks/get` answers with the
/// task's status as a text-free result.
fn task_cassette(dir: &Path) -> PathBuf {
    let mut builder = Builder::new(
        "2026-01-01T00:00:00Z".into(),
        Transport::Stdio {
            command: vec!["server".into()],
            cwd: None,
        },
    );
    let get = json!({"taskId": "t1"});
    let exchanges = [
        (
            "tools/call",
            json!({"name": "slow"}),
            json!({"taskId": "t1", "status": "working"}),
        ),
        (
            "tasks/get",
            get.clone(),
            json!({"taskId": "t1", "status": "working", "n": 1}),
        ),
        (
            "tasks/get",
            get.clone(),
            json!({"taskId": "t1", "status": "working", "n": 2}),
        ),
        ("tasks/cancel", get.clone(), json!({})),
        (
            "tasks/get",
            get.clone(),
            json!({"taskId": "t1", "status": "working", "n": 3}),
        ),
        (
            "tasks/get",
            get.clone(),
            json!({"taskId": "t1", "status": "cancelled"}),
        ),
    ];
    for (id, (method, params, result)) in exchanges.into_iter().enumerate() {
        builder.observe(
            Direction::ClientToServer,
            json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}),
        );
        builder.observe(
            Direction::ServerToClient,
            json!({"jsonrpc": "2.0", "id": id, "result": result}),
        );
    }
    let path = dir.join("task.json");
    cassette::save(&path, &builder.finish()).unwrap();
    path
}

/// Polls of a task answer from the recorded sequence in order, then repeat
/// the final status, whatever the strategy; after a `tasks/cancel` a
/// slower client skips the states recorded before it; and the polls it
/// did not need are not unused.
#[test]
fn task_polls_follow_the_recorded_states_at_the_clients_pace() {
    let dir = tempfile::tempdir().unwrap();
    let path = task_cassette(dir.path());
    let get = json!({"taskId": "t1"});
    let state = |response: &Value| {
        let result = &response["result"];
        format!(
            "{}{}",
            result["status"].as_str().unwrap_or("?"),
            result["n"]
        )
    };
    for strategy in ["keyed", "sequential", "strict"] {
        // Faster: three polls before the cancel, four after.
        let mut peer = replay_with(&path, &["--strategy", strategy, "--fail-on-unused"]);
        peer.request("tools/call", json!({"name": "slow"}));
        let before: Vec<String> = (0..3)
            .map(|_| state(&peer.request("tasks/get", get.clone()).response))
            .collect();
        peer.request("tasks/cancel", get.clone());
        let after: Vec<String> = (0..4)
            .map(|_| state(&peer.request("tasks/get", get.clone()).response))
            .collect();
        assert_eq!(before, ["working1", "working2", "working3"], "{strategy}");
        assert_eq!(
            after,
            [
                "cancellednull",
                "cancellednull",
                "cancellednull",
                "cancellednull"
            ],
            "{strategy}"
        );
        let (status, stderr) = peer.finish();
        assert!(status.success(), "{strategy}: {stderr}");

        // Slower: one poll before the cancel, two after.
        let mut peer = replay_with(&path, &["--strategy", strategy, "--fail-on-unused"]);
        peer.request("tools/call", json!({"name": "slow"}));
        let first = state(&peer.request("tasks/get", get.clone()).response);
        peer.request("tasks/cancel", get.clone());
        let after: Vec<String> = (0..2)
            .map(|_| state(&peer.request("tasks/get", get.clone()).response))
            .collect();
        assert_eq!(first, "working1", "{strategy}");
        assert_eq!(
            after,
            ["working3", "cancellednull"],
            "{strategy}: not the stale working2"
        );
        let (status, stderr) = peer.finish();
        assert!(
            status.success(),
            "{strategy}: skipped polls are not unused: {stderr}"
        );
    }
}

#[test]
fn unused_interactions_are_listed_and_can_fail_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let path = cassette(
        dir.path(),
        &[(json!({"name": "a"}), "a"), (json!({"name": "b"}), "b")],
        json!({}),
    );
    let report = dir.path().join("report.json");
    let mut peer = replay_with(
        &path,
        &["--fail-on-unused", "--report", report.to_str().unwrap()],
    );
    call(&mut peer, json!({"name": "a"}));
    let (status, stderr) = peer.finish();
    assert_eq!(status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains(
            "1 recorded interaction(s) were never used:\n  #1 tools/call {\"name\":\"b\"}"
        ),
        "{stderr}"
    );
    let report: Value = serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    assert_eq!(report["unused"][0]["interaction"], 1);
    assert_eq!(report["misses"], json!([]));

    let mut peer = replay_with(&path, &[]);
    call(&mut peer, json!({"name": "a"}));
    let (status, _) = peer.finish();
    assert!(
        status.success(),
        "unused alone is not an error without --fail-on-unused"
    );
}

#[test]
fn the_json_report_describes_each_miss() {
    let dir = tempfile::tempdir().unwrap();
    let report = dir.path().join("report.json");
    let mut command = mcpcassette();
    command
        .current_dir(root())
        .args(["replay", "cassettes/demo-legacy.json", "--report"])
        .arg(&report);
    let mut peer = Peer::spawn(command);
    peer.request(
        "tools/call",
        json!({"name": "ecko", "arguments": {"message": "hello"}}),
    );
    let (status, _) = peer.finish();
    assert_eq!(status.code(), Some(1));
    let report: Value = serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    let miss = &report["misses"][0];
    assert_eq!(miss["method"], "tools/call");
    assert_eq!(miss["reason"], "no-match");
    assert_eq!(miss["closest"].as_array().unwrap().len(), 3);
    assert_eq!(miss["closest"][0]["differs_at"], "/params/name");
    assert!(
        miss["did_you_mean"]
            .as_str()
            .unwrap()
            .contains("tool \"echo\"")
    );
    assert_eq!(report["cassette"], "cassettes/demo-legacy.json");
    assert_eq!(report["mode"], "replay");
}

/// The human report, whole, for a typo'd tool name and for a request that
/// ran out of answers.
#[test]
fn unmatched_request_report_snapshot() {
    let path = Path::new("cassettes/demo-legacy.json");
    let recorded = cassette::load(&root().join(path)).unwrap();
    let rules = Rules::default();
    let context = Context {
        path,
        mode: "none",
        rules: &rules,
    };
    let typo = json!({"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": {"name": "ecko", "arguments": {"message": "hello"}, "_meta": {"progressToken": 3}}});
    let miss = Miss::new(&recorded, &typo, Refusal::Missing, context);
    insta::assert_snapshot!("typo", miss.to_string());
    let echo = json!({"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": {"name": "echo", "arguments": {"message": "hello"}}});
    let exhausted = Miss::new(
        &recorded,
        &echo,
        Refusal::Exhausted { answered: 1 },
        context,
    );
    insta::assert_snapshot!("exhausted", exhausted.to_string());
    insta::assert_json_snapshot!("typo_json", miss);
}

#[test]
fn reports_mask_secrets_in_params() {
    let dir = tempfile::tempdir().unwrap();
    let path = cassette(
        dir.path(),
        &[(
            json!({"name": "login", "arguments": {"token": "ghp_recordedRecordedRecorded00"}}),
            "ok",
        )],
        json!({}),
    );
    let report = dir.path().join("report.json");
    let mut peer = replay_with(&path, &["--report", report.to_str().unwrap()]);
    let miss = call(
        &mut peer,
        json!({"name": "login", "arguments": {"token": "ghp_liveLiveLiveLiveLive0000"}}),
    );
    assert_eq!(miss["error"]["code"], -32000);
    let (_, stderr) = peer.finish();
    let report = std::fs::read_to_string(&report).unwrap();
    for text in [&stderr, &report] {
        assert!(
            !text.contains("ghp_live") && !text.contains("ghp_recorded"),
            "{text}"
        );
        assert!(text.contains("[REDACTED]"), "{text}");
    }
}

/// The case the report suggests, pasted into the cassette's rules as it is
/// printed, passes `check` and answers the request it was made for, with a
/// result valid for the method: for `add`, whose recorded `tools/list`
/// declares an outputSchema, with `structuredContent` the schema accepts.
#[test]
fn the_suggested_case_passes_check_and_answers_the_request() {
    let dir = tempfile::tempdir().unwrap();
    for name in ["demo-legacy.json", "demo-modern.json"] {
        let path = Path::new("cassettes").join(name);
        let recorded = cassette::load(&root().join(&path)).unwrap();
        let modern = name.contains("modern");
        let meta = recorded.interactions[1]
            .request()
            .and_then(|r| r.pointer("/params/_meta"))
            .cloned();
        for (method, params) in [
            (
                "tools/call",
                json!({"name": "add", "arguments": {"a": 5, "b": 6}}),
            ),
            (
                "tools/call",
                json!({"name": "echo", "arguments": {"message": "new"}}),
            ),
            (
                "prompts/get",
                json!({"name": "greet", "arguments": {"name": "Grace"}}),
            ),
            ("resources/read", json!({"uri": "demo://notes/8"})),
            (
                "completion/complete",
                json!({"ref": {"type": "ref/prompt", "name": "greet"}, "argument": {"name": "name", "value": "g"}}),
            ),
            ("resources/list", json!({"cursor": "page-2"})),
        ] {
            let what = format!("{name}: {method} {params}");
            let mut params = params;
            if modern {
                params["_meta"] = meta.clone().unwrap();
            }
            let request = json!({"jsonrpc": "2.0", "id": 9, "method": method, "params": params});
            let rules = Rules::default();
            let context = Context {
                path: &path,
                mode: "none",
                rules: &rules,
            };
            let miss = Miss::new(&recorded, &request, Refusal::Missing, context);
            let fix = miss
                .fixes
                .iter()
                .find(|f| f.starts_with("Answer it by hand"))
                .unwrap_or_else(|| panic!("{what}: no hand-written case among {:?}", miss.fixes));
            // What the user pastes: the JSON after `"cases": `.
            let pasted = fix.split_once("\"cases\": ").unwrap().1;
            let cases: Value = serde_json::from_str(pasted).unwrap_or_else(|e| {
                panic!("{what}: the suggested case is not JSON ({e}): {pasted}")
            });
            let case = cases[0].clone();
            assert!(
                case["when"].get("_meta").is_none(),
                "{what}: _meta is left out of `when`"
            );
            if params["name"] == "add" {
                assert_eq!(
                    case["result"]["structuredContent"],
                    json!({"sum": 0}),
                    "{what}"
                );
            }
            if modern {
                assert_eq!(case["result"]["resultType"], "complete", "{what}");
            }
            let mut document: Value =
                serde_json::from_str(&std::fs::read_to_string(root().join(&path)).unwrap())
                    .unwrap();
            document["rules"] = json!({"cases": cases});
            let edited = dir.path().join(name);
            std::fs::write(&edited, serde_json::to_string_pretty(&document).unwrap()).unwrap();
            let report = mcpcassette::check::check_file(&edited, &Default::default()).unwrap();
            assert!(report.findings.is_empty(), "{what}: {:#?}", report.findings);

            let mut peer = replay_with(&edited, &[]);
            if !modern {
                crate::support::initialize_demo(&mut peer);
            }
            let answer = peer.request(method, params.clone()).response;
            assert_eq!(answer["result"], case["result"], "{what}: {answer}");
            let (status, stderr) = peer.finish();
            assert!(status.success(), "{what}: {stderr}");
        }
    }
}

/// Handshakes and `ping` are answered outside the order under every
/// strategy; a client that sends exactly what was recorded uses every
/// recorded interaction, `ping` included, so `--fail-on-unused` passes.
#[test]
fn in_order_strategies_count_handshakes_and_ping_as_used() {
    let dir = tempfile::tempdir().unwrap();
    for era in ["legacy", "modern"] {
        let path = root().join(format!("cassettes/demo-{era}.json"));
        let recorded = cassette::load(&path).unwrap();
        let lifecycle: Vec<&str> = recorded
            .interactions
            .iter()
            .map(|i| i.method())
            .filter(|m| {
                [
                    "initialize",
                    "notifications/initialized",
                    "server/discover",
                    "ping",
                ]
                .contains(m)
            })
            .collect();
        let expected: &[&str] = if era == "legacy" {
            &["initialize", "notifications/initialized", "ping"]
        } else {
            &["server/discover"]
        };
        for method in expected {
            assert!(lifecycle.contains(method), "{era}: {lifecycle:?}");
        }
        for strategy in ["sequential", "strict"] {
            let report = dir.path().join(format!("{era}-{strategy}.json"));
            let mut command = mcpcassette();
            command
                .arg("replay")
                .arg(&path)
                .args(["--strategy", strategy, "--fail-on-unused", "--report"])
                .arg(&report);
            // Fails unless replay exits 0.
            crate::support::demo_client_transcript(era, &command);
            let report: Value =
                serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
            assert_eq!(report["unused"], json!([]), "{era} {strategy}: {report:#}");
            assert_eq!(report["misses"], json!([]), "{era} {strategy}: {report:#}");
        }
    }
}

/// Closest requests are ranked and labelled by what differs: the tool name
/// before the arguments. A request for another tool is never offered an
/// `ignore` rule on the argument the test changed on purpose.
#[test]
fn closest_requests_rank_and_label_the_tool_name_before_arguments() {
    let dir = tempfile::tempdir().unwrap();
    let path = cassette(
        dir.path(),
        &[
            // Another tool with the very same arguments: the most similar
            // text, but not the closest request.
            (
                json!({"name": "lookup", "arguments": {"query": "rust async runtime comparison"}}),
                "looked up",
            ),
            (
                json!({"name": "search", "arguments": {"query": "python"}}),
                "searched",
            ),
        ],
        json!({}),
    );
    let recorded = cassette::load(&path).unwrap();
    let rules = Rules::default();
    let context = Context {
        path: &path,
        mode: "replay",
        rules: &rules,
    };
    let live = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "search", "arguments": {"query": "rust async runtime comparison"}}});
    let miss = Miss::new(&recorded, &live, Refusal::Missing, context);
    let ranked: Vec<usize> = miss.closest.iter().map(|c| c.interaction).collect();
    assert_eq!(ranked, [1, 0], "the same tool first: {miss}");
    assert_eq!(
        miss.closest[0].rejected_by,
        "params differ at /params/arguments/query"
    );
    assert_eq!(
        miss.closest[1].rejected_by,
        "tool name differs (recorded \"lookup\")"
    );
    assert_eq!(miss.closest[1].differs_at.as_deref(), Some("/params/name"));

    // Only another tool was recorded: the label names the tool, and no fix
    // suggests ignoring the argument.
    let live = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "lookups", "arguments": {"query": "rust"}}});
    let only_lookup = cassette(
        dir.path(),
        &[(
            json!({"name": "lookup", "arguments": {"query": "rust async"}}),
            "looked up",
        )],
        json!({}),
    );
    let recorded = cassette::load(&only_lookup).unwrap();
    let miss = Miss::new(&recorded, &live, Refusal::Missing, context);
    assert_eq!(
        miss.closest[0].rejected_by,
        "tool name differs (recorded \"lookup\")"
    );
    assert_eq!(miss.closest[0].differs_at.as_deref(), Some("/params/name"));
    assert!(
        miss.fixes.iter().all(|f| !f.contains("\"ignore\"")),
        "{:#?}",
        miss.fixes
    );
    let text = miss.to_string();
    assert!(
        text.contains("1. interaction #0 tools/call") && text.contains("tool name differs"),
        "{text}"
    );
    assert!(!text.contains("/params/arguments/query"), "{text}");
}

/// With `--cross-era off`, a legacy client against a 2026-07-28 cassette,
/// and a modern client against a legacy one: the error, the stderr report
/// and `--report` say the eras differ, name both, and what to do, instead
/// of offering the closest request of the other era.
#[test]
fn without_cross_era_replay_a_client_of_the_other_era_is_told_so_over_stdio() {
    let dir = tempfile::tempdir().unwrap();
    let report = dir.path().join("report.json");
    let mut command = mcpcassette();
    command
        .arg("replay")
        .arg(root().join("cassettes/demo-modern.json"))
        .args(["--cross-era", "off"])
        .arg("--report")
        .arg(&report);
    let mut peer = Peer::spawn(command);
    let init = peer.request(
        "initialize",
        json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}),
    );
    let error = &init.response["error"];
    assert_eq!(error["code"], -32000);
    let message = error["message"].as_str().unwrap();
    for part in [
        "recorded in the modern era (protocol 2026-07-28",
        "this client speaks the legacy era (protocol 2025-11-25, initialize handshake)",
        "Re-record the cassette with this client",
        "fastmcp's Client does by default",
        "the TypeScript SDK 1.32, the MCP Inspector and the Python mcp 1.x speak the legacy era",
    ] {
        assert!(message.contains(part), "{part:?} not in {message}");
    }
    assert!(!message.contains("similar"), "{message}");
    assert_eq!(error["data"]["era_mismatch"]["cassette_era"], "modern");
    assert_eq!(
        error["data"]["era_mismatch"]["client_version"],
        "2025-11-25"
    );
    let (status, stderr) = peer.finish();
    assert_eq!(status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("the client speaks another protocol era than the cassette")
            && stderr.contains("cassette: modern era (protocol 2026-07-28")
            && stderr.contains("client:   legacy era (protocol 2025-11-25"),
        "{stderr}"
    );
    assert!(!stderr.contains("% similar"), "{stderr}");
    let json: Value = serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    let miss = &json["misses"][0];
    assert_eq!(miss["era_mismatch"]["client_era"], "legacy");
    assert!(
        miss["fixes"][0]
            .as_str()
            .unwrap()
            .starts_with("Re-record the cassette with this client, which speaks the legacy era"),
        "{miss:#}"
    );
    let fixes = miss["fixes"].as_array().unwrap();
    assert!(
        fixes
            .iter()
            .any(|f| f.as_str().unwrap().contains("run --mode all"))
            && !fixes.iter().any(|f| {
                let f = f.as_str().unwrap();
                f.contains("new-episodes") || f.contains("\"cases\"")
            }),
        "only fixes that can bridge the eras: {miss:#}"
    );

    // The other way: a client pinned to 2026-07-28 against a legacy
    // cassette. Its discovery probe gets what a legacy server says; a
    // request nothing answers says why.
    let mut command = mcpcassette();
    command
        .arg("replay")
        .arg(root().join("cassettes/demo-legacy.json"))
        .args(["--cross-era", "off"]);
    let mut peer = Peer::spawn(command);
    let meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"},
    });
    let discover = peer.request("server/discover", json!({"_meta": meta}));
    assert_eq!(discover.response["error"]["code"], -32601);
    let call = peer.request(
        "tools/call",
        json!({"name": "echo", "arguments": {"message": "modern"}, "_meta": meta}),
    );
    let message = call.response["error"]["message"].as_str().unwrap();
    for part in [
        "recorded in the legacy era (protocol 2025-11-25, initialize handshake)",
        "this client speaks the modern era (protocol 2026-07-28",
        "mode=\"legacy\"",
        "--protocol-era legacy",
    ] {
        assert!(message.contains(part), "{part:?} not in {message}");
    }
    let (status, stderr) = peer.finish();
    assert_eq!(status.code(), Some(1));
    assert!(
        stderr.contains("cassette: legacy era (protocol 2025-11-25"),
        "{stderr}"
    );
}
