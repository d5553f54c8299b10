//! SSE events as replay writes them: the recorded framing (ids, event
//! names, `retry:`, priming events) laid back onto the replayed messages,
//! and the recorded timing when asked for.

use std::collections::VecDeque;
use std::time::Duration;

use bytes::Bytes;
use sse_stream::Sse;
use tokio::time::Instant;

use super::Pace;

/// How one recorded SSE event was framed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct FrameSpec {
    pub id: Option<String>,
    pub event: Option<String>,
    pub retry: Option<u64>,
    /// An event with an id and empty data that carries no message.
    pub priming: bool,
}

/// The framing of the 2024-11-05 HTTP+SSE transport: `event: message`.
pub(super) fn message_frame() -> FrameSpec {
    FrameSpec {
        event: Some("message".into()),
        ..FrameSpec::default()
    }
}

/// Encodes one SSE event; `data` is a JSON-RPC message, or `None` for a
/// priming event. Framing that SSE cannot carry (a newline in an id) is
/// dropped rather than corrupting the stream.
pub(super) fn encode(spec: &FrameSpec, data: Option<Vec<u8>>) -> Bytes {
    let data = match data {
        Some(bytes) => String::from_utf8(bytes)
            .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned()),
        None => String::new(),
    };
    let fits = |field: &String| !field.contains(['\r', '\n', '\0']);
    let event = Sse {
        event: spec.event.clone().filter(fits),
        data: Some(data),
        id: spec.id.clone().filter(fits),
        retry: spec.retry,
    };
    event.encode().expect("fields were checked")
}

/// Lays recorded framing onto the messages of one answer, in order, and
/// says when each event is due.
#[derive(Debug)]
pub(super) struct Framer {
    frames: VecDeque<FrameSpec>,
    delays: Vec<u64>,
    pace: Pace,
    start: Instant,
    /// Events written so far (priming included), to index `delays`.
    written: usize,
}

impl Framer {
    /// `start` is when the request arrived: recorded delays count from it.
    pub(super) fn new(
        frames: Vec<FrameSpec>,
        delays: Vec<u64>,
        pace: Pace,
        start: Instant,
    ) -> Self {
        Framer {
            frames: frames.into(),
            delays,
            pace,
            start,
            written: 0,
        }
    }

    /// A priming event due before the next message, if the recording had one.
    pub(super) fn take_priming(&mut self) -> Option<FrameSpec> {
        if self.frames.front().is_some_and(|f| f.priming) {
            self.frames.pop_front()
        } else {
            None
        }
    }

    /// The framing for the next message. The last response of an answer
    /// takes the last recorded message frame, so that the response keeps its
    /// recorded id even when fewer events were replayed than recorded (a
    /// live request without a progress token gets no progress).
    pub(super) fn for_message(&mut self, last: bool) -> FrameSpec {
        if last && let Some(at) = self.frames.iter().rposition(|f| !f.priming) {
            let spec = self.frames[at].clone();
            self.frames.drain(..=at);
            return spec;
        }
        while let Some(spec) = self.frames.pop_front() {
            if !spec.priming {
                return spec;
            }
        }
        FrameSpec::default()
    }

    /// Whether events wait for their recorded delays ([`Pace::Recorded`]).
    pub(super) fn paced(&self) -> bool {
        self.pace == Pace::Recorded
    }

    /// When the next event is due: its recorded delay under
    /// [`Pace::Recorded`], else now. Counts the event as written.
    pub(super) fn next_due(&mut self) -> Option<Instant> {
        let index = self.written;
        self.written += 1;
        if self.pace != Pace::Recorded {
            return None;
        }
        let delay = *self.delays.get(index)?;
        Some(self.start + Duration::from_millis(delay))
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    /// A frame with `id`, priming or not.
    pub(in crate::server::http) fn frame(id: &str, priming: bool) -> FrameSpec {
        FrameSpec {
            id: Some(id.into()),
            priming,
            ..FrameSpec::default()
        }
    }

    #[test]
    fn encodes_messages_and_priming_events() {
        let spec = FrameSpec {
            id: Some("7".into()),
            retry: Some(1000),
            ..FrameSpec::default()
        };
        let text = encode(&spec, Some(br#"{"a":1}"#.to_vec()));
        let text = std::str::from_utf8(&text).unwrap();
        assert!(text.contains("data: {\"a\":1}\n"), "{text}");
        assert!(text.contains("id: 7\n") && text.contains("retry: 1000\n"));
        assert!(text.ends_with("\n\n"));
        let priming = encode(&frame("0", true), None);
        assert!(std::str::from_utf8(&priming).unwrap().contains("id: 0\n"));
    }

    #[test]
    fn an_id_sse_cannot_carry_is_dropped() {
        let text = encode(&frame("a\nb", false), Some(b"{}".to_vec()));
        assert_eq!(&text[..], b"data: {}\n\n");
    }

    #[test]
    fn framing_follows_the_recording_and_the_response_keeps_its_frame() {
        let frames = vec![
            frame("p", true),
            frame("e1", false),
            frame("e2", false),
            frame("r", false),
        ];
        let mut framer = Framer::new(frames, vec![], Pace::Fast, Instant::now());
        assert_eq!(framer.take_priming().unwrap().id.as_deref(), Some("p"));
        assert!(framer.take_priming().is_none());
        assert_eq!(framer.for_message(false).id.as_deref(), Some("e1"));
        // One recorded event was not replayed: the response still gets "r".
        assert_eq!(framer.for_message(true).id.as_deref(), Some("r"));
        assert_eq!(framer.for_message(false), FrameSpec::default());
    }

    #[test]
    fn recorded_pace_uses_the_delays() {
        let start = Instant::now();
        let mut fast = Framer::new(vec![], vec![10, 20], Pace::Fast, start);
        assert_eq!(fast.next_due(), None);
        let mut paced = Framer::new(vec![], vec![10, 20], Pace::Recorded, start);
        assert_eq!(paced.next_due(), Some(start + Duration::from_millis(10)));
        assert_eq!(paced.next_due(), Some(start + Duration::from_millis(20)));
        assert_eq!(paced.next_due(), None);
    }
}
