//! Plain requests answered from their text.
//!
//! Most of what a test suite sends is a request whose answer is a recorded
//! response with the live id put in: no progress token to rewrite, no
//! notification, nothing asked of the client, no era to translate. For
//! those, building a `Value` tree of the request costs more than all the
//! rest of answering it (a map per object, a string per key), so the
//! engine reads what it needs off the text: envelope, method, id and the
//! match key ([`crate::cassette::Rules::key_from_text`]).
//!
//! Whatever the text cannot settle goes the general way, with the tree:
//! escapes anywhere, `_meta` anywhere, something to mask, another era's
//! client, a method the engine treats specially, a miss. A request
//! matched here whose interaction needs more than its response is played
//! as the general way plays it, from the tree. So answers are the same
//! either way; `tests::plain_and_parsed_requests_get_the_same_answers`
//! holds the two to that.

use std::sync::Arc;

use tokio::task::JoinSet;

use super::Engine;
use crate::json::LiveRequest;
use crate::matching::Answer;
use crate::replay::cross_era::{CrossEra, Translation};
use crate::server::{Handled, Pace, Sink};

/// Methods the engine answers in its own way, which only the tree shows it
/// how: handshakes (version checks, the upstream's handshake) and listen
/// streams.
const TREE_METHODS: [&str; 3] = ["initialize", "server/discover", "subscriptions/listen"];

impl Engine {
    /// Answers `line` if it is a plain request the text settles (see the
    /// module's documentation); `None` when it must be parsed, with
    /// nothing done.
    pub(crate) fn answer_text(
        self: &Arc<Self>,
        line: &[u8],
        sink: &Sink,
        tasks: &mut JoinSet<()>,
    ) -> Option<Handled> {
        if !self.reads_as_text(line) {
            return None;
        }
        let request = LiveRequest::read(line)?;
        let id = plain_id(request.id()?)?;
        let method = request.message.method()?;
        let params = request.params();
        if request.jsonrpc() != Some(r#""2.0""#)
            || TREE_METHODS.contains(&method)
            || params.is_some_and(|p| !(p.starts_with('{') || p.starts_with('[')))
        {
            return None;
        }
        // A statement of its own, so the lock is released here.
        let answer = self
            .state()
            .matcher
            .request_text(&self.cassette, &request)?;
        let (Ok(Answer::Recorded(position)) | Ok(Answer::Repeated(position))) = answer else {
            // A refused lookup changed nothing: the general way looks again
            // and goes on to cases, fallbacks and the miss report.
            return None;
        };
        let interaction = &self.cassette.interactions[position];
        let paced = sink.delivery.pace == Pace::Recorded && !interaction.delays_ms.is_empty();
        if interaction.during.is_empty() && interaction.after.is_empty() && !paced {
            let text = (interaction.response.as_ref()).and_then(|r| r.text_with_id_text(id));
            if let Some(text) = text {
                sink.respond_encoded(text.into_bytes());
                return Some(Handled::Answered(Some(position)));
            }
        }
        let request = request.message.into_value();
        Some(Handled::Answered(Some(
            self.play_request(position, request, sink, tasks),
        )))
    }

    /// Whether `line` can be read without a tree: one object, no escapes
    /// (the text is then its own meaning), no `_meta` (progress tokens,
    /// declared versions), nothing to mask, and a client of the cassette's
    /// era.
    fn reads_as_text(&self, line: &[u8]) -> bool {
        line.first() == Some(&b'{')
            && memchr::memchr(b'\\', line).is_none()
            && memchr::memmem::find(line, br#""_meta""#).is_none()
            && (self.config.cross_era == CrossEra::Off
                || Translation::between(self.cassette.protocol.era, self.client_era.get())
                    == Translation::None)
            && !self.redactor.might_mask_text(line)
    }
}

/// The text of a request id that serde_json would write back the same: an
/// integer without a sign on zero or leading zeros, or a string (the line
/// holds no escapes). Other ids (fractions, exponents, `-0`) go through the
/// tree, which remembers how the client wrote them.
fn plain_id(text: &str) -> Option<&str> {
    if text.len() >= 2 && text.starts_with('"') {
        return Some(text);
    }
    let digits = text.strip_prefix('-').unwrap_or(text);
    let canonical = match digits.as_bytes() {
        [] => false,
        [b'0'] => digits.len() == text.len(),
        [first, ..] => *first != b'0' && digits.bytes().all(|b| b.is_ascii_digit()),
    };
    // Within 64 bits, or serde_json would read it as a float.
    (canonical && (text.parse::<i64>().is_ok() || text.parse::<u64>().is_ok())).then_some(text)
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};
    use tokio::sync::mpsc;

    use super::*;
    use crate::cassette::{Cassette, HttpSituation, Interaction};
    use crate::server::{Handler, HttpProfile};

    /// The engine without its text path: every line parsed, as before it.
    #[derive(Debug)]
    struct Parsed(Arc<Engine>);

    impl Handler for Parsed {
        fn handle(
            self: Arc<Self>,
            message: Value,
            sink: &Sink,
            tasks: &mut JoinSet<()>,
            situation: &HttpSituation,
        ) -> Handled {
            self.0.handle_message_in(message, sink, tasks, situation)
        }
        fn fork(&self) -> Arc<dyn Handler> {
            Arc::new(Parsed(self.0.fork()))
        }
        fn recorded(&self, position: usize) -> Option<&Interaction> {
            self.0.recorded(position)
        }
        fn http_profile(&self) -> HttpProfile {
            self.0.http_profile()
        }
    }

    fn cassette(rules: Value) -> Cassette {
        let call = |id: u64, message: &str| {
            json!({"request": {"jsonrpc": "2.0", "id": id, "method": "tools/call",
                    "params": {"name": "echo", "arguments": {"message": message}}},
                "response": {"jsonrpc": "2.0", "id": id,
                    "result": {"content": [{"type": "text", "text": format!("echo: {message}")}]}}})
        };
        let mut progress = call(4, "slow");
        progress["request"]["params"]["_meta"] = json!({"progressToken": "p"});
        progress["during"] = json!([{"notification": {"jsonrpc": "2.0",
            "method": "notifications/progress", "params": {"progressToken": "p", "progress": 1}}}]);
        let mut lost = call(5, "lost");
        lost.as_object_mut().unwrap().remove("response");
        serde_json::from_value(json!({
            "format_version": crate::cassette::FORMAT_VERSION,
            "recorded_at": "2026-01-01T00:00:00Z",
            "transport": {"kind": "stdio", "command": ["server"]},
            "protocol": {"era": "legacy", "version": "2025-11-25"},
            "rules": rules,
            "interactions": [
                {"request": {"jsonrpc": "2.0", "id": 0, "method": "initialize",
                    "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                        "clientInfo": {"name": "t", "version": "1"}}},
                 "response": {"jsonrpc": "2.0", "id": 0, "result": {"protocolVersion": "2025-11-25",
                    "capabilities": {}, "serverInfo": {"name": "s", "version": "1"}}}},
                {"notification": {"jsonrpc": "2.0", "method": "notifications/initialized"}},
                call(1, "a"),
                call(2, "b"),
                call(3, "a"),
                progress,
                lost,
                {"request": {"jsonrpc": "2.0", "id": 6, "method": "tools/list"},
                 "response": {"jsonrpc": "2.0", "id": 6, "result": {"tools": []}}},
                {"request": {"jsonrpc": "2.0", "id": 7, "method": "tools/call",
                    "params": {"name": "echo", "arguments": {"message": "é \"q\""}}},
                 "response": {"jsonrpc": "2.0", "id": 7, "result": {"content": []}}},
            ],
        }))
        .unwrap()
    }

    /// Each of `lines` through `handler`, then what came out, in order.
    async fn serve(handler: Arc<dyn Handler>, lines: &[String]) -> Vec<String> {
        let (tx, mut rx) = mpsc::unbounded_channel();
        let sink = Sink::single(tx);
        let mut tasks = JoinSet::new();
        for line in lines {
            crate::server::handle_line(&handler, line.as_bytes(), &sink, &mut tasks);
        }
        handler.client_gone();
        while tasks.join_next().await.is_some() {}
        drop(sink);
        let mut out = Vec::new();
        while let Some(message) = rx.recv().await {
            out.push(String::from_utf8(message).unwrap());
        }
        out
    }

    fn call(id: &str, message: &str) -> String {
        format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"arguments":{{"message":"{message}"}},"name":"echo"}}}}"#
        )
    }

    #[tokio::test]
    async fn plain_and_parsed_requests_get_the_same_answers() {
        let handshake = [
            r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#.to_owned(),
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#.to_owned(),
        ];
        // (line, whether the text path answers it)
        let traffic = [
            (call("11", "a"), true),
            (call(r#""s-1""#, "b"), true),
            (call("-12", "a"), true),
            (call("18446744073709551615", "a"), false),
            (call("1.0", "b"), false),
            (call("-0", "b"), false),
            (call("1e2", "a"), false),
            (call(r#""\u0073""#, "a"), false),
            (call("13", "slow"), true),
            (call("14", "lost"), true),
            (call("15", "nobody"), false),
            (r#"{"jsonrpc":"2.0","id":16,"method":"tools/list"}"#.to_owned(), true),
            (r#"{"jsonrpc":"2.0","id":17,"method":"tools/list","params":3}"#.to_owned(), false),
            (r#"{"jsonrpc":"1.0","id":18,"method":"tools/list"}"#.to_owned(), false),
            (r#"{"jsonrpc":"2.0","id":19,"method":"tools/call","params":{"name":"echo","arguments":{"message":"slow"},"_meta":{"progressToken":9}}}"#.to_owned(), false),
            (r#"{"jsonrpc":"2.0","id":20,"method":"tools/call","params":{"name":"echo","arguments":{"message":"é \"q\""}}}"#.to_owned(), false),
            (call("21", "ghp_abcdefghijklmnopqrstuvwxyz0123456789"), false),
            (format!("[{}]", call("22", "a")), false),
            (r#"{"jsonrpc":"2.0","id":23,"method":"ping"}"#.to_owned(), false),
            // Both recordings of it are used: the general way reports that.
            (call("24", "a"), false),
        ];
        for rules in [
            json!({}),
            json!({"on_exhausted": "repeat-last"}),
            json!({"strategy": "sequential"}),
            json!({"cases": [{"method": "tools/call", "result": {"content": []}}]}),
        ] {
            let lines: Vec<String> = (handshake.iter().cloned())
                .chain(traffic.iter().map(|(line, _)| line.clone()))
                .collect();
            let engine = Engine::new(cassette(rules.clone()), "c.json".as_ref());
            let parsed = Engine::new(cassette(rules.clone()), "c.json".as_ref());
            let from_text = serve(engine.clone(), &lines).await;
            let from_tree = serve(Arc::new(Parsed(parsed.clone())), &lines).await;
            assert_eq!(from_text, from_tree, "rules {rules}");
            assert_eq!(engine.summary(), parsed.summary(), "rules {rules}");
        }
        // And the text path is the one taken where it says so.
        let engine = Engine::new(cassette(json!({})), "c.json".as_ref());
        let (tx, _rx) = mpsc::unbounded_channel();
        let sink = Sink::single(tx);
        let mut tasks = JoinSet::new();
        let dyn_engine: Arc<dyn Handler> = engine.clone();
        for line in &handshake {
            crate::server::handle_line(&dyn_engine, line.as_bytes(), &sink, &mut tasks);
        }
        for (line, plain) in &traffic {
            let taken = engine
                .answer_text(line.as_bytes(), &sink, &mut tasks)
                .is_some();
            assert_eq!(taken, *plain, "{line}");
            if !taken {
                crate::server::handle_line(&dyn_engine, line.as_bytes(), &sink, &mut tasks);
            }
        }
    }
}
