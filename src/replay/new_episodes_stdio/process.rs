//! The stdio server new episodes go to, as an async child process:
//! started on the first miss, greeted with the legacy handshake when the
//! session needs one, its stdin written and its stdout read on tasks of
//! their own, and, once it is gone, everything still waiting for it
//! answered with an error.
//!
//! Not a second copy of `crate::client::StdioLive`, which is a blocking
//! client sending one message at a time: this one serves many requests in
//! flight at once, for an engine that never blocks. It starts the process
//! with `crate::client::spawn_async` and says `crate::client::handshake`.

use std::sync::atomic::Ordering;
use std::sync::{Arc, Weak};

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{ChildStdin, ChildStdout};
use tokio::sync::{mpsc, oneshot, watch};
use tokio::time::timeout;

use super::{
    EXIT_STATUS_TIMEOUT, HANDSHAKE_TIMEOUT, InFlight, Inner, SETTLE_TIMEOUT, Started,
    answer_upstream_failed, lock, with_id,
};
use crate::client::{self, handshake};
use crate::jsonrpc::{self, Kind};
use crate::protocol::{self, Era};
use crate::redact;
use crate::replay::upstream::UpstreamFailure;
use crate::server::Sink;

impl Inner {
    pub(super) async fn ensure_started(self: &Arc<Self>, first: &Value) -> Started {
        let mut outcome = {
            let mut start = lock(&self.start);
            start
                .get_or_insert_with(|| {
                    let (tell, outcome) = watch::channel(None);
                    let inner = Arc::clone(self);
                    let first = first.clone();
                    tokio::spawn(async move {
                        let result = inner.start_server(&first).await;
                        let _ = tell.send(Some(result));
                    });
                    outcome
                })
                .clone()
        };
        let outcome = outcome.wait_for(Option::is_some).await;
        match outcome.as_deref() {
            Ok(Some(result)) => result.clone(),
            _ => Err(UpstreamFailure::Unexpected),
        }
    }

    async fn start_server(self: &Arc<Self>, first: &Value) -> Started {
        let outcome = self.spawn_and_initialise(first).await;
        if let Err(reason) = &outcome {
            let shown = crate::error_chain::chain(reason);
            tracing::warn!("the server for new episodes failed: {shown}");
            self.state().failure.get_or_insert_with(|| reason.clone());
        }
        outcome
    }

    async fn spawn_and_initialise(self: &Arc<Self>, first: &Value) -> Started {
        let mut child = client::spawn_async(&self.command, self.dir.as_deref())?;
        let program = redact::mask_command(&self.command[..1]).join(" ");
        tracing::info!("started `{program}` for new episodes");
        let stdin = child.stdin.take().expect("stdin is piped");
        let stdout = child.stdout.take().expect("stdout is piped");
        *self.child.lock().await = Some(child);
        self.started.store(true, Ordering::SeqCst);
        let (to_server, lines) = mpsc::unbounded_channel();
        tokio::spawn(write_lines(stdin, lines));
        let reader = tokio::spawn(read_lines(Arc::downgrade(self), stdout));
        {
            let mut state = self.state();
            state.to_server = Some(to_server);
            state.reader = Some(reader);
        }
        if self.needs_handshake(first) {
            self.initialise().await?;
        }
        self.settle().await;
        self.state().handshaking = false;
        Ok(())
    }

    /// Waits until the server has sent the session traffic the cassette
    /// recorded, so that none of it lands in the first forwarded request.
    async fn settle(&self) {
        let deadline = tokio::time::Instant::now() + SETTLE_TIMEOUT;
        loop {
            let notified = self.settled.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            {
                let state = self.state();
                if state.script.is_done() || state.failure.is_some() {
                    return;
                }
            }
            if tokio::time::timeout_at(deadline, notified).await.is_err() {
                let pending = self.state().script.pending().join(", ");
                tracing::info!(
                    "the server for new episodes did not send what the cassette recorded after its handshake ({pending}) within {} s; going on",
                    SETTLE_TIMEOUT.as_secs()
                );
                return;
            }
        }
    }

    fn needs_handshake(&self, first: &Value) -> bool {
        match self.era {
            Era::Legacy => true,
            Era::Modern => false,
            Era::Unknown => {
                lock(&self.initialize).is_some()
                    || protocol::declared_version(first).map(Era::of_version) != Some(Era::Modern)
            }
        }
    }

    /// The legacy handshake, with the client's `initialize` under an id of
    /// ours; nothing of it is recorded.
    async fn initialise(&self) -> Started {
        let initialize = lock(&self.initialize).clone().unwrap_or_else(|| {
            handshake::initialize(json!(0), handshake::client_info("mcpcassette"))
        });
        let (answer, answered) = oneshot::channel();
        {
            let mut state = self.state();
            let id = Value::String(format!("mcpcassette-upstream-{}", state.take_id()));
            state.handshake = Some((jsonrpc::id_key(&id), answer));
            state.send(&with_id(initialize, id));
        }
        let response = match timeout(HANDSHAKE_TIMEOUT, answered).await {
            Ok(Ok(response)) => response,
            Ok(Err(_)) => {
                let failure = self.state().failure.clone();
                return Err(failure.unwrap_or(UpstreamFailure::StoppedInHandshake));
            }
            Err(_) => {
                self.state().handshake = None;
                return Err(UpstreamFailure::HandshakeTimeout(HANDSHAKE_TIMEOUT));
            }
        };
        if let Some(error) = response.get("error") {
            return Err(UpstreamFailure::InitializeRejected(error.clone()));
        }
        self.state().send(&handshake::initialized());
        Ok(())
    }

    /// One line from the server's stdout.
    fn server_line(&self, line: &[u8]) {
        let message = match serde_json::from_slice::<Value>(line) {
            Ok(message) => message,
            Err(e) => {
                tracing::warn!("the server for new episodes wrote a line that is not JSON: {e}");
                return;
            }
        };
        let messages = match message {
            Value::Array(batch) => batch,
            message => vec![message],
        };
        let mut state = self.state();
        for message in messages {
            let kind = jsonrpc::classify(&message);
            if state.handshaking && matches!(kind, Ok(Kind::Notification | Kind::Request)) {
                state.session_message(message);
                self.settled.notify_waiters();
                continue;
            }
            match kind {
                Ok(Kind::Response) => state.server_response(message),
                Ok(Kind::Notification) => state.server_notification(message),
                Ok(Kind::Request) => state.server_request(message),
                Err(e) => {
                    tracing::warn!("the server for new episodes sent an invalid message: {e}")
                }
            }
        }
    }

    /// Why the server's stdout closed.
    async fn exit_reason(&self) -> UpstreamFailure {
        let mut child = self.child.lock().await;
        let Some(child) = child.as_mut() else {
            return UpstreamFailure::Stopped;
        };
        match timeout(EXIT_STATUS_TIMEOUT, child.wait()).await {
            Ok(Ok(status)) => UpstreamFailure::Exited(status),
            Ok(Err(e)) => UpstreamFailure::Unwaitable(Arc::new(e)),
            Err(_) => UpstreamFailure::StdoutClosed,
        }
    }

    /// The server is gone: everything waiting for it is answered with an
    /// error, and later requests will be too.
    fn fail_all(&self, reason: UpstreamFailure) {
        let mut state = self.state();
        let reason = state.failure.get_or_insert(reason).clone();
        // Dropping the waiter fails a handshake in progress.
        state.handshake = None;
        state.to_server = None;
        state.by_live.clear();
        state.relayed.clear();
        state.relayed_by_server.clear();
        let mut flights: Vec<InFlight> = state.in_flight.drain().map(|(_, f)| f).collect();
        flights.sort_by_key(|f| f.seq);
        for flight in flights {
            let shown = crate::error_chain::chain(&reason);
            tracing::warn!(id = %flight.live_key, "answering a forwarded request with an error: {shown}");
            self.respond_failure(&flight.sink, flight.live_id, &reason);
        }
    }

    /// Answers a request the server cannot with [`UPSTREAM_FAILED`].
    pub(super) fn respond_failure(&self, sink: &Sink, id: Value, reason: &UpstreamFailure) {
        self.failed.fetch_add(1, Ordering::SeqCst);
        answer_upstream_failed(sink, id, reason);
    }
}

/// Writes lines to the server until the channel closes, then closes its
/// stdin.
async fn write_lines(mut stdin: ChildStdin, mut lines: mpsc::UnboundedReceiver<Vec<u8>>) {
    while let Some(mut line) = lines.recv().await {
        line.push(b'\n');
        if stdin.write_all(&line).await.is_err() || stdin.flush().await.is_err() {
            break;
        }
    }
}

/// Reads the server's stdout until it closes, then fails whatever still
/// waits for the server.
async fn read_lines(inner: Weak<Inner>, stdout: ChildStdout) {
    let mut input = BufReader::new(stdout);
    let mut line = Vec::new();
    loop {
        line.clear();
        match input.read_until(b'\n', &mut line).await {
            Ok(0) => break,
            Ok(_) => {}
            Err(e) => {
                tracing::warn!("reading the server for new episodes: {e}");
                break;
            }
        }
        let trimmed = line.trim_ascii();
        if trimmed.is_empty() {
            continue;
        }
        let Some(inner) = inner.upgrade() else {
            return;
        };
        inner.server_line(trimmed);
    }
    let Some(inner) = inner.upgrade() else {
        return;
    };
    let reason = inner.exit_reason().await;
    inner.fail_all(reason);
}
