//! The client's answers to the server-to-client requests replay sends
//! (sampling, elicitation), against the answers recorded with them.
//!
//! Replay plays the recorded server, whose next move was made on the
//! recorded answer: a client that now answers otherwise (declines an
//! elicitation it accepted, samples another text) would see the server
//! carry on as if it had not. That is worth a warning, and under
//! `--strategy strict` it fails the request.

use std::fmt;

use serde::Serialize;
use serde_json::Value;

use crate::jsonrpc;

/// JSON-RPC error code: under `strict`, the client answered a replayed
/// sampling or elicitation request differently from the recording. In the
/// range MCP leaves to implementations (-32000..-32019).
pub const ANSWER_MISMATCH: i64 = -32004;

/// Server-to-client requests whose answers are compared: the client's
/// decisions. `roots/list` answers describe the machine (its paths), and
/// are not compared.
const COMPARED: [&str; 2] = ["sampling/createMessage", "elicitation/create"];

/// A live answer that differs from the recorded one.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AnswerMismatch {
    /// The interaction whose request it was (`None`: the opening).
    pub interaction: Option<usize>,
    /// The server-to-client request's method.
    pub method: String,
    /// The recorded answer (`result` or `error`), masked.
    pub recorded: Value,
    /// The live answer, masked.
    pub live: Value,
    /// Unified diff, recorded → live.
    pub diff: String,
}

impl AnswerMismatch {
    /// Compares the client's live answer to `server_request` with the
    /// recorded one. Both are masked already (the cassette was, and the
    /// engine masks live messages the same way); token shapes are masked
    /// again for the report.
    pub fn compare(
        interaction: Option<usize>,
        server_request: &Value,
        recorded: Option<&Value>,
        live: &Value,
    ) -> Option<AnswerMismatch> {
        let method = jsonrpc::method(server_request)?;
        if !COMPARED.contains(&method) {
            return None;
        }
        let recorded = answer(recorded?);
        let live = answer(live);
        if crate::json::canonical_json(&recorded) == crate::json::canonical_json(&live) {
            return None;
        }
        let (recorded, live) = (
            crate::redact::mask_value(&recorded),
            crate::redact::mask_value(&live),
        );
        Some(AnswerMismatch {
            interaction,
            method: method.to_owned(),
            diff: diff(&recorded, &live),
            recorded,
            live,
        })
    }

    /// The message of the strict error.
    pub fn message(&self) -> String {
        format!(
            "mcpcassette: the client answered `{}` differently from the recording (strategy strict); the recorded server went on from the recorded answer",
            self.method
        )
    }
}

impl fmt::Display for AnswerMismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let place = match self.interaction {
            Some(i) => format!("interaction #{i}"),
            None => "the opening".to_owned(),
        };
        writeln!(
            f,
            "mcpcassette: the client answered `{}` ({place}) differently from the recording; replay goes on as the recorded server did, from the recorded answer",
            self.method
        )?;
        for line in self.diff.lines() {
            writeln!(f, "    {line}")?;
        }
        Ok(())
    }
}

/// What an answer says: its `result` or `error`, without `_meta`.
fn answer(response: &Value) -> Value {
    let mut said = response
        .get("result")
        .map(|r| serde_json::json!({"result": r}))
        .or_else(|| {
            response
                .get("error")
                .map(|e| serde_json::json!({"error": e}))
        })
        .unwrap_or(Value::Null);
    if let Some(result) = said.get_mut("result").and_then(Value::as_object_mut) {
        result.remove("_meta");
    }
    said
}

fn diff(recorded: &Value, live: &Value) -> String {
    let pretty = |v: &Value| {
        let sorted: Value =
            serde_json::from_str(&crate::json::canonical_json(v)).unwrap_or(Value::Null);
        serde_json::to_string_pretty(&sorted).unwrap_or_default() + "\n"
    };
    similar::TextDiff::from_lines(&pretty(recorded), &pretty(live))
        .unified_diff()
        .context_radius(3)
        .header("recorded", "live")
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn decisions_are_compared_and_roots_are_not() {
        let ask = json!({"jsonrpc": "2.0", "id": 0, "method": "elicitation/create", "params": {}});
        let accepted = json!({"jsonrpc": "2.0", "id": 0, "result": {"action": "accept", "content": {"ok": true}}});
        let same = json!({"jsonrpc": "2.0", "id": 9, "result": {"content": {"ok": true}, "action": "accept", "_meta": {"x": 1}}});
        let declined = json!({"jsonrpc": "2.0", "id": 9, "result": {"action": "decline"}});
        assert_eq!(
            AnswerMismatch::compare(Some(1), &ask, Some(&accepted), &same),
            None
        );
        let found = AnswerMismatch::compare(Some(1), &ask, Some(&accepted), &declined).unwrap();
        assert!(
            found.diff.contains("-    \"action\": \"accept\""),
            "{}",
            found.diff
        );
        assert!(
            found.diff.contains("+    \"action\": \"decline\""),
            "{}",
            found.diff
        );
        let roots = json!({"jsonrpc": "2.0", "id": 0, "method": "roots/list"});
        assert_eq!(
            AnswerMismatch::compare(None, &roots, Some(&accepted), &declined),
            None
        );
    }

    #[test]
    fn secrets_are_masked_in_the_report() {
        let ask =
            json!({"jsonrpc": "2.0", "id": 0, "method": "sampling/createMessage", "params": {}});
        let recorded = json!({"id": 0, "result": {"content": {"type": "text", "text": "a"}}});
        let live = json!({"id": 0, "result": {"content": {"type": "text", "text": "ghp_0123456789abcdefghijABCDEFGHIJ012345"}}});
        let found = AnswerMismatch::compare(None, &ask, Some(&recorded), &live).unwrap();
        assert!(!found.to_string().contains("ghp_0123"), "{found}");
        assert!(!serde_json::to_string(&found).unwrap().contains("ghp_0123"));
    }
}
