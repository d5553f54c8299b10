//! `mcpcassette stub`: inventory a live server into a fixture, without
//! ever calling a tool. The handshake, then `tools/list`,
//! `resources/list`, `resources/templates/list` and `prompts/list`, every
//! page of each, one request at a time; every definition goes into the
//! fixture verbatim, with no answers (so the generated result applies).

use std::collections::HashSet;
use std::io::Write;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::{Context, anyhow, bail};
use mcpcassette::drift::DriftError;
use mcpcassette::drift::driver::{Live, StdioLive};
use mcpcassette::drift::http_live::HttpLive;
use mcpcassette::fixture;
use mcpcassette::jsonrpc::{self, Kind, codes};
use mcpcassette::protocol::{Era, META_PROTOCOL_VERSION, META_SERVER_INFO, MODERN_VERSION};
use mcpcassette::redact;
use serde_json::{Value, json};

use super::args::StubArgs;

/// The version a legacy `initialize` asks for.
const LEGACY_VERSION: &str = "2025-11-25";
/// 2026-07-28: the client's capabilities and identity on every request.
const META_CLIENT_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
const META_CLIENT_INFO: &str = "io.modelcontextprotocol/clientInfo";

/// Each list: its method, the capability that offers it, the key of its items.
const LISTS: [(&str, &str, &str); 4] = [
    ("tools/list", "tools", "tools"),
    ("resources/list", "resources", "resources"),
    ("resources/templates/list", "resources", "resourceTemplates"),
    ("prompts/list", "prompts", "prompts"),
];

/// Exit 0 with the fixture written; errors exit 2.
pub fn run(args: StubArgs) -> anyhow::Result<ExitCode> {
    let era = args.era;
    let (mut live, target): (Box<dyn Live>, String) = match (&args.url, args.command.is_empty()) {
        (Some(url), _) => {
            let shown = redact::mask_command(std::slice::from_ref(url)).join(" ");
            let live = HttpLive::connect(url, era)
                .map_err(|e| anyhow!("{}", e.to_string().replace(url.as_str(), &shown)))?;
            (Box::new(live), shown)
        }
        (None, false) => {
            let shown = redact::mask_command(&args.command).join(" ");
            let live = StdioLive::spawn(&args.command).map_err(|e| match e {
                DriftError::Spawn { source, .. } => anyhow!("cannot start `{shown}`: {source}"),
                other => anyhow!(other),
            })?;
            (Box::new(live), shown)
        }
        (None, true) => {
            bail!("name the server to inventory: `mcpcassette stub -- SERVER CMD` or `--url URL`")
        }
    };
    tracing::info!("inventorying `{target}` ({era:?} era)");
    let mut session = Session {
        live: live.as_mut(),
        era,
        timeout: Duration::from_secs(args.timeout),
        next_id: 1,
    };
    let inventory = session
        .inventory()
        .with_context(|| format!("stub of `{target}`"));
    live.close();
    let mut inventory = inventory?;
    mask(&mut inventory)?;
    let [tools, resources, templates, prompts] = inventory.lists;
    let counts = format!(
        "{} tools, {} resources, {} resource templates, {} prompts",
        tools.len(),
        resources.len(),
        templates.len(),
        prompts.len()
    );
    let fixture = fixture::from_inventory(
        &inventory.server_info,
        inventory.instructions.as_deref(),
        tools,
        resources,
        templates,
        prompts,
    );
    let text = fixture::to_text(&fixture);
    match &args.output {
        Some(path) => {
            mcpcassette::cassette::write_atomically(path, text.as_bytes())?;
            tracing::info!("{counts}: wrote {}", path.display());
        }
        None => {
            let mut stdout = std::io::stdout().lock();
            stdout.write_all(text.as_bytes())?;
            stdout.flush()?;
            tracing::info!("{counts}");
        }
    }
    Ok(ExitCode::from(super::exit::OK))
}

/// Masks the inventory as a recording is masked (token shapes and the
/// environment's secrets): fixtures get committed like cassettes.
fn mask(inventory: &mut Inventory) -> anyhow::Result<()> {
    let redactor = super::redactor(Vec::new(), Vec::new())?;
    let mut masked = redactor.redact_document(&mut inventory.server_info).len();
    for item in inventory.lists.iter_mut().flatten() {
        masked += redactor.redact_document(item).len();
    }
    if let Some(text) = &mut inventory.instructions
        && let std::borrow::Cow::Owned(out) = redactor.redact_text(text)
    {
        *text = out;
        masked += 1;
    }
    if masked > 0 {
        tracing::warn!(
            "masked {masked} secret(s) in what the server lists: the fixture holds placeholders there"
        );
    }
    Ok(())
}

/// What the server said about itself.
struct Inventory {
    server_info: Value,
    instructions: Option<String>,
    /// Tools, resources, templates, prompts, as [`LISTS`] orders them.
    lists: [Vec<Value>; 4],
}

/// One request at a time, each waited for.
struct Session<'a> {
    live: &'a mut dyn Live,
    era: Era,
    timeout: Duration,
    next_id: u64,
}

impl Session<'_> {
    fn inventory(&mut self) -> anyhow::Result<Inventory> {
        let (server_info, capabilities, instructions) = match self.era {
            Era::Modern => {
                let discover = self.call("server/discover", json!({}))?;
                let info = discover
                    .pointer(&format!("/_meta/{}", META_SERVER_INFO.replace('/', "~1")))
                    .or(discover.get("serverInfo"))
                    .cloned()
                    .unwrap_or(Value::Null);
                (
                    info,
                    discover["capabilities"].clone(),
                    instructions(&discover),
                )
            }
            _ => {
                let init = self.call(
                    "initialize",
                    json!({
                        "protocolVersion": LEGACY_VERSION,
                        "capabilities": {},
                        "clientInfo": client_info(),
                    }),
                )?;
                self.live.send(&json!({
                    "jsonrpc": "2.0",
                    "method": "notifications/initialized",
                }))?;
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
        let mut lists: [Vec<Value>; 4] = Default::default();
        for (slot, (method, capability, key)) in lists.iter_mut().zip(LISTS) {
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
    fn list(&mut self, method: &str, key: &str) -> anyhow::Result<Vec<Value>> {
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
                Err(error) => bail!("`{method}` failed: {error}"),
            };
            let page = result
                .get(key)
                .and_then(Value::as_array)
                .ok_or_else(|| anyhow!("the `{method}` result has no `{key}` array: {result}"))?;
            items.extend(page.iter().cloned());
            match result.get("nextCursor").and_then(Value::as_str) {
                Some(next) => {
                    if !seen.insert(next.to_owned()) {
                        bail!("`{method}` returned the cursor `{next}` twice; stopping");
                    }
                    cursor = Some(next.to_owned());
                }
                None => return Ok(items),
            }
        }
    }

    /// A request whose error ends the stub.
    fn call(&mut self, method: &str, params: Value) -> anyhow::Result<Value> {
        self.request(method, params)?
            .map_err(|error| anyhow!("`{method}` failed: {error}"))
    }

    /// Sends a request and waits for its response: `Ok(result)` or
    /// `Err(error)`. Notifications are ignored; server requests get a
    /// method-not-found error.
    fn request(&mut self, method: &str, mut params: Value) -> anyhow::Result<Result<Value, Value>> {
        if self.era == Era::Modern {
            params["_meta"] = json!({
                META_PROTOCOL_VERSION: MODERN_VERSION,
                META_CLIENT_CAPABILITIES: {},
                META_CLIENT_INFO: client_info(),
            });
        }
        let id = json!(self.next_id);
        self.next_id += 1;
        self.live.send(&json!({
            "jsonrpc": "2.0",
            "id": id,
            "method": method,
            "params": params,
        }))?;
        let deadline = Instant::now() + self.timeout;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let Some(message) = self.live.recv(left)? else {
                bail!(
                    "no answer to `{method}` within {} s (or the server went away)",
                    self.timeout.as_secs()
                );
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

fn client_info() -> Value {
    json!({"name": "mcpcassette-stub", "version": env!("CARGO_PKG_VERSION")})
}

fn instructions(result: &Value) -> Option<String> {
    result
        .get("instructions")
        .and_then(Value::as_str)
        .map(str::to_owned)
}
