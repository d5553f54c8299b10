//! Recording a Streamable HTTP (or 2024-11-05 HTTP+SSE) server: a reverse
//! proxy that forwards every request to the upstream and every answer back,
//! frame by frame, unchanged, and files a copy of what passes into a
//! cassette.
//!
//! What is recorded where:
//! - Only MCP traffic: requests to the endpoint (the upstream URL's path)
//!   and, for HTTP+SSE, to the announced POST endpoint. Anything else (an
//!   OAuth endpoint beside it, say) is forwarded and never recorded.
//! - POST bodies are client messages (a batch is several); JSON answers and
//!   the events of SSE answers are server messages, filed by the same
//!   [`Builder`](crate::cassette::Builder) as stdio, in the order seen. A
//!   client message is recorded before it is forwarded, an SSE event before
//!   it is passed on.
//! - Each interaction a POST opened gets an `http` exchange: status, media
//!   type, whether the request carried a session id and the answer had one,
//!   a body that is not a JSON-RPC answer (an error page; at most 64 KiB),
//!   and the message's situation when it was out of the ordinary (a missing,
//!   never issued or ended session, a foreign Origin or Host, `Mcp-*`
//!   headers that disagree with the body, an unknown
//!   `MCP-Protocol-Version`), judged by the same functions replay uses
//!   (`crate::wire::situation`). For that the proxy keeps the session ids
//!   the upstream issued and those a 2xx to DELETE ended. SSE framing and
//!   delays go on the POST's first interaction only (one request, in
//!   practice; every message of a batch gets the status). An event without
//!   a message (no data, or empty data) is a `priming` frame.
//! - A request whose JSON answer or HTTP error ended without its response
//!   stays without one, and later traffic is not filed under it. One whose
//!   SSE stream ended without it stays in flight: the answer may come on a
//!   resumed stream.
//! - Messages on a GET stream are server messages too: they land in
//!   `during` of a request in flight, or `after` the last client message,
//!   and that interaction's `http.get_stream` notes that they came on the
//!   GET stream and how they were framed there (the stream's priming event
//!   goes into the transport's `behaviour`). The status of the first GET and of the
//!   first DELETE on the endpoint made in the ordinary situation (a live
//!   session where there are sessions, from loopback) go into the
//!   transport's `behaviour`.
//! - An SSE stream on the endpoint whose first event is `event: endpoint`
//!   makes the cassette an HTTP+SSE one; an absolute announced URL is
//!   rewritten to point at the proxy (the one change the proxy ever makes
//!   to a body; the stream is held back until that first event).
//! - The client's headers are forwarded but for hop-by-hop ones and `Host`,
//!   which becomes the upstream's; a foreign `Host` (neither loopback nor
//!   the proxy's address) is forwarded as sent, so that the upstream's
//!   DNS-rebinding protection sees it.
//! - No header is stored. Session ids (and the query values of an
//!   announced HTTP+SSE endpoint) are masked wherever they would show: SSE
//!   ids, kept bodies, and messages that repeat them. The URL has its
//!   secrets masked. While
//!   recording (or observing), `Accept-Encoding` is not forwarded, so
//!   answers arrive readable.
//!
//! The journal holds the messages and, once each answer has ended, its
//! interactions' `http` exchanges (and `behaviour` when it changes): a
//! cassette recovered from it answers over HTTP as the finished one would.

pub(crate) mod credentials;
mod endpoint;
mod forward;
mod oauth;
mod reply;
mod tap;
mod tee;

use std::future::Future;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinSet;

use super::Observer;
use super::error::RecordError;
use crate::cassette::{HttpEndpointBehaviour, Recovery, Transport};
pub use credentials::HeaderError;
use credentials::UpstreamHeaders;
use endpoint::Endpoint;
use forward::Proxy;
use tap::Tap;

/// What to record, from where, and where to listen.
#[derive(Clone)]
pub struct HttpRecordConfig {
    /// The cassette to write; `None` forwards without recording
    /// (`passthrough`).
    pub cassette: Option<PathBuf>,
    /// The upstream endpoint, e.g. `http://127.0.0.1:3001/mcp`.
    pub upstream: String,
    /// Where the proxy listens (port 0: any free port).
    pub listen: SocketAddr,
    /// What to mask before anything reaches the disk.
    pub redaction: super::Redaction,
    /// Sees every MCP message that passes (`mcpcassette inspect`).
    pub observer: Option<Arc<dyn Observer>>,
    /// Headers added to every request to the upstream, as `(name, value)`
    /// (`--header`, `--bearer-env`): credentials the client never sees.
    /// Their values are secrets, never stored or logged.
    pub upstream_headers: Vec<(String, String)>,
}

impl std::fmt::Debug for HttpRecordConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpRecordConfig")
            .field("cassette", &self.cassette)
            .field("upstream", &self.upstream)
            .field("listen", &self.listen)
            .field("redaction", &self.redaction)
            .field("observer", &self.observer.is_some())
            .field(
                "upstream_headers",
                &self
                    .upstream_headers
                    .iter()
                    .map(|(name, _)| name)
                    .collect::<Vec<_>>(),
            )
            .finish()
    }
}

/// How an HTTP recording ended.
#[derive(Debug)]
pub struct HttpRecordOutcome {
    /// Completed interactions written to the cassette.
    pub interactions: usize,
    /// Journals left by earlier, interrupted recordings, recovered into
    /// the cassette before this recording replaced it.
    pub recovered: Vec<Recovery>,
    /// Requests the upstream answered (with any status).
    pub upstream_answered: usize,
    /// Requests the upstream never answered (the client got 502).
    pub upstream_failed: usize,
}

impl HttpRecordOutcome {
    /// Whether the upstream never answered anything it was sent: nothing was
    /// recorded but failures.
    pub fn upstream_down(&self) -> bool {
        self.upstream_failed > 0 && self.upstream_answered == 0
    }
}

/// Runs the reverse proxy until `shutdown` resolves, then writes the
/// cassette. `ready` gets the bound address once the proxy accepts
/// connections.
pub async fn record_http(
    config: HttpRecordConfig,
    ready: impl FnOnce(SocketAddr) + Send,
    shutdown: impl Future<Output = ()> + Send,
) -> Result<HttpRecordOutcome, RecordError> {
    let mut upstream = Endpoint::parse(&config.upstream)?;
    let client = crate::client::http_client(upstream.is_https())?;
    let listener = TcpListener::bind(config.listen)
        .await
        .map_err(|source| RecordError::Bind {
            addr: config.listen,
            source,
        })?;
    let listen = listener.local_addr().map_err(|source| RecordError::Bind {
        addr: config.listen,
        source,
    })?;
    let (recovered, kept_rules) = super::previous(config.cassette.as_deref(), None)?;
    let upstream_headers = UpstreamHeaders::parse(&config.upstream_headers)?;
    let (kept_rules, redactor) = super::redaction_rules(kept_rules, &config.redaction)?;
    let redactor = redactor.with_secrets(&upstream_headers.secrets())?;
    upstream.mask_with(&redactor);
    let tap = match &config.cassette {
        Some(path) => Tap::record(
            path.clone(),
            crate::cassette::now_rfc3339(),
            transport(&upstream),
            kept_rules,
            redactor,
        )?,
        None => Tap::passthrough(),
    };
    let proxy = Arc::new(Proxy::new(
        upstream,
        upstream_headers,
        client,
        tap.clone(),
        listen,
        config.observer.clone(),
    ));
    ready(listen);
    serve(listener, proxy.clone(), shutdown).await;
    let interactions = tap.finish()?;
    Ok(HttpRecordOutcome {
        interactions,
        recovered,
        upstream_answered: proxy.tally.answered(),
        upstream_failed: proxy.tally.failed(),
    })
}

/// The transport as first assumed: Streamable HTTP at the upstream's path.
fn transport(upstream: &Endpoint) -> Transport {
    Transport::StreamableHttp {
        url: upstream.masked().to_owned(),
        endpoint: upstream.path().to_owned(),
        behaviour: HttpEndpointBehaviour::default(),
    }
}

/// Accepts connections until `shutdown`, then ends those still open
/// (streams the client or server kept open have nothing more to record).
async fn serve(listener: TcpListener, proxy: Arc<Proxy>, shutdown: impl Future<Output = ()>) {
    let mut connections = JoinSet::new();
    let mut shutdown = std::pin::pin!(shutdown);
    loop {
        tokio::select! {
            () = &mut shutdown => break,
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => {
                    connections.spawn(serve_connection(stream, proxy.clone()));
                }
                Err(e) => {
                    // Out of file descriptors, say: wait, do not spin.
                    tracing::warn!("cannot accept a connection: {e}");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
            },
            Some(_) = connections.join_next(), if !connections.is_empty() => {}
        }
    }
    connections.shutdown().await;
}

/// Serves one client connection. A connection that closes without a
/// request (a readiness probe) ends quietly.
async fn serve_connection(stream: TcpStream, proxy: Arc<Proxy>) {
    let _ = stream.set_nodelay(true);
    let service = service_fn(move |request| proxy.clone().handle(request));
    if let Err(e) = http1::Builder::new()
        .serve_connection(TokioIo::new(stream), service)
        .await
    {
        tracing::debug!("client connection ended: {e}");
    }
}

/// For `crate::fuzzing`: SSE chunks through the recorder's parser, each
/// event's data read as the recorder reads it.
#[cfg(fuzzing)]
pub(crate) fn fuzzing_sse(chunks: &[&[u8]]) -> Vec<serde_json::Value> {
    let mut parser = tee::SseParser::default();
    let mut messages = Vec::new();
    for chunk in chunks {
        for event in parser.push(bytes::Bytes::copy_from_slice(chunk)) {
            let data = event.data.unwrap_or_default();
            messages.extend(tap::parse_messages(data.as_bytes()).unwrap_or_default());
        }
    }
    messages
}
