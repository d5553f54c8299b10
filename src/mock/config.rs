//! What a mock is told before it serves and keeps unchanged: its
//! [`Config`], and the [`Transition`]s between its states.

use std::sync::Arc;

use serde_json::Value;

use crate::json::is_subset;

/// A `from` state of [`MockBuilder::transition`](super::MockBuilder::transition) that matches any state.
pub const ANY_STATE: &str = "*";

type Predicate = dyn Fn(&str, &Value) -> bool + Send + Sync;
pub(crate) type Interceptor = dyn Fn(&mut Value) + Send + Sync;

/// What moves a mock from one state to another: a client message with this
/// method (and params containing these), or any message a predicate likes.
#[derive(Clone)]
pub struct Transition {
    method: Option<String>,
    params: Option<Value>,
    when: Option<Arc<Predicate>>,
}

impl std::fmt::Debug for Transition {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Transition")
            .field("method", &self.method)
            .field("params", &self.params)
            .field("when", &self.when.as_ref().map(|_| "fn"))
            .finish()
    }
}

impl Transition {
    /// Any request or notification with this method.
    pub fn method(method: &str) -> Transition {
        Transition {
            method: Some(method.to_owned()),
            params: None,
            when: None,
        }
    }

    /// Only when the params contain `subset` (a recursive subset, as
    /// hand-written cases match: `json!({"name": "login"})` for one tool).
    pub fn params(mut self, subset: Value) -> Transition {
        self.params = Some(subset);
        self
    }

    /// Any message for which `f(method, params)` is true (`params` is
    /// `null` when the message has none).
    pub fn when(f: impl Fn(&str, &Value) -> bool + Send + Sync + 'static) -> Transition {
        Transition {
            method: None,
            params: None,
            when: Some(Arc::new(f)),
        }
    }

    pub(crate) fn matches(&self, method: &str, params: &Value) -> bool {
        self.method.as_deref().is_none_or(|m| m == method)
            && self.params.as_ref().is_none_or(|p| is_subset(p, params))
            && self.when.as_ref().is_none_or(|f| f(method, params))
    }
}

/// What does not change once built.
pub(crate) struct Config {
    pub(crate) info: Value,
    pub(crate) instructions: Option<String>,
    pub(crate) capabilities: Option<Value>,
    pub(crate) require_handshake: bool,
    pub(crate) transitions: Vec<(String, Transition, String)>,
    pub(crate) interceptors: Vec<(String, Arc<Interceptor>)>,
    /// Any order (`server/discover` lists them newest first).
    pub(crate) versions: Vec<String>,
}
