//! Writing a POST's answer from the engine's messages: a JSON body once the
//! response is there, or an SSE stream written as messages arrive.

use std::sync::Arc;

use bytes::Bytes;
use http::StatusCode;
use tokio::sync::mpsc;
use tokio::time::Instant;

use super::flow::Flow;
use super::modern;
use super::plan::{Plan, Shape};
use super::reply::{self, Response};
use super::server::Server;
use super::session::{Session, StreamLog};
use super::sse::{self, FrameSpec, Framer};

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

/// Starts an SSE answer written in the background as the engine plays.
fn stream(
    server: &Arc<Server>,
    flow: Flow,
    plan: Plan,
    expect: Expect,
    session: Option<Arc<Session>>,
    start: Instant,
) -> Response {
    let (out, events) = mpsc::unbounded_channel();
    let writer = Writer {
        server: Arc::clone(server),
        out,
        framer: Framer::new(plan.frames, plan.delays, server.pace, start),
        log: session.map(|s| s.stream_log()),
    };
    tokio::spawn(writer.run(flow, expect.answers, plan.open_ended));
    reply::sse(plan.status, events, server.closed())
}

/// Writes one SSE answer.
struct Writer {
    server: Arc<Server>,
    /// The response body; closed when the client goes away.
    out: mpsc::UnboundedSender<Bytes>,
    framer: Framer,
    /// Where events with ids are kept for resumption.
    log: Option<Arc<StreamLog>>,
}

impl Writer {
    /// Writes events then the response(s), and ends the stream; an
    /// open-ended answer stays open. A client that goes away cancels the
    /// plays (dropping `flow` aborts them).
    async fn run(mut self, mut flow: Flow, answers: usize, open_ended: bool) {
        let closed = self.server.closed();
        tokio::pin!(closed);
        let mut answered = 0;
        loop {
            while let Some(priming) = self.framer.take_priming() {
                if !self.write(&priming, None).await {
                    return;
                }
            }
            let message = tokio::select! {
                message = flow.next() => message,
                () = self.out.closed() => return,
                () = &mut closed => return,
            };
            let Some(message) = message else { break };
            let last = message.is_response && answered + 1 >= answers && !open_ended;
            let spec = self.framer.for_message(last);
            if !self.write(&spec, Some(message.bytes)).await {
                return;
            }
            answered += usize::from(message.is_response);
            if last {
                flow.drain(self.server.closed());
                return;
            }
        }
        if open_ended {
            tokio::select! {
                () = self.out.closed() => {}
                () = &mut closed => {}
            }
        }
    }

    /// Writes one event when it is due; false once the client is gone.
    async fn write(&mut self, spec: &FrameSpec, data: Option<Vec<u8>>) -> bool {
        if let Some(due) = self.framer.next_due() {
            tokio::select! {
                () = tokio::time::sleep_until(due) => {}
                () = self.out.closed() => return false,
            }
        }
        let event = sse::encode(spec, data);
        if let (Some(log), Some(id)) = (&self.log, &spec.id) {
            log.record(id, event.clone());
        }
        self.out.send(event).is_ok()
    }
}
