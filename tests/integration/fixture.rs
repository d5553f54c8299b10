//! Fixtures: answers chosen through the library API, `mcpcassette stub`
//! against the example server (and, ignored, against server-everything),
//! and `mcpcassette check` on good and bad fixtures.

use std::collections::BTreeSet;
use std::path::Path;

use mcpcassette::check::{self, CheckConfig, Code, FileReport, Severity};
use mcpcassette::fixture::{self, Fixture, ItemKind, RpcError};
use mcpcassette::schema::ViolationKind;
use serde_json::{Value, json};

use crate::support::clients::StdioSession;
use crate::support::pinned::everything_js;
use crate::support::{self, mcpcassette};

/// A fixture using every way of answering.
const GOOD: &str = r#"{
  "fixture_version": 1,
  "server": { "name": "weather", "version": "1.0.0", "title": "Weather (fixture)",
              "instructions": "Ask for the weather in a city." },
  "tools": [
    {
      "name": "get_weather",
      "description": "Current weather for a city",
      "inputSchema": {
        "type": "object",
        "properties": { "city": { "type": "string" }, "units": { "enum": ["metric", "imperial"] } },
        "required": ["city"],
        "additionalProperties": false
      },
      "annotations": { "readOnlyHint": true },
      "cases": [
        { "when": { "city": "Paris" },
          "result": { "content": [{ "type": "text", "text": "sunny, 21 °C" }] } },
        { "when": { "city": "Paris", "units": "imperial" },
          "result": { "content": [{ "type": "text", "text": "never: the case above wins" }] } },
        { "when": { "city": "Atlantis" },
          "error": { "code": -32602, "message": "unknown city" } }
      ],
      "result": { "content": [{ "type": "text", "text": "cloudy" }] }
    },
    { "name": "roll", "inputSchema": { "type": "object", "properties": { "dice": { "type": "array" } } } }
  ],
  "resources": [
    { "uri": "weather://stations", "name": "stations", "mimeType": "text/plain", "text": "Paris, Oslo" }
  ],
  "resourceTemplates": [
    { "uriTemplate": "weather://city/{name}", "name": "city",
      "cases": [ { "when": { "uri": "weather://city/Paris" },
                   "result": { "contents": [{ "uri": "weather://city/Paris", "text": "sunny" }] } } ] }
  ],
  "prompts": [
    { "name": "forecast", "description": "Ask for a forecast",
      "arguments": [ { "name": "city", "required": true } ],
      "result": { "messages": [ { "role": "user",
        "content": { "type": "text", "text": "What is the forecast?" } } ] } }
  ]
}"#;

fn good() -> Fixture {
    fixture::parse(Path::new("good.json"), GOOD).unwrap()
}

fn text(result: &Value) -> &str {
    result["content"][0]["text"].as_str().unwrap()
}

#[test]
fn answers_follow_the_documented_order() {
    let fixture = good();
    // 1. The first matching case; `when` is a recursive subset.
    let paris = json!({"city": "Paris", "units": "imperial"});
    assert_eq!(
        text(&fixture.call_tool("get_weather", &paris).unwrap()),
        "sunny, 21 °C"
    );
    assert_eq!(
        fixture.matching_case(ItemKind::Tool, "get_weather", &paris),
        Some(0)
    );
    assert_eq!(
        fixture
            .call_tool("get_weather", &json!({"city": "Atlantis"}))
            .unwrap_err(),
        RpcError::new(-32602, "unknown city")
    );
    // 2. The fallback.
    assert_eq!(
        text(
            &fixture
                .call_tool("get_weather", &json!({"city": "Oslo"}))
                .unwrap()
        ),
        "cloudy"
    );
    assert_eq!(
        fixture.matching_case(ItemKind::Tool, "get_weather", &json!({"city": "Oslo"})),
        None
    );
    // 3. A generated result, the same whatever the key order.
    let a = fixture
        .call_tool("roll", &json!({"dice": [6, 6], "as": {"b": 1, "a": 2}}))
        .unwrap();
    let b = fixture
        .call_tool("roll", &json!({"as": {"a": 2, "b": 1}, "dice": [6, 6]}))
        .unwrap();
    assert_eq!(a, b);
    assert_eq!(text(&a), r#"roll({"as":{"a":2,"b":1},"dice":[6,6]})"#);
    // Resources, templates, prompts.
    assert_eq!(
        fixture.read_resource("weather://stations").unwrap()["contents"][0]["text"],
        "Paris, Oslo"
    );
    assert_eq!(
        fixture.read_resource("weather://city/Paris").unwrap()["contents"][0]["text"],
        "sunny"
    );
    assert_eq!(
        fixture.read_resource("weather://city/Oslo").unwrap()["contents"][0]["text"],
        r#"city({"uri":"weather://city/Oslo"})"#
    );
    assert_eq!(
        fixture
            .get_prompt("forecast", &json!({"city": "Oslo"}))
            .unwrap()["messages"][0]["content"]["text"],
        "What is the forecast?"
    );
    // Unknown items are errors naming what exists.
    let unknown = fixture.call_tool("get_wether", &json!({})).unwrap_err();
    assert_eq!(unknown.code, -32602);
    assert!(
        unknown.message.contains("`get_weather`, `roll`"),
        "{unknown}"
    );
    assert_eq!(
        fixture.read_resource("weather://nowhere").unwrap_err().code,
        -32002
    );
    assert_eq!(
        fixture.get_prompt("x", &json!({})).unwrap_err().code,
        -32602
    );
    // The list results are the definitions, without the answers.
    assert_eq!(
        fixture.tools_list()["tools"][1],
        json!({"name": "roll", "inputSchema": {"type": "object", "properties": {"dice": {"type": "array"}}}})
    );
    assert_eq!(
        fixture.capabilities(),
        json!({"tools": {}, "resources": {}, "prompts": {}})
    );
}

fn check_str(text: &str) -> FileReport {
    check::check_text(Path::new("fixture.json"), text, &CheckConfig::default())
}

fn codes(report: &FileReport) -> BTreeSet<Code> {
    report.findings.iter().map(|f| f.code).collect()
}

#[test]
fn check_accepts_a_good_fixture() {
    let report = check_str(GOOD);
    // The only finding: the shadowed case, on purpose.
    assert_eq!(
        codes(&report),
        BTreeSet::from([Code::UnreachableCase]),
        "{:#?}",
        report.findings
    );
    let mut clean: Value = serde_json::from_str(GOOD).unwrap();
    clean["tools"][0]["cases"].as_array_mut().unwrap().remove(1);
    let report = check_str(&serde_json::to_string_pretty(&clean).unwrap());
    assert!(report.findings.is_empty(), "{:#?}", report.findings);
    // Every version alone is fine too.
    for version in mcpcassette::schema::VERSIONS {
        clean["protocol_versions"] = json!([version]);
        let report = check_str(&clean.to_string());
        assert!(
            report.findings.is_empty(),
            "{version}: {:#?}",
            report.findings
        );
    }
}

type Mutation = fn(&mut Value);

/// One mutation of the good fixture per code.
fn mutations() -> Vec<(Code, &'static str, Mutation)> {
    vec![
        (Code::Structure, "/tools/0/cases/2", |d| {
            d["tools"][0]["cases"][2]
                .as_object_mut()
                .unwrap()
                .remove("error");
        }),
        (Code::Structure, "/server/version", |d| {
            d["server"]["version"] = json!(1)
        }),
        (Code::Structure, "/protocol_versions/0", |d| {
            d["protocol_versions"] = json!(["1999-01-01"])
        }),
        (Code::FormatVersion, "/fixture_version", |d| {
            d["fixture_version"] = json!(2)
        }),
        (Code::FormatVersion, "/fixture_version", |d| {
            d["fixture_version"] = json!("1")
        }),
        (
            Code::Schema(ViolationKind::ToolDefinition),
            "/tools/1/name",
            |d| d["tools"][1]["name"] = json!(" "),
        ),
        (
            Code::Schema(ViolationKind::InputSchema),
            "/tools/1/inputSchema/type",
            |d| d["tools"][1]["inputSchema"]["type"] = json!("array"),
        ),
        (
            Code::Schema(ViolationKind::InputSchema),
            "/tools/1/inputSchema/properties/dice/type",
            |d| d["tools"][1]["inputSchema"]["properties"]["dice"]["type"] = json!("bogus"),
        ),
        (
            Code::Schema(ViolationKind::ResultShape),
            "/tools/0/result/content",
            |d| d["tools"][0]["result"] = json!({"text": "no content"}),
        ),
        (
            Code::Schema(ViolationKind::Content),
            "/tools/0/cases/0/result/content/0/text",
            |d| d["tools"][0]["cases"][0]["result"]["content"][0] = json!({"type": "text"}),
        ),
        (
            Code::Schema(ViolationKind::ResultShape),
            "/prompts/0/result/messages/0/role",
            |d| d["prompts"][0]["result"]["messages"][0]["role"] = json!("robot"),
        ),
        (
            Code::Schema(ViolationKind::ResultShape),
            "/resourceTemplates/0/cases/0/result/contents",
            |d| d["resourceTemplates"][0]["cases"][0]["result"] = json!({"text": "sunny"}),
        ),
        (
            Code::Schema(ViolationKind::ToolArguments),
            "/tools/0/cases/0/when/city",
            |d| d["tools"][0]["cases"][0]["when"] = json!({"city": 75}),
        ),
        (
            Code::Schema(ViolationKind::ToolArguments),
            "/tools/0/cases/0/when",
            |d| d["tools"][0]["cases"][0]["when"] = json!({"town": "Paris"}),
        ),
        (
            Code::Schema(ViolationKind::ToolArguments),
            "/tools/0/cases/0/when/units",
            |d| d["tools"][0]["cases"][0]["when"] = json!({"units": "kelvin"}),
        ),
        // A tool with an outputSchema: answers without structuredContent,
        // with one the schema rejects, and a schema nothing generated meets.
        (
            Code::Schema(ViolationKind::StructuredContent),
            "/tools/0/result/structuredContent",
            |d| {
                d["tools"][0]["outputSchema"] = json!({"type": "object",
                "properties": {"celsius": {"type": "number"}}, "required": ["celsius"]})
            },
        ),
        (
            Code::Schema(ViolationKind::StructuredContent),
            "/tools/0/cases/0/result/structuredContent/celsius",
            |d| {
                d["tools"][0]["outputSchema"] = json!({"type": "object",
                    "properties": {"celsius": {"type": "number"}}, "required": ["celsius"]});
                d["tools"][0]["cases"][0]["result"]["structuredContent"] = json!({"celsius": "21"});
            },
        ),
        (
            Code::Schema(ViolationKind::StructuredContent),
            "/tools/1/outputSchema",
            |d| {
                d["tools"][1]["outputSchema"] = json!({"type": "object",
                "properties": {"id": {"type": "string", "minLength": 5, "maxLength": 2}},
                "required": ["id"]})
            },
        ),
        (Code::UnreachableCase, "/tools/0/cases/1", |_| {}),
        (Code::UnreachableCase, "/tools/0/cases/2", |d| {
            d["tools"][0]["cases"][0]["when"] = json!({})
        }),
        (Code::Duplicate, "/tools/2", |d| {
            let copy = d["tools"][1].clone();
            d["tools"].as_array_mut().unwrap().push(copy);
        }),
        (Code::Duplicate, "/resources/1", |d| {
            let copy = d["resources"][0].clone();
            d["resources"].as_array_mut().unwrap().push(copy);
        }),
        (Code::LikelySecret, "/tools/0/result/content/0/text", |d| {
            d["tools"][0]["result"]["content"][0]["text"] =
                json!("token: ghp_0123456789abcdefghijABCDEFGHIJ012345")
        }),
        // Secrets are found even when the structure is wrong.
        (Code::LikelySecret, "/tools/1/api_key", |d| {
            d["tools"][1]["api_key"] = json!("ghp_0123456789abcdefghijABCDEFGHIJ012345");
            d["tools"][1]["cases"] = json!("not cases");
        }),
    ]
}

#[test]
fn check_finds_each_problem_where_it_is() {
    let good: Value = serde_json::from_str(GOOD).unwrap();
    for (code, pointer, mutate) in mutations() {
        let mut document = good.clone();
        mutate(&mut document);
        let text = serde_json::to_string_pretty(&document).unwrap();
        let report = check_str(&text);
        let found = report
            .findings
            .iter()
            .find(|f| f.code == code && f.pointer == pointer)
            .unwrap_or_else(|| {
                panic!(
                    "{} at {pointer} not found; findings: {:#?}",
                    code.as_str(),
                    report.findings
                )
            });
        let line = found.line.expect("every finding has a line");
        assert!(line > 1 || pointer.is_empty(), "{code:?}: line {line}");
        if code.severity() == Severity::Error {
            assert!(report.has_errors());
        }
    }
    // The secret never reaches a message.
    let mut document = good.clone();
    document["tools"][0]["description"] = json!("ghp_0123456789abcdefghijABCDEFGHIJ012345");
    let report = check_str(&document.to_string());
    let printed = serde_json::to_string(&report).unwrap();
    assert!(!printed.contains("ghp_0123456789abcdefghij"), "{printed}");
}

#[test]
fn check_reports_structure_with_line_and_pointer() {
    let text = "{\n  \"fixture_version\": 1,\n  \"server\": {\"name\": \"s\", \"version\": \"1\"},\n  \"tools\": [\n    {\"name\": \"t\", \"inputSchema\": {\"type\": \"object\"},\n     \"cases\": [{\"when\": {}, \"result\": {}, \"error\": {\"code\": 1, \"message\": \"m\"}}]}\n  ]\n}\n";
    let report = check_str(text);
    assert_eq!(report.findings.len(), 1, "{:#?}", report.findings);
    let finding = &report.findings[0];
    assert_eq!(finding.code, Code::Structure);
    assert_eq!(finding.pointer, "/tools/0/cases/0/error");
    assert_eq!(finding.line, Some(6));
}

/// A live session's lists, as a client sees them: the legacy handshake,
/// then each list, every page.
fn live_lists(command: &[String]) -> Vec<(&'static str, Vec<Value>)> {
    let (mut session, init) = StdioSession::start(command);
    let mut lists = Vec::new();
    for (method, capability, key) in [
        ("tools/list", "tools", "tools"),
        ("resources/list", "resources", "resources"),
        ("resources/templates/list", "resources", "resourceTemplates"),
        ("prompts/list", "prompts", "prompts"),
    ] {
        let mut items = Vec::new();
        if init["capabilities"].get(capability).is_some() {
            let mut params = json!({});
            loop {
                let result = session.request(method, params)["result"].clone();
                items.extend(result[key].as_array().unwrap().iter().cloned());
                match result.get("nextCursor").and_then(Value::as_str) {
                    Some(cursor) => params = json!({"cursor": cursor}),
                    None => break,
                }
            }
        }
        lists.push((key, items));
    }
    session.close();
    lists
}

fn names(items: &[Value], key: &str) -> Vec<String> {
    items
        .iter()
        .map(|item| item[key].as_str().unwrap_or_default().to_owned())
        .collect()
}

/// Runs `mcpcassette stub` with `args`, writing to `out`.
fn stub(out: &Path, args: &[&str], command: &[String]) {
    let output = mcpcassette()
        .arg("stub")
        .arg("-o")
        .arg(out)
        .args(args)
        .arg("--")
        .args(command)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "stub exited with {}:\n{}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(output.stdout.is_empty(), "the fixture went to the file");
}

fn check_exit(path: &Path) -> (i32, String) {
    let output = mcpcassette().arg("check").arg(path).output().unwrap();
    (
        output.status.code().unwrap(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
    )
}

#[test]
fn stub_lists_exactly_what_the_demo_server_lists() {
    let dir = tempfile::tempdir().unwrap();
    let command = vec![support::demo_server_path().display().to_string()];
    let live = live_lists(&command);
    for era in ["legacy", "modern"] {
        let path = dir.path().join(format!("demo-{era}.json"));
        stub(&path, &["--era", era], &command);
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.ends_with("}\n"), "pretty JSON with a trailing newline");
        let fixture = fixture::load(&path).unwrap();
        assert_eq!(fixture.server.name, "mcpcassette-demo");
        assert!(fixture.server.instructions.is_some());
        let stubbed = [
            fixture.tools_list()["tools"].clone(),
            fixture.resources_list()["resources"].clone(),
            fixture.templates_list()["resourceTemplates"].clone(),
            fixture.prompts_list()["prompts"].clone(),
        ];
        for ((key, items), stubbed) in live.iter().zip(&stubbed) {
            let stubbed = stubbed.as_array().unwrap();
            let name_key = if *key == "resourceTemplates" {
                "uriTemplate"
            } else {
                "name"
            };
            assert_eq!(
                names(items, name_key),
                names(stubbed, name_key),
                "{era}: {key}"
            );
            assert!(!items.is_empty(), "the demo server lists some {key}");
            // Definitions verbatim, answers left to the generated result.
            assert_eq!(items, stubbed, "{era}: {key}");
        }
        assert!(
            fixture
                .tools
                .iter()
                .all(|t| t.cases.is_empty() && t.result.is_none() && t.error.is_none())
        );
        assert_eq!(
            fixture
                .call_tool("echo", &json!({"message": "hi"}))
                .unwrap()["content"][0]["text"],
            r#"echo({"message":"hi"})"#
        );
        let (code, stdout) = check_exit(&path);
        assert_eq!(code, 0, "check on the stub: {stdout}");
    }
}

/// Every tool of a served fixture, called (legacy handshake, then
/// `tools/list`, then each tool with arguments generated from its
/// `inputSchema`): each definition with the response it got.
fn call_every_tool(fixture: &Path) -> Vec<(Value, Value)> {
    let command = vec![
        env!("CARGO_BIN_EXE_mcpcassette").to_owned(),
        "serve".to_owned(),
        fixture.display().to_string(),
    ];
    let (mut session, _) = StdioSession::start(&command);
    let tools = session.request("tools/list", json!({}))["result"]["tools"].clone();
    let calls = tools
        .as_array()
        .unwrap()
        .iter()
        .map(|tool| {
            let arguments = mcpcassette::example_from_schema(&tool["inputSchema"]);
            let params = json!({"name": tool["name"], "arguments": arguments});
            (tool.clone(), session.request("tools/call", params))
        })
        .collect();
    session.close();
    calls
}

/// What an SDK client checks of a `tools/call` result: the MCP shape, and
/// for a tool with an `outputSchema`, `structuredContent` the schema
/// accepts (and, from a generated result, its JSON as the text).
fn assert_sdk_would_accept(tool: &Value, response: &Value) {
    let name = &tool["name"];
    let violations = mcpcassette::schema::check_message("2025-11-25", response, Some("tools/call"));
    assert!(
        violations.is_empty(),
        "{name}: {violations:?} in {response}"
    );
    let result = &response["result"];
    let Some(schema) = tool.get("outputSchema") else {
        return;
    };
    let structured = result
        .get("structuredContent")
        .unwrap_or_else(|| panic!("{name} declares an outputSchema: {response}"));
    let validator = jsonschema::validator_for(schema).unwrap();
    let errors: Vec<String> = validator
        .iter_errors(structured)
        .map(|e| e.to_string())
        .collect();
    assert!(
        errors.is_empty(),
        "{name}: {structured} breaks {schema}: {errors:?}"
    );
    let text: Value = serde_json::from_str(result["content"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(&text, structured, "{name}: the text carries the same JSON");
}

/// `stub` → `serve` → every tool called: a tool with an `outputSchema`
/// (the demo server's `add`) gets `structuredContent` the schema accepts,
/// and `check` passes the stub.
#[test]
fn stubbed_tools_answer_as_their_output_schema_says() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("demo.json");
    stub(
        &path,
        &[],
        &[support::demo_server_path().display().to_string()],
    );
    let calls = call_every_tool(&path);
    assert!(
        calls
            .iter()
            .any(|(tool, _)| tool["name"] == "add" && tool.get("outputSchema").is_some()),
        "the demo server's `add` declares an outputSchema"
    );
    for (tool, response) in &calls {
        assert_sdk_would_accept(tool, response);
    }
    let add = calls
        .iter()
        .find(|(tool, _)| tool["name"] == "add")
        .unwrap();
    assert_eq!(add.1["result"]["structuredContent"], json!({"sum": 0}));
    let echo = calls
        .iter()
        .find(|(tool, _)| tool["name"] == "echo")
        .unwrap();
    assert!(echo.1["result"].get("structuredContent").is_none());
    let (code, stdout) = check_exit(&path);
    assert_eq!(code, 0, "check on the stub: {stdout}");
}

#[test]
fn stub_writes_to_stdout_and_fails_cleanly() {
    let output = mcpcassette()
        .arg("stub")
        .arg("--")
        .arg(support::demo_server_path())
        .output()
        .unwrap();
    assert!(output.status.success());
    let document: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert!(fixture::is_fixture(&document));
    assert!(output.stdout.ends_with(b"}\n"));

    let output = mcpcassette()
        .args([
            "stub",
            "--",
            "/nonexistent/server",
            "--token",
            "s3cr3t-value",
        ])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("/nonexistent/server"), "{stderr}");
    assert!(!stderr.contains("s3cr3t-value"), "masked: {stderr}");

    let output = mcpcassette().arg("stub").output().unwrap();
    assert_eq!(output.status.code(), Some(2));
}

#[test]
#[ignore = "needs @modelcontextprotocol/server-everything from npm; .ci/run installs it and runs ignored tests"]
fn everything_stub_lists_the_same_tools_and_calls_none() {
    let js = everything_js();
    let dir = tempfile::tempdir().unwrap();
    let server = vec![
        "node".to_owned(),
        js.display().to_string(),
        "stdio".to_owned(),
    ];
    let live = live_lists(&server);

    // The server behind `mcpcassette record`, so the wire can be inspected.
    let cassette = dir.path().join("wire.json");
    let recorded = [
        vec![
            env!("CARGO_BIN_EXE_mcpcassette").to_owned(),
            "record".to_owned(),
            "--cassette".to_owned(),
            cassette.display().to_string(),
            "--".to_owned(),
        ],
        server,
    ]
    .concat();
    let path = dir.path().join("everything.json");
    stub(&path, &[], &recorded);

    let fixture = fixture::load(&path).unwrap();
    assert_eq!(fixture.server.name, "mcp-servers/everything");
    let (_, live_tools) = &live[0];
    assert!(!live_tools.is_empty());
    assert_eq!(
        names(live_tools, "name"),
        fixture
            .tools
            .iter()
            .map(|t| t.name().unwrap().to_owned())
            .collect::<Vec<_>>()
    );
    for (live, stubbed) in live_tools.iter().zip(&fixture.tools) {
        assert_eq!(
            live["inputSchema"], stubbed.definition["inputSchema"],
            "{}",
            live["name"]
        );
    }
    let (_, live_prompts) = &live[3];
    assert_eq!(
        names(live_prompts, "name"),
        names(
            fixture.prompts_list()["prompts"].as_array().unwrap(),
            "name"
        )
    );
    let (code, stdout) = check_exit(&path);
    assert_eq!(code, 0, "check on the stub: {stdout}");

    let wire = mcpcassette::cassette::load(&cassette).unwrap();
    let methods: Vec<&str> = wire.interactions.iter().map(|i| i.method()).collect();
    assert!(
        methods.contains(&"tools/list"),
        "the stub's traffic was recorded: {methods:?}"
    );
    assert!(
        !methods
            .iter()
            .any(|m| *m == "tools/call" || *m == "prompts/get" || *m == "resources/read"),
        "the stub never calls anything: {methods:?}"
    );
}
