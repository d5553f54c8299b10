//! 2026-07-28 client sessions. The modern era is stateless: no session ids
//! tell clients apart. A client begins with `server/discover`, so with
//! isolated sessions a `server/discover` arriving after the current replay
//! state has answered other requests starts a fresh state, as a freshly
//! started server would begin. Requests before any `server/discover` use
//! the initial state.
//!
//! `server/discover` itself is answered by the initial state for every
//! client, in recorded order, then from its first successful recording: a
//! probe's answer belongs to no client session, and recordings often open
//! with deliberately malformed probes (a conformance suite) that a fresh
//! state would otherwise answer a well-formed probe with.
//!
//! Clients that run at the same time (pytest-xdist) interleave on one
//! endpoint: nothing says which request is whose, so they share whatever
//! state the latest `server/discover` started.

use std::sync::{Arc, Mutex};

use serde_json::Value;

use super::SessionMode;
use super::session::lock;
use crate::jsonrpc::{self, Kind};
use crate::server::Handler;

/// The replay state modern requests go to.
#[derive(Debug)]
pub(super) struct ModernRuns {
    mode: SessionMode,
    /// Answers every `server/discover`.
    initial: Arc<dyn Handler>,
    current: Mutex<Current>,
}

#[derive(Debug)]
struct Current {
    handler: Arc<dyn Handler>,
    /// It has been handed a request other than `server/discover`.
    busy: bool,
}

impl ModernRuns {
    /// Starting on `initial`.
    pub(super) fn new(initial: Arc<dyn Handler>, mode: SessionMode) -> Self {
        ModernRuns {
            mode,
            initial: Arc::clone(&initial),
            current: Mutex::new(Current {
                handler: initial,
                busy: false,
            }),
        }
    }

    /// The handler for a POST's `messages`, and the fresh one it started,
    /// if it did (to tell it when the clients have gone).
    pub(super) fn handler_for(
        &self,
        messages: &[Value],
    ) -> (Arc<dyn Handler>, Option<Arc<dyn Handler>>) {
        let requests: Vec<_> = messages
            .iter()
            .filter(|m| jsonrpc::classify(m) == Ok(Kind::Request))
            .map(jsonrpc::method)
            .collect();
        let discovers = requests.contains(&Some("server/discover"));
        let others = requests.iter().any(|m| *m != Some("server/discover"));
        let mut current = lock(&self.current);
        let mut started = None;
        if self.mode == SessionMode::Isolated && discovers && current.busy {
            let fork = current.handler.fork();
            started = Some(Arc::clone(&fork));
            *current = Current {
                handler: fork,
                busy: false,
            };
        }
        current.busy |= others;
        let handler = if discovers && !others {
            Arc::clone(&self.initial)
        } else {
            Arc::clone(&current.handler)
        };
        (handler, started)
    }
}
