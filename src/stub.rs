//! Inventorying a live server into a fixture (`mcpcassette stub`), without
//! ever calling a tool: the handshake, then `tools/list`, `resources/list`,
//! `resources/templates/list` and `prompts/list`, every page of each, one
//! request at a time. Every definition goes into the fixture verbatim,
//! with no answers (so the generated result applies).

use std::collections::HashSet;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::client::{Live, LiveError, handshake};
use crate::fixture::{self, Fixture};
use crate::jsonrpc::{self, Kind, codes};
use crate::protocol::{Era, META_SERVER_INFO};
use crate::redact::Redactor;

/// Each list: its method, the capability that offers it, the key of its items.
const LISTS: [(&str, &str, &str); 4] = [
    ("tools/list", "tools", "tools"),
    ("resources/list", "resources", "resources"),
    ("resources/templates/list", "resources", "resourceTemplates"),
    ("prompts/list", "prompts", "prompts"),
];

/// The name we give in `clientInfo`.
const CLIENT_NAME: &str = "mcpcassette-stub";

/// How to talk to the server.
#[derive(Debug, Clone, Copy)]
pub struct StubConfig {
    /// Which handshake: `initialize` (legacy, also for [`Era::Unknown`])
    /// or `server/discover` with per-request `_meta` (modern).
    pub era: Era,
    /// How long each answer may take.
    pub timeout: Duration,
}

/// Why an inventory could not be taken.
#[derive(Debug, thiserror::Error)]
pub enum StubError {
    /// The connection failed.
    #[error(transparent)]
    Live(#[from] LiveError),
    /// A request the inventory needs was answered with an error.
    #[error("`{method}` failed: {error}")]
    Failed {
        /// The method.
        method: String,
        /// The JSON-RPC error object, as the server sent it.
        error: Value,
    },
    /// No answer came in time, or the server went away.
    #[error("no answer to `{method}` within {} s (or the server went away)", timeout.as_secs())]
    NoAnswer {
        /// The method.
        method: String,
        /// How long it had.
        timeout: Duration,
    },
    /// A list result without its array.
    #[error("the `{method}` result has no `{key}` array: {result}")]
    NotAList {
        /// The method.
        method: String,
        /// The array it should hold.
        key: &'static str,
        /// What came instead.
        result: Value,
    },
    /// A server that pages in a circle.
    #[error("`{method}` returned the cursor `{cursor}` twice; stopping")]
    CursorRepeated {
        /// The method.
        method: String,
        /// The cursor seen twice.
        cursor: String,
    },
}

/// What the server said about itself.
#[derive(Debug, Clone, PartialEq)]
pub struct Inventory {
    /// Its `serverInfo` (`Null` when it gave none).
    pub server_info: Value,
    /// Its `instructions`, if any.
    pub instructions: Option<String>,
    /// Tools, resources, resource templates and prompts, as listed.
    pub lists: Lists,
}

/// The four lists of an inventory.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Lists {
    /// `tools/list`.
    pub tools: Vec<Value>,
    /// `resources/list`.
    pub resources: Vec<Value>,
    /// `resources/templates/list`.
    pub templates: Vec<Value>,
    /// `prompts/list`.
    pub prompts: Vec<Value>,
}

impl Lists {
    fn slots(&mut self) -> [&mut Vec<Value>; 4] {
        [
            &mut self.tools,
            &mut self.resources,
            &mut self.templates,
            &mut self.prompts,
        ]
    }
}

impl Inventory {
    /// Masks what the server listed as a recording is masked: fixtures get
    /// committed like cassettes. Returns how many secrets were masked.
    pub fn mask(&mut self, redactor: &Redactor) -> usize {
        let mut masked = redactor.redact_document(&mut self.server_info).len();
        for item in self.lists.slots().into_iter().flatten() {
            masked += redactor.redact_document(item).len();
        }
        if let Some(text) = &mut self.instructions
            && let std::borrow::Cow::Owned(out) = redactor.redact_text(text)
        {
            *text = out;
            masked += 1;
        }
        masked
    }

    /// "3 tools, 1 resources, 0 resource templates, 2 prompts".
    pub fn counts(&self) -> String {
        let lists = &self.lists;
        format!(
            "{} tools, {} resources, {} resource templates, {} prompts",
            lists.tools.len(),
            lists.resources.len(),
            lists.templates.len(),
            lists.prompts.len()
        )
    }

    /// The fixture that serves these definitions.
    pub fn into_fixture(self) -> Fixture {
        let Lists {
            tools,
            resources,
            templates,
            prompts,
        } = self.lists;
        fixture::from_inventory(
            &self.server_info,
            self.instructions.as_deref(),
            tools,
            resources,
            templates,
            prompts,
        )
    }
}

/// Takes the inventory of the server at the other end of `live`, then
/// closes the connection (whatever the outcome).
pub fn inventory(live: &mut dyn Live, config: &StubConfig) -> Result<Inventory, StubError> {
    let mut session = Session {
        live,
        config,
        next_id: 1,
    };
    let inventory = session.inventory();
    session.live.close();
    inventory
}

/// One request at a time, each waited for.
struct Session<'a> {
    live: &'a mut dyn Live,
    config: &'a StubConfig,
    next_id: u64,
}

impl Session<'_> {
    fn inventory(&mut self) -> Result<Inventory, StubError> {
        let (server_info, capabilities, instructions) = match self.config.era {
            Era::Modern => {
                let discover = self.call("server/discover", json!({}))?;
                let info = discover
                    .get("_meta")
                    .and_then(|meta| meta.get(META_SERVER_INFO))
                    .or(discover.get("serverInfo"))
                    .cloned()
                    .unwrap_or(Value::Null);
                (
                    info,
                    discover["capabilities"].clone(),
                    instructions(&discover),
                )
            }
            Era::Legacy | Era::Unknown => {
                let request = handshake::initialize(json!(0), handshake::client_info(CLIENT_NAME));
                let init = self.call("initialize", request["params"].clone())?;
                self.live.send(&handshake::initialized())?;
                (
                    init["serverInfo"].clone(),
                    init["capabilities"].clone(),
                    instructions(&init),
                )
            }
        };
        if !server_info.is_object() {
            tracing::warn!("the server did not say who it is (no serverInfo)");
        }
        let mut lists = Lists::default();
        for (slot, (method, capability, key)) in lists.slots().into_iter().zip(LISTS) {
            if capabilities.get(capability).is_none_or(Value::is_null) {
                tracing::info!("the server does not offer `{capability}`: no `{method}`");
                continue;
            }
            *slot = self.list(method, key)?;
        }
        Ok(Inventory {
            server_info,
            instructions,
            lists,
        })
    }

    /// Every page of a list; a server that does not know the method lists
    /// nothing.
    fn list(&mut self, method: &str, key: &'static str) -> Result<Vec<Value>, StubError> {
        let mut items = Vec::new();
        let mut cursor: Option<String> = None;
        let mut seen = HashSet::new();
        loop {
            let params = match &cursor {
                Some(cursor) => json!({"cursor": cursor}),
                None => json!({}),
            };
            let result = match self.request(method, params)? {
                Ok(result) => result,
                Err(error) if error["code"] == codes::METHOD_NOT_FOUND => {
                    tracing::warn!(
                        "the server does not know `{method}` although it offers the capability; nothing listed"
                    );
                    return Ok(items);
                }
                Err(error) => return Err(failed(method, error)),
            };
            let Some(page) = result.get(key).and_then(Value::as_array) else {
                return Err(StubError::NotAList {
                    method: method.to_owned(),
                    key,
                    result,
                });
            };
            items.extend(page.iter().cloned());
            match result.get("nextCursor").and_then(Value::as_str) {
                Some(next) => {
                    if !seen.insert(next.to_owned()) {
                        return Err(StubError::CursorRepeated {
                            method: method.to_owned(),
                            cursor: next.to_owned(),
                        });
                    }
                    cursor = Some(next.to_owned());
                }
                None => return Ok(items),
            }
        }
    }

    /// A request whose error ends the stub.
    fn call(&mut self, method: &str, params: Value) -> Result<Value, StubError> {
        self.request(method, params)?
            .map_err(|error| failed(method, error))
    }

    /// Sends a request and waits for its response: `Ok(result)` or
    /// `Err(error)`. Notifications are ignored; server requests get a
    /// method-not-found error.
    fn request(
        &mut self,
        method: &str,
        mut params: Value,
    ) -> Result<Result<Value, Value>, StubError> {
        if self.config.era == Era::Modern {
            params["_meta"] = handshake::modern_meta(handshake::client_info(CLIENT_NAME));
        }
        let id = json!(self.next_id);
        self.next_id += 1;
        self.live.send(&json!({
            "jsonrpc": "2.0",
            "id": id,
            "method": method,
            "params": params,
        }))?;
        let deadline = Instant::now() + self.config.timeout;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let Some(message) = self.live.recv(left)? else {
                return Err(StubError::NoAnswer {
                    method: method.to_owned(),
                    timeout: self.config.timeout,
                });
            };
            match jsonrpc::classify(&message) {
                // A rejection of the POST (an error with a `null` id)
                // answers the request it carried.
                Ok(Kind::Response)
                    if jsonrpc::id(&message) == Some(&id) || jsonrpc::is_rejection(&message) =>
                {
                    return Ok(match message.get("error") {
                        Some(error) => Err(error.clone()),
                        None => Ok(message.get("result").cloned().unwrap_or(Value::Null)),
                    });
                }
                Ok(Kind::Request) => {
                    let asked = jsonrpc::method(&message).unwrap_or_default().to_owned();
                    tracing::debug!("answering the server's `{asked}` with method-not-found");
                    let answer = jsonrpc::error_response(
                        jsonrpc::id(&message).cloned().unwrap_or(Value::Null),
                        codes::METHOD_NOT_FOUND,
                        &format!("mcpcassette stub does not answer `{asked}`"),
                        None,
                    );
                    self.live.send(&answer)?;
                }
                _ => {}
            }
        }
    }
}

fn failed(method: &str, error: Value) -> StubError {
    StubError::Failed {
        method: method.to_owned(),
        error,
    }
}

fn instructions(result: &Value) -> Option<String> {
    result
        .get("instructions")
        .and_then(Value::as_str)
        .map(str::to_owned)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::StdioLive;

    const PATIENCE: Duration = Duration::from_secs(20);

    fn config(era: Era) -> StubConfig {
        StubConfig {
            era,
            timeout: PATIENCE,
        }
    }

    fn names(items: &[Value]) -> Vec<&str> {
        items.iter().filter_map(|i| i["name"].as_str()).collect()
    }

    #[test]
    fn the_example_server_is_inventoried_alike_in_both_eras() {
        let server = crate::client::testing::demo_server();
        let mut by_era = Vec::new();
        for era in [Era::Legacy, Era::Modern] {
            let mut live = StdioLive::spawn(std::slice::from_ref(&server), None).unwrap();
            let inventory = inventory(&mut live, &config(era)).unwrap();
            assert!(
                inventory.server_info["name"].is_string(),
                "{era:?}: {inventory:?}"
            );
            let tools = names(&inventory.lists.tools);
            assert!(tools.contains(&"echo"), "{era:?}: {tools:?}");
            assert!(
                inventory
                    .lists
                    .tools
                    .iter()
                    .all(|t| t["inputSchema"].is_object()),
                "{era:?}: definitions are kept verbatim"
            );
            by_era.push(inventory.lists);
        }
        assert_eq!(by_era[0], by_era[1], "one server, one inventory");
    }

    #[test]
    fn the_inventory_becomes_a_fixture_that_lists_the_same_tools() {
        let server = crate::client::testing::demo_server();
        let mut live = StdioLive::spawn(&[server], None).unwrap();
        let inventory = inventory(&mut live, &config(Era::Legacy)).unwrap();
        let counts = inventory.counts();
        let tools = inventory.lists.tools.clone();
        let text = fixture::to_text(&inventory.into_fixture());
        for tool in names(&tools) {
            assert!(text.contains(tool), "{tool} is missing from\n{text}");
        }
        assert!(
            counts.starts_with(&format!("{} tools, ", tools.len())),
            "{counts}"
        );
    }

    /// `cat` sends our `initialize` straight back; we answer it as a server
    /// request with method-not-found, which comes back as the response to
    /// our `initialize`: an error that ends the inventory, named.
    #[test]
    fn an_initialize_answered_with_an_error_names_the_method_and_the_error() {
        let mut live = StdioLive::spawn(&["cat".into()], None).unwrap();
        let error = inventory(&mut live, &config(Era::Legacy)).unwrap_err();
        let text = error.to_string();
        assert!(text.starts_with("`initialize` failed: "), "{text}");
        assert!(text.contains("-32601"), "{text}");
    }

    #[test]
    fn a_silent_server_is_a_named_timeout() {
        let mut live = StdioLive::spawn(&["sleep".into(), "30".into()], None).unwrap();
        let config = StubConfig {
            era: Era::Modern,
            timeout: Duration::from_millis(200),
        };
        let error = inventory(&mut live, &config).unwrap_err();
        assert!(
            matches!(&error, StubError::NoAnswer { method, .. } if method == "server/discover"),
            "{error}"
        );
    }

    #[test]
    fn secrets_in_what_the_server_lists_are_masked() {
        let token = "ghp_0123456789abcdefghijklmnopqrstuvwxyzAB";
        let mut inventory = Inventory {
            server_info: json!({"name": "s", "version": "1"}),
            instructions: Some(format!("use {token}")),
            lists: Lists {
                tools: vec![json!({"name": "t", "description": token})],
                ..Lists::default()
            },
        };
        let config = crate::redact::RedactConfig {
            defaults: true,
            ..Default::default()
        };
        let redactor = Redactor::new(&config).unwrap();
        assert_eq!(inventory.mask(&redactor), 2);
        let text = format!("{inventory:?}");
        assert!(!text.contains(token), "{text}");
    }
}
