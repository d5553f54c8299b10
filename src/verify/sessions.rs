//! The client sessions of a Streamable HTTP recording. A recording may hold
//! several: one per run of a client that connects anew each time (the MCP
//! Inspector's CLI), or a test suite that opens several. Each begins with a
//! successful `initialize`, and the messages a client sent before it
//! without a session (a `server/discover` probe, say) belong to it too.
//! `verify` drives each in a live session of its own, since a server
//! refuses a second `initialize` in one session.

use crate::cassette::{Cassette, Interaction};

/// `recorded` cut into its sessions, in order, each a cassette of its own
/// interactions (the first also keeps the opening); one when the recording
/// has one session (always, for stdio and the 2026-07-28 era, which has no
/// sessions).
pub(super) fn split(recorded: &Cassette) -> Vec<Cassette> {
    let starts = starts(&recorded.interactions);
    if starts.len() <= 1 {
        return vec![recorded.clone()];
    }
    let mut sessions = Vec::new();
    for (n, &start) in starts.iter().enumerate() {
        let end = starts
            .get(n + 1)
            .copied()
            .unwrap_or(recorded.interactions.len());
        let mut session = recorded.clone();
        session.interactions = recorded.interactions[start..end].to_vec();
        if n > 0 {
            session.opening.clear();
        }
        sessions.push(session);
    }
    sessions
}

/// Where each session begins: 0, then each later successful `initialize`,
/// moved back over the messages sent just before it without a session
/// when the server issues sessions.
fn starts(interactions: &[Interaction]) -> Vec<usize> {
    let mut starts = vec![0];
    let mut seen_handshake = false;
    for (index, interaction) in interactions.iter().enumerate() {
        let succeeded = interaction.method() == "initialize"
            && interaction
                .response
                .as_ref()
                .is_some_and(|r| r.get("result").is_some());
        if !succeeded {
            continue;
        }
        if !std::mem::replace(&mut seen_handshake, true) {
            continue;
        }
        let previous = *starts.last().expect("starts has 0");
        let mut start = index;
        let issued = interaction.http.as_ref().is_some_and(|h| h.issued_session);
        while issued
            && start > previous + 1
            && interactions[start - 1]
                .http
                .as_ref()
                .is_some_and(|h| !h.had_session && !h.issued_session)
        {
            start -= 1;
        }
        starts.push(start);
    }
    starts
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;
    use crate::cassette::{Builder, Direction, Transport};

    /// A recording of `runs` client runs, each a probe without a session,
    /// the handshake that issues one and a `tools/list` in it.
    fn recording(runs: usize) -> Cassette {
        let transport = Transport::StreamableHttp {
            url: "http://127.0.0.1:1/mcp".into(),
            endpoint: "/mcp".into(),
            behaviour: Default::default(),
        };
        let mut builder = Builder::new("2026-01-01T00:00:00Z".into(), transport);
        let mut id = 0;
        let mut exchange = |builder: &mut Builder, method: &str, result: Value| {
            id += 1;
            let index = builder.next_interaction();
            builder.observe(
                Direction::ClientToServer,
                json!({"jsonrpc": "2.0", "id": id, "method": method}),
            );
            builder.observe(
                Direction::ServerToClient,
                json!({"jsonrpc": "2.0", "id": id, "result": result}),
            );
            index
        };
        for _ in 0..runs {
            let probe = exchange(&mut builder, "server/discover", json!({}));
            builder.http_mut(probe).unwrap().status = 400;
            let init = exchange(&mut builder, "initialize", json!({"protocolVersion": "x"}));
            builder.http_mut(init).unwrap().issued_session = true;
            let list = exchange(&mut builder, "tools/list", json!({"tools": []}));
            builder.http_mut(list).unwrap().had_session = true;
        }
        builder.finish()
    }

    #[test]
    fn one_session_is_left_whole() {
        let recorded = recording(1);
        assert_eq!(split(&recorded), vec![recorded]);
    }

    #[test]
    fn each_session_begins_with_the_messages_sent_before_its_handshake() {
        let recorded = recording(3);
        let sessions = split(&recorded);
        assert_eq!(sessions.len(), 3);
        for session in &sessions {
            let methods: Vec<&str> = session.interactions.iter().map(|i| i.method()).collect();
            assert_eq!(methods, ["server/discover", "initialize", "tools/list"]);
        }
        let total: usize = sessions.iter().map(|s| s.interactions.len()).sum();
        assert_eq!(total, recorded.interactions.len());
    }
}
