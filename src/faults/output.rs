//! Changing an answer on its way to the client: the handler answers into a
//! channel of its own, and [`forward`] passes each message on late,
//! changed, cut short or not at all, as the faults that fired say.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;
use tokio::sync::mpsc;

use super::answers;
use crate::cassette::{Edit, EditOp, ListChange, ListKind, SseFrame};
use crate::server::sink::is_response;
use crate::server::{BARRIER, HANGUP, Sink};

/// What happens to one answer on its way out.
#[derive(Debug, Default)]
pub(crate) struct Shaping {
    /// The wait before its first message.
    pub(crate) delay: Option<Duration>,
    /// The same wait before each later message too.
    pub(crate) between: bool,
    /// Notifications left out: these methods, or all (`Some(empty)`).
    pub(crate) drop: Option<Vec<String>>,
    /// Edits on the response's `result`.
    pub(crate) edits: Vec<Edit>,
    /// The response cut in half.
    pub(crate) truncate: bool,
    /// Hang up after this many messages.
    pub(crate) disconnect: Option<usize>,
    /// Changes in force on a list this answer lists.
    pub(crate) lists: Vec<ListChange>,
    /// Lists whose changes the handshake this answers must say are
    /// announced (`capabilities.tools.listChanged`), since faults change
    /// them.
    pub(crate) announces: Vec<ListKind>,
    /// Notifications that go in the answer, just before its response.
    pub(crate) ahead: Vec<Value>,
    /// After the answer: changes that come into force, and the
    /// notifications that announce them.
    pub(crate) after: Option<After>,
}

/// What comes after an answer whose request a list-change fault hit.
#[derive(Debug)]
pub(crate) struct After {
    /// The changes to bring into force.
    pub(crate) changes: Vec<ListChange>,
    /// Where the changes in force are kept.
    pub(crate) in_force: Arc<Mutex<Vec<ListChange>>>,
    /// Each announcement, and the listen stream it goes down (`None`:
    /// where the session's unprompted messages go).
    pub(crate) announce: Vec<(Option<Sink>, Value)>,
}

impl Shaping {
    /// Whether the answer goes out as the handler sends it.
    pub(crate) fn is_plain(&self) -> bool {
        self.delay.is_none()
            && self.drop.is_none()
            && self.edits.is_empty()
            && !self.truncate
            && self.disconnect.is_none()
            && self.lists.is_empty()
            && self.announces.is_empty()
            && self.ahead.is_empty()
            && self.after.is_none()
    }
}

/// Passes what arrives on `from` to `sink`, shaped. Ends when the
/// handler's answer is over (every sender gone) or when it hangs up.
pub(crate) async fn forward(
    mut from: mpsc::UnboundedReceiver<Vec<u8>>,
    sink: Sink,
    shaping: Shaping,
) {
    let mut written = 0;
    let mut first = true;
    while let Some(message) = from.recv().await {
        if message == BARRIER || message == HANGUP {
            let _ = sink.events.send(message);
            continue;
        }
        let response = is_response(&message);
        if !response && dropped(&message, shaping.drop.as_deref()) {
            continue;
        }
        if let Some(delay) = shaping.delay
            && (first || shaping.between)
        {
            tokio::time::sleep(delay).await;
        }
        first = false;
        if shaping.disconnect == Some(written) {
            hang_up(&sink);
            return;
        }
        if response {
            for notification in &shaping.ahead {
                sink.event(notification);
            }
            let message = reshape(message, &shaping);
            let _ = sink.responses.send(message);
        } else {
            let _ = sink.events.send(message);
        }
        written += 1;
    }
    if shaping.disconnect.is_some() {
        // The answer had no more than that many messages: the server goes
        // away after it all the same.
        hang_up(&sink);
        return;
    }
    if let Some(after) = shaping.after {
        after
            .in_force
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .extend(after.changes);
        for (stream, notification) in after.announce {
            match stream {
                Some(stream) => stream.event(&notification),
                None => sink.session_event(&notification, &SseFrame::default()),
            }
        }
    }
}

/// Ends the connection there (see [`HANGUP`]).
fn hang_up(sink: &Sink) {
    let _ = sink.events.send(HANGUP.to_vec());
}

/// Whether a notification is one to leave out.
fn dropped(message: &[u8], drop: Option<&[String]>) -> bool {
    let Some(methods) = drop else { return false };
    let Ok(value) = serde_json::from_slice::<Value>(message) else {
        return false;
    };
    // Server requests (sampling, elicitation) are not notifications.
    if value.get("id").is_some() {
        return false;
    }
    let method = value.get("method").and_then(Value::as_str).unwrap_or("");
    methods.is_empty() || methods.iter().any(|m| m == method)
}

/// The response as the faults make it.
fn reshape(message: Vec<u8>, shaping: &Shaping) -> Vec<u8> {
    let mut message = message;
    let edits =
        !shaping.edits.is_empty() || !shaping.lists.is_empty() || !shaping.announces.is_empty();
    if edits
        && let Ok(mut value) = serde_json::from_slice::<Value>(&message)
        && let Some(result) = value.get_mut("result")
    {
        for edit in &shaping.edits {
            if !apply(result, edit) {
                tracing::warn!(
                    "a mutate fault's {} at {} found nothing to edit in the recorded result",
                    op_name(edit.op),
                    edit.path
                );
            }
        }
        for change in &shaping.lists {
            change_list(result, change);
        }
        for &list in &shaping.announces {
            // Only a server that has the list can say it changes.
            if let Some(Value::Object(capability)) =
                result.pointer_mut(&format!("/capabilities/{}", list.items()))
            {
                capability.insert("listChanged".to_owned(), Value::Bool(true));
            }
        }
        message = crate::server::encode(&value);
    }
    if shaping.truncate {
        message = answers::truncated(&message);
    }
    message
}

fn op_name(op: EditOp) -> &'static str {
    match op {
        EditOp::Replace => "replace",
        EditOp::Remove => "remove",
        EditOp::Add => "add",
    }
}

/// Applies one edit; whether its place was there.
pub(crate) fn apply(result: &mut Value, edit: &Edit) -> bool {
    if edit.op == EditOp::Replace {
        return match result.pointer_mut(&edit.path) {
            Some(place) => {
                *place = edit.value.clone();
                true
            }
            None => false,
        };
    }
    let (parent, last) = match edit.path.rfind('/') {
        Some(cut) => (&edit.path[..cut], unescape(&edit.path[cut + 1..])),
        None => return false,
    };
    let Some(parent) = result.pointer_mut(parent) else {
        return false;
    };
    match (edit.op, parent) {
        (EditOp::Remove, Value::Object(members)) => members.shift_remove(&last).is_some(),
        (EditOp::Remove, Value::Array(items)) => match last.parse::<usize>() {
            Ok(i) if i < items.len() => {
                items.remove(i);
                true
            }
            _ => false,
        },
        (EditOp::Add, Value::Object(members)) => {
            members.insert(last, edit.value.clone());
            true
        }
        (EditOp::Add, Value::Array(items)) if last == "-" => {
            items.push(edit.value.clone());
            true
        }
        (EditOp::Add, Value::Array(items)) => match last.parse::<usize>() {
            Ok(i) if i <= items.len() => {
                items.insert(i, edit.value.clone());
                true
            }
            _ => false,
        },
        _ => false,
    }
}

fn unescape(token: &str) -> String {
    token.replace("~1", "/").replace("~0", "~")
}

/// A list result with a change in force: items removed, members changed.
pub(crate) fn change_list(result: &mut Value, change: &ListChange) {
    let key = change.list.key();
    let Some(Value::Array(items)) = result.get_mut(change.list.items()) else {
        return;
    };
    items.retain(|item| {
        let name = item.get(key).and_then(Value::as_str).unwrap_or("");
        !change.remove.iter().any(|r| r == name)
    });
    for item in items.iter_mut() {
        let name = item
            .get(key)
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned();
        if let (Some(members), Value::Object(fields)) = (change.change.get(&name), item) {
            for (member, value) in members {
                fields.insert(member.clone(), value.clone());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cassette::{Fault, Faults};
    use serde_json::json;

    fn edits(edits: Value) -> Vec<Edit> {
        match Faults::from_document(&json!([{"mutate": edits}]))
            .unwrap()
            .rules[0]
            .fault
            .clone()
        {
            Fault::Mutate(edits) => edits,
            _ => unreachable!(),
        }
    }

    #[test]
    fn edits_replace_remove_and_add() {
        let mut result = json!({"content": [{"type": "text", "text": "42"}], "meta/x": 1});
        for edit in edits(json!([
            {"op": "replace", "path": "/content/0/text", "value": "41"},
            {"op": "add", "path": "/content/-", "value": {"type": "text", "text": "more"}},
            {"op": "remove", "path": "/meta~1x"},
            {"op": "add", "path": "/isError", "value": false},
        ])) {
            assert!(apply(&mut result, &edit), "{edit:?}");
        }
        assert_eq!(
            result,
            json!({"content": [{"type": "text", "text": "41"}, {"type": "text", "text": "more"}], "isError": false})
        );
        let missing = &edits(json!([{"op": "replace", "path": "/nothing", "value": 1}]))[0];
        assert!(!apply(&mut result, missing));
    }

    #[test]
    fn a_list_change_removes_and_changes_items() {
        let change = match Faults::from_document(&json!([{"tools_changed": {
            "remove": ["b"],
            "change": {"a": {"inputSchema": {"type": "object", "required": ["q"]}}}
        }}]))
        .unwrap()
        .rules[0]
            .fault
            .clone()
        {
            Fault::ListChanged(change) => change,
            _ => unreachable!(),
        };
        let mut result =
            json!({"tools": [{"name": "a", "inputSchema": {"type": "object"}}, {"name": "b"}]});
        change_list(&mut result, &change);
        assert_eq!(
            result,
            json!({"tools": [{"name": "a", "inputSchema": {"type": "object", "required": ["q"]}}]})
        );
    }

    #[tokio::test(start_paused = true)]
    async fn a_delay_waits_before_the_first_message_or_before_each() {
        let progress = br#"{"jsonrpc":"2.0","method":"notifications/progress","params":{}}"#;
        let response = br#"{"jsonrpc":"2.0","id":1,"result":{}}"#;
        for between in [false, true] {
            let (tx, rx) = mpsc::unbounded_channel();
            let (out, mut seen) = mpsc::unbounded_channel();
            for message in [&progress[..], &progress[..], &response[..]] {
                tx.send(message.to_vec()).unwrap();
            }
            drop(tx);
            let shaping = Shaping {
                delay: Some(Duration::from_millis(100)),
                between,
                ..Shaping::default()
            };
            let started = tokio::time::Instant::now();
            tokio::spawn(forward(rx, Sink::single(out), shaping));
            let mut at = Vec::new();
            while seen.recv().await.is_some() {
                at.push(started.elapsed().as_millis());
            }
            let expected: &[u128] = if between {
                &[100, 200, 300]
            } else {
                &[100, 100, 100]
            };
            assert_eq!(at, expected, "between notifications: {between}");
        }
    }

    #[tokio::test]
    async fn notifications_drop_and_the_server_hangs_up_after_n() {
        let (tx, rx) = mpsc::unbounded_channel();
        let (out, mut seen) = mpsc::unbounded_channel();
        let progress = br#"{"jsonrpc":"2.0","method":"notifications/progress","params":{}}"#;
        let log = br#"{"jsonrpc":"2.0","method":"notifications/message","params":{}}"#;
        let response = br#"{"jsonrpc":"2.0","id":1,"result":{}}"#;
        for message in [&progress[..], &log[..], &response[..]] {
            tx.send(message.to_vec()).unwrap();
        }
        drop(tx);
        let shaping = Shaping {
            drop: Some(vec!["notifications/progress".into()]),
            disconnect: Some(1),
            ..Shaping::default()
        };
        forward(rx, Sink::single(out), shaping).await;
        assert_eq!(seen.recv().await.unwrap(), log.to_vec());
        assert_eq!(seen.recv().await.unwrap(), HANGUP.to_vec());
        assert!(seen.recv().await.is_none(), "nothing after the hang-up");
    }
}
