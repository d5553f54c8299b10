//! Writing a POST's answer from the engine's messages: a JSON body once the
//! response is there, or an SSE stream written as messages arrive.

use std::sync::Arc;

use bytes::Bytes;
use http::StatusCode;
use tokio::sync::mpsc;
use tokio::time::Instant;

use super::flow::{self, Closing, Flow};
use super::modern;
use super::plan::{Plan, Shape};
use super::reply::{self, Response};
use super::server::Server;
use super::session::{Session, StreamLog};
use super::sse::{self, FrameSpec, Framer};
use crate::server::HANGUP;

/// What the answer must carry.
#[derive(Debug, Clone, Copy)]
pub(super) struct Expect {
    /// Responses to wait for (one per request in the POST).
    pub answers: usize,
    /// Whether the POST was a batch, answered by an array.
    pub batch: bool,
}

/// Answers as `plan` says; events that do not travel in the answer spill
/// to the session's GET stream.
pub(super) async fn respond(
    server: &Arc<Server>,
    flow: Flow,
    plan: Plan,
    expect: Expect,
    session: Option<Arc<Session>>,
    start: Instant,
) -> Response {
    match plan.shape {
        Shape::Json => json(server, flow, &plan, expect).await,
        Shape::Sse => stream(server, flow, plan, expect, session, start),
        Shape::Raw { .. } | Shape::Empty => {
            flow.drain(server.closed());
            without_stream(&plan)
        }
    }
}

/// An answer with no messages in it: 202, or a recorded body.
pub(super) fn without_stream(plan: &Plan) -> Response {
    match &plan.shape {
        Shape::Raw { content_type, body } => reply::raw(plan.status, content_type.as_deref(), body),
        _ => reply::empty(plan.status),
    }
}

/// Waits for the response(s) and answers with them as one JSON body.
async fn json(server: &Arc<Server>, mut flow: Flow, plan: &Plan, expect: Expect) -> Response {
    let closed = server.closed();
    let body = tokio::select! {
        body = collect(&mut flow, expect) => body,
        () = closed => None,
    };
    flow.drain(server.closed());
    if body.as_deref() == Some(HANGUP) {
        return reply::hangup();
    }
    let Some(body) = body else {
        // The recorded server never answered: neither does replay, until
        // the client gives up or replay stops.
        server.closed().await;
        return reply::error(
            StatusCode::SERVICE_UNAVAILABLE,
            reply::BAD_REQUEST_CODE,
            "Service Unavailable: replay stopped before an answer",
        );
    };
    let status = if plan.recorded || !server.modern {
        plan.status
    } else {
        modern::status_of_answer(&body)
    };
    reply::json(status, body)
}

/// The expected responses (an array for a batch), spilling events; `None`
/// if the engine ends without answering.
async fn collect(flow: &mut Flow, expect: Expect) -> Option<Vec<u8>> {
    let mut responses = Vec::new();
    while responses.len() < expect.answers {
        let Some(message) = flow.next().await else {
            break;
        };
        if message.bytes == HANGUP {
            return Some(message.bytes);
        }
        if message.is_response {
            responses.push(message.bytes);
        } else {
            flow.spill(message.bytes);
        }
    }
    if !expect.batch || responses.is_empty() {
        return responses.pop();
    }
    Some(crate::jsonrpc::batch(&responses))
}

/// Starts an SSE answer. What the engine has played already is written
/// first: at fast pace that is usually the whole answer, which is then
/// sent as one body with its length, in one write with its headers,
/// instead of an event at a time. The rest is written in the background
/// as the engine plays.
fn stream(
    server: &Arc<Server>,
    flow: Flow,
    plan: Plan,
    expect: Expect,
    session: Option<Arc<Session>>,
    start: Instant,
) -> Response {
    let (out, events) = mpsc::unbounded_channel();
    let mut writer = Writer {
        closing: server.closing(),
        out,
        framer: Framer::new(plan.frames, plan.delays, server.pace, start),
        log: session.map(|s| s.stream_log()),
        answers: expect.answers,
        answered: 0,
        open_ended: plan.open_ended,
        hung_up: false,
    };
    match writer.write_ready(flow) {
        Some(flow) => {
            tokio::spawn(writer.run(flow));
            reply::sse(plan.status, events, server.closed())
        }
        // A hang-up in it: the body must fail there, so it streams.
        None if writer.hung_up => reply::sse(plan.status, events, server.closed()),
        None => {
            drop(writer);
            reply::sse_whole(plan.status, whole(events))
        }
    }
}

/// The events of an answer written whole, as one body.
fn whole(mut events: mpsc::UnboundedReceiver<Bytes>) -> Bytes {
    let mut body = bytes::BytesMut::new();
    while let Ok(event) = events.try_recv() {
        body.extend_from_slice(&event);
    }
    body.freeze()
}

/// Writes one SSE answer.
struct Writer {
    /// The server's shutdown, which ends the stream.
    closing: Closing,
    /// The response body; closed when the client goes away.
    out: mpsc::UnboundedSender<Bytes>,
    framer: Framer,
    /// Where events with ids are kept for resumption.
    log: Option<Arc<StreamLog>>,
    /// Responses the answer carries (one per request in the POST).
    answers: usize,
    /// Responses written so far.
    answered: usize,
    /// Whether the stream stays open after the last response.
    open_ended: bool,
    /// Whether the handler hung up ([`HANGUP`]): the body ends there, in
    /// error.
    hung_up: bool,
}

/// What writing one message did to the answer.
enum Wrote {
    /// More may follow.
    More,
    /// It was the last: the answer is complete.
    Last,
    /// The client is gone.
    Gone,
}

impl Writer {
    /// Writes what the engine has played already, without waiting for
    /// anything; the flow back if the answer is not complete yet (more to
    /// come, events paced as recorded, or a stream that stays open).
    fn write_ready(&mut self, mut flow: Flow) -> Option<Flow> {
        if self.framer.paced() {
            return Some(flow);
        }
        loop {
            while let Some(priming) = self.framer.take_priming() {
                if !self.emit(&priming, None) {
                    return None;
                }
            }
            match flow.try_next() {
                Ok(Some(message)) => match self.message(message) {
                    Wrote::More => {}
                    Wrote::Last => {
                        flow.drain(self.closing.closed());
                        return None;
                    }
                    Wrote::Gone => return None,
                },
                // The handler is done: without a stream that stays open,
                // so is the answer.
                Ok(None) if !self.open_ended => return None,
                Ok(None) | Err(flow::NotYet) => return Some(flow),
            }
        }
    }

    /// Writes events then the response(s), and ends the stream; an
    /// open-ended answer stays open. A client that goes away cancels the
    /// plays (dropping `flow` aborts them).
    async fn run(mut self, mut flow: Flow) {
        let closed = self.closing.closed();
        tokio::pin!(closed);
        loop {
            while let Some(priming) = self.framer.take_priming() {
                if !self.due().await || !self.emit(&priming, None) {
                    return;
                }
            }
            let message = tokio::select! {
                message = flow.next() => message,
                () = self.out.closed() => return,
                () = &mut closed => return,
            };
            let Some(message) = message else { break };
            if !self.due().await {
                return;
            }
            match self.message(message) {
                Wrote::More => {}
                Wrote::Last => {
                    flow.drain(self.closing.closed());
                    return;
                }
                Wrote::Gone => return,
            }
        }
        if self.open_ended {
            tokio::select! {
                () = self.out.closed() => {}
                () = &mut closed => {}
            }
        }
    }

    /// Whether `message` is the last of the answer.
    fn is_last(&self, message: &flow::Message) -> bool {
        message.is_response && self.answered + 1 >= self.answers && !self.open_ended
    }

    /// Writes one message now, in the frame the recording gave it.
    fn message(&mut self, message: flow::Message) -> Wrote {
        if message.bytes == HANGUP {
            self.hung_up = true;
            let _ = self.out.send(Bytes::from_static(HANGUP));
            return Wrote::Gone;
        }
        let last = self.is_last(&message);
        let spec = self.framer.for_message(last);
        if !self.emit(&spec, Some(message.bytes)) {
            return Wrote::Gone;
        }
        self.answered += usize::from(message.is_response);
        if last { Wrote::Last } else { Wrote::More }
    }

    /// Waits until the next event is due (its recorded delay, under
    /// `--pace recorded`); false once the client is gone.
    async fn due(&mut self) -> bool {
        if let Some(due) = self.framer.next_due() {
            tokio::select! {
                () = tokio::time::sleep_until(due) => {}
                () = self.out.closed() => return false,
            }
        }
        true
    }

    /// Writes one event now, keeping it for resumption if it has an id;
    /// false once the client is gone.
    fn emit(&mut self, spec: &FrameSpec, data: Option<Vec<u8>>) -> bool {
        let event = sse::encode(spec, data);
        if let (Some(log), Some(id)) = (&self.log, &spec.id) {
            log.record(id, event.clone());
        }
        self.out.send(event).is_ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server::Pace;

    use crate::server::http::sse::tests::frame;

    /// A writer of a recorded answer (a priming event, progress, then the
    /// response) at `pace`, and the body it writes into.
    fn answer_writer(pace: Pace, open_ended: bool) -> (Writer, mpsc::UnboundedReceiver<Bytes>) {
        let (out, events) = mpsc::unbounded_channel();
        let frames = vec![frame("0", true), frame("1", false), frame("2", false)];
        let writer = Writer {
            closing: Closing::new(),
            out,
            framer: Framer::new(frames, vec![0, 0, 0], pace, Instant::now()),
            log: None,
            answers: 1,
            answered: 0,
            open_ended,
            hung_up: false,
        };
        (writer, events)
    }

    const RESPONSE: &[u8] = br#"{"jsonrpc":"2.0","id":1,"result":{}}"#;
    const PROGRESS: &[u8] = br#"{"jsonrpc":"2.0","method":"notifications/progress","params":{}}"#;

    /// Every event in the body now, without letting any task run; and
    /// whether the body has ended.
    fn written(events: &mut mpsc::UnboundedReceiver<Bytes>) -> (Vec<String>, bool) {
        let mut seen = Vec::new();
        loop {
            match events.try_recv() {
                Ok(event) => seen.push(String::from_utf8(event.to_vec()).unwrap()),
                Err(mpsc::error::TryRecvError::Empty) => return (seen, false),
                Err(mpsc::error::TryRecvError::Disconnected) => return (seen, true),
            }
        }
    }

    #[tokio::test]
    async fn an_answer_played_already_is_in_the_body_and_ended_before_it_is_returned() {
        let (flow, sink) = Flow::open(flow::Spill::Nowhere);
        sink.events.send(PROGRESS.to_vec()).unwrap();
        sink.responses.send(RESPONSE.to_vec()).unwrap();
        drop(sink);
        let (mut writer, mut events) = answer_writer(Pace::Fast, false);
        assert!(writer.write_ready(flow).is_none());
        drop(writer);
        let (seen, ended) = written(&mut events);
        assert!(ended, "the body ends with the response");
        assert_eq!(seen.len(), 3, "{seen:?}");
        assert_eq!(seen[0], "data: \nid: 0\n\n", "priming first");
        assert!(
            seen[1].contains("notifications/progress") && seen[1].contains("id: 1\n"),
            "{seen:?}"
        );
        assert!(
            seen[2].contains("\"result\"") && seen[2].contains("id: 2\n"),
            "{seen:?}"
        );
    }

    #[tokio::test]
    async fn what_is_not_played_yet_is_left_to_the_background_writer() {
        let (flow, sink) = Flow::open(flow::Spill::Nowhere);
        sink.events.send(PROGRESS.to_vec()).unwrap();
        let (mut writer, mut events) = answer_writer(Pace::Fast, false);
        let flow = writer
            .write_ready(flow)
            .expect("the response is still to come");
        let (seen, ended) = written(&mut events);
        assert!(!ended);
        assert_eq!(seen.len(), 2, "priming and progress so far: {seen:?}");
        sink.responses.send(RESPONSE.to_vec()).unwrap();
        drop(sink);
        writer.run(flow).await;
        let (seen, ended) = written(&mut events);
        assert!(ended);
        assert_eq!(seen.len(), 1, "{seen:?}");
        assert!(
            seen[0].contains("\"result\"") && seen[0].contains("id: 2\n"),
            "{seen:?}"
        );
    }

    #[tokio::test]
    async fn paced_and_open_ended_answers_are_written_in_the_background() {
        let (flow, sink) = Flow::open(flow::Spill::Nowhere);
        sink.responses.send(RESPONSE.to_vec()).unwrap();
        drop(sink);
        let (mut writer, mut events) = answer_writer(Pace::Recorded, false);
        assert!(writer.write_ready(flow).is_some());
        assert_eq!(
            written(&mut events),
            (Vec::new(), false),
            "nothing before its delay"
        );

        let (flow, sink) = Flow::open(flow::Spill::Nowhere);
        drop(sink);
        let (mut writer, mut events) = answer_writer(Pace::Fast, true);
        assert!(writer.write_ready(flow).is_some(), "it stays open");
        let (seen, ended) = written(&mut events);
        assert!(!ended);
        assert_eq!(seen.len(), 1, "the priming event: {seen:?}");
    }
}
