//! `mcpcassette check`: every finding code, found where it should be, from
//! mutations of the shipped cassettes; clean cassettes stay clean; the
//! command's output and exit codes.

use std::collections::BTreeSet;
use std::path::Path;

use mcpcassette::check::{self, CheckConfig, Code, FileReport};
use mcpcassette::schema::OfficialSchema;
use mcpcassette::schema::ViolationKind;
use serde_json::{Value, json};

use crate::support::{self, mcpcassette};

fn shipped(name: &str) -> String {
    std::fs::read_to_string(support::root().join("cassettes").join(name)).unwrap()
}

fn check_str(text: &str, config: &CheckConfig) -> FileReport {
    check::check_text(Path::new("mutated.json"), text, config)
}

/// The first interaction whose client message has `method`.
fn interaction<'a>(doc: &'a mut Value, method: &str) -> &'a mut Value {
    doc["interactions"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .find(|i| {
            i.get("request")
                .or(i.get("notification"))
                .and_then(|m| m.get("method"))
                == Some(&json!(method))
        })
        .unwrap_or_else(|| panic!("no `{method}` interaction"))
}

/// The first `tools/call` of tool `name`.
fn call<'a>(doc: &'a mut Value, name: &str) -> &'a mut Value {
    doc["interactions"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .find(|i| i.pointer("/request/params/name") == Some(&json!(name)))
        .unwrap_or_else(|| panic!("no call of `{name}`"))
}

type Mutation = fn(&mut Value);

/// One mutation of a shipped cassette per message- and structure-level
/// code: (code, cassette, what is done).
fn mutations() -> Vec<(Code, &'static str, Mutation)> {
    vec![
        (Code::Structure, "demo-legacy.json", |d| {
            d["recorded_at"] = json!(5)
        }),
        (
            Code::Schema(ViolationKind::JsonRpcVersion),
            "demo-legacy.json",
            |d| interaction(d, "ping")["request"]["jsonrpc"] = json!("1.0"),
        ),
        (
            Code::Schema(ViolationKind::MethodType),
            "demo-legacy.json",
            |d| interaction(d, "ping")["request"]["method"] = json!(7),
        ),
        (
            Code::Schema(ViolationKind::IdType),
            "demo-legacy.json",
            |d| {
                let ping = interaction(d, "ping");
                ping["request"]["id"] = json!({"n": 3});
                ping["response"]["id"] = json!({"n": 3});
            },
        ),
        (
            Code::Schema(ViolationKind::ParamsType),
            "demo-legacy.json",
            |d| interaction(d, "ping")["request"]["params"] = json!("none"),
        ),
        (
            Code::Schema(ViolationKind::ResultXorError),
            "demo-legacy.json",
            |d| interaction(d, "ping")["response"]["error"] = json!({"code": -1, "message": "x"}),
        ),
        (
            Code::Schema(ViolationKind::ErrorShape),
            "demo-legacy.json",
            |d| {
                let response = &mut interaction(d, "ping")["response"];
                response.as_object_mut().unwrap().remove("result");
                response["error"] = json!({"code": "bad", "message": 1});
            },
        ),
        (
            Code::Schema(ViolationKind::UnknownMethod),
            "demo-legacy.json",
            |d| interaction(d, "ping")["request"]["method"] = json!("tools/frobnicate"),
        ),
        (
            Code::Schema(ViolationKind::RequestParams),
            "demo-legacy.json",
            |d| {
                let params = call(d, "echo")["request"]["params"]
                    .as_object_mut()
                    .unwrap();
                params.remove("name");
            },
        ),
        (
            Code::Schema(ViolationKind::ResultShape),
            "demo-legacy.json",
            |d| interaction(d, "tools/list")["response"]["result"]["tools"] = json!("none"),
        ),
        (
            Code::Schema(ViolationKind::Notification),
            "demo-legacy.json",
            |d| {
                let events = d["interactions"]
                    .as_array_mut()
                    .unwrap()
                    .iter_mut()
                    .flat_map(|i| {
                        i.get_mut("during")
                            .and_then(Value::as_array_mut)
                            .into_iter()
                            .flatten()
                    });
                for event in events {
                    if event.pointer("/notification/method")
                        == Some(&json!("notifications/progress"))
                    {
                        event["notification"]["params"]["progress"] = json!("half");
                        return;
                    }
                }
                panic!("no progress notification");
            },
        ),
        (
            Code::Schema(ViolationKind::ToolDefinition),
            "demo-legacy.json",
            |d| {
                interaction(d, "tools/list")["response"]["result"]["tools"][0]["name"] = json!("  ")
            },
        ),
        (
            Code::Schema(ViolationKind::InputSchema),
            "demo-legacy.json",
            |d| {
                interaction(d, "tools/list")["response"]["result"]["tools"][0]["inputSchema"] =
                    json!({"type": "object", "properties": {"a": {"type": "strnig"}}})
            },
        ),
        (
            Code::Schema(ViolationKind::Content),
            "demo-legacy.json",
            |d| call(d, "echo")["response"]["result"]["content"][0]["type"] = json!("txt"),
        ),
        (
            Code::Schema(ViolationKind::ResultType),
            "demo-modern.json",
            |d| {
                let result = &mut interaction(d, "tools/list")["response"]["result"];
                result.as_object_mut().unwrap().remove("resultType");
            },
        ),
        (
            Code::Schema(ViolationKind::ToolArguments),
            "demo-legacy.json",
            |d| call(d, "add")["request"]["params"]["arguments"]["a"] = json!("two"),
        ),
        (
            Code::Schema(ViolationKind::StructuredContent),
            "demo-legacy.json",
            |d| {
                let result = call(d, "add")["response"]["result"]
                    .as_object_mut()
                    .unwrap();
                result.remove("structuredContent");
            },
        ),
        (Code::Unpaired, "demo-legacy.json", |d| {
            interaction(d, "ping")["response"]["id"] = json!(999)
        }),
        (Code::Duplicate, "demo-legacy.json", |d| {
            let copy = call(d, "echo").clone();
            d["interactions"].as_array_mut().unwrap().push(copy);
        }),
        (Code::Contradictory, "demo-legacy.json", |d| {
            d["protocol"]["version"] = json!("2025-03-26")
        }),
        (Code::UnreachableCase, "demo-legacy.json", |d| {
            d["rules"] = json!({"cases": [
                {"method": "tools/call", "when": {"name": "echo"}, "result": {"content": []}},
                {"method": "tools/call", "when": {"name": "echo", "arguments": {"message": "x"}},
                 "result": {"content": []}}
            ]})
        }),
        (Code::UnusedCase, "demo-legacy.json", |d| {
            d["rules"] = json!({"cases": [
                {"method": "tools/call", "when": {"name": "no_such_tool"}, "result": {"content": []}}
            ]})
        }),
        (Code::NoSuccess, "demo-legacy.json", |d| {
            // What `record --upstream` writes when the upstream is down:
            // requests the proxy answered with 502, no responses.
            for interaction in d["interactions"].as_array_mut().unwrap() {
                interaction.as_object_mut().unwrap().remove("response");
                interaction.as_object_mut().unwrap().remove("during");
                interaction.as_object_mut().unwrap().remove("after");
                interaction["http"] = json!({"status": 502, "content_type": "text/plain"});
            }
        }),
        (Code::OneEra, "demo-modern.json", |d| {
            // The retry that completes `summarize` is gone: a legacy
            // client's sampling answer would have nowhere to go.
            d["interactions"].as_array_mut().unwrap().retain(|i| {
                i["request"]["params"].get("inputResponses").is_none()
                    || i["request"]["params"]["name"] != "summarize"
            });
        }),
        (Code::ProcessOrder, "demo-legacy.json", |d| {
            // The handshake hand-moved into a second server process, the
            // rest left in the first.
            d["interactions"][0]["process"] = json!(1);
        }),
        (Code::LikelySecret, "demo-legacy.json", |d| {
            call(d, "echo")["response"]["result"]["content"][0]["text"] =
                json!("token: ghp_0123456789abcdefghijABCDEFGHIJ012345")
        }),
    ]
}

/// Text-level damage: (code, cassette, what is done to its text).
type TextMutation = fn(&str) -> String;

fn text_mutations() -> Vec<(Code, TextMutation)> {
    vec![
        (Code::Truncated, |t| t[..t.len() / 2].to_owned()),
        (Code::ConflictMarkers, |t| {
            t.replacen(
                "  \"interactions\": [\n",
                "<<<<<<< HEAD\n  \"interactions\": [\n=======\n  \"interactions\": [\n>>>>>>> other\n",
                1,
            )
        }),
        (Code::InvalidJson, |t| {
            t.replacen("\"jsonrpc\": ", "\"jsonrpc\" ", 1)
        }),
        (Code::FormatVersion, |t| {
            t.replacen("\"format_version\": 1", "\"format_version\": 99", 1)
        }),
    ]
}

fn codes(report: &FileReport) -> BTreeSet<Code> {
    report.findings.iter().map(|f| f.code).collect()
}

/// A hand-written case for a tool whose recorded `tools/list` declares an
/// outputSchema answers as the tool must: with `structuredContent` the
/// schema accepts. Recorded results are held to the same.
#[test]
fn tool_results_and_cases_must_satisfy_the_output_schema() {
    let text = [json!({"type": "text", "text": "42"})];
    let findings = |cases: Value, structured: Option<Value>| {
        let mut doc: Value = serde_json::from_str(&shipped("demo-legacy.json")).unwrap();
        doc["rules"] = json!({ "cases": cases });
        if let Some(structured) = structured {
            call(&mut doc, "add")["response"]["result"]["structuredContent"] = structured;
        }
        let report = check_str(
            &serde_json::to_string_pretty(&doc).unwrap(),
            &CheckConfig::default(),
        );
        report
            .findings
            .into_iter()
            .filter(|f| f.code == Code::Schema(ViolationKind::StructuredContent))
            .map(|f| (f.pointer, f.line.is_some()))
            .collect::<Vec<_>>()
    };
    let good = json!({"content": text, "structuredContent": {"sum": 3}});
    assert!(
        findings(
            json!([{"method": "tools/call", "when": {"name": "add"}, "result": good}]),
            None
        )
        .is_empty()
    );
    // Missing: the SDK clients reject the call.
    assert_eq!(
        findings(
            json!([{"method": "tools/call", "when": {"name": "add", "arguments": {"a": 1}}, "result": {"content": text}}]),
            None
        ),
        [("/rules/cases/0/result/structuredContent".to_owned(), true)]
    );
    // Of the wrong type, in a case and in the recording.
    assert_eq!(
        findings(
            json!([{"method": "tools/call", "when": {"name": "add"}, "result": {"content": text, "structuredContent": {"sum": "3"}}}]),
            Some(json!({"total": 42}))
        ),
        [
            (
                "/interactions/5/response/result/structuredContent".to_owned(),
                true
            ),
            (
                "/rules/cases/0/result/structuredContent/sum".to_owned(),
                true
            ),
        ]
    );
    // Tools without an outputSchema, errors, and cases for no tool in
    // particular are not held to one.
    assert!(
        findings(
            json!([
                {"method": "tools/call", "when": {"name": "echo"}, "result": {"content": text}},
                {"method": "tools/call", "when": {"name": "add", "arguments": {"b": 0}},
                 "result": {"content": text, "isError": true}},
                {"method": "tools/call", "result": {"content": text}}
            ]),
            None
        )
        .is_empty()
    );
}

#[test]
fn shipped_cassettes_are_clean() {
    for name in ["demo-legacy.json", "demo-modern.json"] {
        let report = check_str(&shipped(name), &CheckConfig::default());
        assert!(report.findings.is_empty(), "{name}: {:#?}", report.findings);
    }
}

#[test]
fn every_code_is_found_by_its_mutation_at_the_right_place() {
    let mut found = BTreeSet::new();
    for (code, name, mutate) in mutations() {
        let mut doc: Value = serde_json::from_str(&shipped(name)).unwrap();
        mutate(&mut doc);
        let text = serde_json::to_string_pretty(&doc).unwrap();
        let report = check_str(&text, &CheckConfig::default());
        let finding = report
            .findings
            .iter()
            .find(|f| f.code == code)
            .unwrap_or_else(|| panic!("{code:?} not found; found {:#?}", report.findings));
        let line = finding.line.expect("a line");
        assert!(
            line >= 1 && line <= text.lines().count(),
            "{code:?}: line {line}"
        );
        if !finding.pointer.is_empty() {
            // The pointer names something that exists, or its parent does.
            let mut pointer = finding.pointer.as_str();
            while doc.pointer(pointer).is_none() {
                pointer = &pointer[..pointer.rfind('/').unwrap()];
            }
        }
        found.extend(codes(&report));
    }
    for (code, mutate) in text_mutations() {
        let report = check_str(
            &mutate(&shipped("demo-legacy.json")),
            &CheckConfig::default(),
        );
        assert_eq!(
            codes(&report),
            BTreeSet::from([code]),
            "{:#?}",
            report.findings
        );
        assert!(report.findings[0].line.is_some());
        found.insert(code);
    }
    // The official-schema code needs the schema files from outside the
    // repository: `official_schema_finds_what_the_schema_rejects` covers it.
    found.insert(Code::Schema(ViolationKind::OfficialSchema));
    let missing: Vec<_> = Code::ALL.iter().filter(|c| !found.contains(c)).collect();
    assert!(missing.is_empty(), "codes never triggered: {missing:?}");
}

fn official(version: &str) -> CheckConfig {
    let path = support::pinned::schema_dir()
        .join(version)
        .join("schema.json");
    let schema = OfficialSchema::load(&path)
        .unwrap_or_else(|e| panic!("the official schemas are needed for this test: {e}"));
    CheckConfig {
        official: Some(std::sync::Arc::new(schema)),
        ..CheckConfig::default()
    }
}

/// `--schema` finds what the official schema rejects.
#[test]
#[ignore = "needs the official MCP schemas (../shared/mcp-schema or MCPCASSETTE_SCHEMA_DIR); .ci/run runs ignored official_schema tests"]
fn official_schema_finds_what_the_schema_rejects() {
    let mut doc: Value = serde_json::from_str(&shipped("demo-legacy.json")).unwrap();
    call(&mut doc, "echo")["response"]["result"]["content"][0]["text"] = json!(42);
    let text = serde_json::to_string_pretty(&doc).unwrap();
    let report = check_str(&text, &official("2025-11-25"));
    let finding = report
        .findings
        .iter()
        .find(|f| f.code == Code::Schema(ViolationKind::OfficialSchema))
        .expect("the official schema rejects a number as text");
    assert!(finding.pointer.starts_with("/interactions/"), "{finding:?}");
}

#[test]
#[ignore = "needs the official MCP schemas (../shared/mcp-schema or MCPCASSETTE_SCHEMA_DIR); .ci/run runs ignored official_schema tests"]
fn official_schema_passes_the_shipped_cassettes_of_their_version() {
    for (name, version) in [
        ("demo-legacy.json", "2025-11-25"),
        ("demo-modern.json", "2026-07-28"),
    ] {
        let report = check_str(&shipped(name), &official(version));
        assert!(report.findings.is_empty(), "{name}: {:#?}", report.findings);
    }
}

#[test]
fn secrets_never_reach_the_findings() {
    let secret = "ghp_0123456789abcdefghijABCDEFGHIJ012345";
    let mut doc: Value = serde_json::from_str(&shipped("demo-legacy.json")).unwrap();
    // A secret in a place that also breaks the schema: the violation message
    // may quote the value, the finding must not.
    interaction(&mut doc, "tools/list")["response"]["result"]["tools"][0]["name"] = json!(secret);
    call(&mut doc, "echo")["response"]["result"]["content"][0]["type"] = json!(secret);
    let report = check_str(
        &serde_json::to_string_pretty(&doc).unwrap(),
        &CheckConfig::default(),
    );
    assert!(codes(&report).contains(&Code::LikelySecret));
    let printed = serde_json::to_string(&report).unwrap();
    assert!(!printed.contains(secret), "{printed}");
}

#[test]
fn command_exit_codes_and_json() {
    let dir = tempfile::tempdir().unwrap();
    let good = support::root().join("cassettes/demo-legacy.json");
    let output = mcpcassette().arg("check").arg(&good).output().unwrap();
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stdout)
    );
    assert!(String::from_utf8_lossy(&output.stdout).contains("ok (0 errors, 0 warnings)"));

    let mut doc: Value = serde_json::from_str(&shipped("demo-legacy.json")).unwrap();
    call(&mut doc, "echo")["response"]["result"]["content"][0]["type"] = json!("txt");
    let bad = dir.path().join("bad.json");
    std::fs::write(&bad, serde_json::to_string_pretty(&doc).unwrap()).unwrap();
    let output = mcpcassette()
        .arg("check")
        .arg(&bad)
        .arg("--json")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(report["errors"], json!(1), "{report:#}");
    let finding = &report["files"][0]["findings"][0];
    assert_eq!(finding["code"], json!("MC207"));
    assert_eq!(finding["severity"], json!("error"));
    assert!(finding["line"].as_u64().unwrap() > 1);
    assert!(
        finding["pointer"]
            .as_str()
            .unwrap()
            .ends_with("/result/content/0/type")
    );
    assert!(!finding["hint"].as_str().unwrap().is_empty());

    let output = mcpcassette()
        .arg("check")
        .arg(&good)
        .arg(dir.path().join("missing.json"))
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stdout).contains("missing.json"));
}

#[test]
fn human_report() {
    let mut doc: Value = serde_json::from_str(&shipped("demo-legacy.json")).unwrap();
    call(&mut doc, "echo")["response"]["result"]["content"][0]["type"] = json!("txt");
    let copy = interaction(&mut doc, "ping").clone();
    doc["interactions"].as_array_mut().unwrap().push(copy);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("cassette.json");
    std::fs::write(&path, serde_json::to_string_pretty(&doc).unwrap()).unwrap();
    let output = mcpcassette()
        .current_dir(dir.path())
        .args(["check", "cassette.json"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    insta::assert_snapshot!(String::from_utf8_lossy(&output.stdout));
}

/// A token that the default redaction masks.
const PLANTED: &str = "ghp_0123456789abcdefghijABCDEFGHIJ012345";

/// In a fresh folder: `bad.json` (an unknown content type that is also a
/// planted secret, so the violation's message would quote it; errors),
/// `warned.json` (a repeated ping; a warning only) and `good.json`.
fn ci_cassettes() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let good: Value = serde_json::from_str(&shipped("demo-legacy.json")).unwrap();
    let mut bad = good.clone();
    call(&mut bad, "echo")["response"]["result"]["content"][0]["type"] = json!(PLANTED);
    let mut warned = good.clone();
    let copy = interaction(&mut warned, "ping").clone();
    warned["interactions"].as_array_mut().unwrap().push(copy);
    for (name, doc) in [
        ("bad.json", bad),
        ("warned.json", warned),
        ("good.json", good),
    ] {
        let text = serde_json::to_string_pretty(&doc).unwrap();
        std::fs::write(dir.path().join(name), text).unwrap();
    }
    dir
}

/// `check ARGS...` run in `dir`: exit code and stdout.
fn check_in(dir: &Path, args: &[&str]) -> (Option<i32>, String) {
    let output = mcpcassette()
        .current_dir(dir)
        .arg("check")
        .args(args)
        .output()
        .unwrap();
    (
        output.status.code(),
        String::from_utf8(output.stdout).unwrap(),
    )
}

#[test]
fn check_sarif_has_the_rule_the_line_the_pointer_and_no_secret() {
    let dir = ci_cassettes();
    let (code, json) = check_in(dir.path(), &["--json", "bad.json"]);
    assert_eq!(code, Some(1));
    let json: Value = serde_json::from_str(&json).unwrap();
    let expected = json["files"][0]["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["code"] == "MC207")
        .unwrap()
        .clone();

    let (code, sarif) = check_in(dir.path(), &["--format", "sarif", "bad.json"]);
    assert_eq!(code, Some(1), "the exit code is the format's to keep");
    assert!(!sarif.contains(PLANTED), "{sarif}");
    let log: Value = serde_json::from_str(&sarif).unwrap();
    assert_eq!(log["version"], "2.1.0");
    let run = &log["runs"][0];
    let driver = &run["tool"]["driver"];
    assert_eq!(driver["name"], "mcpcassette");
    assert_eq!(driver["version"], env!("CARGO_PKG_VERSION"));
    let rule = driver["rules"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["id"] == "MC207")
        .expect("a rule for MC207");
    assert_eq!(rule["help"]["text"], expected["hint"]);
    let results = run["results"].as_array().unwrap();
    let result = results.iter().find(|r| r["ruleId"] == "MC207").unwrap();
    assert_eq!(result["level"], "error");
    assert_eq!(result["message"]["text"], expected["message"]);
    let location = &result["locations"][0];
    assert_eq!(
        location["physicalLocation"]["artifactLocation"]["uri"],
        "bad.json"
    );
    assert_eq!(
        location["physicalLocation"]["region"]["startLine"],
        expected["line"]
    );
    assert!(expected["line"].as_u64().unwrap() > 1);
    let pointer = location["logicalLocations"][0]["fullyQualifiedName"]
        .as_str()
        .unwrap();
    assert_eq!(pointer, expected["pointer"].as_str().unwrap());
    assert!(pointer.ends_with("/result/content/0/type"), "{pointer}");
    assert!(
        results.iter().any(|r| r["ruleId"] == "MC401"),
        "the planted secret is found, not printed"
    );
    assert_eq!(run["properties"]["resultsOmitted"], 0);

    // An absolute path under the current directory is written relative.
    let absolute = dir.path().join("bad.json");
    let (_, sarif) = check_in(
        dir.path(),
        &["--format", "sarif", absolute.to_str().unwrap()],
    );
    let log: Value = serde_json::from_str(&sarif).unwrap();
    assert_eq!(
        log["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
        "bad.json"
    );
}

#[test]
fn check_junit_has_a_case_per_file_and_fails_the_one_with_errors() {
    let dir = ci_cassettes();
    let files = ["bad.json", "warned.json", "good.json"];
    let (code, xml) = check_in(dir.path(), &[&["--format", "junit"], &files[..]].concat());
    assert_eq!(code, Some(1));
    assert!(!xml.contains(PLANTED), "{xml}");
    assert!(xml.contains(
        r#"<testsuite name="mcpcassette check" tests="3" failures="1" errors="0" skipped="0">"#
    ));
    for file in files {
        assert!(
            xml.contains(&format!(r#"<testcase classname="check" name="{file}">"#)),
            "{xml}"
        );
    }
    assert_eq!(xml.matches("<failure ").count(), 1);
    let failure = &xml[xml.find("<failure ").unwrap()..];
    assert!(failure.contains(r#"type="MC207""#), "{failure}");
    assert!(failure.contains("error[MC207] content:"), "{failure}");
    assert!(failure.contains("--&gt; bad.json:"), "{failure}");
    assert!(
        xml.contains("<system-out>warning[MC302] duplicate:"),
        "{xml}"
    );

    // A file that cannot be read is an error case, and exit 2 as before.
    let (code, xml) = check_in(dir.path(), &["--format", "junit", "good.json", "gone.json"]);
    assert_eq!(code, Some(2));
    assert!(
        xml.contains(r#"tests="2" failures="0" errors="1""#),
        "{xml}"
    );
    assert!(xml.contains(r#"<testcase classname="check" name="gone.json">"#));
}

#[test]
fn check_json_is_format_json() {
    let dir = ci_cassettes();
    let alias = check_in(dir.path(), &["--json", "bad.json", "warned.json"]);
    let format = check_in(dir.path(), &["--format", "json", "bad.json", "warned.json"]);
    assert_eq!(alias, format);
    let text = check_in(dir.path(), &["bad.json"]);
    assert_eq!(
        text,
        check_in(dir.path(), &["--format", "text", "bad.json"])
    );
    let (code, _) = check_in(dir.path(), &["--json", "--format", "sarif", "bad.json"]);
    assert_eq!(code, Some(2), "--json and another --format conflict");
}

/// What the reading Python prints: the JUnit XML as junitparser reads it,
/// the SARIF as sarif-tools (its loader and its `sarif` command) reads it.
const READ_BACK: &str = r#"
import json, subprocess, sys
from junitparser import JUnitXml, Failure, Error
from sarif import loader

junit, sarif_path = sys.argv[1], sys.argv[2]
xml = JUnitXml.fromfile(junit)
suites = []
for suite in xml:
    cases = []
    for case in suite:
        cases.append({
            "name": case.name,
            "classname": case.classname,
            "failures": [r.type for r in case.result if isinstance(r, Failure)],
            "errors": [r.type for r in case.result if isinstance(r, Error)],
            "system_out": case.system_out or "",
        })
    suites.append({"name": suite.name, "tests": suite.tests,
                   "failures": suite.failures, "errors": suite.errors, "cases": cases})
sarif_file = loader.load_sarif_file(sarif_path)
records = sarif_file.get_records()
summary = subprocess.run([sys.executable, "-m", "sarif", "summary", sarif_path],
                         capture_output=True, text=True)
print(json.dumps({
    "suites": suites,
    "tool": sarif_file.get_distinct_tool_names(),
    "records": records,
    "summary": {"code": summary.returncode, "out": summary.stdout, "err": summary.stderr},
}))
"#;

#[test]
#[ignore = "needs the pinned Python venv (junitparser, sarif-tools)"]
fn check_reports_read_back_by_junitparser_and_sarif_tools() {
    let python = support::pinned::python();
    let dir = ci_cassettes();
    let files = ["bad.json", "warned.json", "good.json"];
    let (_, xml) = check_in(dir.path(), &[&["--format", "junit"], &files[..]].concat());
    let (_, sarif) = check_in(dir.path(), &[&["--format", "sarif"], &files[..]].concat());
    std::fs::write(dir.path().join("check.xml"), xml).unwrap();
    std::fs::write(dir.path().join("check.sarif"), &sarif).unwrap();
    let output = std::process::Command::new(python)
        .current_dir(dir.path())
        .args(["-c", READ_BACK, "check.xml", "check.sarif"])
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let read: Value = serde_json::from_slice(&output.stdout).unwrap();

    let suites = read["suites"].as_array().unwrap();
    assert_eq!(suites.len(), 1, "{read:#}");
    let suite = &suites[0];
    assert_eq!(suite["name"], "mcpcassette check");
    assert_eq!(suite["tests"], 3);
    assert_eq!(suite["failures"], 1);
    assert_eq!(suite["errors"], 0);
    let names: Vec<&str> = (suite["cases"].as_array().unwrap().iter())
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, files);
    let bad = &suite["cases"][0];
    assert_eq!(bad["classname"], "check");
    assert_eq!(bad["failures"], json!(["MC207"]));
    let warned = &suite["cases"][1];
    assert_eq!(warned["failures"], json!([]));
    assert!(
        warned["system_out"]
            .as_str()
            .unwrap()
            .contains("warning[MC302] duplicate:")
    );

    assert_eq!(read["tool"], json!(["mcpcassette"]));
    let records = read["records"].as_array().unwrap();
    let log: Value = serde_json::from_str(&sarif).unwrap();
    assert_eq!(
        records.len(),
        log["runs"][0]["results"].as_array().unwrap().len()
    );
    let content = records.iter().find(|r| r["Code"] == "MC207").unwrap();
    assert_eq!(content["Location"], "bad.json");
    assert_eq!(content["Severity"], "error");
    let expected = log["runs"][0]["results"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["ruleId"] == "MC207")
        .unwrap();
    assert_eq!(
        content["Line"].to_string().trim_matches('"'),
        expected["locations"][0]["physicalLocation"]["region"]["startLine"].to_string()
    );
    assert!(records.iter().any(|r| r["Code"] == "MC302"
        && r["Severity"] == "warning"
        && r["Location"] == "warned.json"));
    let summary = &read["summary"];
    assert_eq!(summary["code"], 0, "{summary:#}");
    assert!(
        summary["out"].as_str().unwrap().contains("error"),
        "{summary:#}"
    );
    assert!(!read.to_string().contains(PLANTED));
}
