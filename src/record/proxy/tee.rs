//! The response body the proxy hands to the client: the upstream's body,
//! frame by frame as it arrives, with a copy of every frame read for the
//! recording before the frame is passed on.

use std::convert::Infallible;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::mpsc;
use std::task::{Context, Poll, Waker, ready};
use std::time::Instant;

use bytes::{Bytes, BytesMut};
use futures_util::{Stream, StreamExt};
use hyper::body::{Body, Frame, Incoming, SizeHint};
use sse_stream::{Sse, SseByteStream};

use super::tap::{self, Opened, Tap};
use crate::cassette::{Direction, SseFrame};
use crate::record::Observer;
use crate::redact::MASK;

/// Errors the proxy's bodies end with.
pub(super) type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// At most this much of a body that is not JSON-RPC is kept in a cassette.
const MAX_KEPT_BODY: usize = 64 * 1024;

/// The observer messages are shown to, if any. Cloning shares it.
#[derive(Clone, Default)]
pub(super) struct Observing(pub(super) Option<Arc<dyn Observer>>);

impl std::fmt::Debug for Observing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("Observing").field(&self.0.is_some()).finish()
    }
}

impl Observing {
    /// Whether anyone is watching.
    pub(super) fn is_on(&self) -> bool {
        self.0.is_some()
    }

    /// Tells the observer about credentials, which it must never show.
    pub(super) fn secrets(&self, secrets: &[(String, String)]) {
        if let Some(observer) = &self.0 {
            observer.secrets(secrets);
        }
    }

    /// Shows one message (or batch) that went `direction`; blank ones are
    /// not messages.
    pub(super) fn see(&self, direction: Direction, bytes: &[u8]) {
        if let Some(observer) = &self.0
            && !bytes.trim_ascii().is_empty()
        {
            observer.message(direction, bytes);
        }
    }
}

/// What the recording (or the observer) reads out of a body.
#[derive(Debug)]
pub(super) enum Reading {
    /// An SSE stream: events, each a frame and maybe a message.
    Sse(SseParser),
    /// A JSON body: JSON-RPC messages, or text to keep if it is not.
    Json(Vec<u8>),
    /// Another body (an error page): kept as text.
    Text(Vec<u8>),
    /// Nothing (passing through, or a body nothing can refer to).
    Nothing,
}

/// Holding back the start of an HTTP+SSE stream until its first event, so
/// that an `endpoint` event naming the upstream can name the proxy instead.
#[derive(Debug)]
pub(super) struct Announcement {
    /// `http://host:port` of the proxy, as the client reached it.
    pub(super) proxy_origin: String,
    /// The path of the stream (the SSE endpoint).
    pub(super) sse_endpoint: String,
    /// Bytes not yet forwarded; `None` once the first event went through.
    held: Option<BytesMut>,
    /// The origin in the announced URL, to be replaced.
    replace: Option<String>,
}

impl Announcement {
    /// Holds a stream at `sse_endpoint` until its first event.
    pub(super) fn new(proxy_origin: String, sse_endpoint: String) -> Self {
        Announcement {
            proxy_origin,
            sse_endpoint,
            held: Some(BytesMut::new()),
            replace: None,
        }
    }
}

/// Everything the recording needs to file one response.
#[derive(Debug)]
pub(super) struct Tee {
    pub(super) tap: Tap,
    /// The interactions the request opened (none for GET and DELETE).
    pub(super) opened: Opened,
    pub(super) started: Instant,
    pub(super) reading: Reading,
    /// Session ids seen on this exchange, masked wherever they show up.
    pub(super) secrets: Vec<String>,
    pub(super) announcement: Option<Announcement>,
    /// The upstream, masked, for log messages.
    pub(super) upstream: Arc<str>,
    /// Whether the end of the answer means no response will come for the
    /// POST's requests (a JSON answer or an HTTP error, unlike a 202 or an
    /// SSE stream, which may be resumed).
    pub(super) final_answer: bool,
    /// Sees every message read out of the answer.
    pub(super) observing: Observing,
    /// The answer is the session's GET stream (Streamable HTTP): its server
    /// messages are noted as having travelled there, with their framing.
    pub(super) get_stream: bool,
    /// Whether the first SSE event was seen.
    seen_event: bool,
    ended: bool,
}

impl Tee {
    /// A tee that reads `reading` out of the answer to a request that
    /// opened `opened`.
    pub(super) fn new(tap: Tap, opened: Opened, started: Instant, reading: Reading) -> Self {
        Tee {
            tap,
            opened,
            started,
            reading,
            secrets: Vec::new(),
            announcement: None,
            upstream: Arc::from(""),
            final_answer: false,
            observing: Observing::default(),
            get_stream: false,
            seen_event: false,
            ended: false,
        }
    }

    /// Reads one chunk; returns what to forward now (`None`: nothing yet).
    fn chunk(&mut self, chunk: Bytes, last: bool) -> Option<Bytes> {
        let mut events = Vec::new();
        match &mut self.reading {
            Reading::Sse(parser) => events = parser.push(chunk.clone()),
            Reading::Json(body) => body.extend_from_slice(&chunk),
            Reading::Text(body) => {
                let room = MAX_KEPT_BODY.saturating_sub(body.len());
                body.extend_from_slice(&chunk[..room.min(chunk.len())]);
            }
            Reading::Nothing => {}
        }
        for event in events {
            self.sse_event(event);
        }
        let out = self.release(chunk);
        if last {
            self.end();
        }
        out
    }

    /// Passes `chunk` on, unless the start of the stream is held back.
    fn release(&mut self, chunk: Bytes) -> Option<Bytes> {
        let Some(announcement) = &mut self.announcement else {
            return Some(chunk);
        };
        let Some(held) = &mut announcement.held else {
            return Some(chunk);
        };
        held.extend_from_slice(&chunk);
        if !self.seen_event {
            return None;
        }
        let held = announcement.held.take().unwrap_or_default();
        Some(match announcement.replace.take() {
            Some(origin) => replace_first(
                &held,
                origin.as_bytes(),
                announcement.proxy_origin.as_bytes(),
            ),
            None => held.freeze(),
        })
    }

    /// What is still held back when the stream ends.
    fn rest(&mut self) -> Option<Bytes> {
        let held = self.announcement.as_mut()?.held.take()?;
        (!held.is_empty()).then(|| held.freeze())
    }

    /// Files one SSE event.
    fn sse_event(&mut self, event: Sse) {
        let first = !std::mem::replace(&mut self.seen_event, true);
        if first && event.event.as_deref() == Some("endpoint") {
            self.endpoint_event(event.data.as_deref().unwrap_or_default());
            return;
        }
        let data = event.data.as_deref().unwrap_or_default();
        self.observing
            .see(Direction::ServerToClient, data.as_bytes());
        if !self.tap.is_recording() {
            return;
        }
        let messages = if data.trim().is_empty() {
            Vec::new()
        } else {
            match tap::parse_messages(data.as_bytes()) {
                Some(messages) => messages,
                None => {
                    tracing::warn!("an SSE event's data is not JSON; forwarded but not recorded");
                    return;
                }
            }
        };
        let frame = SseFrame {
            id: event.id.map(|id| self.mask_secrets(id)),
            event: event.event.filter(|name| name != "message"),
            retry: event.retry,
            priming: messages.is_empty(),
        };
        // (Not the 2024-11-05 HTTP+SSE transport, whose one stream carries
        // everything and is replayed as such.)
        if self.get_stream && self.opened.primary().is_none() && self.tap.post_endpoint().is_none()
        {
            if messages.is_empty() {
                self.tap.behaviour(|b| {
                    b.get_priming.get_or_insert(frame);
                });
            } else {
                self.tap.stream_event(messages, &frame);
            }
            return;
        }
        let delay = u64::try_from(self.started.elapsed().as_millis()).unwrap_or(u64::MAX);
        let text = tap::lone_text(data.as_bytes(), &messages);
        self.tap
            .sse_event(self.opened.primary(), messages, text, |http| {
                http.sse.push(frame);
                http.delays_ms.push(delay);
            });
    }

    /// An HTTP+SSE stream announced where to POST: record the transport and
    /// point an absolute URL at the proxy.
    fn endpoint_event(&mut self, url: &str) {
        let Some(announcement) = &mut self.announcement else {
            return;
        };
        let (origin, path) = split_origin(url.trim());
        announcement.replace = origin.map(str::to_owned);
        // The query names the session (`?sessionId=…`).
        let query = path
            .split_once('?')
            .map(|(_, query)| query)
            .unwrap_or_default();
        for (_, value) in query.split('&').filter_map(|param| param.split_once('=')) {
            self.tap.note_session(value);
            self.secrets.push(value.to_owned());
        }
        let post_endpoint = path.split(['?', '#']).next().unwrap_or_default();
        self.tap
            .found_http_sse(&announcement.sse_endpoint, post_endpoint);
    }

    /// Once the whole body is read: files a JSON answer, or keeps the text.
    fn end(&mut self) {
        if std::mem::replace(&mut self.ended, true) {
            return;
        }
        match std::mem::replace(&mut self.reading, Reading::Nothing) {
            Reading::Json(body) => self.file_json(&body),
            Reading::Text(body) => self.keep_body(&body),
            Reading::Sse(_) | Reading::Nothing => {}
        }
        if self.final_answer {
            self.tap.unanswered(&self.opened.request_ids);
        }
        self.tap.answered(&self.opened.interactions);
    }

    /// Files the messages of a JSON answer, keeping the body as text when
    /// it does not answer the POST. (Read for the observer alone, it is
    /// only shown to it.)
    fn file_json(&self, body: &[u8]) {
        self.observing.see(Direction::ServerToClient, body);
        if self.opened.interactions.is_empty() {
            return;
        }
        let messages = tap::parse_messages(body).unwrap_or_default();
        if !tap::answers(&messages, &self.opened.request_ids) {
            self.keep_body(body);
        }
        let text = tap::lone_text(body, &messages);
        let valid = messages
            .into_iter()
            .filter(|m| crate::jsonrpc::classify(m).is_ok())
            .collect();
        self.tap
            .answer_messages(valid, text, &self.opened.request_ids);
    }

    /// Keeps a body that is not a JSON-RPC answer, as text.
    fn keep_body(&self, body: &[u8]) {
        if body.is_empty() {
            return;
        }
        let text = self.mask_secrets(String::from_utf8_lossy(body).into_owned());
        self.tap.exchange(&self.opened.interactions, |http| {
            http.body = Some(text.clone());
        });
    }

    fn mask_secrets(&self, mut text: String) -> String {
        for secret in self.secrets.iter().filter(|s| !s.is_empty()) {
            text = text.replace(secret.as_str(), MASK);
        }
        text
    }
}

/// `http://host:port/path?q` → (`Some("http://host:port")`, `/path?q`);
/// a relative URL has no origin.
fn split_origin(url: &str) -> (Option<&str>, &str) {
    let Some(scheme_end) = url.find("://") else {
        return (None, url);
    };
    let rest = &url[scheme_end + 3..];
    let path_start = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let origin_len = scheme_end + 3 + path_start;
    (Some(&url[..origin_len]), &url[origin_len..])
}

fn replace_first(haystack: &[u8], from: &[u8], to: &[u8]) -> Bytes {
    let Some(at) = haystack.windows(from.len()).position(|w| w == from) else {
        return Bytes::copy_from_slice(haystack);
    };
    let mut out = BytesMut::with_capacity(haystack.len() + to.len());
    out.extend_from_slice(&haystack[..at]);
    out.extend_from_slice(to);
    out.extend_from_slice(&haystack[at + from.len()..]);
    out.freeze()
}

/// Chunks handed to the SSE decoder: a queue it reads without waiting.
#[derive(Debug)]
struct Chunks(mpsc::Receiver<Bytes>);

impl Stream for Chunks {
    type Item = Result<Bytes, Infallible>;

    fn poll_next(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        match self.0.try_recv() {
            Ok(chunk) => Poll::Ready(Some(Ok(chunk))),
            // The parser asks again after the next push, never on a wake-up.
            Err(mpsc::TryRecvError::Empty) => Poll::Pending,
            Err(mpsc::TryRecvError::Disconnected) => Poll::Ready(None),
        }
    }
}

/// An incremental SSE parser: chunks in, complete events out, right away.
/// (sse-stream's decoder reads a stream; a queue feeds it, and it is
/// drained after every chunk without waiting.)
pub(super) struct SseParser {
    input: mpsc::Sender<Bytes>,
    events: SseByteStream<Chunks>,
}

impl std::fmt::Debug for SseParser {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SseParser").finish_non_exhaustive()
    }
}

impl Default for SseParser {
    fn default() -> Self {
        let (input, output) = mpsc::channel();
        SseParser {
            input,
            events: SseByteStream::new(Chunks(output)),
        }
    }
}

impl SseParser {
    /// Every event `chunk` completes.
    pub(super) fn push(&mut self, chunk: Bytes) -> Vec<Sse> {
        let _ = self.input.send(chunk);
        let mut cx = Context::from_waker(Waker::noop());
        let mut events = Vec::new();
        while let Poll::Ready(Some(event)) = self.events.poll_next_unpin(&mut cx) {
            match event {
                Ok(event) => events.push(event),
                Err(e) => {
                    tracing::warn!("cannot read the SSE stream ({e}); the rest is not recorded");
                    break;
                }
            }
        }
        events
    }
}

/// The upstream's body, teed into the recording.
#[derive(Debug)]
pub(super) struct TeeBody {
    inner: Incoming,
    tee: Tee,
}

impl TeeBody {
    /// Forwards `inner`, reading it into `tee`.
    pub(super) fn new(inner: Incoming, tee: Tee) -> Self {
        TeeBody { inner, tee }
    }
}

impl Body for TeeBody {
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        let this = self.get_mut();
        loop {
            match ready!(Pin::new(&mut this.inner).poll_frame(cx)) {
                Some(Ok(frame)) => match frame.into_data() {
                    Ok(data) => {
                        let last = this.inner.is_end_stream();
                        if let Some(data) = this.tee.chunk(data, last) {
                            return Poll::Ready(Some(Ok(Frame::data(data))));
                        }
                    }
                    Err(trailers) => return Poll::Ready(Some(Ok(trailers))),
                },
                Some(Err(e)) => {
                    tracing::error!(
                        "the upstream {} broke off a response: {e}; ending the client's stream with an error",
                        this.tee.upstream
                    );
                    return Poll::Ready(Some(Err(e.into())));
                }
                None => {
                    this.tee.end();
                    return Poll::Ready(this.tee.rest().map(|rest| Ok(Frame::data(rest))));
                }
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        let holding = self
            .tee
            .announcement
            .as_ref()
            .is_some_and(|a| a.held.as_ref().is_some_and(|h| !h.is_empty()));
        self.inner.is_end_stream() && !holding
    }

    fn size_hint(&self) -> SizeHint {
        match &self.tee.announcement {
            Some(_) => SizeHint::default(),
            None => self.inner.size_hint(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parser_yields_events_as_soon_as_they_are_complete() {
        let mut parser = SseParser::default();
        assert!(parser.push(Bytes::from_static(b"id: 1\nda")).is_empty());
        let events = parser.push(Bytes::from_static(b"ta:\n\ndata: {\"a\":1}\n\nevent: x\n"));
        assert_eq!(events.len(), 2);
        assert_eq!(events[0].id.as_deref(), Some("1"));
        assert_eq!(events[0].data.as_deref(), Some(""));
        assert_eq!(events[1].data.as_deref(), Some("{\"a\":1}"));
        let events = parser.push(Bytes::from_static(b"data: 2\n\n"));
        assert_eq!(events[0].event.as_deref(), Some("x"));
    }

    #[test]
    fn splits_origins_off_absolute_urls() {
        assert_eq!(
            split_origin("http://h:1/message?s=1"),
            (Some("http://h:1"), "/message?s=1")
        );
        assert_eq!(split_origin("/message?s=1"), (None, "/message?s=1"));
        assert_eq!(
            replace_first(b"data: http://a/m\n\n", b"http://a", b"http://b:2"),
            Bytes::from_static(b"data: http://b:2/m\n\n")
        );
    }

    #[test]
    fn parsed_messages_keep_their_text() {
        let messages = tap::parse_messages(br#"[{"jsonrpc":"2.0","id":1,"result":{}}]"#).unwrap();
        assert_eq!(
            messages,
            vec![serde_json::json!({"jsonrpc":"2.0","id":1,"result":{}})]
        );
    }
}
