//! A [`Handler`] served as a Streamable HTTP endpoint.
//!
//! The handler (replay's engine, a mock) answers as over stdio; this
//! module only decides how each answer travels. An interaction
//! recorded over HTTP is answered the way it was (status, JSON or SSE, SSE
//! framing, pacing); one recorded over stdio is answered the way a typical
//! server would, so any cassette replays over HTTP.
//!
//! Legacy cassettes (2025-03-26 … 2025-11-25) get sessions, the GET stream,
//! DELETE and resumption; modern ones (2026-07-28) are POST-only, stateless,
//! and have their `Mcp-Method`/`Mcp-Name` headers checked. Cassettes
//! recorded over the 2024-11-05 HTTP+SSE transport are served over it.
//! Each new session (legacy: `initialize`; modern: `server/discover`)
//! replays the cassette from the top on a fork of the engine, unless
//! [`SessionMode::Shared`] says otherwise.
//!
//! A POSTed message in an out-of-the-ordinary situation (no session, an
//! unknown or ended one, a foreign Origin or Host, `Mcp-*` headers that
//! disagree with the body, an unknown `MCP-Protocol-Version`; judged by the
//! same functions the recording proxy used, `crate::wire::situation`) is
//! answered by a recording made in the same situation, as the recorded
//! server answered it; only without one does replay apply the
//! specification's rule (400, 404, 403, 400 with -32020).

// Refusals are whole HTTP responses, returned as errors once per request:
// boxing them would buy nothing.
#![allow(clippy::result_large_err)]

mod answer;
mod discover;
mod flow;
mod guard;
mod legacy_sse;
mod modern;
mod oauth;
mod plain;
mod plan;
mod post;
mod posted;
mod reply;
mod route;
mod server;
mod session;
mod sse;
mod sse_sessions;
mod stream;

use crate::cassette::Auth;

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinSet;

pub use super::pace::Pace;
use crate::server::Handler;
use server::Server;

/// How long open connections get to finish after shutdown is asked for.
const GRACE: Duration = Duration::from_secs(5);

/// Where and how to serve.
#[derive(Debug, Clone)]
pub struct HttpReplayConfig {
    /// The address to bind (`127.0.0.1:0` picks a free port).
    pub listen: SocketAddr,
    /// Whether SSE events keep their recorded timing.
    pub pace: Pace,
    /// Whether each client session replays the cassette from the top.
    pub sessions: SessionMode,
    /// What a request must show to be served.
    pub auth: Auth,
}

impl HttpReplayConfig {
    /// Serving on `listen`, fast, each session on its own.
    pub fn new(listen: SocketAddr) -> Self {
        HttpReplayConfig {
            listen,
            pace: Pace::default(),
            sessions: SessionMode::default(),
            auth: Auth::default(),
        }
    }
}

/// What a new client session sees of the cassette.
///
/// A session is what the transport calls one: in the legacy era, an
/// `Mcp-Session-Id` handed out by a new `initialize` (or, over 2024-11-05
/// HTTP+SSE, a new GET on the SSE endpoint). The 2026-07-28 era has no
/// session ids: a `server/discover` after other requests begins the next
/// client's session (clients running at the same time are not told apart).
/// Legacy requests that name no live session, and every request to a
/// legacy server that handed out none, share one replay state.
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum SessionMode {
    /// Each session starts from the top, as against a freshly started
    /// server: its own answer counts, sequential position and pending
    /// server requests. A recorded interaction counts as unused only when
    /// no session used it.
    #[default]
    Isolated,
    /// Every session draws from one replay state: an answer given to one
    /// session is not given again to another.
    Shared,
}

/// Serves `handler` over Streamable HTTP until `shutdown` resolves.
///
/// `ready` gets the bound address (useful with port 0) once connections are
/// accepted. On shutdown, open SSE streams end, connections get a short
/// grace period, and every session's handler is told the client is gone.
pub async fn serve_http(
    handler: Arc<dyn Handler>,
    config: HttpReplayConfig,
    ready: impl FnOnce(SocketAddr) + Send,
    shutdown: impl Future<Output = ()> + Send,
) -> std::io::Result<()> {
    let listener = TcpListener::bind(config.listen).await?;
    let local = listener.local_addr()?;
    let server = Arc::new(Server::new(handler, &config, local));
    ready(local);
    let mut connections = JoinSet::new();
    tokio::pin!(shutdown);
    loop {
        tokio::select! {
            () = &mut shutdown => break,
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => {
                    connections.spawn(serve_connection(stream, Arc::clone(&server)));
                }
                // Out of descriptors, say: let connections finish first.
                Err(error) => {
                    tracing::warn!("accepting a connection failed: {error}");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
            },
            Some(_) = connections.join_next(), if !connections.is_empty() => {}
        }
    }
    drop(listener);
    server.close();
    let drained = tokio::time::timeout(GRACE, async {
        while connections.join_next().await.is_some() {}
    });
    if drained.await.is_err() {
        connections.shutdown().await;
    }
    server.client_gone();
    Ok(())
}

/// Serves one TCP connection, finishing its current exchange on shutdown.
async fn serve_connection(stream: TcpStream, server: Arc<Server>) {
    // Answers go out in several small writes (headers, SSE events); with
    // Nagle's algorithm on, a keep-alive client waits ~40 ms for each.
    let _ = stream.set_nodelay(true);
    let closed = server.closed();
    let handler = Arc::clone(&server);
    let service = service_fn(move |request| {
        let server = Arc::clone(&handler);
        async move {
            let response = route::route(&server, request).await;
            match response.extensions().get::<reply::Hangup>() {
                Some(hangup) => Err(*hangup),
                None => Ok(response),
            }
        }
    });
    let connection = http1::Builder::new().serve_connection(TokioIo::new(stream), service);
    tokio::pin!(connection);
    let outcome = tokio::select! {
        outcome = connection.as_mut() => outcome,
        () = closed => {
            connection.as_mut().graceful_shutdown();
            connection.await
        }
    };
    if let Err(error) = outcome {
        tracing::debug!("HTTP connection ended: {error}");
    }
}
