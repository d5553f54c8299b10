//! One cassette, both eras: a cassette recorded in the legacy era
//! (`initialize`, server-to-client requests) answers 2026-07-28 clients,
//! and a 2026-07-28 cassette (`server/discover`, `resultType`,
//! `input_required`) answers legacy clients. Requests match alike in both
//! eras (matching leaves `params._meta` out); what differs is the
//! handshake and the shape of some answers, translated here:
//!
//! | the client asks | legacy cassette, modern client | modern cassette, legacy client |
//! |---|---|---|
//! | the handshake | `server/discover` from the recorded `initialize` result | `initialize` from the recorded `server/discover` result |
//! | any result | `resultType: "complete"` added | `resultType` left out |
//! | the server needs the client | recorded server requests become one `input_required` result; the retry carries the client's answers | `input_required` becomes the server requests it stands for; the client's answers feed the recorded retry |
//! | an error the eras code differently | resource not found -32002 becomes -32602; URL elicitation required (-32042) becomes -32006 | resource not found -32602 becomes -32002; unsupported protocol version -32022 becomes -32602 |
//!
//! Only recorded server errors are translated (see [`Translation::error`]);
//! the errors replay makes itself (a miss, `OUT_OF_ORDER`, ...) are its own
//! and go out as they are.
//!
//! The engine decides the client's era from what it sends (an
//! `initialize`, a `server/discover` or a `_meta` protocol version) and
//! says once on stderr that it translates.

use std::borrow::Cow;

use serde_json::{Map, Value, json};

use crate::cassette::{Event, Interaction};
use crate::jsonrpc::{self, codes};
use crate::protocol::{self, Era, LATEST_LEGACY_VERSION, META_SERVER_INFO, MODERN_VERSION};

/// Whether replay answers clients of the other era.
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum CrossEra {
    /// Translate, as the module documentation says.
    #[default]
    Auto,
    /// Answer as the recorded server would have: a legacy cassette answers
    /// `server/discover` with -32601 (so a modern-first client falls back),
    /// a modern one has no answer to `initialize`.
    Off,
}

/// How one session's answers are translated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Translation {
    /// The client speaks the cassette's era (or has not said yet).
    None,
    /// A modern cassette, a legacy client.
    ToLegacy,
    /// A legacy cassette, a modern client.
    ToModern,
}

/// Result members only 2026-07-28 has: how to read the result, and how
/// long it may be cached.
const MODERN_ONLY: [&str; 3] = ["resultType", "ttlMs", "cacheScope"];

/// The prefix of the `requestState` replay hands a modern client for a
/// recorded interaction whose server asked the client for something.
pub(crate) const REQUEST_STATE_PREFIX: &str = "mcpcassette-retry:";

impl Translation {
    /// Between a cassette of `cassette` era and a client of `client` era.
    pub(crate) fn between(cassette: Era, client: Era) -> Translation {
        match (cassette, client) {
            (Era::Modern, Era::Legacy) => Translation::ToLegacy,
            (Era::Legacy, Era::Modern) => Translation::ToModern,
            _ => Translation::None,
        }
    }

    /// A recorded response to `request` (the recorded request) as a client
    /// of the other era expects it. Borrowed when nothing changes (the same
    /// era, an error both eras code alike, a result already right).
    pub(crate) fn response<'a>(self, request: &Value, response: &'a Value) -> Cow<'a, Value> {
        // The common case first: the client speaks the cassette's era.
        if self == Translation::None {
            return Cow::Borrowed(response);
        }
        if let Some(error) = response.get("error") {
            return match self.error(request, error) {
                Some(error) => {
                    let mut response = response.clone();
                    response["error"] = error;
                    Cow::Owned(response)
                }
                None => Cow::Borrowed(response),
            };
        }
        let method = jsonrpc::method(request).unwrap_or_default();
        let Some(result) = response.get("result").and_then(Value::as_object) else {
            return Cow::Borrowed(response);
        };
        let cacheable = CACHEABLE.contains(&method);
        match self {
            Translation::None => Cow::Borrowed(response),
            Translation::ToModern
                if !result.contains_key("resultType")
                    || (cacheable && !result.contains_key("ttlMs")) =>
            {
                let mut response = response.clone();
                if let Some(result) = response.get_mut("result").and_then(Value::as_object_mut) {
                    result
                        .entry("resultType")
                        .or_insert_with(|| json!("complete"));
                    if cacheable {
                        // The recording says nothing of caching: stale at
                        // once, and for this client only.
                        result.entry("ttlMs").or_insert_with(|| json!(0));
                        result
                            .entry("cacheScope")
                            .or_insert_with(|| json!("private"));
                    }
                }
                Cow::Owned(response)
            }
            Translation::ToLegacy if MODERN_ONLY.iter().any(|key| result.contains_key(*key)) => {
                let mut response = response.clone();
                if let Some(result) = response.get_mut("result").and_then(Value::as_object_mut) {
                    for key in MODERN_ONLY {
                        result.shift_remove(key);
                    }
                }
                Cow::Owned(response)
            }
            _ => Cow::Borrowed(response),
        }
    }
}

/// Resource not found up to 2025-11-25 (server/resources, "Error
/// Handling"); 2026-07-28 answers -32602 instead and forbids -32002
/// (basic/index, "Error Codes").
pub(crate) const LEGACY_RESOURCE_NOT_FOUND: i64 = -32002;

/// URL elicitation required, only in 2025-11-25 (client/elicitation,
/// "Error Handling"); 2026-07-28 forbids it and asks for a URL elicitation
/// with an `input_required` result instead.
pub(crate) const URL_ELICITATION_REQUIRED: i64 = -32042;

impl Translation {
    /// A recorded server error as the client's era codes it; `None` when
    /// both eras code it alike. Between the eras:
    ///
    /// - resource not found: -32002 up to 2025-11-25, -32602 from
    ///   2026-07-28 (with `data.uri` in both eras' examples, which is
    ///   added from the request where the recording has none). A legacy
    ///   client gets -32002 for a 2026-07-28 `resources/read` error -32602
    ///   that names a URI in `data` or says "not found"; any other -32602
    ///   is invalid params in both eras;
    /// - unsupported protocol version: -32022 with `data.supported` and
    ///   `requested` in 2026-07-28, -32602 with the same `data` in the
    ///   legacy `initialize` (basic/lifecycle, "Error Handling");
    /// - URL elicitation required (-32042): 2026-07-28 has no error for it
    ///   and must not send -32042, so a modern client gets
    ///   [`NOT_TRANSLATED`] naming it, with the recorded `data` (the URLs);
    /// - -32020 and -32021 (2026-07-28 only) go to a legacy client as they
    ///   are: no legacy version codes those conditions, and to a legacy
    ///   client they are implementation-defined server errors, as JSON-RPC
    ///   has them.
    pub(crate) fn error(self, request: &Value, error: &Value) -> Option<Value> {
        let code = error.get("code").and_then(Value::as_i64)?;
        let method = jsonrpc::method(request).unwrap_or_default();
        match (self, code) {
            (Translation::ToModern, LEGACY_RESOURCE_NOT_FOUND) => {
                Some(resource_not_found(error, codes::INVALID_PARAMS, request))
            }
            (Translation::ToModern, URL_ELICITATION_REQUIRED) => {
                Some(url_elicitation_required(method, error))
            }
            (Translation::ToLegacy, codes::INVALID_PARAMS)
                if method == "resources/read" && says_not_found(error) =>
            {
                Some(resource_not_found(
                    error,
                    LEGACY_RESOURCE_NOT_FOUND,
                    request,
                ))
            }
            (Translation::ToLegacy, codes::UNSUPPORTED_PROTOCOL_VERSION) => {
                let mut error = error.clone();
                error["code"] = json!(codes::INVALID_PARAMS);
                Some(error)
            }
            _ => None,
        }
    }
}

/// Whether a 2026-07-28 `resources/read` error -32602 says the resource
/// does not exist (rather than that the params are malformed): it names
/// the URI in `data`, as the specification's example does, or says so.
fn says_not_found(error: &Value) -> bool {
    let names_uri = error.pointer("/data/uri").is_some_and(Value::is_string);
    let says = error
        .get("message")
        .and_then(Value::as_str)
        .is_some_and(|message| message.to_ascii_lowercase().contains("not found"));
    names_uri || says
}

/// A resource-not-found `error` with `code`, and the requested URI in
/// `data.uri` where the recording left it out.
fn resource_not_found(error: &Value, code: i64, request: &Value) -> Value {
    let mut error = error.clone();
    error["code"] = json!(code);
    let uri = jsonrpc::params(request).and_then(|params| params.get("uri"));
    if let (Some(uri), Some(fields)) = (uri.filter(|uri| uri.is_string()), error.as_object_mut()) {
        let data = fields.entry("data").or_insert_with(|| json!({}));
        if data.is_null() {
            *data = json!({});
        }
        if let Some(data) = data.as_object_mut() {
            data.entry("uri").or_insert_with(|| uri.clone());
        }
    }
    error
}

/// What a 2026-07-28 client gets for a recorded -32042.
fn url_elicitation_required(method: &str, error: &Value) -> Value {
    let recorded = error.get("message").and_then(Value::as_str).unwrap_or("");
    let message = format!(
        "mcpcassette: the recorded answer to `{method}` is -32042 (URL elicitation required), which only 2025-11-25 has: 2026-07-28 asks for a URL elicitation with an input_required result, which replay does not make of an error. The recorded message: {recorded}"
    );
    let mut translated = json!({"code": NOT_TRANSLATED, "message": message});
    if let Some(data) = error.get("data") {
        translated["data"] = data.clone();
    }
    translated
}

/// The methods whose 2026-07-28 results must say how long they may be
/// cached (`ttlMs`, `cacheScope`).
const CACHEABLE: [&str; 6] = [
    "server/discover",
    "tools/list",
    "prompts/list",
    "resources/list",
    "resources/templates/list",
    "resources/read",
];

/// `request` as a 2026-07-28 client would have sent it for matching: a
/// modern cassette's answers are keyed by the version each request
/// declared, which a legacy client's requests do not.
pub(crate) fn declaring(request: &Value, version: Option<&str>) -> Value {
    let mut request = request.clone();
    let version = version.unwrap_or(MODERN_VERSION);
    if let Some(message) = request.as_object_mut() {
        let params = message.entry("params").or_insert_with(|| json!({}));
        if let Some(params) = params.as_object_mut() {
            let meta = params.entry("_meta").or_insert_with(|| json!({}));
            if let Some(meta) = meta.as_object_mut() {
                meta.insert(protocol::META_PROTOCOL_VERSION.into(), json!(version));
            }
        }
    }
    request
}

/// Which recorded log messages (`notifications/message`) a client gets.
/// A legacy client set a level for the session (`logging/setLevel`), which
/// the recording followed; a 2026-07-28 client asks per request, in
/// `_meta`, and without asking gets none.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum LogFloor {
    /// Every recorded log message.
    All,
    /// Those at this severity or above (RFC 5424 order, 0 = debug); none
    /// for `None`.
    AtLeast(Option<usize>),
}

/// The `_meta` key of a 2026-07-28 request's log level.
const META_LOG_LEVEL: &str = "io.modelcontextprotocol/logLevel";

impl LogFloor {
    /// For `live`, a request of a client `translation` serves.
    pub(crate) fn of(translation: Translation, live: &Value) -> LogFloor {
        if translation != Translation::ToModern {
            return LogFloor::All;
        }
        let asked = live
            .pointer("/params/_meta")
            .and_then(|meta| meta.get(META_LOG_LEVEL))
            .and_then(Value::as_str);
        LogFloor::AtLeast(asked.and_then(protocol::log_severity))
    }

    /// Whether `notification` goes to the client.
    pub(crate) fn keeps(self, notification: &Value) -> bool {
        if jsonrpc::method(notification) != Some("notifications/message") {
            return true;
        }
        match self {
            LogFloor::All => true,
            LogFloor::AtLeast(None) => false,
            LogFloor::AtLeast(Some(floor)) => notification
                .pointer("/params/level")
                .and_then(Value::as_str)
                .and_then(protocol::log_severity)
                .is_none_or(|rank| rank >= floor),
        }
    }
}

/// The error of a request of one era's features that a recording of the
/// other era cannot answer (in the range MCP leaves to implementations).
pub(crate) const NOT_TRANSLATED: i64 = -32006;

/// The answer to a request of the client's era that the other era's
/// recording has nothing for: `logging/setLevel` (removed in 2026-07-28,
/// where each request asks for its own logs) is accepted; task methods,
/// whose shapes differ between 2025-11-25's experimental tasks and the
/// 2026-07-28 tasks extension, get an error naming both eras. `None` for
/// anything else (an ordinary miss). Subscriptions are translated
/// elsewhere (`subscriptions`).
pub(crate) fn unrecorded(translation: Translation, method: &str, id: &Value) -> Option<Value> {
    let tasks = method.starts_with("tasks/");
    let (era, instead) = match (translation, method) {
        (Translation::ToLegacy, "logging/setLevel") => {
            return Some(jsonrpc::result_response(id.clone(), json!({})));
        }
        (Translation::ToLegacy, _) if tasks => (
            "2026-07-28",
            "its tasks are the io.modelcontextprotocol/tasks extension, not 2025-11-25's experimental tasks",
        ),
        (Translation::ToModern, _) if tasks => (
            "legacy",
            "its tasks are 2025-11-25's experimental tasks, not the io.modelcontextprotocol/tasks extension",
        ),
        _ => return None,
    };
    let message = format!(
        "mcpcassette: `{method}` cannot be answered from this {era} recording: {instead}, which replay does not translate"
    );
    Some(jsonrpc::error_response(
        id.clone(),
        NOT_TRANSLATED,
        &message,
        None,
    ))
}

/// The era a client shows in `message`, if it shows one.
pub(crate) fn client_era(message: &Value) -> Option<Era> {
    match jsonrpc::method(message) {
        Some("initialize") => return Some(Era::Legacy),
        Some("server/discover") => return Some(Era::Modern),
        _ => {}
    }
    protocol::declared_version(message).map(Era::of_version)
}

/// The `initialize` result a legacy client gets from a modern cassette,
/// from the recorded `server/discover` result: the server's identity,
/// capabilities and instructions, and the version the client asked for
/// when the server supports it (else the last legacy version).
pub(crate) fn initialize_result(discover: &Value, requested: Option<&str>) -> Value {
    let supported: Vec<&str> = discover
        .get("supportedVersions")
        .and_then(Value::as_array)
        .map(|v| v.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let legacy =
        |v: &&str| Era::of_version(v) == Era::Legacy && protocol::Version::parse(v).is_some();
    let version = requested
        .filter(|v| legacy(v) && (supported.is_empty() || supported.contains(v)))
        .or_else(|| supported.iter().copied().find(legacy))
        .unwrap_or(LATEST_LEGACY_VERSION);
    let server_info = discover
        .get("_meta")
        .and_then(|meta| meta.get(META_SERVER_INFO))
        .or_else(|| discover.get("serverInfo"))
        .cloned()
        .unwrap_or_else(|| json!({"name": "mcpcassette-replay", "version": "0"}));
    let mut result = Map::new();
    result.insert("protocolVersion".into(), json!(version));
    result.insert(
        "capabilities".into(),
        discover.get("capabilities").cloned().unwrap_or(json!({})),
    );
    result.insert("serverInfo".into(), server_info);
    if let Some(instructions) = discover.get("instructions") {
        result.insert("instructions".into(), instructions.clone());
    }
    Value::Object(result)
}

/// The `server/discover` result a modern client gets from a legacy
/// cassette, from the recorded `initialize` result: the versions are
/// 2026-07-28 (translated) and the one recorded (answered as recorded).
pub(crate) fn discover_result(initialize: &Value) -> Value {
    let mut versions = vec![json!(MODERN_VERSION)];
    if let Some(recorded) = initialize.get("protocolVersion").filter(|v| v.is_string()) {
        versions.push(recorded.clone());
    }
    let mut result = Map::new();
    result.insert("resultType".into(), json!("complete"));
    result.insert("supportedVersions".into(), versions.into());
    // The recording says nothing of caching: stale at once, and for this
    // client only.
    result.insert("ttlMs".into(), json!(0));
    result.insert("cacheScope".into(), json!("private"));
    result.insert(
        "capabilities".into(),
        initialize.get("capabilities").cloned().unwrap_or(json!({})),
    );
    if let Some(instructions) = initialize.get("instructions") {
        result.insert("instructions".into(), instructions.clone());
    }
    if let Some(info) = initialize.get("serverInfo") {
        result.insert("_meta".into(), json!({ META_SERVER_INFO: info }));
    }
    Value::Object(result)
}

/// The recorded server requests of an interaction, with the client's
/// recorded answers, in order.
pub(crate) fn server_requests(interaction: &Interaction) -> Vec<(&Value, Option<&Value>)> {
    interaction
        .during
        .iter()
        .filter_map(|event| match event {
            Event::ServerRequest {
                server_request,
                client_response,
            } => Some((&**server_request, client_response.as_deref())),
            Event::Notification { .. } => None,
        })
        .collect()
}

/// The key of server request `index` in an `input_required` result.
pub(crate) fn input_key(index: usize) -> String {
    format!("r{index}")
}

/// The `input_required` result standing for `requests` (a legacy
/// interaction's server requests), with the state that brings the retry
/// back to interaction `position`.
pub(crate) fn input_required(requests: &[(&Value, Option<&Value>)], position: usize) -> Value {
    let mut inputs = Map::new();
    for (index, (request, _)) in requests.iter().enumerate() {
        let mut input = Map::new();
        if let Some(method) = jsonrpc::method(request) {
            input.insert("method".into(), json!(method));
        }
        if let Some(params) = jsonrpc::params(request) {
            input.insert("params".into(), params.clone());
        }
        inputs.insert(input_key(index), Value::Object(input));
    }
    json!({
        "resultType": "input_required",
        "inputRequests": inputs,
        "requestState": format!("{REQUEST_STATE_PREFIX}{position}"),
    })
}

/// The recorded interaction a modern client's retry comes back to: the
/// position in a `requestState` replay handed out.
pub(crate) fn retry_position(request: &Value) -> Option<usize> {
    jsonrpc::params(request)?
        .get("requestState")?
        .as_str()?
        .strip_prefix(REQUEST_STATE_PREFIX)?
        .parse()
        .ok()
}

/// A client's answer to input request `key` of a retry, as the JSON-RPC
/// response a legacy client would have sent.
pub(crate) fn input_response(request: &Value, key: &str) -> Option<Value> {
    let answer = jsonrpc::params(request)?.get("inputResponses")?.get(key)?;
    Some(json!({"jsonrpc": "2.0", "id": 0, "result": answer}))
}

/// The server requests a modern `input_required` result stands for:
/// each key with its request (method and params, no id yet).
pub(crate) fn input_requests(result: &Value) -> Vec<(String, Value)> {
    let Some(inputs) = result.get("inputRequests").and_then(Value::as_object) else {
        return Vec::new();
    };
    inputs
        .iter()
        .map(|(key, input)| {
            // The id is replay's own, set when the request goes out.
            let method = input.get("method").cloned().unwrap_or(Value::Null);
            let mut request = json!({"jsonrpc": "2.0", "id": 0, "method": method});
            if let Some(params) = input.get("params") {
                request["params"] = params.clone();
            }
            (key.clone(), request)
        })
        .collect()
}

/// Whether a recorded response is a modern `input_required` result.
pub(crate) fn is_input_required(response: &Value) -> bool {
    response
        .pointer("/result/resultType")
        .and_then(Value::as_str)
        == Some("input_required")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_client_shows_its_era_by_its_handshake_or_its_meta() {
        assert_eq!(
            client_era(&json!({"method": "initialize"})),
            Some(Era::Legacy)
        );
        assert_eq!(
            client_era(&json!({"method": "server/discover"})),
            Some(Era::Modern)
        );
        let modern = json!({"method": "tools/list", "params": {"_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28"}}});
        assert_eq!(client_era(&modern), Some(Era::Modern));
        assert_eq!(client_era(&json!({"method": "tools/list"})), None);
    }

    /// A recorded request to `method`, with `params`.
    fn request(method: &str, params: Value) -> Value {
        json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
    }

    fn error(code: i64, message: &str, data: Option<Value>) -> Value {
        let mut error = json!({"code": code, "message": message});
        if let Some(data) = data {
            error["data"] = data;
        }
        json!({"jsonrpc": "2.0", "id": 1, "error": error})
    }

    #[test]
    fn results_gain_or_lose_result_type() {
        let call = request("tools/call", json!({"name": "t"}));
        let legacy = json!({"jsonrpc": "2.0", "id": 1, "result": {"content": []}});
        let modern = Translation::ToModern.response(&call, &legacy);
        assert_eq!(modern["result"]["resultType"], "complete");
        assert!(
            modern["result"].get("ttlMs").is_none(),
            "tool results are not cached"
        );
        let back = Translation::ToLegacy.response(&call, &modern);
        assert_eq!(*back, legacy);
        let list_tools = request("tools/list", json!({}));
        let list = json!({"jsonrpc": "2.0", "id": 1, "result": {"tools": []}});
        let modern = Translation::ToModern.response(&list_tools, &list);
        assert_eq!(modern["result"]["ttlMs"], 0);
        assert_eq!(modern["result"]["cacheScope"], "private");
        assert_eq!(*Translation::ToLegacy.response(&list_tools, &modern), list);
        assert!(matches!(
            Translation::None.response(&call, &legacy),
            Cow::Borrowed(_)
        ));
    }

    const README: &str = "demo://readme";

    fn read() -> Value {
        request("resources/read", json!({"uri": README}))
    }

    #[test]
    fn resource_not_found_is_each_eras_own_code_both_ways() {
        // 2024-11-05 .. 2025-11-25 server/resources: -32002, data.uri.
        let legacy = error(-32002, "Resource not found", Some(json!({"uri": README})));
        // 2026-07-28 server/resources: -32602, data.uri.
        let modern = error(-32602, "Resource not found", Some(json!({"uri": README})));
        assert_eq!(*Translation::ToModern.response(&read(), &legacy), modern);
        assert_eq!(*Translation::ToLegacy.response(&read(), &modern), legacy);
        // The same era: as recorded.
        assert!(matches!(
            Translation::None.response(&read(), &legacy),
            Cow::Borrowed(_)
        ));
    }

    #[test]
    fn a_resource_not_found_without_its_uri_gains_it() {
        let bare = error(-32002, "Resource not found", None);
        let modern = Translation::ToModern.response(&read(), &bare);
        assert_eq!(modern["error"]["code"], -32602);
        assert_eq!(modern["error"]["data"], json!({"uri": README}));
        let other_data = error(-32002, "gone", Some(json!({"why": "deleted"})));
        let modern = Translation::ToModern.response(&read(), &other_data);
        assert_eq!(
            modern["error"]["data"],
            json!({"why": "deleted", "uri": README})
        );
        let said = error(-32602, "Resource demo://readme not found", None);
        let legacy = Translation::ToLegacy.response(&read(), &said);
        assert_eq!(legacy["error"]["code"], -32002);
        assert_eq!(
            legacy["error"]["message"],
            "Resource demo://readme not found"
        );
        assert_eq!(legacy["error"]["data"], json!({"uri": README}));
        // Data that is not an object is left as it is.
        let text = error(-32002, "Resource not found", Some(json!("no such file")));
        let modern = Translation::ToModern.response(&read(), &text);
        assert_eq!(modern["error"]["code"], -32602);
        assert_eq!(modern["error"]["data"], "no such file");
    }

    #[test]
    fn legacy_resource_not_found_is_never_sent_to_a_modern_client() {
        // 2026-07-28 (basic/index, "Error Codes") forbids sending -32002
        // and reads it as resource not found from any method.
        let subscribe = request("resources/subscribe", json!({"uri": README}));
        let legacy = error(-32002, "Resource not found", Some(json!({"uri": README})));
        let modern = Translation::ToModern.response(&subscribe, &legacy);
        assert_eq!(modern["error"]["code"], -32602);
    }

    #[test]
    fn invalid_params_that_are_not_a_missing_resource_stay_invalid_params() {
        let malformed = error(-32602, "missing params.uri", None);
        let no_uri = request("resources/read", json!({}));
        assert!(matches!(
            Translation::ToLegacy.response(&no_uri, &malformed),
            Cow::Borrowed(_)
        ));
        // Only resources/read has resource-not-found errors.
        let unknown_tool = error(-32602, "Tool not found", Some(json!({"uri": README})));
        let call = request("tools/call", json!({"name": "nope"}));
        assert!(matches!(
            Translation::ToLegacy.response(&call, &unknown_tool),
            Cow::Borrowed(_)
        ));
        // And a legacy -32602 is a modern -32602.
        let legacy = error(-32602, "Resource not found", Some(json!({"uri": README})));
        assert!(matches!(
            Translation::ToModern.response(&read(), &legacy),
            Cow::Borrowed(_)
        ));
    }

    #[test]
    fn unsupported_protocol_version_is_invalid_params_for_a_legacy_client() {
        // 2026-07-28 basic/versioning: -32022; legacy basic/lifecycle:
        // -32602 "Unsupported protocol version", the same data.
        let data = json!({"supported": ["2026-07-28"], "requested": "2099-01-01"});
        let modern = error(-32022, "Unsupported protocol version", Some(data.clone()));
        let legacy = Translation::ToLegacy.response(&request("tools/list", json!({})), &modern);
        assert_eq!(
            *legacy,
            error(-32602, "Unsupported protocol version", Some(data))
        );
        // A legacy recording's -32022 means what 2026-07-28 says it means.
        assert!(matches!(
            Translation::ToModern.response(&request("tools/list", json!({})), &modern),
            Cow::Borrowed(_)
        ));
    }

    #[test]
    fn url_elicitation_required_is_named_to_a_modern_client() {
        // 2025-11-25 client/elicitation: -32042 with data.elicitations;
        // 2026-07-28 forbids -32042.
        let data = json!({"elicitations": [{"mode": "url", "elicitationId": "e1",
            "url": "https://example.com/connect", "message": "Connect"}]});
        let legacy = error(
            -32042,
            "This request requires more information.",
            Some(data.clone()),
        );
        let call = request("tools/call", json!({"name": "files"}));
        let modern = Translation::ToModern.response(&call, &legacy);
        assert_eq!(modern["error"]["code"], NOT_TRANSLATED);
        assert_eq!(modern["error"]["data"], data, "the URLs are kept");
        let text = modern["error"]["message"].as_str().unwrap();
        assert!(
            text.contains("`tools/call`")
                && text.contains("-32042")
                && text.contains("input_required")
                && text.contains("This request requires more information."),
            "{text}"
        );
    }

    #[test]
    fn codes_both_eras_share_or_only_one_has_go_out_as_recorded() {
        let call = request("tools/call", json!({"name": "t"}));
        let shared = [
            -32700, -32600, -32601, -32602, -32603, -32000, -32001, -1, 0, 42,
        ];
        for code in shared {
            let recorded = error(code, "x", Some(json!({"k": 1})));
            for translation in [Translation::ToModern, Translation::ToLegacy] {
                assert!(
                    matches!(translation.response(&call, &recorded), Cow::Borrowed(_)),
                    "{code} {translation:?}"
                );
            }
        }
        // 2026-07-28's header mismatch and missing client capability:
        // no legacy version codes them, so a legacy client gets them as
        // recorded (and a modern client of a legacy recording too).
        for code in [-32020, -32021] {
            let recorded = error(code, "x", Some(json!({"requiredCapabilities": {}})));
            for translation in [Translation::ToModern, Translation::ToLegacy] {
                assert!(
                    matches!(translation.response(&call, &recorded), Cow::Borrowed(_)),
                    "{code} {translation:?}"
                );
            }
        }
        // A code that is not an integer is not read.
        let odd = json!({"jsonrpc": "2.0", "id": 1, "error": {"code": "-32002", "message": "x"}});
        assert!(matches!(
            Translation::ToModern.response(&read(), &odd),
            Cow::Borrowed(_)
        ));
    }

    #[test]
    fn what_one_era_has_and_the_other_not_is_accepted_or_named() {
        let id = json!(3);
        let set_level = unrecorded(Translation::ToLegacy, "logging/setLevel", &id).unwrap();
        assert_eq!(set_level["result"], json!({}));
        let poll = unrecorded(Translation::ToLegacy, "tasks/get", &id).unwrap();
        assert_eq!(poll["error"]["code"], NOT_TRANSLATED);
        let text = poll["error"]["message"].as_str().unwrap();
        assert!(
            text.contains("`tasks/get`") && text.contains("2026-07-28"),
            "{text}"
        );
        let poll = unrecorded(Translation::ToModern, "tasks/get", &id).unwrap();
        assert!(
            poll["error"]["message"]
                .as_str()
                .unwrap()
                .contains("legacy recording")
        );
        assert_eq!(
            unrecorded(Translation::ToLegacy, "resources/subscribe", &id),
            None,
            "subscriptions are translated"
        );
        assert_eq!(unrecorded(Translation::None, "logging/setLevel", &id), None);
        assert_eq!(unrecorded(Translation::ToLegacy, "tools/call", &id), None);
    }

    #[test]
    fn initialize_and_discover_carry_the_same_server() {
        let discover = json!({"resultType": "complete",
            "supportedVersions": ["2026-07-28", "2025-06-18"],
            "capabilities": {"tools": {}}, "instructions": "hi",
            "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "s", "version": "1"}}});
        let init = initialize_result(&discover, Some("2025-11-25"));
        assert_eq!(
            init["protocolVersion"], "2025-06-18",
            "the newest legacy version it supports"
        );
        assert_eq!(init["serverInfo"]["name"], "s");
        assert_eq!(init["capabilities"], json!({"tools": {}}));
        assert_eq!(
            initialize_result(&discover, Some("2025-06-18"))["protocolVersion"],
            "2025-06-18"
        );
        let again = discover_result(&init);
        assert_eq!(again["capabilities"], discover["capabilities"]);
        assert_eq!(again["instructions"], "hi");
        assert_eq!(again["_meta"], discover["_meta"]);
        assert_eq!(
            again["supportedVersions"],
            json!(["2026-07-28", "2025-06-18"])
        );
        let bare = initialize_result(&json!({}), None);
        assert_eq!(bare["protocolVersion"], LATEST_LEGACY_VERSION);
    }

    #[test]
    fn server_requests_round_trip_through_input_required() {
        let request = json!({"jsonrpc": "2.0", "id": 7, "method": "sampling/createMessage",
            "params": {"maxTokens": 5}});
        let answer = json!({"jsonrpc": "2.0", "id": 7, "result": {"model": "m"}});
        let result = input_required(&[(&request, Some(&answer))], 4);
        assert_eq!(
            result["inputRequests"]["r0"]["method"],
            "sampling/createMessage"
        );
        let retry = json!({"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": {
            "name": "t", "requestState": result["requestState"],
            "inputResponses": {"r0": {"model": "m"}}}});
        assert_eq!(retry_position(&retry), Some(4));
        assert_eq!(
            input_response(&retry, "r0").unwrap()["result"],
            json!({"model": "m"})
        );
        let back = input_requests(&result);
        assert_eq!(back[0].0, "r0");
        assert_eq!(back[0].1["params"], json!({"maxTokens": 5}));
    }
}
