//! The state of the 2024-11-05 HTTP+SSE transport (`http_sse`): its two
//! endpoints, and the open stream of each session.

use std::collections::HashMap;
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex, MutexGuard};

use bytes::Bytes;
use tokio::sync::mpsc;

use crate::server::Handler;

/// The two endpoints, as recorded.
#[derive(Debug)]
pub(super) struct Endpoints {
    pub(super) sse: String,
    pub(super) post: String,
}

/// Open streams by session id.
#[derive(Debug, Default)]
pub(super) struct Streams {
    live: Mutex<HashMap<String, Stream>>,
    pub(super) issued: AtomicU64,
}

/// A session's stream, and the engine that answers the session.
#[derive(Debug, Clone)]
pub(super) struct Stream {
    pub(super) events: mpsc::UnboundedSender<Bytes>,
    pub(super) handler: Arc<dyn Handler>,
}

impl Streams {
    pub(super) fn lock(&self) -> MutexGuard<'_, HashMap<String, Stream>> {
        self.live
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// The stream of a session whose client is still listening.
    pub(super) fn get(&self, id: &str) -> Option<Stream> {
        let mut live = self.lock();
        live.retain(|_, stream| !stream.events.is_closed());
        live.get(id).cloned()
    }

    /// Forgets every stream, which ends them (shutdown).
    pub(super) fn clear(&self) {
        self.lock().clear();
    }
}
