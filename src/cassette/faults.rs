//! Faults as plain data: the rules of a faults overlay, each a selector
//! (which requests it hits) and one fault kind (what the replayed server
//! does instead of answering as recorded). Read from a faults file
//! (`--faults`), from a cassette's or fixture's `rules.faults`, or from a
//! test runner's `faults=`; applied by `crate::faults`.
//!
//! Everything is checked here, when the list is read: an unknown kind, a
//! `tool_error` on `resources/read`, a probability outside 0..1 or an
//! `nth` of 0 is refused with its JSON pointer before the first request.

use std::collections::BTreeMap;
use std::fmt;
use std::path::Path;

use serde_json::{Map, Value};

use super::CassetteError;
use crate::jsonrpc::RpcError;

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

/// A faults list that cannot be used: where (a JSON pointer rooted at the
/// list's document) and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message} (at JSON pointer \"{pointer}\")")]
pub struct FaultsError {
    /// Where, rooted at the document the list was read from.
    pub pointer: String,
    /// What is wrong, and what is allowed.
    pub message: String,
}

impl FaultsError {
    fn at(pointer: &str, message: impl Into<String>) -> Self {
        FaultsError {
            pointer: pointer.to_owned(),
            message: message.into(),
        }
    }

    /// The same error with its pointer rooted one level up (`prefix`
    /// before it, as `/rules/faults`).
    pub fn rooted(mut self, prefix: &str) -> Self {
        self.pointer = format!("{prefix}{}", self.pointer);
        self
    }
}

impl Faults {
    /// Reads a faults document: a list of rules, or `{"seed": N, "faults":
    /// [...]}`. Pointers in errors are rooted at the document.
    pub fn from_document(document: &Value) -> Result<Faults, FaultsError> {
        match document {
            Value::Array(rules) => Faults::from_rules(rules, 0, ""),
            Value::Object(members) => {
                for key in members.keys() {
                    if key != "seed" && key != "faults" {
                        return Err(FaultsError::at(
                            &pointer("", key),
                            format!(
                                "unknown member `{key}` of a faults file (allowed: `faults`, `seed`)"
                            ),
                        ));
                    }
                }
                let seed = match members.get("seed") {
                    Some(seed) => unsigned(seed, "/seed", "seed")?,
                    None => 0,
                };
                match members.get("faults") {
                    Some(Value::Array(rules)) => Faults::from_rules(rules, seed, "/faults"),
                    Some(other) => Err(FaultsError::at(
                        "/faults",
                        format!("`faults` must be a list of rules, not {}", kind_of(other)),
                    )),
                    None => Err(FaultsError::at(
                        "",
                        "a faults file needs `faults`, the list of rules",
                    )),
                }
            }
            other => Err(FaultsError::at(
                "",
                format!(
                    "a faults file is a list of rules or {{\"seed\", \"faults\"}}, not {}",
                    kind_of(other)
                ),
            )),
        }
    }

    /// Reads a list of rules whose pointers start at `root`.
    pub fn from_rules(rules: &[Value], seed: u64, root: &str) -> Result<Faults, FaultsError> {
        let rules = rules
            .iter()
            .enumerate()
            .map(|(i, rule)| parse_rule(rule, &format!("{root}/{i}")))
            .collect::<Result<_, _>>()?;
        Ok(Faults { seed, rules })
    }

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

    /// Refuses what this transport cannot do: an `http` fault over stdio.
    pub fn check_transport(&self, http: bool) -> Result<(), FaultsError> {
        if http {
            return Ok(());
        }
        match self
            .rules
            .iter()
            .position(|r| matches!(r.fault, Fault::Http(_)))
        {
            Some(i) => Err(FaultsError::at(
                &format!("/{i}/http"),
                "an `http` fault needs a replay over Streamable HTTP (`--listen`); over stdio use `disconnect` or `malformed`",
            )),
            None => Ok(()),
        }
    }
}

/// Reads a faults file (`--faults`, docs/faults.md). Every error names
/// the file, the line and the JSON pointer of the problem.
pub fn load_faults(path: &Path) -> Result<Faults, CassetteError> {
    let bytes = std::fs::read(path).map_err(|source| CassetteError::Read {
        path: path.into(),
        source,
    })?;
    let invalid = |line, column, pointer: String, message: String| CassetteError::Invalid {
        path: path.into(),
        line,
        column,
        pointer,
        message,
    };
    let text = crate::json::file_text(&bytes)
        .map_err(|e| invalid(e.line, e.column, String::new(), e.to_string()))?;
    let document: Value = crate::json::from_slice(text.as_bytes(), 2).map_err(|e| {
        let (line, column) = e.position();
        invalid(line, column, String::new(), e.to_string())
    })?;
    Faults::from_document(&document).map_err(|e| {
        let line = crate::json::Lines::index(text)
            .line_of(&e.pointer)
            .unwrap_or(1);
        invalid(line, 1, e.pointer, e.message)
    })
}

fn parse_rule(rule: &Value, at: &str) -> Result<FaultRule, FaultsError> {
    let Value::Object(members) = rule else {
        return Err(FaultsError::at(
            at,
            format!(
                "a fault rule is an object of selectors and one fault kind, not {}",
                kind_of(rule)
            ),
        ));
    };
    let mut kinds = Vec::new();
    for key in members.keys() {
        if FAULT_KINDS.contains(&key.as_str()) {
            kinds.push(key.as_str());
        } else if !FAULT_SELECTORS.contains(&key.as_str()) {
            return Err(FaultsError::at(
                &pointer(at, key),
                format!(
                    "unknown member `{key}` of a fault rule (fault kinds: {}; selectors: {})",
                    FAULT_KINDS.join(", "),
                    FAULT_SELECTORS.join(", ")
                ),
            ));
        }
    }
    let kind = match kinds.as_slice() {
        [kind] => *kind,
        [] => {
            return Err(FaultsError::at(
                at,
                format!(
                    "a fault rule needs one fault kind: {}",
                    FAULT_KINDS.join(", ")
                ),
            ));
        }
        [first, second, ..] => {
            return Err(FaultsError::at(
                &pointer(at, second),
                format!(
                    "a fault rule has one fault kind, this one has `{first}` and `{second}`: write two rules"
                ),
            ));
        }
    };
    let select = parse_select(members, at)?;
    let fault = parse_fault(kind, &members[kind], &pointer(at, kind))?;
    check_combination(&select, &fault, at)?;
    Ok(FaultRule { select, fault })
}

fn parse_select(members: &Map<String, Value>, at: &str) -> Result<FaultSelect, FaultsError> {
    let text = |key: &str| -> Result<Option<String>, FaultsError> {
        match members.get(key) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(other) => Err(FaultsError::at(
                &pointer(at, key),
                format!("`{key}` must be a string, not {}", kind_of(other)),
            )),
        }
    };
    let positive = |key: &str| -> Result<Option<u64>, FaultsError> {
        match members.get(key) {
            None => Ok(None),
            Some(value) => match value.as_u64() {
                Some(n) if n >= 1 => Ok(Some(n)),
                _ => Err(FaultsError::at(
                    &pointer(at, key),
                    format!("`{key}` must be a whole number from 1 up, not {value}"),
                )),
            },
        }
    };
    let probability = match members.get("probability") {
        None => None,
        Some(value) => match value.as_f64() {
            Some(p) if (0.0..=1.0).contains(&p) => Some(p),
            _ => {
                return Err(FaultsError::at(
                    &pointer(at, "probability"),
                    format!("`probability` must be a number from 0 to 1, not {value}"),
                ));
            }
        },
    };
    let seed = match members.get("seed") {
        None => None,
        Some(seed) => Some(unsigned(seed, &pointer(at, "seed"), "seed")?),
    };
    Ok(FaultSelect {
        method: text("method")?,
        name: text("name")?,
        uri: text("uri")?,
        when: members.get("when").cloned(),
        nth: positive("nth")?,
        times: positive("times")?,
        probability,
        seed,
        session: positive("session")?,
    })
}

/// Refuses rules that can never do what they say.
fn check_combination(select: &FaultSelect, fault: &Fault, at: &str) -> Result<(), FaultsError> {
    let kind = fault.kind();
    let here = pointer(at, kind);
    if let Fault::ToolError(_) = fault {
        if let Some(method) = select.method.as_deref().filter(|m| *m != "tools/call") {
            return Err(FaultsError::at(
                &here,
                format!(
                    "`tool_error` is a `tools/call` result; this rule selects `{method}` (use `error` for a JSON-RPC error)"
                ),
            ));
        }
        if select.uri.is_some() {
            return Err(FaultsError::at(
                &here,
                "`tool_error` is a `tools/call` result; this rule selects a resource by `uri` (use `error`)",
            ));
        }
    }
    if select.name.is_some() && select.uri.is_some() {
        return Err(FaultsError::at(
            &pointer(at, "uri"),
            "a request names a tool or prompt (`name`) or a resource (`uri`), not both",
        ));
    }
    if let (Some(method), Some(_)) = (&select.method, &select.name)
        && !matches!(method.as_str(), "tools/call" | "prompts/get")
    {
        return Err(FaultsError::at(
            &pointer(at, "name"),
            format!("`name` selects a tool or prompt; `{method}` names neither"),
        ));
    }
    if let Some(0.0) = select.probability {
        return Err(FaultsError::at(
            &pointer(at, "probability"),
            "`probability` 0 never fires: remove the rule instead",
        ));
    }
    if select.seed.is_some() && select.probability.is_none() {
        return Err(FaultsError::at(
            &pointer(at, "seed"),
            "`seed` decides a `probability`; this rule has none",
        ));
    }
    Ok(())
}

fn parse_fault(kind: &str, value: &Value, at: &str) -> Result<Fault, FaultsError> {
    match kind {
        "error" => parse_error(value, at).map(Fault::Error),
        "tool_error" => match value {
            Value::String(text) => Ok(Fault::ToolError(text.clone())),
            Value::Object(members) => {
                only(members, &["text"], at, kind)?;
                match members.get("text") {
                    Some(Value::String(text)) => Ok(Fault::ToolError(text.clone())),
                    _ => Err(FaultsError::at(
                        &pointer(at, "text"),
                        "`tool_error.text` must be a string: the error the tool reports",
                    )),
                }
            }
            other => Err(FaultsError::at(
                at,
                format!(
                    "`tool_error` is the text of the error (or {{\"text\": …}}), not {}",
                    kind_of(other)
                ),
            )),
        },
        "delay" => parse_delay(value, at).map(Fault::Delay),
        "hang" => match value {
            Value::Bool(true) => Ok(Fault::Hang),
            other => Err(FaultsError::at(
                at,
                format!("`hang` takes `true`, not {other}"),
            )),
        },
        "disconnect" => parse_disconnect(value, at).map(Fault::Disconnect),
        "malformed" => parse_malformed(value, at).map(Fault::Malformed),
        "http" => parse_http(value, at).map(Fault::Http),
        "drop_notifications" => match value {
            Value::Bool(true) => Ok(Fault::DropNotifications(Vec::new())),
            Value::Array(methods) => methods
                .iter()
                .enumerate()
                .map(|(i, m)| match m {
                    Value::String(m) if m.starts_with("notifications/") => Ok(m.clone()),
                    other => Err(FaultsError::at(
                        &format!("{at}/{i}"),
                        format!(
                            "a notification method (`notifications/progress`) is expected, not {other}"
                        ),
                    )),
                })
                .collect::<Result<_, _>>()
                .map(Fault::DropNotifications),
            other => Err(FaultsError::at(
                at,
                format!(
                    "`drop_notifications` takes `true` (every notification) or a list of notification methods, not {other}"
                ),
            )),
        },
        "tools_changed" => parse_list_change(ListKind::Tools, value, at).map(Fault::ListChanged),
        "prompts_changed" => {
            parse_list_change(ListKind::Prompts, value, at).map(Fault::ListChanged)
        }
        "resources_changed" => {
            parse_list_change(ListKind::Resources, value, at).map(Fault::ListChanged)
        }
        "mutate" => parse_edits(value, at).map(Fault::Mutate),
        _ => unreachable!("every kind in FAULT_KINDS is parsed"),
    }
}

fn parse_error(value: &Value, at: &str) -> Result<RpcError, FaultsError> {
    let Value::Object(members) = value else {
        return Err(FaultsError::at(
            at,
            format!(
                "`error` is a JSON-RPC error {{\"code\", \"message\", \"data\"?}}, not {}",
                kind_of(value)
            ),
        ));
    };
    only(members, &["code", "message", "data"], at, "error")?;
    let code = members.get("code").and_then(Value::as_i64).ok_or_else(|| {
        FaultsError::at(
            &pointer(at, "code"),
            "`error.code` must be a whole number (-32000 for a server error, -32603 internal)",
        )
    })?;
    let message = match members.get("message") {
        Some(Value::String(message)) => message.clone(),
        None => "Server error".to_owned(),
        Some(other) => {
            return Err(FaultsError::at(
                &pointer(at, "message"),
                format!("`error.message` must be a string, not {}", kind_of(other)),
            ));
        }
    };
    let mut error = RpcError::new(code, message);
    if let Some(data) = members.get("data") {
        error = error.with_data(data.clone());
    }
    Ok(error)
}

fn parse_delay(value: &Value, at: &str) -> Result<Delay, FaultsError> {
    let ms = |value: &Value, at: &str, what: &str| -> Result<u64, FaultsError> {
        match value.as_u64() {
            Some(ms) if ms <= MAX_DELAY_MS => Ok(ms),
            _ => Err(FaultsError::at(
                at,
                format!(
                    "`{what}` must be whole milliseconds from 0 to {MAX_DELAY_MS}, not {value} (use `hang` for an answer that never comes)"
                ),
            )),
        }
    };
    let Value::Object(members) = value else {
        return Ok(Delay {
            wait: Wait::Fixed(ms(value, at, "delay")?),
            between_notifications: false,
        });
    };
    only(
        members,
        &["ms", "min", "max", "median", "sigma", "notifications"],
        at,
        "delay",
    )?;
    let get = |key: &str| members.get(key);
    let between_notifications = match get("notifications") {
        None => false,
        Some(Value::Bool(b)) => *b,
        Some(other) => {
            return Err(FaultsError::at(
                &pointer(at, "notifications"),
                format!("`delay.notifications` is true or false, not {other}"),
            ));
        }
    };
    let wait = if let Some(fixed) = get("ms") {
        if get("min").is_some() || get("median").is_some() {
            return Err(FaultsError::at(
                at,
                "a delay is `ms`, or `min` and `max`, or `median` (with `sigma`, `max`): one of them",
            ));
        }
        Wait::Fixed(ms(fixed, &pointer(at, "ms"), "delay.ms")?)
    } else if let Some(median) = get("median") {
        let median_at = pointer(at, "median");
        let median = match median.as_f64() {
            Some(m) if m > 0.0 && m <= MAX_DELAY_MS as f64 => m,
            _ => {
                return Err(FaultsError::at(
                    &median_at,
                    format!("`delay.median` must be milliseconds above 0, not {median}"),
                ));
            }
        };
        let sigma = match get("sigma") {
            None => 0.5,
            Some(sigma) => match sigma.as_f64() {
                Some(s) if (0.0..=4.0).contains(&s) => s,
                _ => {
                    return Err(FaultsError::at(
                        &pointer(at, "sigma"),
                        format!("`delay.sigma` must be a number from 0 to 4, not {sigma}"),
                    ));
                }
            },
        };
        let max = match get("max") {
            None => MAX_DELAY_MS,
            Some(max) => ms(max, &pointer(at, "max"), "delay.max")?,
        };
        Wait::LogNormal { median, sigma, max }
    } else if let (Some(min), Some(max)) = (get("min"), get("max")) {
        let min = ms(min, &pointer(at, "min"), "delay.min")?;
        let max = ms(max, &pointer(at, "max"), "delay.max")?;
        if min > max {
            return Err(FaultsError::at(
                &pointer(at, "max"),
                format!("`delay.max` ({max}) is below `delay.min` ({min})"),
            ));
        }
        Wait::Uniform { min, max }
    } else {
        return Err(FaultsError::at(
            at,
            "a delay is a number of ms, or {\"ms\"}, {\"min\", \"max\"} (uniform) or {\"median\", \"sigma\"?, \"max\"?} (log-normal)",
        ));
    };
    Ok(Delay {
        wait,
        between_notifications,
    })
}

fn parse_disconnect(value: &Value, at: &str) -> Result<Disconnect, FaultsError> {
    let mut disconnect = Disconnect { after: 0, exit: 1 };
    match value {
        Value::Bool(true) => Ok(disconnect),
        Value::Object(members) => {
            only(members, &["after", "exit"], at, "disconnect")?;
            if let Some(after) = members.get("after") {
                disconnect.after = after.as_u64().and_then(|a| usize::try_from(a).ok()).ok_or_else(|| {
                    FaultsError::at(
                        &pointer(at, "after"),
                        format!("`disconnect.after` is how many of the answer's messages go out first (0 up), not {after}"),
                    )
                })?;
            }
            if let Some(exit) = members.get("exit") {
                disconnect.exit = exit
                    .as_u64()
                    .and_then(|e| u8::try_from(e).ok())
                    .ok_or_else(|| {
                        FaultsError::at(
                            &pointer(at, "exit"),
                            format!(
                                "`disconnect.exit` is an exit status from 0 to 255, not {exit}"
                            ),
                        )
                    })?;
            }
            Ok(disconnect)
        }
        other => Err(FaultsError::at(
            at,
            format!("`disconnect` takes `true` or {{\"after\", \"exit\"}}, not {other}"),
        )),
    }
}

fn parse_malformed(value: &Value, at: &str) -> Result<Malformed, FaultsError> {
    let named = |name: &str| match name {
        "not_json" => Some(Malformed::NotJson),
        "not_jsonrpc" => Some(Malformed::NotJsonRpc),
        "truncated" => Some(Malformed::Truncated),
        _ => None,
    };
    match value {
        Value::Bool(true) => Ok(Malformed::NotJson),
        Value::String(name) => named(name).ok_or_else(|| {
            FaultsError::at(
                at,
                format!(
                    "unknown malformed answer `{name}` (allowed: not_json, not_jsonrpc, truncated)"
                ),
            )
        }),
        other => Err(FaultsError::at(
            at,
            format!(
                "`malformed` takes `true`, \"not_json\", \"not_jsonrpc\" or \"truncated\", not {other}"
            ),
        )),
    }
}

fn parse_http(value: &Value, at: &str) -> Result<HttpStatus, FaultsError> {
    let status = |value: &Value, at: &str| -> Result<u16, FaultsError> {
        match value.as_u64() {
            Some(s) if (400..=599).contains(&s) => Ok(s as u16),
            _ => Err(FaultsError::at(
                at,
                format!("an `http` fault's status is from 400 to 599, not {value}"),
            )),
        }
    };
    match value {
        Value::Object(members) => {
            only(members, &["status", "retry_after", "body"], at, "http")?;
            let Some(code) = members.get("status") else {
                return Err(FaultsError::at(
                    at,
                    "an `http` fault needs `status` (404, 429, 500, 503, …)",
                ));
            };
            let retry_after = match members.get("retry_after") {
                None => None,
                Some(value) => Some(value.as_u64().ok_or_else(|| {
                    FaultsError::at(
                        &pointer(at, "retry_after"),
                        format!("`http.retry_after` is whole seconds, not {value}"),
                    )
                })?),
            };
            let body = match members.get("body") {
                None => None,
                Some(Value::String(body)) => Some(body.clone()),
                Some(other) => Some(other.to_string()),
            };
            Ok(HttpStatus {
                status: status(code, &pointer(at, "status"))?,
                retry_after,
                body,
            })
        }
        other => Ok(HttpStatus {
            status: status(other, at)?,
            retry_after: None,
            body: None,
        }),
    }
}

fn parse_list_change(list: ListKind, value: &Value, at: &str) -> Result<ListChange, FaultsError> {
    let kind = list.kind();
    let Value::Object(members) = value else {
        return Err(FaultsError::at(
            at,
            format!(
                "`{kind}` takes {{\"remove\": [{}…], \"change\": {{…}}}}, not {}",
                list.key(),
                kind_of(value)
            ),
        ));
    };
    only(members, &["remove", "change"], at, kind)?;
    let remove = match members.get("remove") {
        None => Vec::new(),
        Some(Value::Array(items)) => items
            .iter()
            .enumerate()
            .map(|(i, item)| {
                item.as_str().map(str::to_owned).ok_or_else(|| {
                    FaultsError::at(
                        &format!("{}/{i}", pointer(at, "remove")),
                        format!("`remove` lists the {} of items, as strings", list.key()),
                    )
                })
            })
            .collect::<Result<_, _>>()?,
        Some(other) => {
            return Err(FaultsError::at(
                &pointer(at, "remove"),
                format!("`remove` is a list, not {}", kind_of(other)),
            ));
        }
    };
    let change = match members.get("change") {
        None => BTreeMap::new(),
        Some(Value::Object(items)) => {
            let mut change = BTreeMap::new();
            for (name, members) in items {
                let Value::Object(members) = members else {
                    return Err(FaultsError::at(
                        &pointer(&pointer(at, "change"), name),
                        format!(
                            "each change is an object of the members to set (`{{\"inputSchema\": …}}`), not {}",
                            kind_of(members)
                        ),
                    ));
                };
                change.insert(name.clone(), members.clone());
            }
            change
        }
        Some(other) => Err(FaultsError::at(
            &pointer(at, "change"),
            format!(
                "`change` maps names to the members to set, not {}",
                kind_of(other)
            ),
        ))?,
    };
    if remove.is_empty() && change.is_empty() {
        return Err(FaultsError::at(
            at,
            format!("`{kind}` changes nothing: give `remove` or `change`"),
        ));
    }
    Ok(ListChange {
        list,
        remove,
        change,
    })
}

fn parse_edits(value: &Value, at: &str) -> Result<Vec<Edit>, FaultsError> {
    let Value::Array(edits) = value else {
        return Err(FaultsError::at(
            at,
            format!(
                "`mutate` is a list of edits ({{\"op\": \"replace\", \"path\": \"/content/0/text\", \"value\": …}}), not {}",
                kind_of(value)
            ),
        ));
    };
    if edits.is_empty() {
        return Err(FaultsError::at(at, "`mutate` needs at least one edit"));
    }
    edits
        .iter()
        .enumerate()
        .map(|(i, edit)| {
            let at = format!("{at}/{i}");
            let Value::Object(members) = edit else {
                return Err(FaultsError::at(
                    &at,
                    format!("an edit is {{\"op\", \"path\", \"value\"?}}, not {}", kind_of(edit)),
                ));
            };
            only(members, &["op", "path", "value"], &at, "edit")?;
            let op = match members.get("op").and_then(Value::as_str) {
                Some("replace") => EditOp::Replace,
                Some("remove") => EditOp::Remove,
                Some("add") => EditOp::Add,
                _ => {
                    return Err(FaultsError::at(
                        &pointer(&at, "op"),
                        "`op` is \"replace\", \"remove\" or \"add\"",
                    ));
                }
            };
            let path = match members.get("path").and_then(Value::as_str) {
                Some(path) if path.starts_with('/') => path.to_owned(),
                _ => {
                    return Err(FaultsError::at(
                        &pointer(&at, "path"),
                        "`path` is a JSON pointer into the result, starting with `/` (`/content/0/text`)",
                    ));
                }
            };
            let value = match (op, members.get("value")) {
                (EditOp::Remove, None) => Value::Null,
                (EditOp::Remove, Some(_)) => {
                    return Err(FaultsError::at(
                        &pointer(&at, "value"),
                        "`remove` takes no `value`",
                    ));
                }
                (_, Some(value)) => value.clone(),
                (_, None) => {
                    return Err(FaultsError::at(
                        &at,
                        "`replace` and `add` need the `value` to put there",
                    ));
                }
            };
            Ok(Edit { op, path, value })
        })
        .collect()
}

/// Refuses members of an object parameter other than `allowed`.
fn only(
    members: &Map<String, Value>,
    allowed: &[&str],
    at: &str,
    what: &str,
) -> Result<(), FaultsError> {
    match members.keys().find(|k| !allowed.contains(&k.as_str())) {
        Some(key) => Err(FaultsError::at(
            &pointer(at, key),
            format!(
                "unknown member `{key}` of `{what}` (allowed: {})",
                allowed.join(", ")
            ),
        )),
        None => Ok(()),
    }
}

fn unsigned(value: &Value, at: &str, what: &str) -> Result<u64, FaultsError> {
    value.as_u64().ok_or_else(|| {
        FaultsError::at(
            at,
            format!("`{what}` must be a whole number from 0 up, not {value}"),
        )
    })
}

fn pointer(at: &str, key: &str) -> String {
    let mut pointer = at.to_owned();
    crate::json::push_key(&mut pointer, key);
    pointer
}

fn kind_of(value: &Value) -> &'static str {
    crate::json::kind_of(value)
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
