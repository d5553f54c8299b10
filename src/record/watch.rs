//! Checking a session as it is recorded: [`Watch`] follows it with a
//! [`Pairing`] and checks every message against the MCP shapes of the
//! session's version, reporting breaks on stderr. What is forwarded never
//! changes.

use std::collections::HashSet;

use serde_json::Value;

use crate::cassette::Direction;
use crate::jsonrpc::{self, Kind};
use crate::schema::ViolationKind;
use crate::wire::pairing::Pairing;

/// What the watch knows of the session so far.
#[derive(Debug, Default)]
pub struct Watch {
    /// The version and the requests awaiting answers.
    pairing: Pairing<()>,
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
            Ok(parsed) => self.parsed(direction, &parsed),
            Err(_) => Vec::new(),
        }
    }

    /// Looks at one forwarded line, parsed: a message or a batch of them;
    /// returns the warnings to print.
    pub fn parsed(&mut self, direction: Direction, parsed: &Value) -> Vec<String> {
        match parsed {
            Value::Array(batch) => batch
                .iter()
                .flat_map(|message| self.message(direction, message))
                .collect(),
            message => self.message(direction, message),
        }
    }

    /// Looks at one message; returns the warnings to print.
    pub fn message(&mut self, direction: Direction, message: &Value) -> Vec<String> {
        let mut warnings = Vec::new();
        for seen in self.pairing.message(direction, message, ()) {
            // A response whose request is unknown cannot be checked.
            if seen.kind == Some(Kind::Response) && seen.request.is_none() {
                continue;
            }
            let answers = seen.request.as_ref().map(|(method, ())| method.as_str());
            warnings.extend(self.check(seen.direction, &seen.message, answers));
        }
        warnings
    }

    /// Checks one message against the session's version, once known.
    fn check(
        &mut self,
        direction: Direction,
        message: &Value,
        answers: Option<&str>,
    ) -> Vec<String> {
        let from_client = direction == Direction::ClientToServer;
        let violations = self.pairing.violations(message, answers);
        let Some(version) = self.pairing.checked_version() else {
            return Vec::new();
        };
        let what = match (jsonrpc::method(message), answers) {
            (Some(method), _) => format!("`{method}`"),
            (None, Some(method)) => format!("the response to `{method}`"),
            (None, None) => "a response".to_owned(),
        };
        let mut warnings = Vec::new();
        for violation in violations {
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
