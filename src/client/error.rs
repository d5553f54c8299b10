//! Why a live server could not be started, reached or talked to.

use http::StatusCode;

/// Everything that can go wrong between us and a live server, whichever
/// transport it speaks; the underlying error is kept as the source.
#[derive(Debug, thiserror::Error)]
pub enum LiveError {
    /// No server command was given.
    #[error("no server command given: put it after `--`")]
    NoCommand,
    /// The server could not be started.
    #[error("cannot start server `{program}`")]
    Spawn {
        /// The program that failed to start.
        program: String,
        /// Why.
        source: std::io::Error,
    },
    /// The server process could not be waited for or killed.
    #[error("lost track of the server process")]
    Wait(#[source] std::io::Error),
    /// A message could not be written to the server's stdin.
    #[error("cannot write to the server")]
    Write(#[source] std::io::Error),
    /// The server's stdin was closed already.
    #[error("stdin is closed")]
    StdinClosed,
    /// The URL is not one an HTTP client can reach.
    #[error("`{url}`: {reason}")]
    BadUrl {
        /// The URL as given.
        url: String,
        /// What is wrong with it ("not a URL: …", "no host").
        reason: String,
    },
    /// The upstream is `https://` and this build has no `tls` feature.
    #[error(
        "https upstreams need the `tls` feature, which this build does not have: build mcpcassette with `--features tls`"
    )]
    TlsUnsupported,
    /// TLS could not be configured (the `tls` feature).
    #[cfg(feature = "tls")]
    #[error("cannot set up TLS for the upstream")]
    TlsConfig(#[source] rustls::Error),
    /// No root certificate to trust (the `tls` feature).
    #[cfg(feature = "tls")]
    #[error(
        "cannot set up TLS for the upstream: no trusted root certificates: the system has none{why}; name a PEM file of them in MCPCASSETTE_CA_FILE"
    )]
    NoRoots {
        /// ` (why the system's could not be loaded)`, or nothing.
        why: String,
    },
    /// The file of extra trusted roots is unusable (the `tls` feature).
    #[cfg(feature = "tls")]
    #[error("cannot set up TLS for the upstream: {var}={}", path.display())]
    CaFile {
        /// The variable that names it.
        var: &'static str,
        /// The file.
        path: std::path::PathBuf,
        /// What is wrong with it.
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// The HTTP client's runtime could not be started.
    #[error("cannot start the HTTP client")]
    Runtime(#[source] std::io::Error),
    /// The HTTP session was closed already.
    #[error("the HTTP session is closed")]
    SessionClosed,
    /// The HTTP client stopped while messages were still to be sent.
    #[error("the HTTP client has stopped")]
    ClientStopped,
    /// An HTTP request could not be sent or got no answer.
    #[error("{label}")]
    Request {
        /// What was sent (`POST tools/call`).
        label: String,
        /// Why it failed.
        source: hyper_util::client::legacy::Error,
    },
    /// An answer's body could not be read.
    #[error("{label}: {}", unreadable(*.status))]
    Body {
        /// What was sent.
        label: String,
        /// The status of the answer, when it was an HTTP error.
        status: Option<StatusCode>,
        /// Why the body could not be read.
        source: hyper::Error,
    },
    /// An HTTP error whose body is not JSON-RPC, where none was expected.
    #[error("{label}: HTTP {status}{excerpt}")]
    Status {
        /// What was sent.
        label: String,
        /// The status.
        status: StatusCode,
        /// `: <the start of the body>`, or nothing.
        excerpt: String,
    },
    /// A successful answer whose body is not JSON.
    #[error("{label}: HTTP {status} with a body that is not JSON ({media}){excerpt}")]
    NotJson {
        /// What was sent.
        label: String,
        /// The status.
        status: StatusCode,
        /// The media type, or "no Content-Type".
        media: String,
        /// `: <the start of the body>`, or nothing.
        excerpt: String,
    },
}

/// How an unreadable body is described (its cause follows in the chain):
/// after an HTTP error, the status comes first.
fn unreadable(status: Option<StatusCode>) -> String {
    match status {
        Some(status) => format!("HTTP {status}, and the body could not be read"),
        None => "the answer could not be read".to_owned(),
    }
}
