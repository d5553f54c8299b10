//! One message as the inspector reports it: a line for people, a JSON
//! object for the log.

use std::time::Duration;

use serde::Serialize;
use serde_json::Value;

use crate::cassette::Direction;
use crate::check::Code;
use crate::jsonrpc::{self, Kind};
use crate::redact::Redactor;
use crate::schema::Violation;
use crate::wire::pairing::Paired;

/// One message that passed: metadata only, never params or results, with
/// every string masked. Serialized, it is a line of the `--log` file:
/// `{"t_ms", "dir", "kind", "method", "id", "bytes", "latency_ms"?,
/// "violations"?}`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct Event {
    /// When it was seen, in milliseconds since the inspector started.
    pub t_ms: f64,
    /// Which way it went: `c2s` or `s2c`.
    pub dir: Direction,
    /// What it is.
    pub kind: EventKind,
    /// Its method, or for a response the method of its request (`null`
    /// when unknown).
    pub method: Option<String>,
    /// Its id (`null` for a notification).
    pub id: Option<Value>,
    /// Its size in bytes, without the line's end (for a message of a
    /// batch: its compact JSON).
    pub bytes: usize,
    /// For a response: milliseconds since its request was seen.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub latency_ms: Option<f64>,
    /// How it breaks the MCP shapes of the session's protocol version.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub violations: Vec<Flag>,
}

/// What a message is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum EventKind {
    /// A request (has `method` and `id`).
    Request,
    /// A notification (has `method`, no `id`).
    Notification,
    /// A response with a `result`.
    Response,
    /// A response with an `error`.
    Error,
    /// Not a JSON-RPC message (not JSON, or a broken envelope).
    Invalid,
}

/// One schema violation, with `check`'s stable code.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct Flag {
    /// `MC` and three digits (the README's table of finding codes).
    pub code: &'static str,
    /// JSON pointer into the message (empty: the message itself).
    pub pointer: String,
    /// What was expected and what was found.
    pub message: String,
}

impl Flag {
    /// The pointer, or `/` for the message itself.
    pub(crate) fn pointer_or_root(&self) -> &str {
        if self.pointer.is_empty() {
            "/"
        } else {
            &self.pointer
        }
    }
}

impl Event {
    /// The event for a message the pairing understood, masked by
    /// `redactor`.
    pub(super) fn new<T>(
        paired: &Paired<'_, T>,
        at: Duration,
        bytes: usize,
        latency: Option<Duration>,
        violations: &[Violation],
        redactor: &Redactor,
    ) -> Event {
        let message = &*paired.message;
        let kind = match paired.kind {
            Some(Kind::Request) => EventKind::Request,
            Some(Kind::Notification) => EventKind::Notification,
            Some(Kind::Response) if message.get("error").is_some() => EventKind::Error,
            Some(Kind::Response) => EventKind::Response,
            None => EventKind::Invalid,
        };
        let mask = |text: &str| redactor.redact_text(text).into_owned();
        let id = match jsonrpc::id(message) {
            Some(Value::String(id)) => Some(Value::String(mask(id))),
            Some(Value::Number(n)) => Some(Value::Number(n.clone())),
            // A null id (an error about an unreadable request) is shown as
            // null; anything else is no id at all.
            _ => None,
        };
        Event {
            t_ms: millis(at),
            dir: paired.direction,
            kind,
            method: paired.method().map(mask),
            id,
            bytes,
            latency_ms: latency.map(millis),
            violations: violations
                .iter()
                .map(|v| Flag {
                    code: Code::from(v.kind).as_str(),
                    pointer: mask(&v.pointer),
                    message: mask(&v.message),
                })
                .collect(),
        }
    }

    /// A line that is not JSON.
    pub(super) fn invalid(dir: Direction, at: Duration, bytes: usize) -> Event {
        Event {
            t_ms: millis(at),
            dir,
            kind: EventKind::Invalid,
            method: None,
            id: None,
            bytes,
            latency_ms: None,
            violations: Vec::new(),
        }
    }

    /// The line of the `--log` file, newline included.
    pub(crate) fn to_json_line(&self) -> String {
        let mut line = serde_json::to_string(self).unwrap_or_default();
        line.push('\n');
        line
    }

    /// The human-readable line, newline included, with one more line per
    /// violation:
    ///
    /// ```text
    /// [  0.004s] ← response to tools/list id=2 98 B in 1.25 ms
    ///            ! MC206 at /result/tools/0/inputSchema: …
    /// ```
    pub(crate) fn render(&self) -> String {
        let arrow = match self.dir {
            Direction::ClientToServer => '→',
            Direction::ServerToClient => '←',
        };
        let method = self.method.as_deref().unwrap_or("?");
        let what = match self.kind {
            EventKind::Request | EventKind::Notification => method.to_owned(),
            EventKind::Response if self.method.is_some() => format!("response to {method}"),
            EventKind::Error if self.method.is_some() => format!("error response to {method}"),
            EventKind::Response => "response (no request seen)".to_owned(),
            EventKind::Error => "error response (no request seen)".to_owned(),
            EventKind::Invalid => "not a JSON-RPC message".to_owned(),
        };
        let mut line = format!("[{:>8.3}s] {arrow} {what}", self.t_ms / 1000.0);
        if let Some(id) = &self.id {
            line.push_str(&format!(" id={id}"));
        }
        line.push_str(&format!(" {} B", self.bytes));
        if let Some(latency) = self.latency_ms {
            line.push_str(&format!(" in {latency:.2} ms"));
        }
        line.push('\n');
        for flag in &self.violations {
            line.push_str(&format!(
                "{:12}! {} at {}: {}\n",
                "",
                flag.code,
                flag.pointer_or_root(),
                flag.message
            ));
        }
        line
    }

    /// What it is, for messages: "`tools/list`", "the response to
    /// `tools/list`".
    pub(crate) fn describe(&self) -> String {
        match (self.kind, &self.method) {
            (EventKind::Request | EventKind::Notification, Some(method)) => format!("`{method}`"),
            (EventKind::Response | EventKind::Error, Some(method)) => {
                format!("the response to `{method}`")
            }
            (EventKind::Response | EventKind::Error, None) => "a response".to_owned(),
            _ => "a message".to_owned(),
        }
    }

    /// "from the client" or "from the server".
    pub(crate) fn sender(&self) -> &'static str {
        match self.dir {
            Direction::ClientToServer => "from the client",
            Direction::ServerToClient => "from the server",
        }
    }
}

/// Milliseconds, to the microsecond.
pub(super) fn millis(duration: Duration) -> f64 {
    (duration.as_secs_f64() * 1_000_000.0).round() / 1000.0
}
