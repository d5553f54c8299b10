//! The cassette's policy, as plain data: how its requests are matched
//! (strategy, ignored and key parts, hand-written cases), what recording
//! masked, and what `verify` normalises. Stored in the cassette, so that
//! it replays the same everywhere; `matching`, `redact` and `drift` each
//! read their part (`matching` implements the matching itself).

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::json::Selector;
use crate::redact::{RedactRule, RegexText};

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
    pub redact: Vec<RedactRule>,
    /// Environment variables whose values were masked whatever their names
    /// (`--redact-env`); names only, never values.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub redact_env: Vec<String>,
    /// Volatile fields `verify` normalises on both sides before comparing
    /// (`{"selector": "/result/**/timestamp", "replacement": "[timestamp]"}`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub normalize: Vec<NormalizeRule>,
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
    pub fn add_redaction(&mut self, rules: &[RedactRule], env: &[String]) {
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

/// One normalisation rule.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NormalizeRule {
    /// The values, rooted at each compared message (a response, a
    /// notification, a server request).
    pub selector: Selector,
    /// Only the matches of this regex inside string values; absent: the
    /// whole value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub regex: Option<RegexText>,
    /// What stands in for the value or match.
    pub replacement: String,
}

impl fmt::Display for NormalizeRule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.regex {
            Some(regex) => write!(
                f,
                "{} =~ /{}/ → {}",
                self.selector.as_str(),
                regex.as_str(),
                self.replacement
            ),
            None => write!(f, "{} → {}", self.selector.as_str(), self.replacement),
        }
    }
}
