//! Errors from recording.

use crate::cassette::CassetteError;

/// Why a recording could not be made.
#[derive(Debug, thiserror::Error)]
pub enum RecordError {
    /// No server command was given.
    #[error("no server command given: put it after `--`")]
    NoCommand,
    /// The server could not be started.
    #[error("cannot start server `{program}`: {source}")]
    Spawn {
        /// The program that failed to start.
        program: String,
        /// Why.
        source: std::io::Error,
    },
    /// Waiting for the server failed.
    #[error("lost track of the server process: {0}")]
    Wait(std::io::Error),
    /// Signal handling could not be set up.
    #[error("cannot set up signal forwarding: {0}")]
    Signals(nix::Error),
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
    /// The upstream is `https://` and this build has no `tls` feature.
    #[error(
        "https upstreams need the `tls` feature, which this build does not have: build mcpcassette with `--features tls`"
    )]
    TlsUpstream,
    /// TLS for an `https://` upstream could not be set up (the `tls`
    /// feature): the trusted roots, or the file `MCPCASSETTE_CA_FILE` names.
    #[error("cannot set up TLS for the upstream: {0}")]
    Tls(String),
    /// The HTTP recorder could not listen where it was told to.
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        /// The address asked for.
        addr: std::net::SocketAddr,
        /// Why.
        source: std::io::Error,
    },
    /// A redaction rule is unusable.
    #[error(transparent)]
    Redact(#[from] crate::redact::RedactError),
    /// The cassette or its journal could not be written.
    #[error(transparent)]
    Cassette(#[from] CassetteError),
}
