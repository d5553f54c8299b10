//! Faults as plain data: the rules of a faults overlay, each a selector
//! (which requests it hits) and one fault kind (what the replayed server
//! does instead of answering as recorded). Read from a faults file
//! (`--faults`), from a cassette's or fixture's `rules.faults`, or from a
//! test runner's `faults=`; applied by `crate::faults`.
//!
//! Everything is checked here, when the list is read: an unknown kind, a
//! `tool_error` on `resources/read`, a probability outside 0..1 or an
//! `nth` of 0 is refused with its JSON pointer before the first request.
//!
//! This file holds the model; reading it is in its children: `rules` a
//! faults document and each rule's selectors, `kinds` each fault kind's
//! parameters, `error` the error every check refuses with, `load` a faults
//! file, whose errors name its line.

use std::collections::BTreeMap;
use std::fmt;

use serde_json::{Map, Value};

use crate::jsonrpc::RpcError;

mod error;
mod kinds;
mod load;
mod rules;

pub use error::FaultsError;
pub use load::load_faults;

/// The fault kinds, as their keys are spelt in a rule.
pub const FAULT_KINDS: [&str; 12] = [
    "error",
    "tool_error",
    "delay",
    "hang",
    "disconnect",
    "malformed",
    "http",
    "drop_notifications",
    "tools_changed",
    "prompts_changed",
    "resources_changed",
    "mutate",
];

/// The selectors a rule may carry besides its fault.
pub const FAULT_SELECTORS: [&str; 9] = [
    "method",
    "name",
    "uri",
    "when",
    "nth",
    "times",
    "probability",
    "seed",
    "session",
];

/// A faults overlay: its rules in order, and the seed of their chances.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Faults {
    /// The seed of rules with a `probability` and no `seed` of their own.
    pub seed: u64,
    /// The rules, in the order written (a rule's index names it in reports).
    pub rules: Vec<FaultRule>,
}

/// One rule: which requests it hits, and what it does to them.
#[derive(Debug, Clone, PartialEq)]
pub struct FaultRule {
    /// Which requests it hits.
    pub select: FaultSelect,
    /// What it does.
    pub fault: Fault,
}

/// Which requests a rule hits. Absent selectors hit anything.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FaultSelect {
    /// The request's method.
    pub method: Option<String>,
    /// The tool or prompt name (`params.name`).
    pub name: Option<String>,
    /// The resource (`params.uri`).
    pub uri: Option<String>,
    /// A recursive subset of the params, as a rules case's `when`.
    pub when: Option<Value>,
    /// The first matching request of a session it applies to (1-based).
    pub nth: Option<u64>,
    /// How many requests it applies to, then it stops (1 when `nth` is
    /// given, else every one).
    pub times: Option<u64>,
    /// The chance that it applies to each request it could.
    pub probability: Option<f64>,
    /// The seed of that chance, instead of the overlay's.
    pub seed: Option<u64>,
    /// The client session (1-based, in the order sessions opened).
    pub session: Option<u64>,
}

impl FaultSelect {
    /// How many times the rule applies at most; `None`: without end.
    pub fn limit(&self) -> Option<u64> {
        self.times.or(self.nth.map(|_| 1))
    }

    /// Whether a request of `method` can be hit, as far as the method
    /// and the kind of name it names go.
    pub fn may_hit_method(&self, method: &str) -> bool {
        match &self.method {
            Some(wanted) => wanted == method,
            None if self.name.is_some() => matches!(method, "tools/call" | "prompts/get"),
            None if self.uri.is_some() => {
                matches!(
                    method,
                    "resources/read" | "resources/subscribe" | "resources/unsubscribe"
                )
            }
            None => true,
        }
    }
}

/// What a rule does to a request it hits.
#[derive(Debug, Clone, PartialEq)]
pub enum Fault {
    /// A JSON-RPC error instead of the recorded answer.
    Error(RpcError),
    /// A `tools/call` result with `isError: true` and this text.
    ToolError(String),
    /// The answer comes this much later.
    Delay(Delay),
    /// No answer: the request stays open until the client cancels it.
    Hang,
    /// The server goes away after writing some of the answer.
    Disconnect(Disconnect),
    /// Something that is not a JSON-RPC answer.
    Malformed(Malformed),
    /// An HTTP status instead of the answer (Streamable HTTP only).
    Http(HttpStatus),
    /// The answer without its notifications (these methods; all when
    /// empty).
    DropNotifications(Vec<String>),
    /// A list changes: announced, then served changed.
    ListChanged(ListChange),
    /// Edits on the recorded result.
    Mutate(Vec<Edit>),
}

impl Fault {
    /// The key that names this kind in a rule.
    pub fn kind(&self) -> &'static str {
        match self {
            Fault::Error(_) => "error",
            Fault::ToolError(_) => "tool_error",
            Fault::Delay(_) => "delay",
            Fault::Hang => "hang",
            Fault::Disconnect(_) => "disconnect",
            Fault::Malformed(_) => "malformed",
            Fault::Http(_) => "http",
            Fault::DropNotifications(_) => "drop_notifications",
            Fault::ListChanged(change) => change.list.kind(),
            Fault::Mutate(_) => "mutate",
        }
    }

    /// Whether it answers instead of the recording (which then is not
    /// played), as opposed to changing how the recorded answer goes.
    pub fn replaces_answer(&self) -> bool {
        match self {
            Fault::Error(_) | Fault::ToolError(_) | Fault::Hang | Fault::Http(_) => true,
            Fault::Malformed(malformed) => *malformed != Malformed::Truncated,
            _ => false,
        }
    }
}

/// How long an answer waits.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Delay {
    /// How the wait is chosen.
    pub wait: Wait,
    /// Also before each of the answer's notifications, not only its first
    /// message.
    pub between_notifications: bool,
}

/// How long to wait, in milliseconds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Wait {
    /// Always this long.
    Fixed(u64),
    /// Uniformly between the two (inclusive), by the seed.
    Uniform {
        /// Shortest.
        min: u64,
        /// Longest.
        max: u64,
    },
    /// Log-normal around a median (a long tail, as real latency has), by
    /// the seed, never beyond `max`.
    LogNormal {
        /// The median wait.
        median: f64,
        /// The spread (σ of the underlying normal).
        sigma: f64,
        /// The cap.
        max: u64,
    },
}

/// The longest any delay waits (ten minutes): beyond every client's
/// timeout, and it keeps a typo from hanging CI for a day.
pub const MAX_DELAY_MS: u64 = 600_000;

/// How the server goes away.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Disconnect {
    /// How many of the answer's messages (notifications, server requests,
    /// the response) are written first.
    pub after: usize,
    /// Over stdio, the replay's exit status.
    pub exit: u8,
}

/// What a malformed answer looks like.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Malformed {
    /// Text that is not JSON.
    NotJson,
    /// JSON that is not JSON-RPC.
    NotJsonRpc,
    /// The recorded response cut in half.
    Truncated,
}

/// An HTTP status instead of the answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpStatus {
    /// 400..=599.
    pub status: u16,
    /// `Retry-After`, in seconds.
    pub retry_after: Option<u64>,
    /// The body (a JSON-RPC error naming the status when absent).
    pub body: Option<String>,
}

impl HttpStatus {
    /// Whether the session ends with it: 404 is how a server says the
    /// session expired, and the client must start a new one.
    pub fn ends_session(&self) -> bool {
        self.status == 404
    }
}

/// Which list a [`ListChange`] changes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ListKind {
    /// `tools/list`.
    Tools,
    /// `prompts/list`.
    Prompts,
    /// `resources/list`.
    Resources,
}

impl ListKind {
    /// The rule key.
    pub fn kind(self) -> &'static str {
        match self {
            ListKind::Tools => "tools_changed",
            ListKind::Prompts => "prompts_changed",
            ListKind::Resources => "resources_changed",
        }
    }

    /// The method that lists it.
    pub fn list_method(self) -> &'static str {
        match self {
            ListKind::Tools => "tools/list",
            ListKind::Prompts => "prompts/list",
            ListKind::Resources => "resources/list",
        }
    }

    /// The member of the list result that holds the items.
    pub fn items(self) -> &'static str {
        match self {
            ListKind::Tools => "tools",
            ListKind::Prompts => "prompts",
            ListKind::Resources => "resources",
        }
    }

    /// The member of an item that names it.
    pub fn key(self) -> &'static str {
        match self {
            ListKind::Resources => "uri",
            _ => "name",
        }
    }

    /// The notification that announces a change.
    pub fn notification(self) -> &'static str {
        match self {
            ListKind::Tools => "notifications/tools/list_changed",
            ListKind::Prompts => "notifications/prompts/list_changed",
            ListKind::Resources => "notifications/resources/list_changed",
        }
    }

    /// The method that uses one item (a call to a removed one fails).
    pub fn use_method(self) -> &'static str {
        match self {
            ListKind::Tools => "tools/call",
            ListKind::Prompts => "prompts/get",
            ListKind::Resources => "resources/read",
        }
    }
}

/// A list that changes after the request a rule hits.
#[derive(Debug, Clone, PartialEq)]
pub struct ListChange {
    /// Which list.
    pub list: ListKind,
    /// Items gone (by name, or by URI for resources).
    pub remove: Vec<String>,
    /// Items whose members change: name → members to set
    /// (`{"search": {"inputSchema": {…}}}`).
    pub change: BTreeMap<String, Map<String, Value>>,
}

/// One edit on a recorded result.
#[derive(Debug, Clone, PartialEq)]
pub struct Edit {
    /// What it does.
    pub op: EditOp,
    /// Where, as a JSON pointer into the result (`/content/0/text`).
    pub path: String,
    /// The value `replace` and `add` put there.
    pub value: Value,
}

/// The edits of `mutate`, as JSON Patch (RFC 6902) names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EditOp {
    /// Sets an existing member or element.
    Replace,
    /// Removes it.
    Remove,
    /// Adds a member, or inserts into an array (`-` appends).
    Add,
}

impl Faults {
    /// Whether there are no rules.
    pub fn is_empty(&self) -> bool {
        self.rules.is_empty()
    }

    /// This overlay followed by `other`'s rules (a cassette's own faults,
    /// then those of `--faults`); `other`'s seed wins when it set one.
    pub fn then(mut self, other: Faults) -> Faults {
        if other.seed != 0 {
            self.seed = other.seed;
        }
        self.rules.extend(other.rules);
        self
    }
}

impl fmt::Display for Fault {
    /// What the fault does, in a few words, for reports.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Fault::Error(error) => write!(f, "error {}: {}", error.code, error.message),
            Fault::ToolError(text) => write!(f, "tool error \"{}\"", shorten(text)),
            Fault::Delay(delay) => match delay.wait {
                Wait::Fixed(ms) => write!(f, "delay {ms} ms"),
                Wait::Uniform { min, max } => write!(f, "delay {min}..{max} ms"),
                Wait::LogNormal { median, sigma, .. } => {
                    write!(f, "delay log-normal median {median} ms σ {sigma}")
                }
            },
            Fault::Hang => f.write_str("hang"),
            Fault::Disconnect(d) => write!(
                f,
                "disconnect after {} message(s) (exit {})",
                d.after, d.exit
            ),
            Fault::Malformed(Malformed::NotJson) => f.write_str("malformed: not JSON"),
            Fault::Malformed(Malformed::NotJsonRpc) => f.write_str("malformed: not JSON-RPC"),
            Fault::Malformed(Malformed::Truncated) => f.write_str("malformed: truncated"),
            Fault::Http(http) => match http.retry_after {
                Some(after) => write!(f, "HTTP {} (Retry-After {after})", http.status),
                None => write!(f, "HTTP {}", http.status),
            },
            Fault::DropNotifications(methods) if methods.is_empty() => {
                f.write_str("notifications dropped")
            }
            Fault::DropNotifications(methods) => {
                write!(f, "{} dropped", methods.join(", "))
            }
            Fault::ListChanged(change) => {
                write!(f, "{}:", change.list.items())?;
                if !change.remove.is_empty() {
                    write!(f, " removed {}", change.remove.join(", "))?;
                }
                if !change.change.is_empty() {
                    let names: Vec<&str> = change.change.keys().map(String::as_str).collect();
                    write!(f, " changed {}", names.join(", "))?;
                }
                Ok(())
            }
            Fault::Mutate(edits) => write!(f, "{} edit(s) of the result", edits.len()),
        }
    }
}

/// At most 60 characters of `text`, for one-line reports.
fn shorten(text: &str) -> String {
    match text.char_indices().nth(60) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn one(rule: Value) -> Result<FaultRule, FaultsError> {
        Faults::from_document(&json!([rule])).map(|f| f.rules.into_iter().next().unwrap())
    }

    fn refused(rule: Value) -> FaultsError {
        one(rule).expect_err("refused")
    }

    #[test]
    fn the_simplest_form_of_each_kind_is_read() {
        let rules = json!([
            {"name": "search", "nth": 2, "error": {"code": -32000, "message": "rate limited"}},
            {"tool_error": "quota exceeded"},
            {"delay": 250},
            {"hang": true},
            {"disconnect": true},
            {"malformed": true},
            {"http": 503},
            {"drop_notifications": true},
            {"tools_changed": {"remove": ["search"]}},
            {"mutate": [{"op": "remove", "path": "/content/0"}]},
        ]);
        let faults = Faults::from_document(&rules).unwrap();
        let kinds: Vec<&str> = faults.rules.iter().map(|r| r.fault.kind()).collect();
        assert_eq!(
            kinds,
            [
                "error",
                "tool_error",
                "delay",
                "hang",
                "disconnect",
                "malformed",
                "http",
                "drop_notifications",
                "tools_changed",
                "mutate"
            ]
        );
        assert_eq!(faults.rules[0].select.nth, Some(2));
        assert_eq!(faults.rules[0].select.limit(), Some(1), "nth alone: once");
        assert_eq!(faults.rules[2].select.limit(), None, "no nth: every time");
        assert_eq!(
            faults.rules[4].fault,
            Fault::Disconnect(Disconnect { after: 0, exit: 1 })
        );
    }

    #[test]
    fn richer_parameters_are_objects() {
        let rule = one(
            json!({"delay": {"median": 200, "sigma": 1.0, "max": 2000, "notifications": true}}),
        )
        .unwrap();
        assert_eq!(
            rule.fault,
            Fault::Delay(Delay {
                wait: Wait::LogNormal {
                    median: 200.0,
                    sigma: 1.0,
                    max: 2000
                },
                between_notifications: true
            })
        );
        let rule = one(json!({"http": {"status": 429, "retry_after": 2}})).unwrap();
        assert_eq!(
            rule.fault,
            Fault::Http(HttpStatus {
                status: 429,
                retry_after: Some(2),
                body: None
            })
        );
        let rule = one(json!({"disconnect": {"after": 2, "exit": 137}})).unwrap();
        assert_eq!(
            rule.fault,
            Fault::Disconnect(Disconnect {
                after: 2,
                exit: 137
            })
        );
    }

    #[test]
    fn a_document_may_carry_a_seed() {
        let faults = Faults::from_document(
            &json!({"seed": 7, "faults": [{"probability": 0.5, "hang": true}]}),
        )
        .unwrap();
        assert_eq!(faults.seed, 7);
        let error = Faults::from_document(&json!({"seed": 7, "rules": []})).unwrap_err();
        assert_eq!(error.pointer, "/rules");
    }

    #[test]
    fn what_cannot_work_is_refused_with_its_pointer() {
        let cases = [
            (
                json!({"explode": true}),
                "/0/explode",
                "unknown member `explode`",
            ),
            (
                json!({"method": "tools/list"}),
                "/0",
                "needs one fault kind",
            ),
            (
                json!({"hang": true, "delay": 5}),
                "/0/delay",
                "has one fault kind",
            ),
            (json!({"nth": 0, "hang": true}), "/0/nth", "from 1 up"),
            (
                json!({"probability": 1.5, "hang": true}),
                "/0/probability",
                "from 0 to 1",
            ),
            (
                json!({"probability": -0.1, "hang": true}),
                "/0/probability",
                "from 0 to 1",
            ),
            (
                json!({"method": "resources/read", "tool_error": "x"}),
                "/0/tool_error",
                "`tools/call` result",
            ),
            (
                json!({"uri": "file:///a", "tool_error": "x"}),
                "/0/tool_error",
                "`tools/call` result",
            ),
            (
                json!({"error": {"message": "x"}}),
                "/0/error/code",
                "whole number",
            ),
            (json!({"delay": -5}), "/0/delay", "whole milliseconds"),
            (
                json!({"delay": {"min": 9, "max": 3}}),
                "/0/delay/max",
                "below",
            ),
            (json!({"http": 200}), "/0/http", "from 400 to 599"),
            (
                json!({"malformed": "garbage"}),
                "/0/malformed",
                "unknown malformed",
            ),
            (
                json!({"mutate": [{"op": "move", "path": "/a"}]}),
                "/0/mutate/0/op",
                "\"replace\"",
            ),
            (
                json!({"mutate": [{"op": "add", "path": "/a"}]}),
                "/0/mutate/0",
                "need the `value`",
            ),
            (
                json!({"tools_changed": {}}),
                "/0/tools_changed",
                "changes nothing",
            ),
            (json!({"seed": 3, "hang": true}), "/0/seed", "has none"),
            (
                json!({"method": "resources/read", "name": "x", "hang": true}),
                "/0/name",
                "names neither",
            ),
        ];
        for (rule, pointer, words) in cases {
            let error = refused(rule.clone());
            assert_eq!(error.pointer, pointer, "{rule}: {error}");
            assert!(error.message.contains(words), "{rule}: {error}");
        }
    }

    #[test]
    fn http_faults_need_http() {
        let faults = Faults::from_document(&json!([{"delay": 1}, {"http": 503}])).unwrap();
        assert!(faults.check_transport(true).is_ok());
        let error = faults.check_transport(false).unwrap_err();
        assert_eq!(error.pointer, "/1/http");
    }

    #[test]
    fn rule_selectors_imply_methods() {
        let select = one(json!({"name": "search", "hang": true})).unwrap().select;
        assert!(select.may_hit_method("tools/call"));
        assert!(select.may_hit_method("prompts/get"));
        assert!(!select.may_hit_method("tools/list"));
        let select = one(json!({"hang": true})).unwrap().select;
        assert!(select.may_hit_method("anything"));
    }
}
