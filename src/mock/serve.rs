//! Serving a mock: each connection is a [`Handler`] of its own, carried by
//! the very transports replay uses (stdio, in-process streams, Streamable
//! HTTP).

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;

use tokio::io::{AsyncRead, AsyncWrite, DuplexStream};

use super::link::Link;
use super::server::MockServer;
use crate::server::Handler;
use crate::server::http::HttpReplayConfig;

/// The buffer of [`MockServer::duplex`] streams.
const DUPLEX_BUFFER: usize = 64 * 1024;

impl MockServer {
    /// A handler answering from this mock, for one connection (or one
    /// HTTP server, which forks one per session): for transports of your
    /// own built on [`crate::server::serve_stdio`] or
    /// [`crate::server::http::serve_http`]. Each keeps its own handshake
    /// state.
    pub fn handler(&self) -> Arc<dyn Handler> {
        Link::new(self.clone())
    }

    /// Serves one client over newline-delimited JSON on any byte stream,
    /// until `reader` closes and every answer in flight is written
    /// (pending `never` answers are dropped then).
    ///
    /// # Errors
    ///
    /// Reading or writing fails.
    pub async fn serve<R, W>(&self, reader: R, writer: W) -> std::io::Result<()>
    where
        R: AsyncRead + Unpin,
        W: AsyncWrite + Unpin + Send + 'static,
    {
        crate::server::serve_stdio(self.handler(), reader, writer).await
    }

    /// The client's end of an in-process connection (e.g. an `rmcp`
    /// transport); the mock serves the other end on a spawned task until
    /// the client drops its end. Needs a Tokio runtime.
    pub fn duplex(&self) -> DuplexStream {
        let (client, server) = tokio::io::duplex(DUPLEX_BUFFER);
        let (reader, writer) = tokio::io::split(server);
        let mock = self.clone();
        tokio::spawn(async move {
            if let Err(error) = mock.serve(reader, writer).await {
                tracing::debug!("mock connection ended: {error}");
            }
        });
        client
    }

    /// Serves one client on this process's stdin and stdout.
    ///
    /// # Errors
    ///
    /// Reading or writing fails.
    pub async fn serve_stdio(&self) -> std::io::Result<()> {
        let (stdin, stdout) = crate::wire::stdio::process_stdio();
        self.serve(stdin, stdout).await
    }

    /// Serves Streamable HTTP at `/mcp` on `listen` until `shutdown`
    /// resolves: legacy clients get sessions (and list_changed on their GET
    /// stream), modern ones are served statelessly (and get notifications
    /// on `subscriptions/listen` streams). `ready` gets the bound address
    /// (useful with port 0).
    ///
    /// # Errors
    ///
    /// The address cannot be bound.
    pub async fn serve_http(
        &self,
        listen: SocketAddr,
        ready: impl FnOnce(SocketAddr) + Send,
        shutdown: impl Future<Output = ()> + Send,
    ) -> std::io::Result<()> {
        let config = HttpReplayConfig::new(listen);
        crate::server::http::serve_http(self.handler(), config, ready, shutdown).await
    }
}
