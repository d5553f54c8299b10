//! [`MockBuilder`]: everything a mock server is told before it serves.

use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::{Value, json};

use super::config::{Config, Transition};
use super::items::{Prompt, Resource, ResourceTemplate, Tool};
use super::server::{Entry, MockServer, Registry, Respond};
use crate::protocol::Version;

/// The state a mock starts in unless [`MockBuilder::initial_state`] says
/// otherwise.
pub const INITIAL_STATE: &str = "initial";

impl MockServer {
    /// A builder; see [`MockBuilder`].
    pub fn builder() -> MockBuilder {
        MockBuilder::default()
    }
}

/// Builds a [`MockServer`]. Everything has a default: `MockServer::builder()
/// .build()` is a valid, empty server that speaks both protocol eras.
#[must_use]
pub struct MockBuilder {
    config: Config,
    registry: Registry,
    initial_state: String,
    seed: u64,
}

impl std::fmt::Debug for MockBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MockBuilder")
            .field("server_info", &self.config.info)
            .field("initial_state", &self.initial_state)
            .finish_non_exhaustive()
    }
}

impl Default for MockBuilder {
    fn default() -> Self {
        let seed = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(1, |d| d.as_nanos() as u64);
        // Every version, newest first.
        let versions = (Version::ALL.iter().rev())
            .map(|v| v.as_str().to_owned())
            .collect();
        MockBuilder {
            config: Config {
                info: json!({"name": "mcpcassette-mock", "version": env!("CARGO_PKG_VERSION")}),
                instructions: None,
                capabilities: None,
                require_handshake: true,
                transitions: Vec::new(),
                interceptors: Vec::new(),
                versions,
            },
            registry: Registry::default(),
            initial_state: INITIAL_STATE.to_owned(),
            seed,
        }
    }
}

impl MockBuilder {
    /// `serverInfo` name and version, so clients that check who they talk
    /// to see what they expect.
    pub fn server_info(mut self, name: &str, version: &str) -> Self {
        self.config.info["name"] = json!(name);
        self.config.info["version"] = json!(version);
        self
    }

    /// The whole `serverInfo` object, verbatim (`title`, `icons`, …).
    pub fn server_info_object(mut self, info: Value) -> Self {
        self.config.info = info;
        self
    }

    /// The `instructions` of the handshake and of `server/discover`.
    pub fn instructions(mut self, text: &str) -> Self {
        self.config.instructions = Some(text.to_owned());
        self
    }

    /// The protocol versions the mock speaks (default: all five). A legacy
    /// `initialize` gets the version it asks for when it is one of them,
    /// else the newest legacy one; `server/discover` lists them; a modern
    /// request declaring another gets -32022.
    pub fn protocol_versions(mut self, versions: &[&str]) -> Self {
        self.config.versions = versions.iter().map(|v| (*v).to_owned()).collect();
        self
    }

    /// A tool and how `tools/call` of it answers (the handler gets the
    /// call's `arguments`).
    pub fn tool(mut self, tool: Tool, respond: Respond) -> Self {
        self.registry.put_tool(tool, respond);
        self
    }

    /// A resource and how `resources/read` of its URI answers (the handler
    /// gets the request's params).
    pub fn resource(mut self, resource: Resource, respond: Respond) -> Self {
        self.registry.put_resource(resource, respond);
        self
    }

    /// A resource template and how reads of the URIs it matches answer
    /// (when no resource has the URI; the first matching template wins).
    pub fn resource_template(mut self, template: ResourceTemplate, respond: Respond) -> Self {
        self.registry.put_template(template, respond);
        self
    }

    /// A prompt and how `prompts/get` of it answers (the handler gets the
    /// request's `arguments`).
    pub fn prompt(mut self, prompt: Prompt, respond: Respond) -> Self {
        self.registry.put_prompt(prompt, respond);
        self
    }

    /// How `completion/complete` answers (the handler gets the params:
    /// `ref`, `argument`, `context`). Without one the method is unknown.
    pub fn completion(mut self, respond: Respond) -> Self {
        self.registry.completion = Some(Entry::new(respond));
        self
    }

    /// Capabilities to announce instead of the ones derived from what is
    /// registered (`tools`, `resources`, `prompts` with `listChanged`,
    /// `completions`, `logging`): to test clients against servers that
    /// announce less, or more, than they do.
    pub fn capabilities(mut self, caps: Value) -> Self {
        self.config.capabilities = Some(caps);
        self
    }

    /// Whether legacy requests before the handshake (`initialize`, then
    /// `notifications/initialized`) get -32600 (default: yes, as the
    /// specification says; `ping` is always allowed). Modern requests
    /// (declaring 2026-07-28 in `_meta`) never need a handshake.
    pub fn require_handshake(mut self, on: bool) -> Self {
        self.config.require_handshake = on;
        self
    }

    /// The state the mock starts in (default [`INITIAL_STATE`]).
    pub fn initial_state(mut self, state: &str) -> Self {
        self.initial_state = state.to_owned();
        self
    }

    /// In state `from` ([`ANY_STATE`](super::ANY_STATE) for any), a client message that
    /// matches `on` moves the mock to `to`. The first matching transition
    /// applies, when the message arrives; the message's own handler still
    /// sees the state before it.
    pub fn transition(mut self, from: &str, on: Transition, to: &str) -> Self {
        self.config
            .transitions
            .push((from.to_owned(), on, to.to_owned()));
        self
    }

    /// Edits every response to `method` (`"*"`: to any) just before it is
    /// sent: the whole JSON-RPC message, so a test can return malformed
    /// results, extra fields, a wrong id. Interceptors run in the order
    /// they were added; the call log keeps the unedited answer.
    pub fn intercept(
        mut self,
        method: &str,
        f: impl Fn(&mut Value) + Send + Sync + 'static,
    ) -> Self {
        self.config
            .interceptors
            .push((method.to_owned(), Arc::new(f)));
        self
    }

    /// Seeds the generator behind [`Respond::jitter`], so runs repeat.
    pub fn seed(mut self, seed: u64) -> Self {
        self.seed = seed;
        self
    }

    /// The server, ready to serve any number of clients.
    pub fn build(self) -> MockServer {
        MockServer::new(self.config, self.registry, self.initial_state, self.seed)
    }
}
