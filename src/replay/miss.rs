//! What replay says when a request was not recorded.

use serde_json::Value;

use crate::cassette::Cassette;
use crate::matching;

/// JSON-RPC error code: no recorded interaction has this request's method
/// and params. In the range MCP leaves to implementations (-32000..-32019).
pub const NO_MATCH: i64 = -32000;

/// JSON-RPC error code: the request was recorded, but every recorded answer
/// to it has been given already.
pub const EXHAUSTED: i64 = -32001;

/// A live request replay could not answer.
#[derive(Debug, Clone, PartialEq)]
pub struct Miss {
    /// The request's method.
    pub method: String,
    /// Its params (with `_meta`, as sent).
    pub params: Option<Value>,
    /// How many times it was answered before running out; `None` when it was
    /// never recorded.
    pub answered: Option<usize>,
    /// Position of the closest recorded request.
    pub closest: Option<usize>,
}

impl Miss {
    /// A miss for `request`, with the closest recorded request looked up.
    pub fn new(cassette: &Cassette, request: &Value, answered: Option<usize>) -> Self {
        let method = crate::jsonrpc::method(request)
            .unwrap_or_default()
            .to_owned();
        let params = crate::jsonrpc::params(request).cloned();
        let closest = match answered {
            Some(_) => None,
            None => matching::closest(cassette, &method, params.as_ref()),
        };
        Miss {
            method,
            params,
            answered,
            closest,
        }
    }

    /// The JSON-RPC error code for this miss.
    pub fn code(&self) -> i64 {
        if self.answered.is_some() {
            EXHAUSTED
        } else {
            NO_MATCH
        }
    }

    /// The one-line error message the client sees.
    pub fn message(&self, cassette: &Cassette) -> String {
        let live = shorten(&matching::canonical(&self.method, self.params.as_ref()));
        if let Some(n) = self.answered {
            return format!(
                "mcpcassette: {live} was recorded {n} time(s) and has been answered {n} time(s) already"
            );
        }
        match self.closest_canonical(cassette) {
            Some(closest) => format!(
                "mcpcassette: no recorded interaction matches {live}; closest recorded: {}",
                shorten(&closest)
            ),
            None => format!(
                "mcpcassette: no recorded interaction matches {live}; the cassette has no requests"
            ),
        }
    }

    /// Structured details for the error's `data`.
    pub fn data(&self, cassette: &Cassette) -> Value {
        serde_json::json!({
            "method": self.method,
            "params": self.params,
            "answered": self.answered,
            "closest": self.closest.and_then(|i| cassette.interactions[i].request().cloned()),
        })
    }

    /// A unified diff between the closest recorded request and the live one,
    /// for stderr.
    pub fn diff(&self, cassette: &Cassette) -> Option<String> {
        let interaction = &cassette.interactions[self.closest?];
        let recorded = pretty(
            interaction.method(),
            interaction.request().and_then(crate::jsonrpc::params),
        );
        let live = pretty(&self.method, self.params.as_ref());
        let diff = similar::TextDiff::from_lines(&recorded, &live);
        Some(
            diff.unified_diff()
                .context_radius(3)
                .header("recorded", "live")
                .to_string(),
        )
    }

    fn closest_canonical(&self, cassette: &Cassette) -> Option<String> {
        let interaction = &cassette.interactions[self.closest?];
        let params = interaction.request().and_then(crate::jsonrpc::params);
        Some(matching::canonical(interaction.method(), params))
    }
}

/// Method and params as matching sees them, pretty-printed with sorted keys.
fn pretty(method: &str, params: Option<&Value>) -> String {
    let canonical = matching::canonical(method, params);
    let json = canonical.split_once(' ').map_or("{}", |(_, json)| json);
    let value: Value = serde_json::from_str(json).unwrap_or(Value::Null);
    let mut text = format!(
        "method: {method}\nparams: {}\n",
        serde_json::to_string_pretty(&value).unwrap_or_default()
    );
    if !text.ends_with('\n') {
        text.push('\n');
    }
    text
}

/// Keeps error messages to one readable line.
fn shorten(text: &str) -> String {
    const LIMIT: usize = 160;
    match text.char_indices().nth(LIMIT) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_owned(),
    }
}
