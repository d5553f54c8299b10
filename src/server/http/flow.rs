//! The engine's output for one HTTP request: a sink whose messages arrive
//! here in the order the handler sent them, told apart into events and
//! responses, and a place for what does not belong to the request's answer.

use std::future::Future;
use std::sync::Arc;

use bytes::Bytes;
use tokio::sync::{mpsc, watch};
use tokio::task::JoinSet;

use super::session::Session;
use super::sse;
use crate::server::Sink;
use crate::server::sink::SessionStream;
use crate::server::sink::is_response;

/// Server shutdown, as something every stream can wait for.
#[derive(Debug, Clone)]
pub(super) struct Closing(Arc<watch::Sender<bool>>);

impl Closing {
    pub(super) fn new() -> Self {
        Closing(Arc::new(watch::Sender::new(false)))
    }

    /// Starts shutdown.
    pub(super) fn close(&self) {
        self.0.send_replace(true);
    }

    /// Resolves once shutdown has started.
    pub(super) fn closed(&self) -> impl Future<Output = ()> + Send + 'static {
        let mut watching = self.0.subscribe();
        async move {
            let _ = watching.wait_for(|closing| *closing).await;
        }
    }
}

/// Where server messages go that are not part of a request's answer: the
/// session's GET stream (legacy), the one stream of the 2024-11-05
/// HTTP+SSE transport, or nowhere (modern, or no session).
#[derive(Debug, Clone)]
pub(super) enum Spill {
    Session(Arc<Session>),
    Stream(mpsc::UnboundedSender<Bytes>),
    Nowhere,
}

impl Spill {
    pub(super) fn send(&self, message: Vec<u8>) {
        if message == crate::server::HANGUP {
            // The answer it ended is gone; nothing to pass on.
            return;
        }
        match self {
            Spill::Session(session) => session.push(message),
            Spill::Stream(stream) => {
                let _ = stream.send(sse::encode(&sse::message_frame(), Some(message)));
            }
            Spill::Nowhere => {
                tracing::debug!("no stream for a server message outside any answer; dropped");
            }
        }
    }
}

/// One message from the handler.
#[derive(Debug)]
pub(super) struct Message {
    pub bytes: Vec<u8>,
    /// A response (no `method`), as opposed to a notification or a
    /// server-to-client request.
    pub is_response: bool,
}

/// The handler has not sent its next message yet.
#[derive(Debug)]
pub(super) struct NotYet;

/// The engine's output for one request, and the plays it started.
#[derive(Debug)]
pub(super) struct Flow {
    messages: mpsc::UnboundedReceiver<Vec<u8>>,
    /// Plays waiting on the client; dropping them cancels them.
    pub tasks: JoinSet<()>,
    spill: Spill,
}

impl Flow {
    /// A flow and the sink to hand the handler. One channel carries both
    /// events and responses so that their order survives.
    pub(super) fn open(spill: Spill) -> (Flow, Sink) {
        let (tx, messages) = mpsc::unbounded_channel();
        let mut sink = Sink::single(tx);
        if let Spill::Session(session) = &spill {
            let session = Arc::clone(session);
            sink = sink.with_session(SessionStream::new(move |message, frame| {
                session.push_framed(message, frame);
            }));
        }
        let flow = Flow {
            messages,
            tasks: JoinSet::new(),
            spill,
        };
        (flow, sink)
    }

    /// Redirects what spills (to a session created by this very request).
    pub(super) fn set_spill(&mut self, spill: Spill) {
        self.spill = spill;
    }

    /// The next message; `None` once the handler has nothing more to send.
    pub(super) async fn next(&mut self) -> Option<Message> {
        let bytes = self.messages.recv().await?;
        let is_response = is_response(&bytes);
        Some(Message { bytes, is_response })
    }

    /// The next message if the handler has sent it already; `Ok(None)`
    /// once it has nothing more to send.
    pub(super) fn try_next(&mut self) -> Result<Option<Message>, NotYet> {
        match self.messages.try_recv() {
            Ok(bytes) => {
                let is_response = is_response(&bytes);
                Ok(Some(Message { bytes, is_response }))
            }
            Err(mpsc::error::TryRecvError::Disconnected) => Ok(None),
            Err(mpsc::error::TryRecvError::Empty) => Err(NotYet),
        }
    }

    /// Sends a message to where spilled messages go.
    pub(super) fn spill(&self, message: Vec<u8>) {
        self.spill.send(message);
    }

    /// Hands whatever the handler still sends (`after` events, answers to
    /// later client replies) to the spill, in the background, keeping the
    /// plays alive until they end or the server shuts down.
    pub(super) fn drain(mut self, closed: impl Future<Output = ()> + Send + 'static) {
        if self.tasks.is_empty() && self.messages.is_closed() && self.messages.is_empty() {
            return;
        }
        tokio::spawn(async move {
            tokio::pin!(closed);
            loop {
                tokio::select! {
                    biased;
                    message = self.messages.recv() => match message {
                        Some(message) => self.spill.send(message),
                        None => break,
                    },
                    () = &mut closed => break,
                }
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn responses_are_told_from_events() {
        assert!(is_response(br#"{"jsonrpc":"2.0","id":1,"result":{}}"#));
        assert!(is_response(
            br#"{"jsonrpc":"2.0","id":1,"error":{"code":1}}"#
        ));
        assert!(!is_response(
            br#"{"jsonrpc":"2.0","method":"notifications/progress","params":{}}"#
        ));
        assert!(!is_response(
            br#"{"jsonrpc":"2.0","id":0,"method":"roots/list"}"#
        ));
    }

    #[tokio::test]
    async fn order_survives_and_the_rest_spills() {
        let session = super::super::session::Sessions::default()
            .create(super::super::session::test_handler());
        let (mut flow, sink) = Flow::open(Spill::Session(Arc::clone(&session)));
        sink.events.send(br#"{"method":"a"}"#.to_vec()).unwrap();
        sink.responses
            .send(br#"{"id":1,"result":1}"#.to_vec())
            .unwrap();
        sink.events.send(br#"{"method":"after"}"#.to_vec()).unwrap();
        drop(sink);
        assert!(!flow.next().await.unwrap().is_response);
        assert!(flow.next().await.unwrap().is_response);
        let closing = Closing::new();
        flow.drain(closing.closed());
        let mut stream = session.open(None).unwrap();
        let event = tokio::time::timeout(std::time::Duration::from_secs(5), stream.recv())
            .await
            .unwrap()
            .unwrap();
        assert!(std::str::from_utf8(&event).unwrap().contains("after"));
    }
}
