//! Schema warnings while recording: every message that passes is checked
//! against the MCP shapes of the session's protocol version, and breaks are
//! reported on stderr. What is forwarded never changes.

use std::collections::{HashMap, HashSet};

use serde_json::Value;

use crate::cassette::Direction;
use crate::jsonrpc::{self, Kind};
use crate::protocol;
use crate::schema::{self, ViolationKind};

/// What the watch knows of the session so far.
#[derive(Debug, Default)]
pub struct Watch {
    /// The negotiated (legacy) or declared (modern) protocol version.
    version: Option<String>,
    /// Methods of requests awaiting an answer, by direction and id.
    pending: HashMap<(bool, String), String>,
    /// Kinds of break already reported, so a chatty server is reported
    /// once per method and kind.
    reported: HashSet<(String, ViolationKind)>,
    /// Breaks seen in all, reported or not.
    breaks: usize,
}

impl Watch {
    /// Looks at one forwarded line; returns the warnings to print.
    pub fn line(&mut self, direction: Direction, line: &[u8]) -> Vec<String> {
        match serde_json::from_slice::<Value>(line) {
            Ok(Value::Array(batch)) => batch
                .iter()
                .flat_map(|message| self.message(direction, message))
                .collect(),
            Ok(message) => self.message(direction, &message),
            Err(_) => Vec::new(),
        }
    }

    /// Looks at one message; returns the warnings to print.
    pub fn message(&mut self, direction: Direction, message: &Value) -> Vec<String> {
        let from_client = direction == Direction::ClientToServer;
        let mut answers = None;
        match jsonrpc::classify(message) {
            Ok(Kind::Request) => {
                let method = jsonrpc::method(message).unwrap_or_default();
                if let Some(version) = protocol::declared_version(message) {
                    self.version = Some(version.to_owned());
                }
                if let Some(id) = jsonrpc::id(message) {
                    self.pending
                        .insert((from_client, jsonrpc::id_key(id)), method.to_owned());
                }
            }
            Ok(Kind::Response) => {
                // A response travels the other way from its request.
                answers = jsonrpc::id(message)
                    .and_then(|id| self.pending.remove(&(!from_client, jsonrpc::id_key(id))));
                if answers.as_deref() == Some("initialize")
                    && let Some(version) = message
                        .pointer("/result/protocolVersion")
                        .and_then(Value::as_str)
                {
                    self.version = Some(version.to_owned());
                }
            }
            _ => {}
        }
        let Some(version) = self
            .version
            .as_deref()
            .filter(|v| schema::VERSIONS.contains(v))
        else {
            return Vec::new();
        };
        let violations = schema::check_message(version, message, answers.as_deref());
        let what = match (jsonrpc::method(message), &answers) {
            (Some(method), _) => format!("`{method}`"),
            (None, Some(method)) => format!("the response to `{method}`"),
            (None, None) => "a response".to_owned(),
        };
        let mut warnings = Vec::new();
        for violation in violations {
            if violation.kind == ViolationKind::UnknownMethod {
                continue;
            }
            self.breaks += 1;
            if !self.reported.insert((what.clone(), violation.kind)) {
                continue;
            }
            let sender = if from_client { "client" } else { "server" };
            warnings.push(format!(
                "{what} from the {sender} breaks the {version} schema at {}: {} (forwarded unchanged; `mcpcassette check` lists every break)",
                if violation.pointer.is_empty() { "/" } else { &violation.pointer },
                violation.message
            ));
        }
        warnings
    }

    /// How many breaks were seen in all.
    pub fn breaks(&self) -> usize {
        self.breaks
    }
}
