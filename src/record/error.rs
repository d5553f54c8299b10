//! Errors from recording.

use crate::cassette::CassetteError;

/// Why a recording could not be made.
#[derive(Debug, thiserror::Error)]
pub enum RecordError {
    /// The server could not be started, or the upstream cannot be reached
    /// (no `tls` feature for an `https://` one, or no TLS set-up).
    #[error(transparent)]
    Live(#[from] crate::client::LiveError),
    /// Waiting for the server failed.
    #[error("lost track of the server process")]
    Wait(#[source] std::io::Error),
    /// Signal handling could not be set up.
    #[error("cannot set up signal forwarding")]
    Signals(#[source] nix::Error),
    /// A tape was finished twice (a bug in the recorder).
    #[error("the recording was already finished")]
    TapeFinished,
    /// The upstream URL is not one the HTTP recorder can use.
    #[error("invalid upstream URL `{url}`: {reason}")]
    BadUpstream {
        /// The URL, with secrets masked.
        url: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The HTTP recorder could not listen where it was told to.
    #[error("cannot listen on {addr}")]
    Bind {
        /// The address asked for.
        addr: std::net::SocketAddr,
        /// Why.
        source: std::io::Error,
    },
    /// A redaction rule is unusable.
    #[error(transparent)]
    Redact(#[from] crate::redact::RedactError),
    /// A `--header` that cannot be sent.
    #[error(transparent)]
    Header(#[from] super::proxy::credentials::HeaderError),
    /// The cassette or its journal could not be written.
    #[error(transparent)]
    Cassette(#[from] CassetteError),
}
