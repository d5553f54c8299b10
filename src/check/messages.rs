//! Per-message checks: the JSON-RPC envelope, MCP shapes for the
//! cassette's protocol version, pairing of responses with requests, tool
//! arguments against the advertised `inputSchema`, tool results against the
//! advertised `outputSchema`, and (on request) the official schema.

use std::collections::HashMap;

use serde_json::Value;

use super::CheckConfig;
use super::findings::{Code, Finding};
use crate::cassette::{Cassette, ClientMessage, Event};
use crate::json::RawMessage;
use crate::schema::{self, ToolArguments, ToolOutput, Violation, ViolationKind};

/// One message of a cassette, where it sits, and what it answers.
pub(super) struct Located<'a> {
    /// Where the message is in the document.
    pub place: Place,
    /// The message. Checks read it without keeping its tree, so that a
    /// big cassette is checked in the memory it loads in.
    pub message: &'a RawMessage,
    /// For a response: the method of the request it answers.
    pub answers: Option<&'a str>,
}

/// Where a message sits, spelled out as a JSON pointer only when a
/// finding needs one.
#[derive(Debug, Clone, Copy)]
pub(super) struct Place {
    /// The interaction, or `None` for `/opening`.
    interaction: Option<usize>,
    /// `during`, `after` or (with no interaction) `opening`, and the event.
    event: Option<(&'static str, usize)>,
    /// The message's field: `request`, `response`, `server_request`, …
    field: &'static str,
}

impl Place {
    /// The JSON pointer of the message.
    pub(super) fn pointer(&self) -> String {
        let mut pointer = match self.interaction {
            Some(i) => format!("/interactions/{i}"),
            None => String::new(),
        };
        if let Some((list, j)) = self.event {
            pointer.push_str(&format!("/{list}/{j}"));
        }
        pointer.push('/');
        pointer.push_str(self.field);
        pointer
    }
}

/// Every message in the cassette, in document order.
pub(super) fn all(cassette: &Cassette) -> Vec<Located<'_>> {
    let mut out = Vec::new();
    events(&mut out, None, "opening", &cassette.opening);
    for (i, interaction) in cassette.interactions.iter().enumerate() {
        let place = |field| Place {
            interaction: Some(i),
            event: None,
            field,
        };
        let (field, message) = match &interaction.client {
            ClientMessage::Request(m) => ("request", m),
            ClientMessage::Notification(m) => ("notification", m),
        };
        out.push(Located {
            place: place(field),
            message,
            answers: None,
        });
        events(&mut out, Some(i), "during", &interaction.during);
        if let Some(response) = &interaction.response {
            out.push(Located {
                place: place("response"),
                message: response,
                answers: Some(interaction.method()),
            });
        }
        events(&mut out, Some(i), "after", &interaction.after);
    }
    out
}

fn events<'a>(
    out: &mut Vec<Located<'a>>,
    interaction: Option<usize>,
    list: &'static str,
    events: &'a [Event],
) {
    for (j, event) in events.iter().enumerate() {
        let place = |field| Place {
            interaction,
            event: Some((list, j)),
            field,
        };
        match event {
            Event::Notification { notification } => out.push(Located {
                place: place("notification"),
                message: notification,
                answers: None,
            }),
            Event::ServerRequest {
                server_request,
                client_response,
            } => {
                out.push(Located {
                    place: place("server_request"),
                    message: server_request,
                    answers: None,
                });
                if let Some(response) = client_response {
                    out.push(Located {
                        place: place("client_response"),
                        message: response,
                        answers: server_request.method(),
                    });
                }
            }
        }
    }
}

/// Envelope, MCP shape and official-schema findings for every message.
pub(super) fn shapes(cassette: &Cassette, config: &CheckConfig, findings: &mut Vec<Finding>) {
    let version = cassette
        .protocol
        .version
        .as_deref()
        .filter(|v| schema::VERSIONS.contains(v));
    if let Some(unknown) = cassette
        .protocol
        .version
        .as_deref()
        .filter(|_| version.is_none())
    {
        findings.push(Finding::new(
            Code::Structure,
            "/protocol/version",
            format!(
                "`{unknown}` is not an MCP protocol version this build knows ({}); only the JSON-RPC envelope is checked",
                schema::VERSIONS.join(", ")
            ),
        ));
    }
    // Each message is checked on its own: big cassettes use every core,
    // and the findings keep document order.
    let located = all(cassette);
    let threads = crate::parallel::threads_for(located.len(), MESSAGES_PER_THREAD);
    let found = crate::parallel::map_in_order(&located, threads, |located| {
        let mut findings = Vec::new();
        located.message.with(|message| {
            let mut violations = match version {
                Some(version) => schema::check_message(version, message, located.answers),
                None => schema::check_envelope(message),
            };
            if let Some(official) = &config.official {
                violations.extend(official.check_message(message, located.answers));
            }
            if !violations.is_empty() {
                push_violations(&mut findings, &located.place.pointer(), violations);
            }
        });
        findings
    });
    findings.extend(found.into_iter().flatten());
}

/// Messages per thread below which `shapes` stays on one thread.
const MESSAGES_PER_THREAD: usize = 8192;

/// Responses whose id is not their request's.
pub(super) fn pairing(cassette: &Cassette, findings: &mut Vec<Finding>) {
    for (i, interaction) in cassette.interactions.iter().enumerate() {
        let base = format!("/interactions/{i}");
        if let Some(response) = &interaction.response {
            match &interaction.client {
                ClientMessage::Notification(_) => findings.push(Finding::new(
                    Code::Unpaired,
                    format!("{base}/response"),
                    format!(
                        "a response recorded for the notification `{}`, which takes none",
                        interaction.method()
                    ),
                )),
                ClientMessage::Request(request) => {
                    unpaired(findings, &format!("{base}/response"), request, response)
                }
            }
        }
        for (part, events) in [
            ("during", &interaction.during),
            ("after", &interaction.after),
        ] {
            for (j, event) in events.iter().enumerate() {
                if let Event::ServerRequest {
                    server_request,
                    client_response: Some(response),
                } = event
                {
                    let pointer = format!("{base}/{part}/{j}/client_response");
                    unpaired(findings, &pointer, server_request, response);
                }
            }
        }
    }
}

fn unpaired(
    findings: &mut Vec<Finding>,
    pointer: &str,
    request: &RawMessage,
    response: &RawMessage,
) {
    let (Some(asked), answered) = (request.member("id"), response.member("id")) else {
        return;
    };
    let (asked, answered) = (&asked, answered.as_ref());
    // `id: null` answers a request that could not be read; the envelope
    // check judges whether that is allowed.
    if answered.is_some_and(|id| id != asked && !id.is_null()) || answered.is_none() {
        let found = answered.map_or("no id".to_owned(), |id| format!("id {id}"));
        findings.push(Finding::new(
            Code::Unpaired,
            format!("{pointer}/id"),
            format!("the response has {found}, but its request has id {asked}"),
        ));
    }
}

/// Recorded `tools/call` arguments against the `inputSchema` of the tool
/// as the recorded `tools/list` advertised it.
pub(super) fn tool_arguments(cassette: &Cassette, findings: &mut Vec<Finding>) {
    // An invalid schema is reported by the shape check.
    let tools: HashMap<&str, Option<ToolArguments>> = advertised(cassette, "inputSchema")
        .map(|(name, schema)| (name, ToolArguments::new(schema).ok()))
        .collect();
    if tools.is_empty() {
        return;
    }
    for (i, interaction) in cassette.interactions.iter().enumerate() {
        let ClientMessage::Request(request) = &interaction.client else {
            continue;
        };
        if request.method() != Some("tools/call") {
            continue;
        }
        request.with(|request| {
            let Some(name) = request.pointer("/params/name").and_then(Value::as_str) else {
                return;
            };
            let Some(Some(validator)) = tools.get(name) else {
                return;
            };
            let empty = Value::Object(Default::default());
            let arguments = request.pointer("/params/arguments").unwrap_or(&empty);
            let pointer = format!("/interactions/{i}/request/params/arguments");
            for violation in validator.check(arguments) {
                findings.push(Finding::new(
                    Code::Schema(ViolationKind::ToolArguments),
                    format!("{pointer}{}", violation.pointer),
                    format!("arguments to `{name}`: {}", violation.message),
                ));
            }
        });
    }
}

/// The `outputSchema` of each tool the recorded `tools/list` answers
/// advertise, compiled (`None`: it does not compile, which the shape check
/// reports). Tools without one are absent.
pub(super) fn output_schemas(cassette: &Cassette) -> HashMap<&str, Option<ToolOutput>> {
    advertised(cassette, "outputSchema")
        .map(|(name, schema)| (name, ToolOutput::new(schema).ok()))
        .collect()
}

/// The name and `field` (a schema) of each tool the recorded `tools/list`
/// answers advertise with one, in recorded order (a later listing of a name
/// wins once collected).
fn advertised<'a>(
    cassette: &'a Cassette,
    field: &'a str,
) -> impl Iterator<Item = (&'a str, &'a Value)> + 'a {
    cassette
        .listed_tools()
        .filter_map(move |tool| Some((tool.get("name")?.as_str()?, tool.get(field)?)))
}

/// Findings for a `tools/call` result of `name` (at `pointer`, which holds
/// the result) that its tool's `outputSchema` rejects.
pub(super) fn tool_output(
    outputs: &HashMap<&str, Option<ToolOutput>>,
    name: &str,
    result: &Value,
    pointer: &str,
    findings: &mut Vec<Finding>,
) {
    let Some(Some(output)) = outputs.get(name) else {
        return;
    };
    for violation in output.check(result) {
        findings.push(Finding::new(
            Code::Schema(ViolationKind::StructuredContent),
            format!("{pointer}{}", violation.pointer),
            format!("the result of `{name}`: {}", violation.message),
        ));
    }
}

/// Recorded `tools/call` results against the `outputSchema` of the tool
/// as the recorded `tools/list` advertised it.
pub(super) fn tool_results(cassette: &Cassette, findings: &mut Vec<Finding>) {
    let outputs = output_schemas(cassette);
    if outputs.is_empty() {
        return;
    }
    for (i, interaction) in cassette.interactions.iter().enumerate() {
        let (ClientMessage::Request(request), Some(response)) =
            (&interaction.client, &interaction.response)
        else {
            continue;
        };
        if request.method() != Some("tools/call") {
            continue;
        }
        let name = request.with(|r| r.pointer("/params/name")?.as_str().map(str::to_owned));
        let Some(name) = name.filter(|name| outputs.contains_key(name.as_str())) else {
            continue;
        };
        response.with(|response| {
            if let Some(result) = response.get("result") {
                let pointer = format!("/interactions/{i}/response/result");
                tool_output(&outputs, &name, result, &pointer, findings);
            }
        });
    }
}

/// Violations rooted at a message, as findings rooted at the document.
pub(super) fn push_violations(findings: &mut Vec<Finding>, base: &str, violations: Vec<Violation>) {
    for violation in violations {
        findings.push(Finding::new(
            Code::from(violation.kind),
            format!("{base}{}", violation.pointer),
            violation.message,
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn every_message_is_placed_by_its_pointer() {
        let cassette: Cassette = serde_json::from_value(json!({
            "format_version": crate::cassette::FORMAT_VERSION,
            "recorded_at": "2026-01-01T00:00:00Z",
            "transport": {"kind": "stdio", "command": ["server"]},
            "protocol": {"era": "legacy"},
            "opening": [{"notification": {"jsonrpc": "2.0", "method": "notifications/message"}}],
            "interactions": [{
                "request": {"jsonrpc": "2.0", "id": 1, "method": "tools/call"},
                "during": [{
                    "server_request": {"jsonrpc": "2.0", "id": 0, "method": "roots/list"},
                    "client_response": {"jsonrpc": "2.0", "id": 0, "result": {"roots": []}},
                }],
                "response": {"jsonrpc": "2.0", "id": 1, "result": {}},
                "after": [{"notification": {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}}],
            }],
        }))
        .unwrap();
        let placed: Vec<(String, Option<&str>)> = all(&cassette)
            .iter()
            .map(|located| (located.place.pointer(), located.answers))
            .collect();
        assert_eq!(
            placed,
            [
                ("/opening/0/notification".to_owned(), None),
                ("/interactions/0/request".to_owned(), None),
                ("/interactions/0/during/0/server_request".to_owned(), None),
                (
                    "/interactions/0/during/0/client_response".to_owned(),
                    Some("roots/list")
                ),
                ("/interactions/0/response".to_owned(), Some("tools/call")),
                ("/interactions/0/after/0/notification".to_owned(), None),
            ]
        );
    }

    #[test]
    fn a_big_cassette_is_checked_in_document_order() {
        // Enough messages for `shapes` to split them across threads.
        let interactions: Vec<Value> = (0..MESSAGES_PER_THREAD * 2)
            .map(|n| {
                // Every 1 000th response breaks the envelope (`id` an object).
                let id = if n % 1000 == 999 {
                    json!({"n": n})
                } else {
                    json!(n)
                };
                json!({
                    "request": {"jsonrpc": "2.0", "id": n, "method": "ping"},
                    "response": {"jsonrpc": "2.0", "id": id, "result": {}},
                })
            })
            .collect();
        let cassette: Cassette = serde_json::from_value(json!({
            "format_version": crate::cassette::FORMAT_VERSION,
            "recorded_at": "2026-01-01T00:00:00Z",
            "transport": {"kind": "stdio", "command": ["server"]},
            "protocol": {"era": "legacy", "version": "2025-11-25"},
            "interactions": interactions,
        }))
        .unwrap();
        let mut findings = Vec::new();
        shapes(&cassette, &CheckConfig::default(), &mut findings);
        let places: Vec<&str> = findings.iter().map(|f| f.pointer.as_str()).collect();
        let expected: Vec<String> = (0..MESSAGES_PER_THREAD * 2)
            .filter(|n| n % 1000 == 999)
            .map(|n| format!("/interactions/{n}/response/id"))
            .collect();
        assert_eq!(places, expected);
    }
}
