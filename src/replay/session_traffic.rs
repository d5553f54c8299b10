//! Server traffic that belongs to the session, not to a request: what a
//! server sends on its own after the handshake (`roots/list` after
//! `notifications/initialized`, `list_changed`, a log line), or before any
//! client message.
//!
//! `record` files it after the handshake message it followed, and replay
//! plays it there. In `new-episodes` the server behind replay is started,
//! and initialised by us, mid-session: what it then sends on its own is the
//! session traffic the cassette already has, and must neither reach the
//! client a second time nor be filed under the request being forwarded.

use std::collections::VecDeque;

use serde_json::Value;

use crate::cassette::{Cassette, Event};
use crate::jsonrpc;

/// Methods of the handshake whose aftermath is session traffic.
const HANDSHAKE: [&str; 2] = ["initialize", "notifications/initialized"];

/// The session traffic a cassette recorded, in order, each item taken once
/// when the live server sends its counterpart.
#[derive(Debug, Clone, Default)]
pub struct SessionScript {
    events: VecDeque<Event>,
}

impl SessionScript {
    /// What `cassette` recorded before any client message and after its
    /// handshake messages (before the next client message).
    pub fn of(cassette: &Cassette) -> SessionScript {
        let handshake = cassette
            .interactions
            .iter()
            .filter(|i| HANDSHAKE.contains(&i.method()))
            .flat_map(|i| i.after.iter());
        SessionScript {
            events: cassette.opening.iter().chain(handshake).cloned().collect(),
        }
    }

    /// Whether every recorded item was taken.
    pub fn is_done(&self) -> bool {
        self.events.is_empty()
    }

    /// What is still expected, for a log line.
    pub fn pending(&self) -> Vec<&str> {
        self.events
            .iter()
            .map(|e| jsonrpc::method(event_message(e)).unwrap_or("?"))
            .collect()
    }

    /// Takes the first recorded item of the same kind and method as the
    /// live server's `message`, if there is one.
    pub fn take(&mut self, message: &Value) -> Option<Event> {
        let request = jsonrpc::id(message).is_some();
        let method = jsonrpc::method(message)?;
        let position = self.events.iter().position(|event| {
            let is_request = matches!(event, Event::ServerRequest { .. });
            is_request == request && jsonrpc::method(event_message(event)) == Some(method)
        })?;
        self.events.remove(position)
    }
}

fn event_message(event: &Event) -> &Value {
    match event {
        Event::Notification { notification } => notification,
        Event::ServerRequest { server_request, .. } => server_request,
    }
}

/// The interaction session traffic is filed after ([`file_into`]): the
/// last handshake message; `None` for the cassette's opening.
pub(crate) fn place_in(cassette: &Cassette) -> Option<usize> {
    cassette
        .interactions
        .iter()
        .rposition(|i| HANDSHAKE.contains(&i.method()))
}

/// Files session traffic the live server sent that the cassette lacks where
/// `record` would have: after the last handshake message, else before any
/// client message.
pub fn file_into(cassette: &mut Cassette, events: Vec<Event>) {
    if events.is_empty() {
        return;
    }
    match place_in(cassette) {
        Some(position) => cassette.interactions[position].after.extend(events),
        None => cassette.opening.extend(events),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cassette::{Builder, Direction, Transport};
    use serde_json::json;

    fn cassette() -> Cassette {
        let mut builder = Builder::new(
            String::new(),
            Transport::Stdio {
                command: vec![],
                cwd: None,
            },
        );
        let c2s = Direction::ClientToServer;
        let s2c = Direction::ServerToClient;
        builder.observe(
            c2s,
            json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}),
        );
        builder.observe(s2c, json!({"jsonrpc": "2.0", "id": 1, "result": {"protocolVersion": "2025-11-25", "capabilities": {}, "serverInfo": {"name": "s", "version": "1"}}}));
        builder.observe(
            c2s,
            json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        );
        builder.observe(
            s2c,
            json!({"jsonrpc": "2.0", "id": "r", "method": "roots/list"}),
        );
        builder.observe(
            c2s,
            json!({"jsonrpc": "2.0", "id": "r", "result": {"roots": []}}),
        );
        builder.observe(s2c, json!({"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "x"}}));
        builder.observe(
            c2s,
            json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
        );
        builder.observe(s2c, json!({"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "in a call"}}));
        builder.observe(
            s2c,
            json!({"jsonrpc": "2.0", "id": 2, "result": {"tools": []}}),
        );
        builder.finish()
    }

    #[test]
    fn the_handshake_aftermath_is_the_script() {
        let cassette = cassette();
        let mut script = SessionScript::of(&cassette);
        assert_eq!(script.pending(), ["roots/list", "notifications/message"]);
        let log = json!({"jsonrpc": "2.0", "method": "notifications/message", "params": {}});
        assert!(matches!(
            script.take(&log),
            Some(Event::Notification { .. })
        ));
        assert!(
            script.take(&log).is_none(),
            "taken once; the call's log is not in it"
        );
        let ask = json!({"jsonrpc": "2.0", "id": 0, "method": "roots/list"});
        let Some(Event::ServerRequest {
            client_response, ..
        }) = script.take(&ask)
        else {
            panic!("the recorded roots/list");
        };
        assert_eq!(client_response.unwrap()["result"], json!({"roots": []}));
        assert!(script.is_done());
    }

    #[test]
    fn new_session_traffic_goes_after_the_handshake() {
        let mut cassette = cassette();
        let event = Event::Notification {
            notification: json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
                .into(),
        };
        file_into(&mut cassette, vec![event]);
        assert_eq!(cassette.interactions[1].after.len(), 3);
        assert!(cassette.interactions[2].after.is_empty());
    }
}
