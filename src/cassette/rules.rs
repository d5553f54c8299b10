//! The cassette's policy, as plain data: how its requests are matched
//! (strategy, ignored and key parts, hand-written cases), what recording
//! masked, and what `verify` normalises. Stored in the cassette, so that
//! it replays the same everywhere; `matching`, `redact` and `verify` each
//! read their part (`matching` implements the matching itself).

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::faults::{Faults, FaultsError};
use crate::json::Selector;
use crate::jsonrpc::RpcError;
use crate::redact::{RedactRule, RegexText};

/// What replay over HTTP asks of a client before it answers (`--auth`,
/// or the cassette's `rules.auth`).
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Auth {
    /// Nothing: requests with or without `Authorization` are answered
    /// alike, so CI needs no credentials.
    #[default]
    None,
    /// Some bearer token (any value): without `Authorization: Bearer …`
    /// a request gets 401 with `WWW-Authenticate: Bearer`, as a server
    /// behind a static token answers, for clients that send one.
    Bearer,
    /// A protected resource with its own OAuth 2.1 authorization server on
    /// the same address (auto-approving, PKCE S256, dynamic registration,
    /// refresh): a request needs an access token it issued.
    #[cfg_attr(feature = "cli", value(name = "oauth"))]
    OAuth,
}

/// How live requests are paired with recorded ones.
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
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
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum OnExhausted {
    /// Answer with an error (code -32001).
    #[default]
    Error,
    /// Answer again with the last recorded answer.
    RepeatLast,
}

/// A hand-written answer in a cassette's rules: for requests of `method`
/// whose params `when` matches, tried only when nothing recorded does.
///
/// Not a `fixture::ItemCase`, though both are "a pattern and an
/// answer": a cassette's cases are one list for every method, so each
/// names its method and matches the whole `params`; and its `error` stays
/// the JSON as written, so that [`Rules::validate`] can name a malformed
/// one by pointer (a fixture checks its cases before they are typed). One
/// struct for both would need `method` optional in cassettes, and serde's
/// `flatten` cannot share the common fields under `deny_unknown_fields`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MethodCase {
    /// The method it answers.
    pub method: String,
    /// A recursive subset of the params: objects may carry extra fields,
    /// arrays match by length and position. Absent: any params.
    #[serde(default, skip_serializing_if = "Value::is_null")]
    pub when: Value,
    /// The result to answer with.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<Value>,
    /// Or the JSON-RPC error (`code`, `message`, `data`), as written.
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
    pub cases: Vec<MethodCase>,
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
    /// What replay over HTTP asks of a client (`--auth` replaces it):
    /// `bearer` or `oauth` for a cassette of a protected server.
    #[serde(default, skip_serializing_if = "is_default")]
    pub auth: Auth,
    /// Faults applied whenever this cassette replays (a faults overlay,
    /// `docs/faults.md`), kept as written; [`Rules::faults`] reads them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub faults: Vec<Value>,
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
            auth: Auth::default(),
            faults: Vec::new(),
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
    /// `error`, and an `error` is a JSON-RPC error object. The first
    /// problem is returned, naming the case ([`RulesError::pointer`]).
    pub fn validate(&self) -> Result<(), RulesError> {
        for (i, case) in self.cases.iter().enumerate() {
            if case.result.is_some() == case.error.is_some() {
                return Err(RulesError::CaseAnswer { case: i });
            }
            if let Some(error) = &case.error
                && RpcError::from_value(error).is_none()
            {
                return Err(RulesError::CaseError { case: i });
            }
        }
        self.faults()?;
        Ok(())
    }

    /// The faults of `faults`, read (their seed is 0: a rule with a
    /// `probability` can carry its own `seed`).
    pub fn faults(&self) -> Result<Faults, RulesError> {
        Faults::from_rules(&self.faults, 0, "/faults").map_err(RulesError::Faults)
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

/// Why a cassette's rules cannot be used. A problem with a case reads
/// `POINTER: PROBLEM`, the pointer rooted at the rules (`/cases/2/error`),
/// so that a loader can root it at the file.
#[derive(Debug, thiserror::Error)]
pub enum RulesError {
    /// A case with both or neither of `result` and `error`.
    #[error("{}: {}", self.pointer(), self.problem())]
    CaseAnswer {
        /// Its index in `cases`.
        case: usize,
    },
    /// A case whose `error` lacks an integer `code` or a string `message`.
    #[error("{}: {}", self.pointer(), self.problem())]
    CaseError {
        /// Its index in `cases`.
        case: usize,
    },
    /// A redaction rule (`redact`) that cannot be built.
    #[error(transparent)]
    Redaction(#[from] crate::redact::RedactError),
    /// A fault rule (`faults`) that cannot be used. The message is the
    /// fault error's own parts, pointer first like every rules error, so
    /// that error is not also a source: a chain would say it twice.
    #[error("{}: {}", .0.pointer, .0.message)]
    Faults(FaultsError),
}

impl RulesError {
    /// Where, as a JSON pointer under the rules; empty when the problem
    /// is not one place (a redaction rule).
    pub fn pointer(&self) -> String {
        match self {
            RulesError::CaseAnswer { case } => format!("/cases/{case}"),
            RulesError::CaseError { case } => format!("/cases/{case}/error"),
            RulesError::Redaction(_) => String::new(),
            RulesError::Faults(e) => e.pointer.clone(),
        }
    }

    /// What is wrong, without the place.
    pub fn problem(&self) -> String {
        match self {
            RulesError::CaseAnswer { .. } => {
                "a case needs exactly one of `result` and `error`".to_owned()
            }
            RulesError::CaseError { .. } => {
                "needs an integer `code` and a string `message`".to_owned()
            }
            RulesError::Redaction(e) => crate::error_chain::chain(e),
            RulesError::Faults(e) => e.message.clone(),
        }
    }
}

/// The serde spelling of a unit enum variant.
fn kebab<T: Serialize>(value: &T) -> String {
    serde_json::to_value(value)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default()
}

/// `--key METHOD=SELECTOR[,SELECTOR...]`: match `method` on these parts
/// of its requests only.
#[derive(Debug, Clone, PartialEq)]
pub struct KeyRule {
    /// The method.
    pub method: String,
    /// The parts that take part in matching.
    pub selectors: Vec<Selector>,
}

/// Why a `--key` rule did not parse.
#[derive(Debug, thiserror::Error)]
pub enum KeyRuleError {
    /// No `=` between the method and the selectors.
    #[error("{0}: expected METHOD=SELECTOR[,SELECTOR...]")]
    Shape(String),
    /// A selector is not valid.
    #[error("{rule}")]
    Selector {
        /// The rule as written.
        rule: String,
        /// What is wrong with the selector.
        #[source]
        source: crate::json::SelectorError,
    },
}

impl std::str::FromStr for KeyRule {
    type Err = KeyRuleError;

    fn from_str(text: &str) -> Result<KeyRule, KeyRuleError> {
        let Some((method, selectors)) = text.split_once('=') else {
            return Err(KeyRuleError::Shape(text.to_owned()));
        };
        let selectors = selectors
            .split(',')
            .map(str::parse)
            .collect::<Result<Vec<Selector>, _>>()
            .map_err(|source| KeyRuleError::Selector {
                rule: text.to_owned(),
                source,
            })?;
        Ok(KeyRule {
            method: method.to_owned(),
            selectors,
        })
    }
}

/// What the command line (or a project file) changes in a cassette's
/// rules: each part given replaces or extends the stored one.
#[derive(Debug, Clone, Default)]
pub struct RuleOverrides {
    /// Replaces the strategy.
    pub strategy: Option<Strategy>,
    /// Replaces what happens when answers run out.
    pub on_exhausted: Option<OnExhausted>,
    /// Added to the ignored parts.
    pub ignore: Vec<Selector>,
    /// Replace the key parts of their methods.
    pub keys: Vec<KeyRule>,
}

impl Rules {
    /// These rules with `overrides` applied.
    pub fn with_overrides(mut self, overrides: &RuleOverrides) -> Rules {
        if let Some(strategy) = overrides.strategy {
            self.strategy = strategy;
        }
        if let Some(on_exhausted) = overrides.on_exhausted {
            self.on_exhausted = on_exhausted;
        }
        self.ignore.extend(overrides.ignore.iter().cloned());
        for key in &overrides.keys {
            self.keys.insert(key.method.clone(), key.selectors.clone());
        }
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overrides_replace_the_strategy_and_extend_what_is_ignored() {
        let stored = Rules {
            ignore: vec!["/params/a".parse().unwrap()],
            ..Rules::default()
        };
        let overrides = RuleOverrides {
            strategy: Some(Strategy::Sequential),
            on_exhausted: None,
            ignore: vec!["/params/b".parse().unwrap()],
            keys: vec![
                "tools/call=/params/name,/params/arguments/q"
                    .parse()
                    .unwrap(),
            ],
        };
        let rules = stored.with_overrides(&overrides);
        assert_eq!(rules.strategy, Strategy::Sequential);
        assert_eq!(rules.on_exhausted, OnExhausted::Error);
        let ignored: Vec<&str> = rules.ignore.iter().map(Selector::as_str).collect();
        assert_eq!(ignored, ["/params/a", "/params/b"]);
        let keys: Vec<&str> = rules.keys["tools/call"]
            .iter()
            .map(Selector::as_str)
            .collect();
        assert_eq!(keys, ["/params/name", "/params/arguments/q"]);
    }

    #[test]
    fn rule_errors_name_the_case_and_the_problem() {
        let error = RulesError::CaseError { case: 2 };
        assert_eq!(error.pointer(), "/cases/2/error");
        assert_eq!(
            error.to_string(),
            "/cases/2/error: needs an integer `code` and a string `message`"
        );
        assert_eq!(
            error.problem(),
            "needs an integer `code` and a string `message`"
        );
        let rules = Rules {
            cases: vec![MethodCase {
                method: "m".into(),
                when: Value::Null,
                result: None,
                error: Some(serde_json::json!({"code": 1, "message": "x"})),
            }],
            ..Rules::default()
        };
        assert!(rules.validate().is_ok());
    }

    #[test]
    fn a_key_rule_without_a_method_or_with_a_bad_selector_is_refused() {
        let shape = "tools/call".parse::<KeyRule>().unwrap_err();
        assert_eq!(
            shape.to_string(),
            "tools/call: expected METHOD=SELECTOR[,SELECTOR...]"
        );
        assert!(matches!(
            "tools/call=params".parse::<KeyRule>(),
            Err(KeyRuleError::Selector { .. })
        ));
    }
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
