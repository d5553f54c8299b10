//! Validation against an official MCP schema.json (`check --schema FILE`,
//! and the cross-check of the built-in rules).
//!
//! The official files have no root type, only definitions (`definitions` in
//! draft-07, `$defs` in 2020-12). Which definition fits a message is found
//! from the data: request and notification definitions by their
//! `properties.method.const`, results by the request's name with `Request`
//! turned into `Result`. Validators are compiled lazily, one per definition,
//! from the whole document (so `$ref`s resolve) with a root `$ref` to the
//! definition, and cached. `format` is not asserted (it is an annotation in
//! 2020-12; treating it the same for draft-07 keeps verdicts independent of
//! the dialect). Nothing is ever fetched from the network: the crate's
//! jsonschema has no HTTP resolver, so a remote `$ref` fails to compile.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use serde_json::{Map, Value};

use super::envelope::{self, Role};
use super::{Violation, ViolationKind};

/// An official schema.json, ready to validate messages.
pub struct OfficialSchema {
    document: Value,
    /// `definitions` (draft-07) or `$defs` (2020-12).
    defs_key: &'static str,
    /// Method name → the definition of that request or notification.
    by_method: HashMap<String, String>,
    compiled: Mutex<HashMap<String, Arc<jsonschema::Validator>>>,
}

/// Why an official schema cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum OfficialSchemaError {
    /// The file cannot be read.
    #[error("cannot read {}", path.display())]
    Read {
        /// The schema file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The file is not JSON.
    #[error("{} is not JSON", path.display())]
    Parse {
        /// The schema file.
        path: PathBuf,
        /// Where and why.
        #[source]
        source: serde_json::Error,
    },
    /// The JSON is not an MCP schema.
    #[error("{} has neither `definitions` nor `$defs`: not an MCP schema.json", path.as_deref().map_or("the schema".into(), Path::to_string_lossy))]
    NoDefinitions {
        /// The schema file, when it came from one.
        path: Option<PathBuf>,
    },
    /// A definition the check asked for is not in the schema.
    #[error("the schema has no definition named `{definition}`")]
    UnknownDefinition {
        /// Its name.
        definition: String,
    },
    /// A definition does not compile as a JSON Schema.
    #[error("the schema's definition `{definition}` does not compile: {message}")]
    Compile {
        /// Its name.
        definition: String,
        /// What the compiler said.
        message: String,
    },
}

impl std::fmt::Debug for OfficialSchema {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OfficialSchema")
            .field("defs_key", &self.defs_key)
            .field("definitions", &self.definitions().len())
            .field("methods", &self.by_method.len())
            .finish_non_exhaustive()
    }
}

impl OfficialSchema {
    /// Reads a schema.json.
    pub fn load(path: &Path) -> Result<OfficialSchema, OfficialSchemaError> {
        let text = std::fs::read_to_string(path).map_err(|source| OfficialSchemaError::Read {
            path: path.to_owned(),
            source,
        })?;
        let schema = serde_json::from_str(&text).map_err(|source| OfficialSchemaError::Parse {
            path: path.to_owned(),
            source,
        })?;
        OfficialSchema::from_value(schema).map_err(|error| match error {
            OfficialSchemaError::NoDefinitions { .. } => OfficialSchemaError::NoDefinitions {
                path: Some(path.to_owned()),
            },
            other => other,
        })
    }

    /// Uses an already parsed schema.json.
    pub fn from_value(schema: Value) -> Result<OfficialSchema, OfficialSchemaError> {
        let defs_key = ["$defs", "definitions"]
            .into_iter()
            .find(|key| schema.get(key).is_some_and(Value::is_object))
            .ok_or(OfficialSchemaError::NoDefinitions { path: None })?;
        let mut by_method: HashMap<String, String> = HashMap::new();
        for (name, definition) in schema[defs_key].as_object().into_iter().flatten() {
            let Some(method) = definition
                .pointer("/properties/method/const")
                .and_then(Value::as_str)
            else {
                continue;
            };
            // 2026-07-28's `ClientNotification` is itself the cancellation:
            // prefer the definition named for the message over the union.
            let keep_existing = by_method
                .get(method)
                .is_some_and(|existing| !is_union(existing) || is_union(name));
            if !keep_existing {
                by_method.insert(method.to_owned(), name.clone());
            }
        }
        Ok(OfficialSchema {
            document: schema,
            defs_key,
            by_method,
            compiled: Mutex::new(HashMap::new()),
        })
    }

    fn definitions(&self) -> &Map<String, Value> {
        self.document[self.defs_key]
            .as_object()
            .expect("checked in from_value")
    }

    /// Whether the schema has a definition named `name`.
    pub fn has_definition(&self, name: &str) -> bool {
        self.definitions().contains_key(name)
    }

    fn first_of(&self, names: &[&str]) -> Option<String> {
        names
            .iter()
            .find(|n| self.has_definition(n))
            .map(|n| (*n).to_owned())
    }

    /// The definition that fits a message: requests and notifications by
    /// their `method`; results by the request's definition with `Request`
    /// turned into `Result` (`EmptyResult` when there is none, and
    /// `InputRequiredResult` / `CreateTaskResult` when the result says it is
    /// one and the version allows it for that request); errors by
    /// `JSONRPCErrorResponse` / `JSONRPCError`. None when unknown (a custom
    /// method, or a result whose request is unknown).
    pub fn definition_for(&self, message: &Value, request_method: Option<&str>) -> Option<String> {
        let map = message.as_object()?;
        match envelope::role(map) {
            Role::Request | Role::Notification => {
                self.by_method.get(map["method"].as_str()?).cloned()
            }
            Role::Error => self.first_of(&["JSONRPCErrorResponse", "JSONRPCError"]),
            Role::Result => self.result_definition(&map["result"], request_method?),
            Role::Unknown => None,
        }
    }

    fn result_definition(&self, result: &Value, method: &str) -> Option<String> {
        let request = self.by_method.get(method)?;
        let base = request.strip_suffix("Request")?;
        let result_type = result.get("resultType").and_then(Value::as_str);
        if result_type == Some("input_required") && self.admits_input_required(base) {
            return Some("InputRequiredResult".to_owned());
        }
        if result.get("task").is_some_and(Value::is_object)
            && self.has_definition("CreateTaskResult")
            && self.takes_task(request)
        {
            return Some("CreateTaskResult".to_owned());
        }
        let named = format!("{base}Result");
        if self.has_definition(&named) {
            return Some(named);
        }
        self.first_of(&["EmptyResult", "Result"])
    }

    /// Whether `<base>ResultResponse` (2026-07-28) lets the result be an
    /// `InputRequiredResult`.
    fn admits_input_required(&self, base: &str) -> bool {
        self.definitions()
            .get(&format!("{base}ResultResponse"))
            .and_then(|d| d.pointer("/properties/result/anyOf"))
            .and_then(Value::as_array)
            .is_some_and(|alternatives| {
                alternatives.iter().any(|a| {
                    a.get("$ref")
                        .and_then(Value::as_str)
                        .is_some_and(|r| r.ends_with("/InputRequiredResult"))
                })
            })
    }

    /// Whether the request's params define `task` (task augmentation).
    fn takes_task(&self, request: &str) -> bool {
        let params = self
            .definitions()
            .get(request)
            .and_then(|d| d.pointer("/properties/params"));
        params.is_some_and(|p| self.defines_task(p, 3))
    }

    fn defines_task(&self, schema: &Value, depth: u8) -> bool {
        if schema.pointer("/properties/task").is_some() {
            return true;
        }
        if depth == 0 {
            return false;
        }
        let referenced = schema
            .get("$ref")
            .and_then(Value::as_str)
            .and_then(|r| r.rsplit('/').next())
            .and_then(|name| self.definitions().get(name));
        let alternatives = schema.get("anyOf").and_then(Value::as_array);
        referenced.is_some_and(|d| self.defines_task(d, depth - 1))
            || alternatives
                .into_iter()
                .flatten()
                .any(|a| self.defines_task(a, depth - 1))
    }

    /// The generic JSON-RPC definition for a message's role.
    fn envelope_definition(&self, message: &Value) -> Option<String> {
        let role = message.as_object().map_or(Role::Unknown, envelope::role);
        match role {
            Role::Request => self.first_of(&["JSONRPCRequest"]),
            Role::Notification => self.first_of(&["JSONRPCNotification"]),
            Role::Result => self.first_of(&["JSONRPCResultResponse", "JSONRPCResponse"]),
            Role::Error => self.first_of(&["JSONRPCErrorResponse", "JSONRPCError"]),
            Role::Unknown => self.first_of(&["JSONRPCMessage"]),
        }
    }

    /// Whether a definition describes the whole message (2025-11-25 on:
    /// it has `jsonrpc`), not only its method and params.
    fn includes_envelope(&self, definition: &str) -> bool {
        self.definitions()
            .get(definition)
            .and_then(|d| d.pointer("/properties/jsonrpc"))
            .is_some()
    }

    /// Validates a message: against the definition that fits it (the
    /// whole message, or its `result`) and, where that definition leaves the
    /// envelope out, against the generic JSON-RPC definition too. A batch
    /// (a JSON array) is judged by `JSONRPCMessage` and then message by
    /// message. Violations are of kind `OfficialSchema`, pointers rooted at
    /// the message.
    pub fn check_message(&self, message: &Value, request_method: Option<&str>) -> Vec<Violation> {
        let Value::Array(items) = message else {
            return self.check_one(message, request_method, "");
        };
        let mut out = self.validate_or_report("JSONRPCMessage", message, "");
        if out.is_empty() {
            for (i, item) in items.iter().enumerate() {
                out.extend(self.check_one(item, None, &format!("/{i}")));
            }
        }
        out
    }

    fn check_one(
        &self,
        message: &Value,
        request_method: Option<&str>,
        base: &str,
    ) -> Vec<Violation> {
        let mut out = Vec::new();
        let specific = self.definition_for(message, request_method);
        let is_result = message.as_object().map(envelope::role) == Some(Role::Result);
        let whole = specific
            .as_deref()
            .is_some_and(|d| !is_result && self.includes_envelope(d));
        if let Some(envelope) = self.envelope_definition(message).filter(|_| !whole) {
            out.extend(self.validate_or_report(&envelope, message, base));
        }
        match specific {
            Some(definition) if is_result => {
                let pointer = format!("{base}/result");
                out.extend(self.validate_or_report(&definition, &message["result"], &pointer));
            }
            Some(definition) => out.extend(self.validate_or_report(&definition, message, base)),
            None => {}
        }
        out
    }

    fn validate_or_report(&self, definition: &str, value: &Value, base: &str) -> Vec<Violation> {
        self.validate(definition, value, base)
            .unwrap_or_else(|error| {
                vec![Violation::new(
                    ViolationKind::OfficialSchema,
                    base,
                    crate::error_chain::chain(&error),
                )]
            })
    }

    /// Validates a value against a named definition (pointers rooted at
    /// the value).
    pub fn check_definition(
        &self,
        definition: &str,
        value: &Value,
    ) -> Result<Vec<Violation>, OfficialSchemaError> {
        self.validate(definition, value, "")
    }

    fn validate(
        &self,
        definition: &str,
        value: &Value,
        base: &str,
    ) -> Result<Vec<Violation>, OfficialSchemaError> {
        let validator = self.validator(definition)?;
        Ok(validator
            .iter_errors(value)
            .map(|error| {
                let pointer = format!("{base}{}", error.instance_path().as_str());
                let subject = if pointer.is_empty() {
                    "the message".to_owned()
                } else {
                    format!("`{pointer}`")
                };
                // Errors quote the offending value; keep messages short.
                let mut detail = error.to_string();
                if detail.chars().count() > 200 {
                    detail = error.masked().to_string();
                }
                let message = format!("{subject} does not match {definition}: {detail}");
                Violation::new(ViolationKind::OfficialSchema, pointer, message)
            })
            .collect())
    }

    /// The compiled validator for `definition`, compiled on first use.
    fn validator(
        &self,
        definition: &str,
    ) -> Result<Arc<jsonschema::Validator>, OfficialSchemaError> {
        let mut compiled = self.compiled.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(validator) = compiled.get(definition) {
            return Ok(Arc::clone(validator));
        }
        if !self.has_definition(definition) {
            return Err(OfficialSchemaError::UnknownDefinition {
                definition: definition.to_owned(),
            });
        }
        // The whole document, so that `$ref`s between definitions resolve,
        // entered through a root `$ref` (draft-07 ignores the siblings).
        let mut root = self.document.clone();
        let target = format!(
            "#/{}/{}",
            self.defs_key,
            crate::json::pointer_segment(definition)
        );
        root["$ref"] = Value::String(target);
        let validator = jsonschema::options()
            .should_validate_formats(false)
            .build(&root)
            .map_err(|error| OfficialSchemaError::Compile {
                definition: definition.to_owned(),
                message: error.to_string(),
            })?;
        let validator = Arc::new(validator);
        compiled.insert(definition.to_owned(), Arc::clone(&validator));
        Ok(validator)
    }
}

/// `ClientRequest`, `ServerNotification`, …: unions, not messages.
fn is_union(name: &str) -> bool {
    name.starts_with("Client") || name.starts_with("Server")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A tiny stand-in for an official file (the real ones are test data
    /// outside the repository; the integration cross-check uses them).
    fn schema() -> OfficialSchema {
        OfficialSchema::from_value(json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "$defs": {
                "RequestId": {"type": ["string", "integer"]},
                "JSONRPCRequest": {
                    "type": "object",
                    "properties": {"jsonrpc": {"const": "2.0"}, "id": {"$ref": "#/$defs/RequestId"}, "method": {"type": "string"}},
                    "required": ["jsonrpc", "id", "method"]
                },
                "JSONRPCResultResponse": {
                    "type": "object",
                    "properties": {"jsonrpc": {"const": "2.0"}, "id": {"$ref": "#/$defs/RequestId"}, "result": {"type": "object"}},
                    "required": ["jsonrpc", "id", "result"]
                },
                "PingRequest": {"type": "object", "properties": {"method": {"const": "ping"}}},
                "ClientRequest": {"type": "object", "properties": {"method": {"const": "ping"}}},
                "EchoRequest": {"type": "object", "properties": {"method": {"const": "echo"}, "params": {"$ref": "#/$defs/EchoParams"}}, "required": ["params"]},
                "EchoParams": {"type": "object", "properties": {"text": {"type": "string", "format": "email"}}, "required": ["text"]},
                "EchoResult": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
                "EmptyResult": {"type": "object"}
            }
        }))
        .unwrap()
    }

    #[test]
    fn schemas_can_be_shared_between_threads() {
        fn shareable<T: Send + Sync>() {}
        shareable::<OfficialSchema>();
    }

    #[test]
    fn definitions_are_found_from_the_data() {
        let schema = schema();
        let request = json!({"jsonrpc": "2.0", "id": 1, "method": "ping"});
        assert_eq!(
            schema.definition_for(&request, None).as_deref(),
            Some("PingRequest")
        );
        let response = json!({"jsonrpc": "2.0", "id": 1, "result": {}});
        assert_eq!(
            schema.definition_for(&response, Some("echo")).as_deref(),
            Some("EchoResult")
        );
        assert_eq!(
            schema.definition_for(&response, Some("ping")).as_deref(),
            Some("EmptyResult")
        );
        assert_eq!(schema.definition_for(&response, Some("custom")), None);
        assert_eq!(schema.definition_for(&response, None), None);
    }

    #[test]
    fn messages_are_validated_with_pointers_into_them() {
        let schema = schema();
        let request = json!({"jsonrpc": "2.0", "id": 1, "method": "echo", "params": {"text": 5}});
        let found = schema.check_message(&request, None);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].kind, ViolationKind::OfficialSchema);
        assert_eq!(found[0].pointer, "/params/text");
        assert!(
            found[0].message.contains("EchoRequest"),
            "{}",
            found[0].message
        );
        // `format` is not asserted.
        let request = json!({"jsonrpc": "2.0", "id": 1, "method": "echo", "params": {"text": "x"}});
        assert!(schema.check_message(&request, None).is_empty());
        let response = json!({"jsonrpc": "2.0", "id": 1.5, "result": {}});
        let found = schema.check_message(&response, Some("echo"));
        let pointers: Vec<&str> = found.iter().map(|v| v.pointer.as_str()).collect();
        assert_eq!(pointers, ["/id", "/result"]);
    }

    #[test]
    fn errors_name_the_problem() {
        let schema = schema();
        assert!(matches!(
            schema.check_definition("Nope", &json!({})),
            Err(OfficialSchemaError::UnknownDefinition { .. })
        ));
        assert!(matches!(
            OfficialSchema::from_value(json!({"type": "object"})),
            Err(OfficialSchemaError::NoDefinitions { path: None })
        ));
        let missing = OfficialSchema::load(Path::new("/nonexistent/schema.json")).unwrap_err();
        assert!(missing.to_string().contains("/nonexistent/schema.json"));
        let remote = OfficialSchema::from_value(
            json!({"$defs": {"X": {"$ref": "https://example.com/x.json"}}}),
        )
        .unwrap();
        assert!(matches!(
            remote.check_definition("X", &json!(1)),
            Err(OfficialSchemaError::Compile { .. })
        ));
    }
}
