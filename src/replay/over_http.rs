//! Replay over Streamable HTTP: the engine served by
//! [`crate::server::http`], and the replay's summary over every session.

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;

pub use crate::server::Pace;
pub use crate::server::http::{HttpReplayConfig, SessionMode};

use super::engine::{Engine, Summary};

/// Serves `engine` over Streamable HTTP until `shutdown` resolves (see
/// [`crate::server::http::serve_http`]); returns what the whole replay did,
/// over every session.
pub async fn serve_http(
    engine: Arc<Engine>,
    config: HttpReplayConfig,
    ready: impl FnOnce(SocketAddr) + Send,
    shutdown: impl Future<Output = ()> + Send,
) -> std::io::Result<Summary> {
    crate::server::http::serve_http(Arc::clone(&engine) as _, config, ready, shutdown).await?;
    Ok(engine.summary_of_every_session())
}
