//! The recording side of the proxy: one shared [`Builder`] and journal that
//! every connection files what it sees into.

use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard};

use serde_json::Value;

use super::super::error::RecordError;
use crate::cassette::Rules;
use crate::cassette::{
    self, Builder, Direction, HttpEndpointBehaviour, HttpExchange, HttpSituation, Journal,
    SseFrame, StreamedEvent, Transport,
};
use crate::jsonrpc::{self, Kind};
use crate::record::Watch;
use crate::redact::{MASK, Redactor};

/// Where a recording goes, or nothing when passing through. Cloning shares it.
#[derive(Debug, Clone, Default)]
pub(super) struct Tap(Option<Arc<Mutex<Recording>>>);

/// The state of a recording in progress.
#[derive(Debug)]
pub(super) struct Recording {
    path: PathBuf,
    recorded_at: String,
    transport: Transport,
    /// The rules the cassette keeps, journalled so a recovery keeps them.
    rules: Rules,
    builder: Builder,
    /// `None` once the journal failed (forwarding goes on) or was finished.
    journal: Option<Journal>,
    /// Whether any message went into the journal yet.
    journalled: bool,
    /// Session ids seen so far, masked in every recorded message.
    sessions: Vec<String>,
    /// Masks secrets before anything is journalled or kept.
    redactor: Redactor,
    /// Warns about messages that break the MCP schema.
    watch: Watch,
}

/// The interactions one POST opened, which its answer is filed under.
/// The recording holds them in memory until the answer is over
/// ([`Tap::answered`]), or else until the last copy of this goes (the
/// proxy's, then the answer's body's): until then their exchange may still
/// change.
#[derive(Debug, Clone, Default)]
pub(super) struct Opened {
    /// One interaction per request and notification, in body order.
    pub(super) interactions: Vec<usize>,
    /// Ids of the requests among them.
    pub(super) request_ids: Vec<Value>,
    /// Releases the interactions when the last copy goes.
    held: Option<Arc<Held>>,
}

/// Interactions held in a recording ([`Builder::hold`]), released when
/// this is dropped.
#[derive(Debug)]
struct Held {
    tap: Tap,
    interactions: Vec<usize>,
}

impl Drop for Held {
    fn drop(&mut self) {
        self.tap.release(&self.interactions);
    }
}

impl Opened {
    /// The interaction that gets the answer's SSE framing: the first
    /// request's, else the first notification's.
    pub(super) fn primary(&self) -> Option<usize> {
        self.interactions.first().copied()
    }
}

impl Tap {
    /// A tap that records nothing.
    pub(super) fn passthrough() -> Self {
        Tap(None)
    }

    /// Starts a recording into `path` that keeps `rules`, journalling
    /// beside it.
    pub(super) fn record(
        path: PathBuf,
        recorded_at: String,
        transport: Transport,
        rules: Rules,
        redactor: Redactor,
    ) -> Result<Self, RecordError> {
        let journal = Journal::create(&path, &recorded_at, &transport, &rules)?;
        let mut builder = Builder::new(recorded_at.clone(), transport.clone());
        if let Err(e) = builder.spill_beside(&path) {
            tracing::warn!(
                "cannot make a spill file beside {} ({e}); recording in memory",
                path.display()
            );
        }
        Ok(Tap(Some(Arc::new(Mutex::new(Recording {
            path,
            recorded_at,
            transport,
            rules,
            builder,
            journal: Some(journal),
            journalled: false,
            sessions: Vec::new(),
            redactor,
            watch: Watch::default(),
        })))))
    }

    /// Whether anything is recorded.
    pub(super) fn is_recording(&self) -> bool {
        self.0.is_some()
    }

    fn lock(&self) -> Option<MutexGuard<'_, Recording>> {
        let shared = self.0.as_ref()?;
        Some(
            shared
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner()),
        )
    }

    /// The POST endpoint an HTTP+SSE server announced, if it did.
    pub(super) fn post_endpoint(&self) -> Option<String> {
        match &self.lock()?.transport {
            Transport::HttpSse { post_endpoint, .. } => Some(post_endpoint.clone()),
            _ => None,
        }
    }

    /// A session id was sent or issued: it is never recorded. Servers
    /// sometimes repeat theirs in messages ("… for session 1c88…").
    pub(super) fn note_session(&self, id: &str) {
        // Too short to mask without masking ordinary text too.
        if id.len() < MIN_MASKED_SESSION {
            return;
        }
        if let Some(mut recording) = self.lock()
            && !recording.sessions.iter().any(|known| known == id)
        {
            recording.sessions.push(id.to_owned());
        }
    }

    /// Credentials first seen in a client's request: secrets from now on,
    /// masked wherever the upstream echoes them.
    pub(super) fn note_credentials(&self, new: &[(String, String)]) {
        let Some(mut recording) = self.lock() else {
            return;
        };
        match recording.redactor.with_secrets(new) {
            Ok(redactor) => recording.redactor = redactor,
            Err(e) => tracing::warn!(
                "cannot mask a client's credentials: {}",
                crate::error_chain::chain(&e)
            ),
        }
    }

    /// Files a POST body (one message or a batch) as client messages, each
    /// interaction with the situation `situation` finds it sent in (stored
    /// when out of the ordinary).
    pub(super) fn client_body(
        &self,
        body: &[u8],
        situation: impl Fn(&Value) -> HttpSituation,
    ) -> Opened {
        let mut opened = Opened::default();
        if !self.is_recording() {
            return opened;
        }
        // Parsed before the lock: the other connections' answers need it.
        let Some(messages) = parse_messages(body) else {
            if !body.trim_ascii().is_empty() {
                tracing::warn!("a POST body is not JSON; forwarded but not recorded");
            }
            return opened;
        };
        let text = lone_text(body, &messages);
        let Some(mut recording) = self.lock() else {
            return opened;
        };
        for message in messages {
            let request_id = match jsonrpc::classify(&message) {
                Ok(Kind::Request) => jsonrpc::id(&message).cloned(),
                _ => None,
            };
            let index = recording.builder.next_interaction();
            let situation = situation(&message);
            recording.observe(Direction::ClientToServer, message, text);
            if recording.builder.next_interaction() > index {
                // Before the next message could let it settle.
                recording.builder.hold(index);
                if !situation.is_normal()
                    && let Some(http) = recording.builder.http_mut(index)
                {
                    http.situation = situation;
                }
                opened.interactions.push(index);
                opened.request_ids.extend(request_id);
            }
        }
        if !opened.interactions.is_empty() {
            opened.held = Some(Arc::new(Held {
                tap: self.clone(),
                interactions: opened.interactions.clone(),
            }));
        }
        opened
    }

    /// The last copy of the POST that opened `indices` is gone: those its
    /// answer did not release ([`Tap::answered`]; the client left, the
    /// upstream was unreachable) are released now, and journalled so.
    fn release(&self, indices: &[usize]) {
        let Some(mut recording) = self.lock() else {
            return;
        };
        for &index in indices {
            if recording.builder.release(index) {
                journal_with(&mut recording.journal, |journal| {
                    journal.append_released(index)
                });
            }
        }
    }

    /// Files the messages of the answer to a POST that carried the
    /// requests `request_ids`: an error with a `null` id (the server
    /// rejected the POST itself) answers the POST's request, when it
    /// carried one.
    /// `text` is the body the messages came in, when it is exactly one of
    /// them ([`lone_text`]).
    pub(super) fn answer_messages(
        &self,
        messages: Vec<Value>,
        text: Option<&[u8]>,
        request_ids: &[Value],
    ) {
        let Some(mut recording) = self.lock() else {
            return;
        };
        for message in messages {
            match request_ids {
                [request] if jsonrpc::is_rejection(&message) => {
                    recording.observe_answer(request, message);
                }
                _ => recording.observe(Direction::ServerToClient, message, text),
            }
        }
    }

    /// The answer to a POST ended without responses to `request_ids`;
    /// none will come.
    pub(super) fn unanswered(&self, request_ids: &[Value]) {
        if let Some(mut recording) = self.lock() {
            for id in request_ids {
                recording.builder.unanswered(id);
            }
        }
    }

    /// Updates the HTTP exchange of each interaction in `indices`.
    pub(super) fn exchange(&self, indices: &[usize], mut edit: impl FnMut(&mut HttpExchange)) {
        let Some(mut recording) = self.lock() else {
            return;
        };
        let redactor = recording.redactor.clone();
        for &index in indices {
            if let Some(http) = recording.builder.http_mut(index) {
                edit(http);
                if let Some(body) = &mut http.body
                    && let std::borrow::Cow::Owned(masked) = redactor.redact_text(body)
                {
                    *body = masked;
                }
            }
        }
    }

    /// Files server messages and, in the same step, the SSE frame that
    /// carried them on the primary interaction (so frames and messages stay
    /// in one order). `text` is the event's data, when it is exactly one
    /// of the messages ([`lone_text`]).
    pub(super) fn sse_event(
        &self,
        primary: Option<usize>,
        messages: Vec<Value>,
        text: Option<&[u8]>,
        edit: impl FnOnce(&mut HttpExchange),
    ) {
        let Some(mut recording) = self.lock() else {
            return;
        };
        if let Some(http) = primary.and_then(|index| recording.builder.http_mut(index)) {
            edit(http);
        }
        for message in messages {
            recording.observe_on_stream(primary, message, text);
        }
    }

    /// Records how the endpoint answers methods other than POST.
    pub(super) fn behaviour(&self, edit: impl FnOnce(&mut HttpEndpointBehaviour)) {
        let Some(mut recording) = self.lock() else {
            return;
        };
        if let Transport::StreamableHttp { behaviour, .. } = &mut recording.transport {
            edit(behaviour);
            let behaviour = behaviour.clone();
            journal_with(&mut recording.journal, |journal| {
                journal.append_behaviour(&behaviour)
            });
        }
    }

    /// The answer to the POST that opened `indices` is over: journals how
    /// each travelled, final, so that a recovered cassette keeps it, and
    /// lets them leave memory.
    pub(super) fn answered(&self, indices: &[usize]) {
        let Some(mut recording) = self.lock() else {
            return;
        };
        for &index in indices {
            recording.journal_exchange(index, Revision::Final);
            recording.builder.release(index);
        }
    }

    /// Files server messages that came on the session's GET stream with
    /// the SSE frame that carried them there, noting on the interaction
    /// each was filed under that it travelled so.
    pub(super) fn stream_event(&self, messages: Vec<Value>, frame: &SseFrame) {
        let Some(mut recording) = self.lock() else {
            return;
        };
        for message in messages {
            recording.observe(Direction::ServerToClient, message, None);
            let Some((index, event)) = recording.builder.last_filed() else {
                continue;
            };
            if let Some(http) = recording.builder.http_mut(index) {
                http.get_stream.push(StreamedEvent {
                    event,
                    frame: frame.clone(),
                });
            }
            recording.journal_exchange(index, Revision::SoFar);
        }
    }

    /// The server speaks the 2024-11-05 HTTP+SSE transport: its SSE stream
    /// at `sse_endpoint` announced `post_endpoint`.
    pub(super) fn found_http_sse(&self, sse_endpoint: &str, post_endpoint: &str) {
        let Some(mut recording) = self.lock() else {
            return;
        };
        let url = match &recording.transport {
            Transport::StreamableHttp { url, .. } | Transport::HttpSse { url, .. } => url.clone(),
            Transport::Stdio { .. } => return,
        };
        recording.transport = Transport::HttpSse {
            url,
            sse_endpoint: sse_endpoint.to_owned(),
            post_endpoint: post_endpoint.to_owned(),
        };
        recording.restart_journal();
    }

    /// Ends the recording: saves the cassette (keeping the rules written
    /// by people) and removes the journal. Returns the completed
    /// interactions.
    pub(super) fn finish(&self) -> Result<usize, RecordError> {
        let Some(shared) = &self.0 else {
            return Ok(0);
        };
        let mut recording = shared
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let transport = recording.transport.clone();
        let fresh = Builder::new(recording.recorded_at.clone(), transport.clone());
        let builder = std::mem::replace(&mut recording.builder, fresh);
        let interactions = builder.completed();
        let mut finished = builder.finish_streamed();
        finished.header.transport = transport;
        finished.header.rules = recording.rules.clone();
        crate::record::save_finished(&recording.path, finished)?;
        match recording.journal.take() {
            Some(journal) => journal.remove()?,
            None => {
                // The journal failed earlier; it may still be on disk.
                let _ = std::fs::remove_file(cassette::journal_path(&recording.path));
            }
        }
        Ok(interactions)
    }
}

impl Recording {
    /// Journals one message, then files it. `text` is the message's exact
    /// text, when it came alone: if nothing in it needs masking it is
    /// journalled as it is, with no walk over the tree to mask and no
    /// second serialisation (every call costs two messages).
    fn observe(&mut self, direction: Direction, message: Value, text: Option<&[u8]>) {
        let message = self.masked_and_journalled(direction, message, text, None);
        self.builder.observe(direction, message);
    }

    /// [`Recording::observe`] for a server message that came on the SSE
    /// stream of the POST that opened interaction `owner`, which it is tied
    /// to ([`Builder::observe_on_stream`]); the journal says so too.
    fn observe_on_stream(&mut self, owner: Option<usize>, message: Value, text: Option<&[u8]>) {
        let direction = Direction::ServerToClient;
        let message = self.masked_and_journalled(direction, message, text, owner);
        self.builder.observe_on_stream(owner, message);
    }

    /// Masks `message` (unless its text shows there is nothing to mask),
    /// checks it against the schema and journals it (as carried by the
    /// stream of interaction `on`'s POST, when it was): what is then filed.
    fn masked_and_journalled(
        &mut self,
        direction: Direction,
        mut message: Value,
        text: Option<&[u8]>,
        on: Option<usize>,
    ) -> Value {
        let clean = text.filter(|text| self.nothing_to_mask(text));
        if clean.is_none() {
            if !self.sessions.is_empty() {
                mask_sessions(&mut message, &self.sessions);
            }
            self.redactor.redact_message(&mut message);
        }
        for warning in self.watch.message(direction, &message) {
            tracing::warn!("{warning}");
        }
        match (on, clean) {
            (Some(owner), clean) => {
                self.journalled |= self.journal.is_some();
                journal_with(&mut self.journal, |journal| {
                    journal.append_on_stream(owner, &message, clean)
                });
            }
            (None, Some(text)) => self.journal_text(direction, text),
            (None, None) => self.journal_message(direction, &message),
        }
        message
    }

    /// Whether masking would leave the message whose text is `text` as it
    /// is, told from the text: no secret the redactor might find, and no
    /// session id. A backslash could escape a session id's characters, so
    /// text with one is looked at parsed; the redactor's own pre-scan
    /// already counts escapes.
    fn nothing_to_mask(&self, text: &[u8]) -> bool {
        let sessions_absent = self.sessions.is_empty()
            || (!text.contains(&b'\\')
                && self
                    .sessions
                    .iter()
                    .all(|id| memchr::memmem::find(text, id.as_bytes()).is_none()));
        sessions_absent && !self.redactor.might_mask_text(text)
    }

    /// Journals a server response to the client request `request`, then
    /// files it as that request's answer whatever its id.
    fn observe_answer(&mut self, request: &Value, mut message: Value) {
        if !self.sessions.is_empty() {
            mask_sessions(&mut message, &self.sessions);
        }
        self.redactor.redact_message(&mut message);
        self.journal_message(Direction::ServerToClient, &message);
        self.builder.respond_to(request, message);
    }

    /// Journals one message, masked already.
    fn journal_message(&mut self, direction: Direction, message: &Value) {
        self.journalled |= self.journal.is_some();
        journal_with(&mut self.journal, |journal| {
            journal.append(direction, message)
        });
    }

    /// Journals one message's text, on one line and with nothing to mask.
    fn journal_text(&mut self, direction: Direction, text: &[u8]) {
        self.journalled |= self.journal.is_some();
        journal_with(&mut self.journal, |journal| {
            journal.append_raw(direction, text)
        });
    }

    /// Journals how interaction `index` travelled, as it stands now,
    /// serialised from where the builder keeps it (no copy: every answer
    /// journals one).
    fn journal_exchange(&mut self, index: usize, revision: Revision) {
        let Some(http) = self.builder.http_mut(index) else {
            return;
        };
        journal_with(&mut self.journal, |journal| match revision {
            Revision::SoFar => journal.append_exchange(index, http),
            Revision::Final => journal.append_final_exchange(index, http),
        });
    }

    /// Starts the journal again with the current transport in its header,
    /// if nothing is in it yet (a journal's transport is its first line).
    fn restart_journal(&mut self) {
        if self.journalled || self.journal.is_none() {
            return;
        }
        match Journal::create(&self.path, &self.recorded_at, &self.transport, &self.rules) {
            Ok(journal) => self.journal = Some(journal),
            Err(e) => {
                let e = crate::error_chain::chain(&e);
                tracing::warn!("{e}; the recording is no longer crash-safe");
                self.journal = None;
            }
        }
    }
}

/// Runs `write` on `journal`, if journalling goes on; a failure ends it
/// (forwarding goes on; the cassette is still written at the end).
fn journal_with(
    journal: &mut Option<Journal>,
    write: impl FnOnce(&mut Journal) -> Result<(), crate::cassette::CassetteError>,
) {
    if let Some(open) = journal
        && let Err(e) = write(open)
    {
        let e = crate::error_chain::chain(&e);
        tracing::warn!("{e}; the recording is no longer crash-safe");
        *journal = None;
    }
}

/// Whether a journalled exchange may still change.
#[derive(Debug, Clone, Copy)]
enum Revision {
    /// As it stands now; a later line may revise it.
    SoFar,
    /// Final: its POST's answer is over.
    Final,
}

/// Session ids shorter than this are not masked in messages.
const MIN_MASKED_SESSION: usize = 8;

/// Replaces every session id in the strings of `value` by the mask.
fn mask_sessions(value: &mut Value, sessions: &[String]) {
    match value {
        Value::String(text) => {
            for id in sessions {
                if text.contains(id.as_str()) {
                    *text = text.replace(id.as_str(), MASK);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|v| mask_sessions(v, sessions)),
        Value::Object(map) => map.values_mut().for_each(|v| mask_sessions(v, sessions)),
        _ => {}
    }
}

/// A body's JSON-RPC messages: one message, or each message of a batch.
/// `None` if the body is not JSON.
pub(super) fn parse_messages(body: &[u8]) -> Option<Vec<Value>> {
    match crate::json::parse_message(body).ok()? {
        Value::Array(batch) => Some(batch),
        message => Some(vec![message]),
    }
}

/// The exact text of the one message `messages` holds, when `body` is that
/// message alone on one line (not a batch, no line break in it): what the
/// journal can keep as it is. Otherwise `None`.
pub(super) fn lone_text<'a>(body: &'a [u8], messages: &[Value]) -> Option<&'a [u8]> {
    let text = body.trim_ascii();
    let alone = messages.len() == 1 && text.first() == Some(&b'{');
    (alone && memchr::memchr2(b'\n', b'\r', text).is_none()).then_some(text)
}

/// Whether every message is a JSON-RPC message and at least one is a
/// response to a request in `request_ids`.
pub(super) fn answers(messages: &[Value], request_ids: &[Value]) -> bool {
    let all_valid = messages.iter().all(|m| jsonrpc::classify(m).is_ok());
    let answers_one = messages.iter().any(|m| {
        jsonrpc::classify(m) == Ok(Kind::Response)
            && jsonrpc::id(m).is_some_and(|id| request_ids.contains(id))
    });
    all_valid && answers_one
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn session_ids_are_masked_in_every_string() {
        let mut message =
            json!({"result": {"text": "for session abcdef123456", "n": ["abcdef123456"]}});
        mask_sessions(&mut message, &["abcdef123456".into()]);
        assert_eq!(
            message,
            json!({"result": {"text": "for session [REDACTED]", "n": ["[REDACTED]"]}})
        );
    }

    #[test]
    fn answered_posts_leave_memory_and_their_journal_recovers_the_same_cassette() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.json");
        let transport = Transport::StreamableHttp {
            url: "http://127.0.0.1:1/mcp".into(),
            endpoint: "/mcp".into(),
            behaviour: HttpEndpointBehaviour::default(),
        };
        let redactor = Redactor::new(&Rules::default().redaction()).unwrap();
        let tap = Tap::record(
            path.clone(),
            "2026-01-01T00:00:00Z".into(),
            transport,
            Rules::default(),
            redactor,
        )
        .unwrap();
        let calls = 200;
        for n in 0..calls {
            let request = json!({"jsonrpc": "2.0", "id": n, "method": "tools/call",
                "params": {"name": "echo", "arguments": {"message": format!("m{n}")}}});
            let opened =
                tap.client_body(request.to_string().as_bytes(), |_| HttpSituation::default());
            let copy = opened.clone();
            let response = json!({"jsonrpc": "2.0", "id": n, "result": {"content": []}});
            tap.answer_messages(vec![response], None, &opened.request_ids);
            // Revised after its answer was filed: the POST still holds it.
            // Some clients leave before the answer's body is over: then the
            // last copy of `Opened` releases it.
            if n % 10 != 3 {
                tap.exchange(&opened.interactions, |http| http.status = 200);
                tap.answered(&opened.interactions);
            }
            drop(opened);
            if n > 0 {
                let mut recording = tap.lock().unwrap();
                let earlier = recording.builder.http_mut(n as usize - 1);
                assert!(earlier.is_none(), "{} not settled", n - 1);
            }
            drop(copy);
        }
        let journal = cassette::journal_path(&path);
        let kept = dir.path().join("kept.journal");
        std::fs::copy(&journal, &kept).unwrap();
        assert_eq!(tap.finish().unwrap(), calls as usize);
        let recorded = std::fs::read_to_string(&path).unwrap();
        let cassette = cassette::parse(&path, &recorded).unwrap();
        assert_eq!(cassette.interactions.len(), calls as usize);
        for (n, interaction) in cassette.interactions.iter().enumerate() {
            let status = interaction.http.as_ref().map(|h| h.status);
            assert_eq!(status, (n % 10 != 3).then_some(200), "{n}");
        }
        let journalled = std::fs::read_to_string(&kept).unwrap();
        assert_eq!(
            journalled.matches(r#"{"released":"#).count(),
            calls as usize / 10
        );
        // A recorder killed at the end leaves the same cassette behind.
        let again = dir.path().join("again.json");
        std::fs::copy(&kept, cassette::journal_path(&again)).unwrap();
        assert_eq!(cassette::recover(&again).unwrap().len(), 1, "recovered");
        assert_eq!(std::fs::read_to_string(&again).unwrap(), recorded);
    }

    #[test]
    fn messages_journalled_as_they_came_are_still_masked() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.json");
        let transport = Transport::StreamableHttp {
            url: "http://127.0.0.1:1/mcp".into(),
            endpoint: "/mcp".into(),
            behaviour: HttpEndpointBehaviour::default(),
        };
        let redactor = Redactor::new(&Rules::default().redaction()).unwrap();
        let tap = Tap::record(
            path.clone(),
            "2026-01-01T00:00:00Z".into(),
            transport,
            Rules::default(),
            redactor,
        )
        .unwrap();
        let session = "5e55102d-0123-4567-89ab-cdef01234567";
        tap.note_session(session);
        let bodies = [
            // Nothing to mask: journalled byte for byte.
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"message":"plain"}}}"#.to_owned(),
            // A token, a session id, and a session id hidden by escapes.
            r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"message":"ghp_0123456789abcdefghij0123456789abcdef"}}}"#.to_owned(),
            format!(r#"{{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{{"name":"echo","arguments":{{"message":"for {session}"}}}}}}"#),
            format!(
                r#"{{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{{"name":"echo","arguments":{{"message":"\u0035{}"}}}}}}"#,
                &session[1..]
            ),
        ];
        for body in &bodies {
            let opened = tap.client_body(body.as_bytes(), |_| HttpSituation::default());
            assert_eq!(opened.interactions.len(), 1, "{body}");
        }
        let journal = std::fs::read_to_string(cassette::journal_path(&path)).unwrap();
        assert!(journal.contains(&bodies[0]), "{journal}");
        assert!(!journal.contains("ghp_0123456789"), "{journal}");
        assert!(!journal.contains(session), "{journal}");
        assert!(!journal.contains(&session[1..]), "{journal}");
        assert_eq!(journal.matches("[REDACTED").count(), 3, "{journal}");
    }

    #[test]
    fn only_a_lone_message_on_one_line_is_kept_as_text() {
        let one = [json!({"jsonrpc": "2.0", "id": 1, "result": {}})];
        let text = b" {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n";
        assert_eq!(lone_text(text, &one), Some(&text[1..text.len() - 1]));
        assert_eq!(lone_text(b"{\"jsonrpc\":\n\"2.0\"}", &one), None);
        assert_eq!(lone_text(b"[{\"jsonrpc\":\"2.0\"}]", &one), None);
    }

    #[test]
    fn an_answer_must_respond_to_one_of_the_requests() {
        let ok = json!({"jsonrpc": "2.0", "id": 1, "result": {}});
        let null_id =
            json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32600, "message": "x"}});
        let ids = [json!(1)];
        assert!(answers(std::slice::from_ref(&ok), &ids));
        assert!(!answers(&[null_id], &ids));
        assert!(!answers(&[json!({"error": "not json-rpc"})], &ids));
        assert!(!answers(&[ok], &[json!("1")]), "ids keep their type");
    }
}
