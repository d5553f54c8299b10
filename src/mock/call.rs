//! The call log: every request and notification a mock received, in
//! arrival order, with what came of it, for assertions and `--log`.

use std::time::Duration;

use serde_json::{Value, json};

use crate::jsonrpc::RpcError;

/// One message a client sent the mock.
#[derive(Debug, Clone, PartialEq)]
pub struct Call {
    /// Position in the log, from 1.
    pub seq: usize,
    /// When it arrived, since the mock was built.
    pub at: Duration,
    /// The JSON-RPC method.
    pub method: String,
    /// Its `params` (`null` when it had none).
    pub params: Value,
    /// What the mock did with it.
    pub outcome: Outcome,
    /// From arrival to the answer (zero for notifications and while
    /// unanswered).
    pub duration: Duration,
}

/// What came of a call. Interceptors edit only what goes on the wire: the
/// log keeps the answer as the handler gave it.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// Answered with this result.
    Result(Value),
    /// Answered with this JSON-RPC error.
    Error(RpcError),
    /// Not (yet) answered: still pending, cancelled, or the client left.
    NoAnswer,
    /// A notification: nothing to answer.
    Notification,
}

impl Call {
    /// The tool a `tools/call` named, or the prompt of a `prompts/get`.
    pub fn name(&self) -> Option<&str> {
        self.params.get("name").and_then(Value::as_str)
    }

    /// The `arguments` of a `tools/call` or `prompts/get`.
    pub fn arguments(&self) -> Option<&Value> {
        self.params.get("arguments")
    }

    /// The `uri` of a `resources/read`.
    pub fn uri(&self) -> Option<&str> {
        self.params.get("uri").and_then(Value::as_str)
    }

    /// Whether it was a request (as opposed to a notification).
    pub fn is_request(&self) -> bool {
        self.outcome != Outcome::Notification
    }

    /// One line for messages: `#3 tools/call echo {"message":"hi"} -> result`.
    pub fn summary(&self) -> String {
        let what = match (self.method.as_str(), self.name(), self.uri()) {
            ("tools/call" | "prompts/get", Some(name), _) => {
                let arguments = self.arguments().map(Value::to_string).unwrap_or_default();
                format!("{} {name} {arguments}", self.method)
            }
            ("resources/read", _, Some(uri)) => format!("{} {uri}", self.method),
            _ => self.method.clone(),
        };
        let outcome = match &self.outcome {
            Outcome::Result(_) => "result".to_owned(),
            Outcome::Error(error) => format!("error {}", error.code),
            Outcome::NoAnswer => "no answer".to_owned(),
            Outcome::Notification => "notification".to_owned(),
        };
        format!("#{} {} -> {outcome}", self.seq, what.trim_end())
    }

    /// The call as one JSON object (`seq`, `method`, `params`, `outcome`,
    /// `duration_ms`), as `mcpcassette serve --log` writes it.
    pub fn to_json(&self) -> Value {
        let outcome = match &self.outcome {
            Outcome::Result(result) => json!({"result": result}),
            Outcome::Error(error) => json!({"error": error.to_value()}),
            Outcome::NoAnswer => json!("no_answer"),
            Outcome::Notification => json!("notification"),
        };
        json!({
            "seq": self.seq,
            "method": self.method,
            "params": self.params,
            "outcome": outcome,
            "duration_ms": self.duration.as_micros() as f64 / 1000.0,
        })
    }
}

/// The log as lines for assertion messages.
pub(crate) fn listing(calls: &[Call]) -> String {
    if calls.is_empty() {
        return "  (nothing was received)".to_owned();
    }
    let lines: Vec<String> = calls.iter().map(|c| format!("  {}", c.summary())).collect();
    lines.join("\n")
}
