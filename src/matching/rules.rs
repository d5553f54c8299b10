//! Match rules: how a live request is compared with recorded ones.
//!
//! Rules are stored in the cassette (so it replays the same everywhere) and
//! can be overridden on the command line.

use std::borrow::Cow;
use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use super::{Key, MessageKind, key_from_canonical};
use crate::json::{Selector, canonical_json};

/// How live requests are paired with recorded ones.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Strategy {
    /// By content (method + params under the rules), in any order across
    /// different requests and in recorded order for the same request.
    #[default]
    Keyed,
    /// In recorded order overall, checking only the method: the n-th
    /// request gets the n-th recorded answer.
    Sequential,
    /// In recorded order overall, checking method and params.
    Strict,
}

/// What happens when a request has used up its recorded answers.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum OnExhausted {
    /// Answer with an error (code -32001).
    #[default]
    Error,
    /// Answer again with the last recorded answer.
    RepeatLast,
}

/// A hand-written answer for requests that match `when`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Case {
    /// The method it answers.
    pub method: String,
    /// A recursive subset of the params: objects may carry extra fields,
    /// arrays match by length and position. Absent: any params.
    #[serde(default, skip_serializing_if = "Value::is_null")]
    pub when: Value,
    /// The result to answer with.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<Value>,
    /// Or the JSON-RPC error (`code`, `message`, `data`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<Value>,
}

/// The rules in force for one cassette.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Rules {
    /// Pairing strategy.
    #[serde(default, skip_serializing_if = "is_default")]
    pub strategy: Strategy,
    /// What to do when a request's recorded answers run out.
    #[serde(default, skip_serializing_if = "is_default")]
    pub on_exhausted: OnExhausted,
    /// Parts of requests that never take part in matching, as selectors
    /// rooted at the message (`/params/arguments/timestamp`,
    /// `/params/**/requestId`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ignore: Vec<Selector>,
    /// Per method, the only parts that take part in matching
    /// (`"tools/call": ["/params/name", "/params/arguments"]`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub keys: BTreeMap<String, Vec<Selector>>,
    /// Hand-written answers, tried in order when nothing recorded matches.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cases: Vec<Case>,
    /// What recording masked beyond the defaults (`--redact`). Replay masks
    /// live requests the same way before matching, so a redacted cassette
    /// still answers.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub redact: Vec<crate::redact::RedactRule>,
    /// Environment variables whose values were masked whatever their names
    /// (`--redact-env`); names only, never values.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub redact_env: Vec<String>,
    /// Volatile fields `verify` normalises on both sides before comparing
    /// (`{"selector": "/result/**/timestamp", "replacement": "[timestamp]"}`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub normalize: Vec<crate::drift::NormalizeRule>,
    /// `false` when recorded with `--no-default-redaction`: token shapes and
    /// secret-looking variables were left alone, and replay leaves them too.
    #[serde(default = "yes", skip_serializing_if = "is_true")]
    pub default_redaction: bool,
}

fn yes() -> bool {
    true
}

fn is_true(value: &bool) -> bool {
    *value
}

fn is_default<T: Default + PartialEq>(value: &T) -> bool {
    *value == T::default()
}

impl Default for Rules {
    fn default() -> Self {
        Rules {
            strategy: Strategy::default(),
            on_exhausted: OnExhausted::default(),
            ignore: Vec::new(),
            keys: BTreeMap::new(),
            cases: Vec::new(),
            redact: Vec::new(),
            redact_env: Vec::new(),
            normalize: Vec::new(),
            default_redaction: true,
        }
    }
}

impl Rules {
    /// The redaction these rules ask for, over the process's environment.
    pub fn redaction(&self) -> crate::redact::RedactConfig {
        let mut config = crate::redact::RedactConfig::from_process_env(
            self.redact.clone(),
            self.redact_env.clone(),
        );
        config.defaults = self.default_redaction;
        config
    }

    /// Adds redaction rules and variable names not already present.
    pub fn add_redaction(&mut self, rules: &[crate::redact::RedactRule], env: &[String]) {
        for rule in rules {
            if !self.redact.contains(rule) {
                self.redact.push(rule.clone());
            }
        }
        for name in env {
            if !self.redact_env.contains(name) {
                self.redact_env.push(name.clone());
            }
        }
    }

    /// Whether these are the default rules.
    pub fn is_default(&self) -> bool {
        is_default(self)
    }

    /// Checks what serde cannot: each case has exactly one of `result` and
    /// `error`. Errors name the case by JSON pointer under the rules.
    pub fn validate(&self) -> Result<(), String> {
        for (i, case) in self.cases.iter().enumerate() {
            if case.result.is_some() == case.error.is_some() {
                return Err(format!(
                    "/cases/{i}: a case needs exactly one of `result` and `error`"
                ));
            }
            if let Some(error) = &case.error
                && !(error.get("code").is_some_and(Value::is_i64)
                    && error.get("message").is_some_and(Value::is_string))
            {
                return Err(format!(
                    "/cases/{i}/error: needs an integer `code` and a string `message`"
                ));
            }
        }
        Ok(())
    }

    /// What matching compares for a message: its params without `_meta`,
    /// without ignored parts, or only the method's key parts.
    pub fn normalize<'a>(&self, method: &str, params: Option<&'a Value>) -> Cow<'a, Value> {
        let keys = self.keys.get(method);
        if self.ignore.is_empty() && keys.is_none() {
            return match params {
                Some(Value::Object(map)) if map.contains_key("_meta") => {
                    let mut map = map.clone();
                    map.remove("_meta");
                    Cow::Owned(Value::Object(map))
                }
                Some(params) => Cow::Borrowed(params),
                None => Cow::Owned(Value::Object(Map::new())),
            };
        }
        let mut params = params.cloned().unwrap_or_else(|| json!({}));
        if let Some(map) = params.as_object_mut() {
            map.remove("_meta");
        }
        let mut root = json!({ "params": params });
        for selector in &self.ignore {
            selector.remove_from(&mut root);
        }
        let Some(keys) = keys else {
            return Cow::Owned(root["params"].take());
        };
        let picked: Map<String, Value> = keys
            .iter()
            .map(|selector| {
                let found: Vec<Value> = selector
                    .select(&root)
                    .into_iter()
                    .map(|(_, v)| v.clone())
                    .collect();
                (selector.as_str().to_owned(), Value::Array(found))
            })
            .collect();
        Cow::Owned(Value::Object(picked))
    }

    /// The match key of a message under these rules.
    pub fn key(&self, kind: MessageKind, message: &Value) -> Key {
        let method = crate::jsonrpc::method(message).unwrap_or_default();
        let params = crate::jsonrpc::params(message);
        if self.ignore.is_empty() && !self.keys.contains_key(method) {
            // The common case: no copy, `_meta` skipped while writing.
            return super::key(kind, method, params);
        }
        let normalized = self.normalize(method, params);
        key_from_canonical(kind, method, &canonical_json(&normalized))
    }

    /// The first hand-written case that answers `method` with `params`.
    pub fn case_for(&self, method: &str, params: Option<&Value>) -> Option<(usize, &Case)> {
        let empty = json!({});
        let params = params.unwrap_or(&empty);
        self.cases.iter().enumerate().find(|(_, case)| {
            case.method == method
                && (case.when.is_null() || crate::json::is_subset(&case.when, params))
        })
    }

    /// A one-line description, for reports.
    pub fn describe(&self) -> String {
        let mut parts = vec![
            format!("strategy {}", kebab(&self.strategy)),
            format!("on exhausted {}", kebab(&self.on_exhausted)),
        ];
        if !self.ignore.is_empty() {
            let ignored: Vec<&str> = self.ignore.iter().map(Selector::as_str).collect();
            parts.push(format!("ignore {}", ignored.join(", ")));
        }
        for (method, keys) in &self.keys {
            let keys: Vec<&str> = keys.iter().map(Selector::as_str).collect();
            parts.push(format!("{method} keyed on {}", keys.join(" + ")));
        }
        if !self.cases.is_empty() {
            parts.push(format!("{} hand-written case(s)", self.cases.len()));
        }
        parts.join("; ")
    }
}

/// The serde spelling of a unit enum variant.
fn kebab<T: Serialize>(value: &T) -> String {
    serde_json::to_value(value)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn selectors(list: &[&str]) -> Vec<Selector> {
        list.iter().map(|s| s.parse().unwrap()).collect()
    }

    fn call(params: Value) -> Value {
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params})
    }

    #[test]
    fn ignored_fields_do_not_change_the_key() {
        let rules = Rules {
            ignore: selectors(&["/params/arguments/timestamp", "/params/**/requestId"]),
            ..Rules::default()
        };
        let a = call(json!({"name": "t", "arguments": {"timestamp": 1, "x": {"requestId": "a"}}}));
        let b = call(json!({"name": "t", "arguments": {"timestamp": 2, "x": {"requestId": "b"}}}));
        let c = call(json!({"name": "t", "arguments": {"x": {}}}));
        let d = call(
            json!({"name": "t", "arguments": {"timestamp": 2, "x": {"requestId": "b", "other": 1}}}),
        );
        assert_eq!(
            rules.key(MessageKind::Request, &a),
            rules.key(MessageKind::Request, &b)
        );
        assert_eq!(
            rules.key(MessageKind::Request, &a),
            rules.key(MessageKind::Request, &c),
            "absent counts as ignored"
        );
        assert_ne!(
            rules.key(MessageKind::Request, &a),
            rules.key(MessageKind::Request, &d)
        );
        assert_ne!(
            Rules::default().key(MessageKind::Request, &a),
            Rules::default().key(MessageKind::Request, &b)
        );
    }

    #[test]
    fn per_method_keys_compare_only_the_named_parts() {
        let mut keys = BTreeMap::new();
        keys.insert(
            "tools/call".to_owned(),
            selectors(&["/params/name", "/params/arguments"]),
        );
        let rules = Rules {
            keys,
            ..Rules::default()
        };
        let a = call(json!({"name": "t", "arguments": {"q": 1}, "task": {"ttl": 5}}));
        let b = call(json!({"name": "t", "arguments": {"q": 1}}));
        let c = call(json!({"name": "t", "arguments": {"q": 2}}));
        assert_eq!(
            rules.key(MessageKind::Request, &a),
            rules.key(MessageKind::Request, &b)
        );
        assert_ne!(
            rules.key(MessageKind::Request, &a),
            rules.key(MessageKind::Request, &c)
        );
        let other = json!({"jsonrpc": "2.0", "id": 1, "method": "prompts/get", "params": {"name": "t", "x": 1}});
        let other2 =
            json!({"jsonrpc": "2.0", "id": 1, "method": "prompts/get", "params": {"name": "t"}});
        assert_ne!(
            rules.key(MessageKind::Request, &other),
            rules.key(MessageKind::Request, &other2),
            "other methods keep full params"
        );
    }

    #[test]
    fn the_fast_path_agrees_with_the_general_one() {
        let message = call(
            json!({"name": "t", "arguments": {"b": 1, "a": [2, 3]}, "_meta": {"progressToken": 4}}),
        );
        let normalized = Rules::default().normalize("tools/call", message.get("params"));
        assert_eq!(
            Rules::default().key(MessageKind::Request, &message),
            key_from_canonical(
                MessageKind::Request,
                "tools/call",
                &canonical_json(&normalized)
            )
        );
    }

    #[test]
    fn first_matching_case_wins_by_subset() {
        let rules: Rules = serde_json::from_value(json!({
            "cases": [
                {"method": "tools/call", "when": {"name": "weather", "arguments": {"city": "Paris"}}, "result": {"content": [{"type": "text", "text": "sunny"}]}},
                {"method": "tools/call", "when": {"name": "weather"}, "error": {"code": -32000, "message": "unknown city"}},
                {"method": "tools/call", "result": {"content": []}}
            ]
        }))
        .unwrap();
        rules.validate().unwrap();
        let params = json!({"name": "weather", "arguments": {"city": "Paris", "units": "C"}});
        assert_eq!(rules.case_for("tools/call", Some(&params)).unwrap().0, 0);
        let params = json!({"name": "weather", "arguments": {"city": "Rome"}});
        assert_eq!(rules.case_for("tools/call", Some(&params)).unwrap().0, 1);
        assert_eq!(
            rules
                .case_for("tools/call", Some(&json!({"name": "x"})))
                .unwrap()
                .0,
            2
        );
        assert!(rules.case_for("prompts/get", None).is_none());
    }

    #[test]
    fn rules_round_trip_and_reject_unknown_fields() {
        let text = r#"{"strategy":"strict","on_exhausted":"repeat-last","ignore":["/params/**/ts"],"keys":{"tools/call":["/params/name"]}}"#;
        let rules: Rules = serde_json::from_str(text).unwrap();
        assert_eq!(rules.strategy, Strategy::Strict);
        assert_eq!(serde_json::to_string(&rules).unwrap(), text);
        assert!(serde_json::from_str::<Rules>(r#"{"stratgy":"strict"}"#).is_err());
        assert!(serde_json::from_str::<Rules>(r#"{"ignore":["no-slash"]}"#).is_err());
        assert_eq!(serde_json::to_string(&Rules::default()).unwrap(), "{}");
    }

    #[test]
    fn cases_need_exactly_one_answer() {
        let rules: Rules = serde_json::from_value(json!({"cases": [{"method": "m"}]})).unwrap();
        assert_eq!(
            rules.validate().unwrap_err(),
            "/cases/0: a case needs exactly one of `result` and `error`"
        );
        let rules: Rules =
            serde_json::from_value(json!({"cases": [{"method": "m", "error": {"code": "x"}}]}))
                .unwrap();
        assert!(rules.validate().unwrap_err().starts_with("/cases/0/error"));
    }
}
