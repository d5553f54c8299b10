//! `check` for fixture files (docs/fixture-format.md): structure and version,
//! every definition and answer against the MCP shapes of the newest
//! protocol version the fixture speaks, tool answers against the tool's
//! `outputSchema`, cases that can never match valid tool arguments or never
//! answer, duplicate names, and secrets.

use std::collections::HashMap;
use std::path::Path;

use serde_json::{Map, Value, json};

use super::findings::{Code, Finding};
use super::messages::push_violations;
use super::{CheckConfig, Lines};
use crate::fixture::{self, Fixture, FixtureError, ItemCase};
use crate::json::is_subset;
use crate::jsonrpc::RpcError;
use crate::schema::{self, Shape, ToolArguments, ToolOutput, Violation, ViolationKind};

/// Every finding for a document that [`fixture::is_fixture`], lines filled
/// in.
pub(super) fn check(
    path: &Path,
    text: &str,
    document: &Value,
    config: &CheckConfig,
) -> Vec<Finding> {
    let mut findings = Vec::new();
    match fixture::parse(path, text) {
        Ok(fixture) => contents(&fixture, config, &mut findings),
        Err(FixtureError::TooNew {
            found, supported, ..
        }) => findings.push(Finding::new(
            Code::FormatVersion,
            "/fixture_version",
            format!(
                "fixture version {found} is newer than this mcpcassette reads (up to {supported}); upgrade mcpcassette"
            ),
        )),
        Err(FixtureError::Invalid {
            line,
            pointer,
            message,
            ..
        }) => {
            let code = if pointer == "/fixture_version" {
                Code::FormatVersion
            } else {
                Code::Structure
            };
            findings.push(Finding::new(code, pointer, message).at_line(line));
        }
        Err(other) => findings.push(Finding::new(Code::Structure, "", other.to_string())),
    }
    // The document is valid JSON: secrets are looked for even when its
    // structure is wrong.
    super::secrets::scan(document, &config.redactor, &mut findings);
    if !findings.is_empty() {
        let lines = Lines::index(text);
        for finding in &mut findings {
            finding.line = finding.line.or_else(|| lines.line_of(&finding.pointer));
        }
    }
    findings
}

/// The checks on a fixture that parsed.
fn contents(fixture: &Fixture, config: &CheckConfig, findings: &mut Vec<Finding>) {
    for (i, version) in fixture.protocol_versions.iter().enumerate() {
        if !schema::VERSIONS.contains(&version.as_str()) {
            findings.push(Finding::new(
                Code::Structure,
                format!("/protocol_versions/{i}"),
                format!(
                    "`{version}` is not an MCP protocol version this build knows ({})",
                    schema::VERSIONS.join(", ")
                ),
            ));
        }
    }
    duplicates(fixture, findings);
    unreachable(fixture, findings);
    tool_arguments(fixture, findings);
    tool_outputs(fixture, findings);
    let spoken = fixture.versions();
    let newest = schema::VERSIONS
        .iter()
        .rev()
        .find(|v| spoken.contains(v))
        .copied();
    if let Some(version) = newest {
        shapes(fixture, version, config, findings);
    }
}

/// Items with the same name (URI, URI template): only the first answers.
fn duplicates(fixture: &Fixture, findings: &mut Vec<Finding>) {
    let lists: [(&str, &str, Vec<Option<&str>>); 4] = [
        (
            "tools",
            "tool",
            fixture.tools.iter().map(|t| t.name()).collect(),
        ),
        (
            "resources",
            "resource",
            fixture.resources.iter().map(|r| r.uri()).collect(),
        ),
        (
            "resourceTemplates",
            "resource template",
            fixture
                .resource_templates
                .iter()
                .map(|t| t.uri_template())
                .collect(),
        ),
        (
            "prompts",
            "prompt",
            fixture.prompts.iter().map(|p| p.name()).collect(),
        ),
    ];
    for (key, what, names) in lists {
        let mut seen = HashMap::new();
        for (i, name) in names.into_iter().enumerate() {
            let Some(name) = name else { continue };
            if let Some(first) = seen.insert(name, i) {
                seen.insert(name, first);
                findings.push(Finding::new(
                    Code::Duplicate,
                    format!("/{key}/{i}"),
                    format!(
                        "{what} `{name}` is defined again: only the first (/{key}/{first}) ever answers"
                    ),
                ));
            }
        }
    }
}

/// Cases an earlier case always wins over: its `when` is a subset of the
/// later one's, so it matches everything the later one does.
fn unreachable(fixture: &Fixture, findings: &mut Vec<Finding>) {
    let items = fixture
        .tools
        .iter()
        .enumerate()
        .map(|(i, t)| (format!("/tools/{i}"), &t.cases))
        .chain(
            fixture
                .resources
                .iter()
                .enumerate()
                .map(|(i, r)| (format!("/resources/{i}"), &r.cases)),
        )
        .chain(
            fixture
                .prompts
                .iter()
                .enumerate()
                .map(|(i, p)| (format!("/prompts/{i}"), &p.cases)),
        );
    for (base, cases) in items {
        let located: Vec<(String, &ItemCase)> = cases
            .iter()
            .enumerate()
            .map(|(j, case)| (format!("{base}/cases/{j}"), case))
            .collect();
        shadowed(&located, findings);
    }
    // Every template's cases are tried, in order, before any fallback.
    let templates: Vec<(String, &ItemCase)> = fixture
        .resource_templates
        .iter()
        .enumerate()
        .flat_map(|(t, template)| {
            template
                .cases
                .iter()
                .enumerate()
                .map(move |(j, case)| (format!("/resourceTemplates/{t}/cases/{j}"), case))
        })
        .collect();
    shadowed(&templates, findings);
}

fn shadowed(cases: &[(String, &ItemCase)], findings: &mut Vec<Finding>) {
    let everything = json!({});
    let when = |case: &ItemCase| -> Value {
        if case.when.is_null() {
            everything.clone()
        } else {
            case.when.clone()
        }
    };
    for (j, (pointer, case)) in cases.iter().enumerate() {
        let later = when(case);
        if let Some((earlier, _)) = cases[..j]
            .iter()
            .find(|(_, earlier)| is_subset(&when(earlier), &later))
        {
            findings.push(Finding::new(
                Code::UnreachableCase,
                pointer.clone(),
                format!(
                    "this case can never answer: the case at {earlier} matches everything it matches"
                ),
            ));
        }
    }
}

/// Tool cases whose `when` no valid arguments can match: what the `when`
/// names breaks the tool's `inputSchema` whatever else the arguments hold.
fn tool_arguments(fixture: &Fixture, findings: &mut Vec<Finding>) {
    for (t, tool) in fixture.tools.iter().enumerate() {
        if tool.cases.is_empty() {
            continue;
        }
        let name = tool.name().unwrap_or("?");
        // An invalid schema is reported by the shape check.
        let validator = tool
            .definition
            .get("inputSchema")
            .and_then(|schema| ToolArguments::new(&relax(schema)).ok());
        for (j, case) in tool.cases.iter().enumerate() {
            let pointer = format!("/tools/{t}/cases/{j}/when");
            match &case.when {
                Value::Null => {}
                Value::Object(_) => {
                    let Some(validator) = &validator else { continue };
                    for violation in validator.check(&case.when) {
                        findings.push(Finding::new(
                            Code::Schema(ViolationKind::ToolArguments),
                            format!("{pointer}{}", violation.pointer),
                            format!(
                                "this case of `{name}` can never match valid arguments: {}",
                                violation.message
                            ),
                        ));
                    }
                }
                _ => findings.push(Finding::new(
                    Code::Schema(ViolationKind::ToolArguments),
                    pointer,
                    format!(
                        "this case of `{name}` can never match: tool arguments are an object, so `when` must be one"
                    ),
                )),
            }
        }
    }
}

/// Answers of tools with an `outputSchema`: each case's and fallback
/// `result` must carry `structuredContent` the schema accepts, and so must
/// the generated result when it answers (no fallback).
fn tool_outputs(fixture: &Fixture, findings: &mut Vec<Finding>) {
    for (t, tool) in fixture.tools.iter().enumerate() {
        let Some(schema) = tool.definition.get("outputSchema") else {
            continue;
        };
        // An invalid schema is reported by the shape check.
        let Ok(output) = ToolOutput::new(schema) else {
            continue;
        };
        let name = tool.name().unwrap_or("?");
        let mut judge = |pointer: String, result: &Value, what: &str| {
            for violation in output.check(result) {
                findings.push(Finding::new(
                    Code::Schema(ViolationKind::StructuredContent),
                    format!("{pointer}{}", violation.pointer),
                    format!("{what} of `{name}`: {}", violation.message),
                ));
            }
        };
        for (j, case) in tool.cases.iter().enumerate() {
            if let Some(result) = &case.result {
                judge(format!("/tools/{t}/cases/{j}/result"), result, "this case");
            }
        }
        match (&tool.result, &tool.error) {
            (Some(result), _) => judge(format!("/tools/{t}/result"), result, "the fallback result"),
            (None, Some(_)) => {}
            (None, None) => {
                let generated = crate::example::tool_result(Some(schema), "");
                if !output.check(&generated).is_empty() {
                    findings.push(Finding::new(
                        Code::Schema(ViolationKind::StructuredContent),
                        format!("/tools/{t}/outputSchema"),
                        format!(
                            "no value generated from the outputSchema of `{name}` satisfies it, so the generated result would break it: give the tool a `result`"
                        ),
                    ));
                }
            }
        }
    }
}

/// A weaker schema that a `when` breaks only if every superset of it (the
/// arguments a case matches: objects with more members, arrays of the same
/// length and supersets for items) breaks the real one. Constraints that
/// more members can satisfy (`required`, `minProperties`, …) or that branch
/// on them (`if`, `not`, `oneOf`'s "only one", `uniqueItems`,
/// `maxContains`) are dropped or weakened; what is left (types, scalar
/// values, `additionalProperties`, array lengths, …) a superset breaks
/// wherever the `when` does.
fn relax(schema: &Value) -> Value {
    let Value::Object(map) = schema else {
        return schema.clone();
    };
    let relax_all = |items: &Value| match items {
        Value::Array(items) => Value::Array(items.iter().map(relax).collect()),
        other => relax(other),
    };
    let relax_map = |members: &Value| match members {
        Value::Object(members) => Value::Object(
            members
                .iter()
                .map(|(name, schema)| (name.clone(), relax(schema)))
                .collect(),
        ),
        other => other.clone(),
    };
    let mut out = Map::new();
    let mut any_of = Vec::new();
    for (key, value) in map {
        let relaxed = match key.as_str() {
            "required"
            | "minProperties"
            | "dependentRequired"
            | "dependencies"
            | "dependentSchemas"
            | "not"
            | "if"
            | "then"
            | "else"
            | "unevaluatedProperties"
            | "unevaluatedItems"
            | "uniqueItems"
            | "maxContains" => continue,
            // An object or array value may be matched by a `when` that
            // names only part of it.
            "const" if !is_scalar(value) => continue,
            "enum" if value.as_array().is_some_and(|v| !v.iter().all(is_scalar)) => continue,
            "oneOf" => {
                any_of.push(json!({"anyOf": relax_all(value)}));
                continue;
            }
            "properties" | "patternProperties" | "$defs" | "definitions" => relax_map(value),
            "items"
            | "prefixItems"
            | "additionalItems"
            | "additionalProperties"
            | "contains"
            | "propertyNames"
            | "allOf"
            | "anyOf" => relax_all(value),
            _ => value.clone(),
        };
        out.insert(key.clone(), relaxed);
    }
    if !any_of.is_empty() {
        let mut all_of = match out.remove("allOf") {
            Some(Value::Array(all_of)) => all_of,
            Some(other) => vec![other],
            None => Vec::new(),
        };
        all_of.extend(any_of);
        out.insert("allOf".into(), Value::Array(all_of));
    }
    Value::Object(out)
}

fn is_scalar(value: &Value) -> bool {
    !matches!(value, Value::Object(_) | Value::Array(_))
}

/// Definitions and answers against `version`'s MCP shapes (and the
/// official schema, when given).
fn shapes(fixture: &Fixture, version: &str, config: &CheckConfig, findings: &mut Vec<Finding>) {
    let shape = |findings: &mut Vec<Finding>, base: &str, shape: Shape<'_>, value: &Value| {
        push_violations(findings, base, schema::check_shape(version, shape, value));
    };
    shape(
        findings,
        "/server",
        Shape::Implementation,
        &fixture.server_info(),
    );
    if let Some(capabilities) = &fixture.capabilities {
        shape(
            findings,
            "/capabilities",
            Shape::ServerCapabilities,
            capabilities,
        );
    }
    let mut answers = Answers {
        version,
        config,
        findings,
    };
    for (i, tool) in fixture.tools.iter().enumerate() {
        let base = format!("/tools/{i}");
        answers.definition(&base, Shape::Tool, "Tool", &tool.definition);
        answers.cases(&base, "tools/call", &tool.cases);
        answers.fallback(&base, "tools/call", &tool.result, &tool.error);
    }
    for (i, resource) in fixture.resources.iter().enumerate() {
        let base = format!("/resources/{i}");
        answers.definition(&base, Shape::Resource, "Resource", &resource.definition);
        answers.cases(&base, "resources/read", &resource.cases);
        answers.fallback(&base, "resources/read", &resource.result, &resource.error);
        let given = [
            ("text", resource.text.is_some()),
            ("blob", resource.blob.is_some()),
            ("contents", resource.contents.is_some()),
        ];
        if let Some((key, _)) = given.into_iter().find(|(_, given)| *given)
            && let Some(Ok(result)) = resource.fallback(resource.uri().unwrap_or_default())
        {
            // The synthesized result's pointers do not exist in the file:
            // the finding points at the field it came from.
            let mut found = Vec::new();
            answers.response(&mut found, "", "resources/read", Ok(&result));
            for mut finding in found {
                finding.pointer = format!("{base}/{key}");
                finding.message = format!(
                    "the `resources/read` result made from `{key}`: {}",
                    finding.message
                );
                answers.findings.push(finding);
            }
        }
    }
    for (i, template) in fixture.resource_templates.iter().enumerate() {
        let base = format!("/resourceTemplates/{i}");
        answers.definition(
            &base,
            Shape::ResourceTemplate,
            "ResourceTemplate",
            &template.definition,
        );
        answers.cases(&base, "resources/read", &template.cases);
        answers.fallback(&base, "resources/read", &template.result, &template.error);
    }
    for (i, prompt) in fixture.prompts.iter().enumerate() {
        let base = format!("/prompts/{i}");
        answers.definition(&base, Shape::Prompt, "Prompt", &prompt.definition);
        answers.cases(&base, "prompts/get", &prompt.cases);
        answers.fallback(&base, "prompts/get", &prompt.result, &prompt.error);
    }
}

/// Checks definitions and answers for one version.
struct Answers<'a> {
    version: &'a str,
    config: &'a CheckConfig,
    findings: &'a mut Vec<Finding>,
}

impl Answers<'_> {
    fn definition(
        &mut self,
        base: &str,
        shape: Shape<'_>,
        official_name: &str,
        definition: &Map<String, Value>,
    ) {
        let definition = Value::Object(definition.clone());
        let violations = schema::check_shape(self.version, shape, &definition);
        push_violations(self.findings, base, violations);
        if let Some(official) = &self.config.official
            && official.has_definition(official_name)
            && let Ok(violations) = official.check_definition(official_name, &definition)
        {
            push_violations(self.findings, base, violations);
        }
    }

    fn cases(&mut self, base: &str, method: &str, cases: &[ItemCase]) {
        for (j, case) in cases.iter().enumerate() {
            let pointer = format!("{base}/cases/{j}");
            self.fallback(&pointer, method, &case.result, &case.error);
        }
    }

    /// A `result` or `error` at `base` (which holds the `result`/`error`
    /// key, so the response's own pointers land on it).
    fn fallback(
        &mut self,
        base: &str,
        method: &str,
        result: &Option<Value>,
        error: &Option<RpcError>,
    ) {
        let answer = match (result, error) {
            (Some(result), _) => Ok(result),
            (None, Some(error)) => Err(error),
            (None, None) => return,
        };
        let mut found = Vec::new();
        self.response(&mut found, base, method, answer);
        self.findings.extend(found);
    }

    /// Checks the response carrying `answer`, as a server answering
    /// `method` in `version` would send it.
    fn response(
        &self,
        findings: &mut Vec<Finding>,
        base: &str,
        method: &str,
        answer: Result<&Value, &RpcError>,
    ) {
        let response = match answer {
            Ok(result) => {
                let result = if self.version >= crate::protocol::MODERN_VERSION {
                    fixture::modern_result(method, result.clone())
                } else {
                    result.clone()
                };
                json!({"jsonrpc": "2.0", "id": 0, "result": result})
            }
            Err(error) => error.response(json!(0)),
        };
        let mut violations: Vec<Violation> =
            schema::check_message(self.version, &response, Some(method));
        if let Some(official) = &self.config.official {
            violations.extend(official.check_message(&response, Some(method)));
        }
        // Messages name pointers rooted at the synthesized response; root
        // them at the file, like the finding's own pointer.
        if !base.is_empty() {
            for violation in &mut violations {
                for key in ["result", "error"] {
                    violation.message = violation
                        .message
                        .replace(&format!("`/{key}"), &format!("`{base}/{key}"));
                }
            }
        }
        push_violations(findings, base, violations);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relaxing_keeps_what_supersets_cannot_fix() {
        let schema = json!({
            "type": "object",
            "properties": {
                "required": {"type": "string"},
                "mode": {"enum": ["a", "b"]},
                "pick": {"oneOf": [{"type": "string"}, {"const": "x"}]},
                "nested": {"type": "object", "required": ["x"], "properties": {"x": {"type": "integer"}}}
            },
            "required": ["mode"],
            "additionalProperties": false,
            "if": {"properties": {"mode": {"const": "a"}}},
            "then": {"required": ["required"]}
        });
        let relaxed = ToolArguments::new(&relax(&schema)).unwrap();
        // Missing members are fine: the arguments may carry them.
        assert!(relaxed.check(&json!({})).is_empty());
        assert!(relaxed.check(&json!({"mode": "a"})).is_empty());
        assert!(relaxed.check(&json!({"nested": {}})).is_empty());
        // "x" matches both branches of the oneOf: fine for a `when`.
        assert!(relaxed.check(&json!({"pick": "x"})).is_empty());
        // Wrong values, wrong types and unknown members are not.
        assert_eq!(relaxed.check(&json!({"mode": "c"})).len(), 1);
        assert_eq!(
            relaxed.check(&json!({"nested": {"x": "1"}}))[0].pointer,
            "/nested/x"
        );
        assert_eq!(
            relaxed.check(&json!({"required": 1}))[0].pointer,
            "/required"
        );
        assert_eq!(relaxed.check(&json!({"other": 1})).len(), 1);
    }
}
