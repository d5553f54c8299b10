//! Legacy-era sessions: their ids, the server's own stream (GET), and the
//! event logs that resumption (`Last-Event-ID`) replays from.

use std::collections::hash_map::RandomState;
use std::collections::{HashMap, VecDeque};
use std::hash::BuildHasher;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{SystemTime, UNIX_EPOCH};

use bytes::Bytes;
use sha2::{Digest, Sha256};
use tokio::sync::mpsc;

use super::sse::{self, FrameSpec};
use crate::cassette::SseFrame;
use crate::server::Handler;

/// Events the GET stream keeps for resumption.
const STANDALONE_LOG: usize = 256;
/// Request streams a session keeps for resumption.
const STREAM_LOGS: usize = 16;

pub(super) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// The live sessions, by id.
#[derive(Debug, Default)]
pub(super) struct Sessions {
    live: Mutex<HashMap<String, Arc<Session>>>,
    issued: AtomicU64,
}

impl Sessions {
    /// A new session running on `handler`, with a fresh, unguessable id.
    pub(super) fn create(&self, handler: Arc<dyn Handler>) -> Arc<Session> {
        let count = self.issued.fetch_add(1, Ordering::Relaxed);
        let session = Arc::new(Session::new(fresh_id(count), handler));
        lock(&self.live).insert(session.id.clone(), Arc::clone(&session));
        session
    }

    /// Whether any session was handed out so far: from then on requests
    /// are expected to name one.
    pub(super) fn issued_any(&self) -> bool {
        self.issued.load(Ordering::Relaxed) > 0
    }

    /// The live session with this id.
    pub(super) fn get(&self, id: &str) -> Option<Arc<Session>> {
        lock(&self.live).get(id).cloned()
    }

    /// Ends a session: its id is unknown from now on and its GET stream
    /// closes. Returns whether it was live.
    pub(super) fn end(&self, id: &str) -> bool {
        let session = lock(&self.live).remove(id);
        session.inspect(|s| s.close()).is_some()
    }

    /// Ends every session (shutdown).
    pub(super) fn clear(&self) {
        let sessions: Vec<_> = lock(&self.live).drain().map(|(_, s)| s).collect();
        for session in sessions {
            session.close();
        }
    }
}

/// A session id: a hash of a counter, the time, the process and the
/// standard library's random hash keys, so ids never repeat and cannot be
/// guessed from one another.
pub(super) fn fresh_id(count: u64) -> String {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let mut hash = Sha256::new();
    hash.update(count.to_le_bytes());
    hash.update(nanos.to_le_bytes());
    hash.update(std::process::id().to_le_bytes());
    hash.update(RandomState::new().hash_one(count).to_le_bytes());
    hex::encode(&hash.finalize()[..16])
}

/// Why a GET stream could not open.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Busy;

/// One client session.
#[derive(Debug)]
pub(super) struct Session {
    pub(super) id: String,
    /// Answers the session's messages.
    pub(super) handler: Arc<dyn Handler>,
    standalone: Mutex<Standalone>,
    streams: Mutex<VecDeque<Arc<StreamLog>>>,
}

impl Session {
    fn new(id: String, handler: Arc<dyn Handler>) -> Self {
        Session {
            id,
            handler,
            standalone: Mutex::new(Standalone::default()),
            streams: Mutex::new(VecDeque::new()),
        }
    }

    /// Sends a server message on the GET stream; kept until a GET stream
    /// takes it when none is open.
    pub(super) fn push(&self, message: Vec<u8>) {
        lock(&self.standalone).push(message, None);
    }

    /// Sends a server message on the GET stream framed as it was recorded
    /// there (its event id, which a client may resume after, `event:` and
    /// `retry:`).
    pub(super) fn push_framed(&self, message: Vec<u8>, frame: &SseFrame) {
        lock(&self.standalone).push(message, Some(frame));
    }

    /// Opens the GET stream with what was queued for it, after the priming
    /// event the recorded server opened its GET stream with, if any. One at
    /// a time.
    pub(super) fn open(
        &self,
        priming: Option<&SseFrame>,
    ) -> Result<mpsc::UnboundedReceiver<Bytes>, Busy> {
        let mut standalone = lock(&self.standalone);
        if standalone.is_open() {
            return Err(Busy);
        }
        if let Some(priming) = priming {
            standalone.prime(priming);
        }
        Ok(standalone.attach(None))
    }

    /// Resumes after `last_event_id`: the GET stream's later events, then it
    /// goes on live; or a request stream's later events, then it ends; or,
    /// for an id never sent, an empty stream that ends at once.
    pub(super) fn resume(&self, last_event_id: &str) -> mpsc::UnboundedReceiver<Bytes> {
        {
            let mut standalone = lock(&self.standalone);
            if let Some(at) = standalone.position(last_event_id) {
                return standalone.attach(Some(at + 1));
            }
        }
        let (tx, rx) = mpsc::unbounded_channel();
        let streams = lock(&self.streams);
        if let Some(events) = streams.iter().rev().find_map(|s| s.after(last_event_id)) {
            for event in events {
                let _ = tx.send(event);
            }
        }
        rx
    }

    /// A log for a new request stream, so a client can resume it.
    pub(super) fn stream_log(&self) -> Arc<StreamLog> {
        let log = Arc::new(StreamLog::default());
        let mut streams = lock(&self.streams);
        if streams.len() == STREAM_LOGS {
            streams.pop_front();
        }
        streams.push_back(Arc::clone(&log));
        log
    }

    fn close(&self) {
        lock(&self.standalone).live = None;
    }
}

/// The server's own stream (GET): server messages that belong to no
/// request, each with an id (`get-N`) so the stream can be resumed.
#[derive(Debug, Default)]
struct Standalone {
    /// Events in order, the oldest dropped beyond [`STANDALONE_LOG`].
    log: VecDeque<(String, Bytes)>,
    /// Ids handed out so far.
    next_id: u64,
    /// Log entries not yet written to any GET stream, at the log's end.
    queued: usize,
    live: Option<mpsc::UnboundedSender<Bytes>>,
}

impl Standalone {
    /// Sends (or queues) `message`, framed as `recorded` says or with a
    /// fresh `get-N` id.
    fn push(&mut self, message: Vec<u8>, recorded: Option<&SseFrame>) {
        let spec = self.spec(recorded);
        self.send(spec, Some(message));
    }

    /// Queues a priming event (an id, no data) for the stream about to
    /// open, ahead of what is queued for it.
    fn prime(&mut self, recorded: &SseFrame) {
        let spec = self.spec(Some(recorded));
        let id = spec.id.clone().unwrap_or_default();
        if self.log.len() == STANDALONE_LOG {
            self.log.pop_front();
            self.queued = self.queued.min(self.log.len());
        }
        let at = self.log.len() - self.queued;
        self.log.insert(at, (id, sse::encode(&spec, None)));
        self.queued += 1;
    }

    fn spec(&mut self, recorded: Option<&SseFrame>) -> FrameSpec {
        let id = match recorded.and_then(|frame| frame.id.clone()) {
            Some(id) => id,
            None => {
                self.next_id += 1;
                format!("get-{}", self.next_id - 1)
            }
        };
        FrameSpec {
            id: Some(id),
            event: recorded.and_then(|frame| frame.event.clone()),
            retry: recorded.and_then(|frame| frame.retry),
            priming: false,
        }
    }

    fn send(&mut self, spec: FrameSpec, message: Option<Vec<u8>>) {
        let id = spec.id.clone().unwrap_or_default();
        let event = sse::encode(&spec, message);
        let sent = self
            .live
            .as_ref()
            .is_some_and(|live| live.send(event.clone()).is_ok());
        if !sent {
            self.live = None;
            self.queued += 1;
        }
        if self.log.len() == STANDALONE_LOG {
            self.log.pop_front();
        }
        self.log.push_back((id, event));
        self.queued = self.queued.min(self.log.len());
    }

    fn is_open(&self) -> bool {
        self.live.as_ref().is_some_and(|live| !live.is_closed())
    }

    fn position(&self, id: &str) -> Option<usize> {
        self.log.iter().position(|(logged, _)| logged == id)
    }

    /// Makes a new stream the live one, starting with the log from `from`
    /// (or with what is queued).
    fn attach(&mut self, from: Option<usize>) -> mpsc::UnboundedReceiver<Bytes> {
        let from = from.unwrap_or(self.log.len() - self.queued);
        let (tx, rx) = mpsc::unbounded_channel();
        for (_, event) in self.log.iter().skip(from) {
            let _ = tx.send(event.clone());
        }
        self.queued = 0;
        self.live = Some(tx);
        rx
    }
}

/// The events of one request stream that carried ids, for resumption.
#[derive(Debug, Default)]
pub(super) struct StreamLog(Mutex<Vec<(String, Bytes)>>);

impl StreamLog {
    /// Notes an event written with `id`.
    pub(super) fn record(&self, id: &str, event: Bytes) {
        lock(&self.0).push((id.to_owned(), event));
    }

    /// The events after `id`, if this stream sent `id`.
    fn after(&self, id: &str) -> Option<Vec<Bytes>> {
        let events = lock(&self.0);
        let at = events.iter().position(|(logged, _)| logged == id)?;
        Some(events[at + 1..].iter().map(|(_, e)| e.clone()).collect())
    }
}

/// A handler that answers nothing, for tests of what carries it.
#[cfg(test)]
pub(super) fn test_handler() -> Arc<dyn Handler> {
    crate::server::handler::test_handler()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn session() -> Session {
        Session::new("s".into(), test_handler())
    }

    fn drain(rx: &mut mpsc::UnboundedReceiver<Bytes>) -> Vec<String> {
        let mut out = Vec::new();
        while let Ok(event) = rx.try_recv() {
            out.push(String::from_utf8(event.to_vec()).unwrap());
        }
        out
    }

    #[test]
    fn ids_are_fresh_and_sessions_end() {
        let sessions = Sessions::default();
        let a = sessions.create(test_handler());
        let b = sessions.create(test_handler());
        assert_ne!(a.id, b.id);
        assert_eq!(a.id.len(), 32);
        assert!(sessions.get(&a.id).is_some());
        assert!(sessions.end(&a.id));
        assert!(sessions.get(&a.id).is_none());
        assert!(!sessions.end(&a.id));
    }

    #[test]
    fn queued_messages_reach_the_first_get_stream_and_one_stream_at_a_time() {
        let session = session();
        session.push(b"{\"n\":1}".to_vec());
        let mut rx = session.open(None).unwrap();
        assert_eq!(session.open(None).unwrap_err(), Busy);
        session.push(b"{\"n\":2}".to_vec());
        let events = drain(&mut rx);
        assert_eq!(events.len(), 2);
        assert!(events[0].contains("id: get-0") && events[1].contains("{\"n\":2}"));
        drop(rx);
        assert!(session.open(None).is_ok(), "a closed stream frees the slot");
    }

    #[test]
    fn resumption_replays_what_followed_the_last_event_id() {
        let session = session();
        let _rx = session.open(None).unwrap();
        for n in 0..3 {
            session.push(format!("{{\"n\":{n}}}").into_bytes());
        }
        let events = drain(&mut session.resume("get-0"));
        assert_eq!(events.len(), 2);
        assert!(events[0].contains("get-1"));

        let log = session.stream_log();
        log.record("a", Bytes::from_static(b"A"));
        log.record("b", Bytes::from_static(b"B"));
        assert_eq!(drain(&mut session.resume("a")), vec!["B"]);
        assert!(drain(&mut session.resume("unknown")).is_empty());
    }
}
