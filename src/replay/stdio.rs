//! Replay over a byte stream: stdio, or any in-process duplex.

use std::sync::Arc;

use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt, BufReader, BufWriter};
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinSet;

use super::engine::{Engine, Sink, Summary};
use crate::transport::stdio::{LineReader, trim_line};

/// Serves `engine` over newline-delimited JSON until `input` closes and
/// every request in flight has been answered.
pub async fn serve<R, W>(engine: Arc<Engine>, input: R, output: W) -> std::io::Result<Summary>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let (tx, rx) = mpsc::unbounded_channel::<Vec<u8>>();
    let (stop, stopped) = oneshot::channel();
    let writer = tokio::spawn(write_messages(rx, stopped, output));
    let sink = Sink::single(tx);
    let mut tasks = JoinSet::new();
    engine.open(&sink, &mut tasks);
    let mut lines = LineReader::new(BufReader::with_capacity(64 * 1024, input));
    while let Some(line) = lines.next_line().await? {
        let line = trim_line(line);
        if line.is_empty() {
            continue;
        }
        engine.handle_line(line, &sink, &mut tasks);
        while tasks.try_join_next().is_some() {}
    }
    engine.client_gone();
    while tasks.join_next().await.is_some() {}
    // Something may still hold a sender (an upstream keeps one for
    // unprompted messages): tell the writer to drain and stop.
    drop(sink);
    let _ = stop.send(());
    writer.await.map_err(std::io::Error::other)??;
    Ok(engine.summary())
}

/// Writes each message as one line, flushing whenever the queue runs dry so
/// pipelined answers share a write. Stops when every sender is gone, or
/// when told to, after writing what is queued.
async fn write_messages<W: AsyncWrite + Unpin>(
    mut rx: mpsc::UnboundedReceiver<Vec<u8>>,
    mut stop: oneshot::Receiver<()>,
    output: W,
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
            out.write_all(&message).await?;
            out.write_all(b"\n").await?;
            next = rx.try_recv().ok();
        }
        out.flush().await?;
    }
    out.shutdown().await.or(Ok(()))
}
