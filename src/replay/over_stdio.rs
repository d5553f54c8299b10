//! Replay over a byte stream (stdio, an in-process duplex): the engine
//! served by [`crate::server`]'s stdio server, and the replay's summary.

use std::sync::Arc;

use tokio::io::{AsyncRead, AsyncWrite};

use super::engine::{Engine, Summary};
use crate::server::StdioConfig;

/// Serves `engine` over newline-delimited JSON until `input` closes and
/// every request in flight has been answered, writing at once.
pub async fn serve<R, W>(engine: Arc<Engine>, input: R, output: W) -> std::io::Result<Summary>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin + Send + 'static,
{
    serve_with(engine, input, output, StdioConfig::default()).await
}

/// Serves `engine` like [`serve`], delivering as `config` says.
pub async fn serve_with<R, W>(
    engine: Arc<Engine>,
    input: R,
    output: W,
    config: StdioConfig,
) -> std::io::Result<Summary>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin + Send + 'static,
{
    crate::server::serve_with(Arc::clone(&engine) as _, input, output, config).await?;
    Ok(engine.summary())
}
