//! Tool definitions, their input/output schemas (which must themselves be
//! valid JSON Schema), and recorded tool arguments against an inputSchema.

use serde_json::Value;

use super::ViolationKind::{self, InputSchema, ToolDefinition};
use super::common::{DESCRIPTION, ICONS, META, TITLE};
use super::version::{V2025_03_26, V2025_06_18, V2025_11_25, V2026_07_28, only};
use super::walker::{Field, Obj, Rule, Ty, Walker, found};
use super::{Violation, walker::describe_pointer};

/// A tool as `tools/list` advertises it (and sampling requests offer it).
pub(crate) const TOOL: Ty = Ty::Kind(ToolDefinition, &Ty::Obj(&TOOL_OBJ));

static TOOL_OBJ: Obj = Obj {
    fields: &[
        Field::req("name", NON_BLANK),
        TITLE,
        DESCRIPTION,
        Field::req("inputSchema", Ty::Kind(InputSchema, &INPUT_SCHEMA)),
        Field::opt("outputSchema", Ty::Kind(InputSchema, &OUTPUT_SCHEMA)).since(V2025_06_18),
        Field::opt("annotations", Ty::Obj(&TOOL_ANNOTATIONS)).since(V2025_03_26),
        ICONS,
        Field::opt(
            "execution",
            Ty::Obj(&Obj {
                fields: &[Field::opt(
                    "taskSupport",
                    Ty::Enum(&["forbidden", "optional", "required"]),
                )],
            }),
        )
        .within(only(V2025_11_25)),
        META,
    ],
};

static TOOL_ANNOTATIONS: Obj = Obj {
    fields: &[
        Field::opt("title", Ty::Str),
        Field::opt("readOnlyHint", Ty::Bool),
        Field::opt("destructiveHint", Ty::Bool),
        Field::opt("idempotentHint", Ty::Bool),
        Field::opt("openWorldHint", Ty::Bool),
    ],
};

/// A tool name clients can call: a string with something in it.
const NON_BLANK: Ty = Ty::Rule(&Rule {
    expects: "a non-blank string",
    check: |walker, value| match value.as_str() {
        Some(name) if name.trim().is_empty() => walker.fail("must not be blank"),
        Some(_) => {}
        None => walker.mismatch("a non-blank string", value),
    },
});

/// What tool schemas are, for messages.
const OBJECT_SCHEMA: &str = "a JSON Schema object with `\"type\": \"object\"`";

const INPUT_SCHEMA: Ty = Ty::Rule(&Rule {
    expects: OBJECT_SCHEMA,
    check: |walker, value| object_schema(walker, value, true),
});

/// 2026-07-28 lets `outputSchema` describe any JSON value.
const OUTPUT_SCHEMA: Ty = Ty::Rule(&Rule {
    expects: OBJECT_SCHEMA,
    check: |walker, value| object_schema(walker, value, walker.version < V2026_07_28),
});

/// Legacy versions spell out `properties` (schemas as objects) and `required`.
static LEGACY_SCHEMA: Obj = Obj {
    fields: &[
        Field::opt("properties", Ty::MapOf(&Ty::Object)),
        Field::opt("required", Ty::ArrayOf(&Ty::Str)),
        Field::opt("$schema", Ty::Str).since(V2025_11_25),
    ],
};

static MODERN_SCHEMA: Obj = Obj {
    fields: &[Field::opt("$schema", Ty::Str)],
};

/// The MCP constraints on a tool schema, then JSON Schema's own
/// meta-schema (so a schema a client cannot compile is caught at record time).
fn object_schema(walker: &mut Walker<'_>, value: &Value, must_be_object_type: bool) {
    if !value.is_object() {
        return walker.mismatch(OBJECT_SCHEMA, value);
    }
    let structure = walker.trial(|w| {
        match value.get("type") {
            Some(ty) if must_be_object_type && ty != "object" => {
                w.at("type", |w| w.mismatch("\"object\"", ty))
            }
            None if must_be_object_type => w.missing("type", "\"object\"", None),
            _ => {}
        }
        let rest = if w.version < V2026_07_28 {
            &LEGACY_SCHEMA
        } else {
            &MODERN_SCHEMA
        };
        w.obj(rest, value);
    });
    if !structure.is_empty() {
        return walker.extend(structure);
    }
    let pointer = walker.pointer().to_owned();
    walker.extend(meta_violations(
        walker.version >= V2025_11_25,
        value,
        &pointer,
    ));
}

/// Meta-validation: the dialect `$schema` names (none we know: not checked),
/// else draft-07 before 2025-11-25 and 2020-12 from then on (the MCP default).
fn meta_violations(default_2020_12: bool, schema: &Value, pointer: &str) -> Vec<Violation> {
    let validator = match schema.get("$schema") {
        Some(_) => match jsonschema::meta::validator_for(schema) {
            Ok(validator) => validator,
            Err(_) => return Vec::new(),
        },
        None if default_2020_12 => jsonschema::draft202012::meta::validator(),
        None => jsonschema::draft7::meta::validator(),
    };
    let mut out: Vec<Violation> = Vec::new();
    for error in validator.iter_errors(schema) {
        let at = format!("{pointer}{}", error.instance_path().as_str());
        let message = format!(
            "{} is not valid JSON Schema: {error}",
            describe_pointer(&at)
        );
        let violation = Violation::new(InputSchema, at, message);
        // The 2020-12 meta-schema reaches some keywords by several paths.
        if !out.contains(&violation) {
            out.push(violation);
        }
    }
    out
}

/// Validates recorded arguments against one tool's `inputSchema`, compiled
/// once (a cassette calls the same tool many times).
#[derive(Debug)]
pub struct ToolArguments {
    validator: jsonschema::Validator,
}

impl ToolArguments {
    /// Compiles `input_schema`; a schema that does not compile (invalid, or
    /// with a `$ref` that would need the network) is an
    /// [`InputSchema`] violation.
    pub fn new(input_schema: &Value) -> Result<ToolArguments, Violation> {
        if !input_schema.is_object() {
            return Err(Violation::new(
                InputSchema,
                "",
                format!(
                    "the inputSchema must be an object schema; found {}",
                    found(input_schema)
                ),
            ));
        }
        jsonschema::options()
            .build(input_schema)
            .map(|validator| ToolArguments { validator })
            .map_err(|error| {
                Violation::new(
                    InputSchema,
                    error.instance_path().as_str(),
                    format!("the inputSchema cannot be compiled: {error}"),
                )
            })
    }

    /// The ways `arguments` break the schema ([`ToolArguments`](ViolationKind::ToolArguments)
    /// violations, pointers rooted at the arguments object).
    pub fn check(&self, arguments: &Value) -> Vec<Violation> {
        self.validator
            .iter_errors(arguments)
            .map(|error| {
                let at = error.instance_path().as_str().to_owned();
                let message = if at.is_empty() {
                    format!("the arguments break the inputSchema: {error}")
                } else {
                    format!("`{at}` breaks the inputSchema: {error}")
                };
                Violation::new(ViolationKind::ToolArguments, at, message)
            })
            .collect()
    }
}

/// Validates `tools/call` results against one tool's `outputSchema`,
/// compiled once, as the SDK clients do: a result that is not an error must
/// carry `structuredContent`, and any `structuredContent` must satisfy the
/// schema (formats are annotations, as in the clients' validators).
#[derive(Debug)]
pub struct ToolOutput {
    validator: jsonschema::Validator,
}

impl ToolOutput {
    /// Compiles `output_schema`; a schema that does not compile is an
    /// [`InputSchema`] violation (the kind for both of a tool's schemas).
    pub fn new(output_schema: &Value) -> Result<ToolOutput, Violation> {
        // As its `$schema` says, else 2020-12, else draft-07 (legacy MCP's
        // default, with tuple `items`).
        jsonschema::options()
            .build(output_schema)
            .or_else(|error| {
                jsonschema::options()
                    .with_draft(jsonschema::Draft::Draft7)
                    .build(output_schema)
                    .map_err(|_| error)
            })
            .map(|validator| ToolOutput { validator })
            .map_err(|error| {
                Violation::new(
                    InputSchema,
                    error.instance_path().as_str(),
                    format!("the outputSchema cannot be compiled: {error}"),
                )
            })
    }

    /// The ways `result` (a `tools/call` result) breaks the schema
    /// ([`StructuredContent`](ViolationKind::StructuredContent) violations,
    /// pointers rooted at the result). Results that are not complete
    /// (2026-07-28 `input_required`, tasks) are not judged.
    pub fn check(&self, result: &Value) -> Vec<Violation> {
        let complete = result
            .get("resultType")
            .is_none_or(|kind| kind == "complete");
        if !result.is_object() || !complete {
            return Vec::new();
        }
        let is_error = result.get("isError") == Some(&Value::Bool(true));
        let Some(structured) = result.get("structuredContent") else {
            if is_error {
                return Vec::new();
            }
            return vec![Violation::new(
                ViolationKind::StructuredContent,
                "/structuredContent",
                "the tool declares an outputSchema, but the result has no `structuredContent` \
                 (SDK clients reject it)",
            )];
        };
        self.validator
            .iter_errors(structured)
            .map(|error| {
                let at = error.instance_path().as_str().to_owned();
                let message = if at.is_empty() {
                    format!("`structuredContent` breaks the outputSchema: {error}")
                } else {
                    format!("`structuredContent{at}` breaks the outputSchema: {error}")
                };
                Violation::new(
                    ViolationKind::StructuredContent,
                    format!("/structuredContent{at}"),
                    message,
                )
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::version::{V2024_11_05, Version};
    use serde_json::json;

    fn run(version: Version, value: &Value) -> Vec<Violation> {
        let mut out = Vec::new();
        Walker::new(version, ViolationKind::ResultShape, "/tools/0", &mut out).check(&TOOL, value);
        out
    }

    #[test]
    fn tools_need_a_name_and_an_object_schema() {
        let found = run(
            V2024_11_05,
            &json!({"name": " ", "inputSchema": {"type": "array"}}),
        );
        assert_eq!(found.len(), 2);
        assert_eq!(found[0].kind, ToolDefinition);
        assert_eq!(found[0].message, "`/tools/0/name` must not be blank");
        assert_eq!(found[1].kind, InputSchema);
        assert_eq!(found[1].pointer, "/tools/0/inputSchema/type");
        let found = run(V2024_11_05, &json!({"name": "x"}));
        assert_eq!(found[0].kind, InputSchema);
        assert_eq!(
            found[0].message,
            "`/tools/0/inputSchema` is required (a JSON Schema object with `\"type\": \"object\"`)"
        );
    }

    #[test]
    fn schemas_are_meta_validated() {
        let tool = json!({"name": "x", "inputSchema": {"type": "object", "properties": {"a": {"type": "bogus"}}}});
        let found = run(V2025_11_25, &tool);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].kind, InputSchema);
        assert_eq!(found[0].pointer, "/tools/0/inputSchema/properties/a/type");
        // Tuple `items` is draft-07, the legacy default, but not 2020-12.
        let tuple = json!({"name": "x", "inputSchema": {"type": "object", "properties": {"a": {"items": [{}]}}}});
        assert!(run(V2024_11_05, &tuple).is_empty());
        assert_eq!(run(V2025_11_25, &tuple).len(), 1);
    }

    #[test]
    fn output_schemas_may_describe_anything_from_2026() {
        let tool = json!({"name": "x", "inputSchema": {"type": "object"}, "outputSchema": {"type": "array"}});
        assert_eq!(
            run(V2025_11_25, &tool)[0].pointer,
            "/tools/0/outputSchema/type"
        );
        assert!(run(V2026_07_28, &tool).is_empty());
    }

    #[test]
    fn arguments_are_checked_against_the_compiled_schema() {
        let schema =
            json!({"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]});
        let arguments = ToolArguments::new(&schema).unwrap();
        assert!(arguments.check(&json!({"n": 3})).is_empty());
        let found = arguments.check(&json!({"n": "3"}));
        assert_eq!(found[0].kind, ViolationKind::ToolArguments);
        assert_eq!(found[0].pointer, "/n");
        assert_eq!(arguments.check(&json!({}))[0].pointer, "");
        let bad = ToolArguments::new(&json!({"type": "bogus"})).unwrap_err();
        assert_eq!(bad.kind, InputSchema);
        assert!(ToolArguments::new(&json!({"$ref": "https://example.com/s.json"})).is_err());
    }

    #[test]
    fn results_are_checked_against_the_output_schema() {
        let schema = json!({"type": "object", "properties": {"sum": {"type": "number"}}, "required": ["sum"]});
        let output = ToolOutput::new(&schema).unwrap();
        let text = json!([{"type": "text", "text": "3"}]);
        assert!(
            output
                .check(&json!({"content": text, "structuredContent": {"sum": 3}}))
                .is_empty()
        );
        let missing = output.check(&json!({"content": text}));
        assert_eq!(missing.len(), 1);
        assert_eq!(missing[0].kind, ViolationKind::StructuredContent);
        assert_eq!(missing[0].pointer, "/structuredContent");
        let wrong = output.check(&json!({"content": text, "structuredContent": {"sum": "3"}}));
        assert_eq!(wrong[0].pointer, "/structuredContent/sum");
        assert!(
            wrong[0].message.contains("breaks the outputSchema"),
            "{}",
            wrong[0]
        );
        assert_eq!(
            output.check(&json!({"content": text, "structuredContent": {}}))[0].pointer,
            "/structuredContent"
        );
        // Errors need none, but what they carry must still fit; results
        // still waiting for input are not judged.
        assert!(
            output
                .check(&json!({"content": text, "isError": true}))
                .is_empty()
        );
        assert_eq!(
            output
                .check(&json!({"content": text, "isError": true, "structuredContent": 1}))
                .len(),
            1
        );
        assert!(
            output
                .check(&json!({"resultType": "input_required"}))
                .is_empty()
        );
        assert!(ToolOutput::new(&json!({"type": "bogus"})).is_err());
    }
}
