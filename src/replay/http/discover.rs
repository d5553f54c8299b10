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
use crate::replay::engine::Engine;

/// The replay state modern requests go to.
#[derive(Debug)]
pub(super) struct ModernRuns {
    mode: SessionMode,
    /// Answers every `server/discover`.
    initial: Arc<Engine>,
    current: Mutex<Current>,
}

#[derive(Debug)]
struct Current {
    engine: Arc<Engine>,
    /// It has been handed a request other than `server/discover`.
    busy: bool,
}

impl ModernRuns {
    /// Starting on `initial`.
    pub(super) fn new(initial: Arc<Engine>, mode: SessionMode) -> Self {
        ModernRuns {
            mode,
            initial: Arc::clone(&initial),
            current: Mutex::new(Current {
                engine: initial,
                busy: false,
            }),
        }
    }

    /// The engine for a POST's `messages`, and the fresh one it started,
    /// if it did (for the summary).
    pub(super) fn engine_for(&self, messages: &[Value]) -> (Arc<Engine>, Option<Arc<Engine>>) {
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
            let fork = current.engine.fork();
            started = Some(Arc::clone(&fork));
            *current = Current {
                engine: fork,
                busy: false,
            };
        }
        current.busy |= others;
        let engine = if discovers && !others {
            Arc::clone(&self.initial)
        } else {
            Arc::clone(&current.engine)
        };
        (engine, started)
    }
}
