//! The public checks end to end: every violation kind, and the rules that
//! set the versions apart. (The cross-check against the official schemas
//! is the integration test `schema_crosscheck`.)

use serde_json::{Value, json};

use super::ViolationKind::{self, *};
use super::{Shape, ToolArguments, VERSIONS, check_envelope, check_message, check_shape};

const MODERN: &str = "2026-07-28";

fn kinds(version: &str, message: Value, request_method: Option<&str>) -> Vec<ViolationKind> {
    check_message(version, &message, request_method)
        .into_iter()
        .map(|v| v.kind)
        .collect()
}

fn modern_meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": {}
    })
}

#[test]
fn every_kind_is_reported_somewhere() {
    let v = "2025-06-18";
    assert_eq!(
        kinds(
            v,
            json!({"jsonrpc": "1.0", "id": 1, "method": "ping"}),
            None
        ),
        [JsonRpcVersion]
    );
    assert_eq!(
        kinds(v, json!({"jsonrpc": "2.0", "id": 1, "method": 7}), None),
        [MethodType]
    );
    assert_eq!(
        kinds(
            v,
            json!({"jsonrpc": "2.0", "id": [1], "method": "ping"}),
            None
        ),
        [IdType]
    );
    assert_eq!(
        kinds(
            v,
            json!({"jsonrpc": "2.0", "id": 1, "method": "ping", "params": [1]}),
            None
        ),
        [ParamsType]
    );
    assert_eq!(
        kinds(v, json!({"jsonrpc": "2.0", "id": 1}), None),
        [ResultXorError]
    );
    assert_eq!(
        kinds(
            v,
            json!({"jsonrpc": "2.0", "id": 1, "error": {"code": 1}}),
            None
        ),
        [ErrorShape]
    );
    assert_eq!(
        kinds(
            v,
            json!({"jsonrpc": "2.0", "id": 1, "method": "acme/x"}),
            None
        ),
        [UnknownMethod]
    );
    assert_eq!(
        kinds(
            v,
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {}}),
            None
        ),
        [RequestParams]
    );
    assert_eq!(
        kinds(
            v,
            json!({"jsonrpc": "2.0", "id": 1, "result": {}}),
            Some("tools/list")
        ),
        [ResultShape]
    );
    assert_eq!(
        kinds(
            v,
            json!({"jsonrpc": "2.0", "method": "notifications/progress"}),
            None
        ),
        [Notification]
    );
    let tools = |tool: Value| json!({"jsonrpc": "2.0", "id": 1, "result": {"tools": [tool]}});
    assert_eq!(
        kinds(
            v,
            tools(json!({"inputSchema": {"type": "object"}})),
            Some("tools/list")
        ),
        [ToolDefinition]
    );
    assert_eq!(
        kinds(
            v,
            tools(json!({"name": "x", "inputSchema": {"type": "array"}})),
            Some("tools/list")
        ),
        [InputSchema]
    );
    let call = json!({"jsonrpc": "2.0", "id": 1, "result": {"content": [{"type": "txt"}]}});
    assert_eq!(kinds(v, call, Some("tools/call")), [Content]);
    let untyped = json!({"jsonrpc": "2.0", "id": 1, "result": {"content": []}});
    assert_eq!(kinds(MODERN, untyped, Some("tools/call")), [ResultType]);
    let arguments = ToolArguments::new(&json!({"type": "object", "required": ["q"]})).unwrap();
    assert_eq!(
        arguments.check(&json!({}))[0].kind,
        ViolationKind::ToolArguments
    );
}

#[test]
fn messages_name_what_was_expected() {
    let call =
        json!({"jsonrpc": "2.0", "id": 1, "result": {"content": [{"type": "txt", "text": "x"}]}});
    let found = check_message("2025-06-18", &call, Some("tools/call"));
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].pointer, "/result/content/0/type");
    assert_eq!(
        found[0].message,
        "`/result/content/0/type` must be one of text, image, audio, resource_link, resource; found \"txt\""
    );
    let found = check_message(
        "2024-11-05",
        &json!({"jsonrpc": "2.0", "id": 1, "method": 7}),
        None,
    );
    assert_eq!(found[0].message, "`/method` must be a string; found 7");
    let found = check_message("2024-11-05", &json!({"id": 1, "method": "ping"}), None);
    assert_eq!(found[0].message, "`/jsonrpc` is required (\"2.0\")");
}

#[test]
fn result_type_is_a_2026_rule() {
    let bare = json!({"jsonrpc": "2.0", "id": 1, "result": {"content": []}});
    for version in &VERSIONS[..4] {
        assert!(
            kinds(version, bare.clone(), Some("tools/call")).is_empty(),
            "{version}"
        );
    }
    assert_eq!(kinds(MODERN, bare, Some("tools/call")), [ResultType]);
    let unknown = json!({"jsonrpc": "2.0", "id": 1, "result": {}});
    assert_eq!(kinds(MODERN, unknown, None), [ResultType]);
    let typed =
        json!({"jsonrpc": "2.0", "id": 1, "result": {"resultType": "complete", "content": []}});
    assert!(kinds(MODERN, typed, Some("tools/call")).is_empty());
}

#[test]
fn input_required_results_only_where_the_method_allows_them() {
    let asks = json!({"jsonrpc": "2.0", "id": 1, "result": {"resultType": "input_required", "requestState": "s"}});
    assert!(kinds(MODERN, asks.clone(), Some("tools/call")).is_empty());
    assert!(kinds(MODERN, asks.clone(), Some("prompts/get")).is_empty());
    // tools/list cannot ask: its result lacks `tools`, `ttlMs`, `cacheScope`.
    assert_eq!(kinds(MODERN, asks, Some("tools/list")), [ResultShape; 3]);
}

#[test]
fn handshakes_belong_to_their_era() {
    let discover = json!({"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": modern_meta()}});
    assert!(kinds(MODERN, discover.clone(), None).is_empty());
    for version in &VERSIONS[..4] {
        assert_eq!(
            kinds(version, discover.clone(), None),
            [UnknownMethod],
            "{version}"
        );
    }
    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}
    }});
    for version in &VERSIONS[..4] {
        assert!(
            kinds(version, initialize.clone(), None).is_empty(),
            "{version}"
        );
    }
    let found = check_message(MODERN, &initialize, None);
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].kind, UnknownMethod);
    assert!(
        found[0]
            .message
            .contains("2024-11-05, 2025-03-26, 2025-06-18, 2025-11-25"),
        "{}",
        found[0].message
    );
}

#[test]
fn modern_requests_carry_version_and_capabilities() {
    let list = |params: Value| json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": params});
    assert!(kinds(MODERN, list(json!({"_meta": modern_meta()})), None).is_empty());
    assert_eq!(kinds(MODERN, list(json!({})), None), [RequestParams]);
    assert!(kinds("2025-11-25", list(json!({})), None).is_empty());
}

#[test]
fn tasks_and_elicitation_exist_only_in_their_versions() {
    let get = json!({"jsonrpc": "2.0", "id": 1, "method": "tasks/get", "params": {"taskId": "t"}});
    for version in VERSIONS {
        let expected: &[ViolationKind] = if version == "2025-11-25" {
            &[]
        } else {
            &[UnknownMethod]
        };
        assert_eq!(kinds(version, get.clone(), None), expected, "{version}");
    }
    let elicit = json!({"jsonrpc": "2.0", "id": 1, "method": "elicitation/create", "params": {
        "message": "m", "requestedSchema": {"type": "object", "properties": {}}
    }});
    assert_eq!(kinds("2025-03-26", elicit.clone(), None), [UnknownMethod]);
    assert!(kinds("2025-06-18", elicit.clone(), None).is_empty());
    // 2026-07-28 has it only inside `inputRequests`: a warning, shape still checked.
    assert_eq!(kinds(MODERN, elicit, None), [UnknownMethod]);
    let nested = json!({"method": "elicitation/create", "params": {"message": "m"}});
    let asked = json!({"x": nested});
    assert_eq!(check_shape(MODERN, Shape::InputRequests, &asked).len(), 1);
    assert_eq!(
        check_shape("2025-11-25", Shape::InputRequests, &asked)[0].kind,
        UnknownMethod
    );
}

#[test]
fn null_ids_are_for_error_responses_and_ids_may_be_missing_from_2025_11_25() {
    let parse_error =
        json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32700, "message": "Parse error"}});
    assert!(check_envelope(&parse_error).is_empty());
    let no_id = json!({"jsonrpc": "2.0", "error": {"code": -32700, "message": "Parse error"}});
    assert_eq!(kinds("2025-06-18", no_id.clone(), None), [IdType]);
    assert!(kinds("2025-11-25", no_id.clone(), None).is_empty());
    assert_eq!(check_envelope(&no_id)[0].kind, IdType);
}

#[test]
fn batches_only_in_2025_03_26() {
    let batch = json!([{"jsonrpc": "2.0", "id": 1, "method": "ping"}, {"jsonrpc": "2.0", "id": 2, "method": 5}]);
    let found = check_message("2025-03-26", &batch, None);
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].pointer, "/1/method");
    assert_eq!(kinds("2025-06-18", batch.clone(), None), [JsonRpcVersion]);
    assert_eq!(check_envelope(&batch)[0].pointer, "/1/method");
    assert_eq!(kinds("2025-03-26", json!([]), None), [JsonRpcVersion]);
}

#[test]
fn unknown_versions_get_the_envelope_and_a_warning() {
    let found = check_message(
        "2023-01-01",
        &json!({"jsonrpc": "2.0", "id": 1, "method": 3}),
        None,
    );
    let found: Vec<ViolationKind> = found.into_iter().map(|v| v.kind).collect();
    assert_eq!(found, [MethodType, UnknownMethod]);
    assert_eq!(
        check_shape("2023-01-01", Shape::Tool, &json!({}))[0].kind,
        UnknownMethod
    );
}

#[test]
fn shapes_check_one_definition() {
    let tool = json!({"name": "x", "inputSchema": {"type": "object"}});
    assert!(check_shape("2024-11-05", Shape::Tool, &tool).is_empty());
    let found = check_shape("2024-11-05", Shape::ContentBlock, &json!({"type": "audio"}));
    assert_eq!(found[0].pointer, "/type");
    assert_eq!(found[0].kind, Content);
    let request = json!({"method": "tools/call", "params": {"name": "x"}});
    assert!(check_shape("2025-06-18", Shape::Request("tools/call"), &request).is_empty());
    // From 2025-11-25 the request definitions include the envelope.
    let found: Vec<ViolationKind> =
        check_shape("2025-11-25", Shape::Request("tools/call"), &request)
            .into_iter()
            .map(|v| v.kind)
            .collect();
    assert_eq!(found, [IdType, JsonRpcVersion]);
    let sampling =
        json!({"method": "sampling/createMessage", "params": {"messages": [], "maxTokens": 5}});
    assert!(check_shape(MODERN, Shape::Request("sampling/createMessage"), &sampling).is_empty());
    assert_eq!(
        check_shape(MODERN, Shape::Request("ping"), &json!({}))[0].kind,
        UnknownMethod
    );
    let error = check_shape(MODERN, Shape::Error, &json!({"code": 1.5, "message": "m"}));
    assert_eq!(
        (error[0].kind, error[0].pointer.as_str()),
        (ErrorShape, "/code")
    );
    let result =
        json!({"role": "assistant", "content": {"type": "text", "text": "hi"}, "model": "m"});
    assert!(check_shape(MODERN, Shape::Result("sampling/createMessage"), &result).is_empty());
    assert_eq!(
        check_shape(MODERN, Shape::Result("tools/call"), &json!({"content": []}))[0].kind,
        ResultType
    );
    let params = json!({"_meta": {"io.modelcontextprotocol/subscriptionId": "l"}, "progressToken": 1, "progress": 2});
    assert!(
        check_shape(
            MODERN,
            Shape::NotificationParams("notifications/progress"),
            &params
        )
        .is_empty()
    );
}
