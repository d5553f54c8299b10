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
    /// Responses seen before their requests: each side is checked by the
    /// thread that forwarded it, after forwarding, so a fast answer can
    /// overtake its request here. Checked once the request turns up.
    early: HashMap<(bool, String), Value>,
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
                    let key = (from_client, jsonrpc::id_key(id));
                    self.pending.insert(key.clone(), method.to_owned());
                    let mut warnings = self.check(direction, message, None);
                    if let Some(response) = self.early.remove(&(!from_client, key.1)) {
                        warnings.extend(self.message(direction.reverse(), &response));
                    }
                    return warnings;
                }
            }
            Ok(Kind::Response) => {
                // A response travels the other way from its request.
                let Some(key) = jsonrpc::id(message).map(|id| (!from_client, jsonrpc::id_key(id)))
                else {
                    return Vec::new();
                };
                answers = self.pending.remove(&key);
                if answers.is_none() {
                    self.early.insert((from_client, key.1), message.clone());
                    return Vec::new();
                }
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
        self.check(direction, message, answers.as_deref())
    }

    /// Checks one message against the session's version, once known.
    fn check(
        &mut self,
        direction: Direction,
        message: &Value,
        answers: Option<&str>,
    ) -> Vec<String> {
        let from_client = direction == Direction::ClientToServer;
        let Some(version) = self
            .version
            .as_deref()
            .filter(|v| schema::VERSIONS.contains(v))
        else {
            return Vec::new();
        };
        let violations = schema::check_message(version, message, answers);
        let what = match (jsonrpc::method(message), answers) {
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const C2S: Direction = Direction::ClientToServer;
    const S2C: Direction = Direction::ServerToClient;

    fn handshake(watch: &mut Watch) {
        watch.message(C2S, &json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}}}));
        watch.message(S2C, &json!({"jsonrpc": "2.0", "id": 1, "result": {"protocolVersion": "2025-11-25", "capabilities": {}, "serverInfo": {"name": "s", "version": "1"}}}));
    }

    fn bad_list(id: i64) -> Value {
        json!({"jsonrpc": "2.0", "id": id, "result": {"tools": "none"}})
    }

    fn list(id: i64) -> Value {
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/list"})
    }

    #[test]
    fn breaks_are_reported_once_per_method_and_kind() {
        let mut watch = Watch::default();
        handshake(&mut watch);
        assert!(watch.message(C2S, &list(2)).is_empty());
        let warnings = watch.message(S2C, &bad_list(2));
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert!(
            warnings[0].contains("the response to `tools/list`"),
            "{}",
            warnings[0]
        );
        assert!(warnings[0].contains("2025-11-25"));
        watch.message(C2S, &list(3));
        assert!(watch.message(S2C, &bad_list(3)).is_empty());
        assert_eq!(watch.breaks(), 2);
    }

    #[test]
    fn an_answer_seen_before_its_request_is_checked_when_the_request_comes() {
        let mut watch = Watch::default();
        // The handshake itself out of order: the version is still learnt.
        watch.message(S2C, &json!({"jsonrpc": "2.0", "id": 1, "result": {"protocolVersion": "2025-11-25", "capabilities": {}, "serverInfo": {"name": "s", "version": "1"}}}));
        watch.message(C2S, &json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}}}));
        assert!(
            watch.message(S2C, &bad_list(2)).is_empty(),
            "no request yet"
        );
        let warnings = watch.message(C2S, &list(2));
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert!(warnings[0].contains("/result/tools"), "{}", warnings[0]);
    }

    #[test]
    fn nothing_is_checked_before_the_version_is_known() {
        let mut watch = Watch::default();
        watch.message(C2S, &list(2));
        assert!(watch.message(S2C, &bad_list(2)).is_empty());
        assert_eq!(watch.breaks(), 0);
    }
}
