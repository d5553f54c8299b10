//! The HTTP client for every upstream MCP endpoint: the recorder's reverse
//! proxy, `verify --url`, `new-episodes` over HTTP and `stub --url` all
//! reach servers with it. Plain TCP for `http://`; with the `tls` feature,
//! TLS for `https://` (trusting the system's roots and the PEM file
//! `MCPCASSETTE_CA_FILE` names).

use bytes::Bytes;
use http_body_util::Full;
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;

use super::LiveError;

/// How the client connects: plain TCP, or with the `tls` feature TLS for
/// `https://` URIs (and still plain TCP for `http://`).
#[cfg(not(feature = "tls"))]
type Connector = HttpConnector;
#[cfg(feature = "tls")]
type Connector = hyper_rustls::HttpsConnector<HttpConnector>;

/// The client, cheap to clone (connections are pooled and shared).
pub type HttpClient = Client<Connector, Full<Bytes>>;

/// A client for endpoints that are `https://` when `https` is true (only
/// then is a trust store without any root an error). Without the `tls`
/// feature an `https://` endpoint is refused here. Must be called within a
/// tokio runtime.
pub fn http_client(https: bool) -> Result<HttpClient, LiveError> {
    let mut connector = HttpConnector::new();
    connector.set_nodelay(true);
    #[cfg(feature = "tls")]
    let connector = super::tls::connector(connector, https)?;
    #[cfg(not(feature = "tls"))]
    if https {
        return Err(LiveError::TlsUnsupported);
    }
    Ok(Client::builder(TokioExecutor::new()).build(connector))
}
