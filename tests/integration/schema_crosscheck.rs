//! Cross-checks the built-in MCP rules (`schema::check_message`,
//! `schema::check_shape`) against the official schema.json of every
//! version: the verdict (valid or not) must agree on every corpus entry
//! under `tests/schema-corpus/`, and on every example instance the
//! specification publishes for 2026-07-28. The corpus also pins which kinds
//! of violation the built-in rules report.
//!
//! The official files are test data outside the repository:
//! `../shared/mcp-schema` from the crate root, or `MCPCASSETTE_SCHEMA_DIR`.
//! When they are missing the test fails (it never skips).

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::path::{Path, PathBuf};

use mcpcassette::schema::OfficialSchema;
use mcpcassette::schema::{self, Shape, ToolArguments, Violation, ViolationKind};
use serde::Deserialize;
use serde_json::Value;

/// Where built-in and official verdicts differ on purpose or because of
/// the official files: `corpus-file/entry-id@version` (or without
/// `@version` for every version of the entry), and why. The test fails when
/// a listed entry stops disagreeing, so the list stays honest.
const KNOWN_DISAGREEMENTS: &[(&str, &str)] = &[
    (
        "envelope/error-null-id",
        "every official schema types `id` as string|integer, so the `id: null` error responses \
         JSON-RPC 2.0 prescribes for unreadable requests (and the TypeScript SDK sends) are \
         rejected; the built-in rules accept `null` in error responses only",
    ),
    (
        "envelope/result-and-error",
        "no official definition forbids extra members, so a response with both `result` and \
         `error` passes as a result response; JSON-RPC 2.0 requires exactly one of them",
    ),
    (
        "envelope/batch-empty",
        "the 2025-03-26 batch definitions set no minimum length; JSON-RPC 2.0 answers an empty \
         batch with Invalid Request, so the built-in rules reject it",
    ),
    (
        "tools/list-result-blank-name",
        "by design: the official schema only types a tool `name` as a string; a blank name \
         cannot be called, so the built-in rules reject it",
    ),
    (
        "tools/list-result-input-schema-not-json-schema",
        "by design: the official schema does not meta-validate `inputSchema`; the built-in \
         rules check it against the JSON Schema meta-schema (draft-07 before 2025-11-25, \
         2020-12 from then on, unless `$schema` says otherwise)",
    ),
    (
        "tools/list-result-modern-not-json-schema",
        "by design: as above, for 2026-07-28 (whose Tool definition leaves the schema open)",
    ),
    (
        "examples/ReadResourceResultResponse/read-resource-result-response.json",
        "the specification's own example lacks the `cacheScope`/`ttlMs` that ReadResourceResult \
         requires; it passes only because the wrapper's other branch, InputRequiredResult, \
         accepts any object with a `resultType`",
    ),
];

/// 2026-07-28 example definitions the built-in rules have no shape for.
const UNMAPPED_EXAMPLES: &[(&str, &str)] = &[];

fn schema_dir() -> PathBuf {
    let dir = crate::support::pinned::schema_dir();
    assert!(
        dir.join("2026-07-28/schema.json").is_file(),
        "the official MCP schemas are missing: expected <dir>/<version>/schema.json under {} \
         (set MCPCASSETTE_SCHEMA_DIR to the folder holding them); this test cannot run without them",
        dir.display()
    );
    dir
}

fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/schema-corpus")
}

/// One corpus file.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CorpusFile {
    #[allow(dead_code)]
    description: String,
    entries: Vec<Entry>,
}

/// One message, the versions it is judged in, and the kinds the built-in
/// rules must report (none: valid).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Entry {
    id: String,
    /// "all", "2025-06-18", "2025-06-18..", "..2025-11-25",
    /// "2025-03-26..2025-11-25", or a list of those.
    versions: VersionSpec,
    #[serde(default)]
    request_method: Option<String>,
    message: Value,
    /// Kinds in snake_case; `unknown_method` is a warning, not invalid.
    expect: Vec<String>,
    /// For a `tools/call` request: the tool's inputSchema, to check the
    /// arguments with `ToolArguments` (official side: plain JSON Schema).
    #[serde(default)]
    input_schema: Option<Value>,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum VersionSpec {
    One(String),
    Many(Vec<String>),
}

impl VersionSpec {
    fn expand(&self) -> Vec<&'static str> {
        let specs: Vec<&str> = match self {
            VersionSpec::One(one) => vec![one],
            VersionSpec::Many(many) => many.iter().map(String::as_str).collect(),
        };
        let mut out = Vec::new();
        for spec in specs {
            let index = |v: &str| {
                schema::VERSIONS
                    .iter()
                    .position(|known| *known == v)
                    .unwrap_or_else(|| panic!("unknown version `{v}` in a corpus entry"))
            };
            let (from, to) = match spec.split_once("..") {
                _ if spec == "all" => (0, schema::VERSIONS.len() - 1),
                Some((from, to)) => (
                    if from.is_empty() { 0 } else { index(from) },
                    if to.is_empty() {
                        schema::VERSIONS.len() - 1
                    } else {
                        index(to)
                    },
                ),
                None => (index(spec), index(spec)),
            };
            out.extend(&schema::VERSIONS[from..=to]);
        }
        out
    }
}

fn kind_name(kind: ViolationKind) -> String {
    serde_json::to_value(kind)
        .unwrap()
        .as_str()
        .unwrap()
        .to_owned()
}

fn invalid(violations: &[Violation]) -> bool {
    violations
        .iter()
        .any(|v| v.kind != ViolationKind::UnknownMethod)
}

fn render(violations: &[Violation]) -> String {
    if violations.is_empty() {
        return "      (none)".to_owned();
    }
    violations
        .iter()
        .map(|v| format!("      {} {}: {}", kind_name(v.kind), v.pointer, v.message))
        .collect::<Vec<_>>()
        .join("\n")
}

struct Official {
    schemas: HashMap<&'static str, OfficialSchema>,
}

impl Official {
    fn load(dir: &Path) -> Official {
        let schemas = schema::VERSIONS
            .iter()
            .map(|v| {
                let path = dir.join(v).join("schema.json");
                let schema = OfficialSchema::load(&path)
                    .unwrap_or_else(|e| panic!("official schema {}: {e}", path.display()));
                (*v, schema)
            })
            .collect();
        Official { schemas }
    }
}

/// Disagreements seen, keyed like `KNOWN_DISAGREEMENTS`.
#[derive(Default)]
struct Report {
    failures: Vec<String>,
    disagreed: HashSet<String>,
    kinds_seen: BTreeSet<String>,
    /// (version, method, whether the entry is its result) → verdicts seen.
    covered: BTreeMap<(&'static str, String, bool), BTreeSet<bool>>,
}

impl Report {
    fn known(key: &str) -> bool {
        let entry = key.split('@').next().unwrap_or(key);
        KNOWN_DISAGREEMENTS
            .iter()
            .any(|(listed, _)| *listed == key || *listed == entry)
    }

    /// Records a verdict comparison.
    fn verdicts(&mut self, key: &str, built_in: &[Violation], official: &[Violation]) {
        if invalid(built_in) == invalid(official) {
            return;
        }
        self.disagreed.insert(key.to_owned());
        if !Report::known(key) {
            self.failures.push(format!(
                "{key}: built-in says {}, the official schema says {}\n    built-in:\n{}\n    official:\n{}",
                verdict(built_in),
                verdict(official),
                render(built_in),
                render(official)
            ));
        }
    }
}

fn verdict(violations: &[Violation]) -> &'static str {
    if invalid(violations) {
        "invalid"
    } else {
        "valid"
    }
}

fn run_corpus(official: &Official, report: &mut Report) -> usize {
    let mut files: Vec<PathBuf> = std::fs::read_dir(corpus_dir())
        .expect("tests/schema-corpus")
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    assert!(
        !files.is_empty(),
        "no corpus files in {}",
        corpus_dir().display()
    );
    let mut count = 0;
    let mut ids = HashSet::new();
    for path in files {
        let stem = path.file_stem().unwrap().to_string_lossy().into_owned();
        let text = std::fs::read_to_string(&path).unwrap();
        let file: CorpusFile =
            serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        for entry in &file.entries {
            let id = format!("{stem}/{}", entry.id);
            assert!(ids.insert(id.clone()), "duplicate corpus id {id}");
            for version in entry.versions.expand() {
                count += 1;
                check_entry(official, report, &id, version, entry);
            }
        }
    }
    count
}

fn check_entry(
    official: &Official,
    report: &mut Report,
    id: &str,
    version: &'static str,
    entry: &Entry,
) {
    let key = format!("{id}@{version}");
    let method = entry.request_method.as_deref();
    let mut built_in = schema::check_message(version, &entry.message, method);
    let mut official_found = official.schemas[version].check_message(&entry.message, method);
    if let Some(input_schema) = &entry.input_schema {
        let arguments = entry
            .message
            .pointer("/params/arguments")
            .cloned()
            .unwrap_or_default();
        match ToolArguments::new(input_schema) {
            Ok(tool) => built_in.extend(tool.check(&arguments)),
            Err(violation) => built_in.push(violation),
        }
        // Officially the arguments are plain JSON Schema instances.
        match jsonschema::validator_for(input_schema) {
            Ok(validator) => official_found.extend(validator.iter_errors(&arguments).map(|e| {
                Violation::new(
                    ViolationKind::OfficialSchema,
                    e.instance_path().as_str(),
                    e.to_string(),
                )
            })),
            Err(e) => official_found.push(Violation::new(
                ViolationKind::OfficialSchema,
                "",
                e.to_string(),
            )),
        }
    }
    let covers = match entry.message.get("method").and_then(Value::as_str) {
        Some(called) => Some((called, false)),
        None => method.map(|answered| (answered, true)),
    };
    if let Some((name, is_result)) = covers {
        let valid = entry.expect.iter().all(|k| k == "unknown_method");
        report
            .covered
            .entry((version, name.to_owned(), is_result))
            .or_default()
            .insert(valid);
    }
    let found: BTreeSet<String> = built_in.iter().map(|v| kind_name(v.kind)).collect();
    let expected: BTreeSet<String> = entry.expect.iter().cloned().collect();
    report.kinds_seen.extend(expected.iter().cloned());
    if found != expected {
        report.failures.push(format!(
            "{key}: expected kinds {expected:?}, built-in found {found:?}\n{}",
            render(&built_in)
        ));
    }
    report.verdicts(&key, &built_in, &official_found);
}

/// How the built-in rules judge an example of a 2026-07-28 definition.
fn built_in_for_example(definition: &str, value: &Value) -> Option<Vec<Violation>> {
    const V: &str = "2026-07-28";
    let shape = |shape: Shape<'_>| Some(schema::check_shape(V, shape, value));
    let method_of = |name: &str| -> Option<&'static str> {
        Some(match name {
            "CallTool" => "tools/call",
            "Complete" => "completion/complete",
            "CreateMessage" => "sampling/createMessage",
            "Discover" => "server/discover",
            "Elicit" => "elicitation/create",
            "GetPrompt" => "prompts/get",
            "ListPrompts" => "prompts/list",
            "ListResourceTemplates" => "resources/templates/list",
            "ListResources" => "resources/list",
            "ListRoots" => "roots/list",
            "ListTools" => "tools/list",
            "ReadResource" => "resources/read",
            "SubscriptionsListen" => "subscriptions/listen",
            _ => return None,
        })
    };
    let notification_of = |name: &str| -> Option<&'static str> {
        Some(match name {
            "Cancelled" => "notifications/cancelled",
            "LoggingMessage" => "notifications/message",
            "Progress" => "notifications/progress",
            "PromptListChanged" => "notifications/prompts/list_changed",
            "ResourceListChanged" => "notifications/resources/list_changed",
            "ResourceUpdated" => "notifications/resources/updated",
            "SubscriptionsAcknowledged" => "notifications/subscriptions/acknowledged",
            "ToolListChanged" => "notifications/tools/list_changed",
            _ => return None,
        })
    };
    if let Some(base) = definition.strip_suffix("ResultResponse") {
        return Some(schema::check_message(V, value, Some(method_of(base)?)));
    }
    if definition == "PaginatedRequestParams" {
        return shape(Shape::RequestParams("tools/list"));
    }
    if let Some(base) = definition.strip_suffix("RequestParams") {
        return shape(Shape::RequestParams(method_of(base)?));
    }
    if let Some(base) = definition
        .strip_suffix("RequestFormParams")
        .or_else(|| definition.strip_suffix("RequestURLParams"))
    {
        return shape(Shape::RequestParams(method_of(base)?));
    }
    if let Some(base) = definition.strip_suffix("Request") {
        return shape(Shape::Request(method_of(base)?));
    }
    if let Some(base) = definition.strip_suffix("NotificationParams") {
        return shape(Shape::NotificationParams(notification_of(base)?));
    }
    if let Some(base) = definition.strip_suffix("Notification") {
        return shape(Shape::Notification(notification_of(base)?));
    }
    if definition.ends_with("Error") {
        // Whole error responses, or just the error object.
        return Some(if value.get("jsonrpc").is_some() {
            schema::check_message(V, value, None)
        } else {
            schema::check_shape(V, Shape::Error, value)
        });
    }
    match definition {
        "InputRequiredResult" => return shape(Shape::InputRequiredResult),
        "InputRequests" => return shape(Shape::InputRequests),
        "InputResponses" => return shape(Shape::InputResponses),
        _ => {}
    }
    if let Some(base) = definition.strip_suffix("Result") {
        return shape(Shape::Result(method_of(base)?));
    }
    match definition {
        "AudioContent" | "ImageContent" | "TextContent" | "EmbeddedResource" | "ResourceLink" => {
            shape(Shape::ContentBlock)
        }
        "ToolUseContent" | "ToolResultContent" => shape(Shape::SamplingContent),
        "BlobResourceContents" | "TextResourceContents" => shape(Shape::ResourceContents),
        "BooleanSchema"
        | "NumberSchema"
        | "StringSchema"
        | "TitledMultiSelectEnumSchema"
        | "TitledSingleSelectEnumSchema"
        | "UntitledMultiSelectEnumSchema"
        | "UntitledSingleSelectEnumSchema" => shape(Shape::ElicitationField),
        "ClientCapabilities" => shape(Shape::ClientCapabilities),
        "ServerCapabilities" => shape(Shape::ServerCapabilities),
        "ModelPreferences" => shape(Shape::ModelPreferences),
        "Resource" => shape(Shape::Resource),
        "Root" => shape(Shape::Root),
        "SamplingMessage" => shape(Shape::SamplingMessage),
        "Tool" => shape(Shape::Tool),
        _ => None,
    }
}

fn run_examples(dir: &Path, official: &Official, report: &mut Report) -> usize {
    let schema = &official.schemas["2026-07-28"];
    let examples = dir.join("2026-07-28/examples");
    let mut definitions: Vec<PathBuf> = std::fs::read_dir(&examples)
        .unwrap_or_else(|e| panic!("{}: {e}", examples.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    definitions.sort();
    let mut count = 0;
    for folder in definitions {
        let definition = folder.file_name().unwrap().to_string_lossy().into_owned();
        let unmapped = UNMAPPED_EXAMPLES.iter().any(|(d, _)| *d == definition);
        let mut files: Vec<PathBuf> = std::fs::read_dir(&folder)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "json"))
            .collect();
        files.sort();
        for file in files {
            count += 1;
            let key = format!(
                "examples/{definition}/{}",
                file.file_name().unwrap().to_string_lossy()
            );
            let value: Value =
                serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
            let official_found = schema
                .check_definition(&definition, &value)
                .unwrap_or_else(|e| panic!("{key}: {e}"));
            if !official_found.is_empty() {
                report.failures.push(format!(
                    "{key}: the official schema rejects its own example\n{}",
                    render(&official_found)
                ));
            }
            match built_in_for_example(&definition, &value) {
                Some(_) if unmapped => report
                    .failures
                    .push(format!("{key}: {definition} is listed as unmapped but has a shape")),
                Some(built_in) => report.verdicts(&key, &built_in, &official_found),
                None if unmapped => {}
                None => report.failures.push(format!(
                    "{key}: no built-in shape for {definition}; map it or list it in UNMAPPED_EXAMPLES"
                )),
            }
        }
    }
    count
}

/// Every request and notification an official schema defines must have a
/// valid and an invalid corpus entry in that version, and so must the
/// result of every request; every built-in kind must be expected somewhere.
fn check_coverage(dir: &Path, report: &mut Report) {
    for version in schema::VERSIONS {
        let text = std::fs::read_to_string(dir.join(version).join("schema.json")).unwrap();
        let document: Value = serde_json::from_str(&text).unwrap();
        let definitions = document
            .get("$defs")
            .or_else(|| document.get("definitions"))
            .and_then(Value::as_object)
            .unwrap();
        let mut needed = BTreeSet::new();
        for (name, definition) in definitions {
            let Some(method) = definition
                .pointer("/properties/method/const")
                .and_then(Value::as_str)
            else {
                continue;
            };
            needed.insert((method, false));
            if name.ends_with("Request") {
                needed.insert((method, true));
            }
        }
        for (method, is_result) in needed {
            let seen = report
                .covered
                .get(&(version, method.to_owned(), is_result))
                .cloned()
                .unwrap_or_default();
            let what = if is_result {
                format!("result of `{method}`")
            } else {
                format!("`{method}` message")
            };
            for (valid, verdict) in [(true, "valid"), (false, "invalid")] {
                if !seen.contains(&valid) {
                    report
                        .failures
                        .push(format!("the corpus has no {verdict} {what} for {version}"));
                }
            }
        }
    }
    let every_kind = [
        "json_rpc_version",
        "method_type",
        "id_type",
        "params_type",
        "result_xor_error",
        "error_shape",
        "unknown_method",
        "request_params",
        "result_shape",
        "notification",
        "tool_definition",
        "input_schema",
        "content",
        "result_type",
        "tool_arguments",
    ];
    for kind in every_kind {
        if !report.kinds_seen.contains(kind) {
            report
                .failures
                .push(format!("no corpus entry expects `{kind}`"));
        }
    }
}

#[test]
#[ignore = "needs the official MCP schemas (../shared/mcp-schema or MCPCASSETTE_SCHEMA_DIR); .ci/run runs ignored official_schema tests"]
fn official_schema_agrees_with_the_built_in_rules() {
    let dir = schema_dir();
    let official = Official::load(&dir);
    let mut report = Report::default();
    let checked = run_corpus(&official, &mut report);
    let examples = run_examples(&dir, &official, &mut report);
    check_coverage(&dir, &mut report);
    for (key, reason) in KNOWN_DISAGREEMENTS {
        let still = report
            .disagreed
            .iter()
            .any(|seen| seen == key || seen.split('@').next() == Some(key));
        if !still {
            report.failures.push(format!(
                "{key} is listed as a known disagreement ({reason}) but now agrees"
            ));
        }
    }
    assert!(
        report.failures.is_empty(),
        "{} problem(s) in {checked} corpus checks and {examples} examples:\n\n{}",
        report.failures.len(),
        report.failures.join("\n\n")
    );
}
