//! Serving over a byte stream: stdio, or any in-process duplex.
//!
//! # Why a response can wait for the client to read
//!
//! Some clients handle notifications later than responses. The TypeScript
//! SDK (1.32) dispatches each notification in a microtask but settles a
//! response at once, removing the request's progress handler: progress
//! that arrives in the same read as its response is dropped. A live server
//! sends them apart in time; a replay writing them back to back would lose
//! them on most runs, and a fixed pause only on some.
//!
//! So, with [`Drain::UntilRead`], the writer meets the engine's barrier
//! (between an interaction's notifications and its response) by flushing
//! and then waiting until the kernel says nothing written is left unread
//! ([`Unread`]: a pipe, or the Unix socket Node spawns servers with). Then
//! the client's `read` has returned the notifications, and the response can
//! only come in a later one. That is the guarantee, with no extra pause:
//! Node hands each read's bytes to JavaScript in one callback and runs the
//! microtasks that callback queued before the next I/O callback, so every
//! notification handler has run before the response is even read. Clients
//! that handle messages in order (rmcp, the Python SDK) lose nothing
//! either way.
//!
//! Only responses that follow notifications wait; a plain request and
//! response is written as before. A client that stops reading holds a
//! response back for at most [`DRAIN_LIMIT`], then it is written anyway (a
//! warning says so, once): replay must not hang on a client that reads
//! only after it has written more. Where the kernel cannot tell (another
//! OS, a TCP socket) replay pauses [`BLIND_PAUSE`] instead, which helps but
//! guarantees nothing; for a file or a terminal it does not wait at all, as
//! nothing is reading concurrently (or a person is).

use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt, BufReader, BufWriter};
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinSet;
use tokio::time::Instant;

use super::handler::Handler;
use super::pace::Pace;
use super::sink::{BARRIER, Delivery, HANGUP, Sink};
use crate::wire::stdio::{LineReader, trim_line};
use crate::wire::unread::Unread;

/// The longest a response waits for the client to read the notifications
/// before it: far beyond any live client's stall, short enough that a
/// client that does not read until it has written more only slows down.
pub const DRAIN_LIMIT: Duration = Duration::from_secs(2);

/// How often the writer asks whether the client has read.
const DRAIN_POLL: Duration = Duration::from_millis(1);

/// The pause before such a response where the kernel cannot tell what the
/// client has read.
pub const BLIND_PAUSE: Duration = Duration::from_millis(10);

/// How to replay over a byte stream.
#[derive(Debug, Clone, Default)]
pub struct StdioConfig {
    /// Whether a response that follows notifications waits for the client
    /// to read them.
    pub drain: Drain,
    /// The timing of server messages: [`Pace::Recorded`] keeps the recorded
    /// delays of each interaction's `during` messages and response.
    pub pace: Pace,
}

impl StdioConfig {
    /// For this process's stdout: waits for the client to read when
    /// stdout is a pipe or a socket.
    pub fn stdout(pace: Pace) -> Self {
        let drain = match Unread::stdout() {
            Ok(probe) => Drain::UntilRead(Arc::new(probe)),
            Err(error) => {
                tracing::debug!("cannot probe stdout ({error}); responses are not held back");
                Drain::Never
            }
        };
        StdioConfig { drain, pace }
    }
}

/// Whether a response that follows notifications waits for the client to
/// read them (see the module's documentation).
#[derive(Debug, Clone, Default)]
pub enum Drain {
    /// Never: for in-process streams (a duplex has no kernel buffer to ask
    /// about, and the Rust clients on it handle messages in order).
    #[default]
    Never,
    /// Until the reader of this stream has read everything written.
    UntilRead(Arc<Unread>),
}

/// Serves `handler` over newline-delimited JSON until `input` closes and
/// every request in flight has been answered, writing at once.
pub async fn serve<R, W>(handler: Arc<dyn Handler>, input: R, output: W) -> std::io::Result<()>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin + Send + 'static,
{
    serve_with(handler, input, output, StdioConfig::default()).await
}

/// Serves `handler` like [`serve`], delivering as `config` says.
pub async fn serve_with<R, W>(
    handler: Arc<dyn Handler>,
    input: R,
    output: W,
    config: StdioConfig,
) -> std::io::Result<()>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let (tx, rx) = mpsc::unbounded_channel::<Vec<u8>>();
    let (stop, stopped) = oneshot::channel();
    let delivery = Delivery {
        barriers: matches!(config.drain, Drain::UntilRead(_)),
        pace: config.pace,
    };
    let drainer = Drainer::new(config.drain);
    let mut writer = tokio::spawn(write_messages(rx, stopped, output, drainer));
    let sink = Sink::ordered(tx, delivery);
    let mut tasks = JoinSet::new();
    Arc::clone(&handler).open(&sink, &mut tasks);
    let mut lines = LineReader::new(BufReader::with_capacity(64 * 1024, input));
    loop {
        // The writer ends before the input only when it hung up (or
        // failed): the server is gone, and reads nothing more.
        let line = tokio::select! {
            biased;
            written = &mut writer => {
                handler.client_gone();
                tasks.shutdown().await;
                return written.map_err(std::io::Error::other)?;
            }
            line = lines.next_line() => line?,
        };
        let Some(line) = line else { break };
        let line = trim_line(line);
        if line.is_empty() {
            continue;
        }
        super::handle_line(&handler, line, &sink, &mut tasks);
        while tasks.try_join_next().is_some() {}
    }
    handler.client_gone();
    while tasks.join_next().await.is_some() {}
    // Something may still hold a sender (an upstream keeps one for
    // unprompted messages): tell the writer to drain and stop.
    drop(sink);
    let _ = stop.send(());
    writer.await.map_err(std::io::Error::other)??;
    Ok(())
}

/// Writes each message as one line, flushing whenever the queue runs dry so
/// pipelined answers share a write, and at each barrier, where it waits
/// for the client to read. Stops when every sender is gone, or when told
/// to, after writing what is queued; at a [`HANGUP`], at once, closing
/// the output.
async fn write_messages<W: AsyncWrite + Unpin>(
    mut rx: mpsc::UnboundedReceiver<Vec<u8>>,
    mut stop: oneshot::Receiver<()>,
    output: W,
    mut drainer: Drainer,
) -> std::io::Result<()> {
    let mut out = BufWriter::with_capacity(64 * 1024, output);
    let mut stopping = false;
    loop {
        let first = if stopping {
            rx.try_recv().ok()
        } else {
            tokio::select! {
                biased;
                message = rx.recv() => message,
                _ = &mut stop => {
                    stopping = true;
                    rx.try_recv().ok()
                }
            }
        };
        let Some(first) = first else { break };
        let mut next = Some(first);
        while let Some(message) = next {
            if message == BARRIER {
                out.flush().await?;
                drainer.wait().await;
            } else if message == HANGUP {
                out.flush().await?;
                return out.shutdown().await.or(Ok(()));
            } else {
                out.write_all(&message).await?;
                out.write_all(b"\n").await?;
            }
            next = rx.try_recv().ok();
        }
        out.flush().await?;
    }
    out.shutdown().await.or(Ok(()))
}

/// Waits at barriers for the client to read.
#[derive(Debug)]
struct Drainer {
    probe: Option<Arc<Unread>>,
    warned: bool,
}

impl Drainer {
    fn new(drain: Drain) -> Self {
        let probe = match drain {
            Drain::Never => None,
            Drain::UntilRead(probe) => Some(probe),
        };
        Drainer {
            probe,
            warned: false,
        }
    }

    /// Returns once the client has read everything written (flushed
    /// before), it has gone, or [`DRAIN_LIMIT`] has passed.
    async fn wait(&mut self) {
        let Some(probe) = &self.probe else { return };
        if !probe.can_tell() {
            if probe.is_stream() {
                tokio::time::sleep(BLIND_PAUSE).await;
            }
            return;
        }
        let deadline = Instant::now() + DRAIN_LIMIT;
        loop {
            match probe.bytes() {
                Some(0) | None => return,
                Some(_) if probe.reader_gone() => return,
                Some(unread) if Instant::now() >= deadline => {
                    if !std::mem::replace(&mut self.warned, true) {
                        tracing::warn!(
                            "the client left {unread} byte(s) unread for {} s; writing the \
                             response anyway (a client that handles notifications after \
                             responses may miss some)",
                            DRAIN_LIMIT.as_secs()
                        );
                    }
                    return;
                }
                Some(_) => tokio::time::sleep(DRAIN_POLL).await,
            }
        }
    }
}
