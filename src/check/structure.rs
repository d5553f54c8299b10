//! Checks across interactions: duplicates, a header that contradicts the
//! recorded handshake, hand-written cases that can never answer, and
//! server processes out of order.
//!
//! A stdio cassette may hold several server processes of one test
//! (`Interaction::process`, docs/processes.md), each with its own
//! handshake, ids and server state, replayed each on its own: what
//! concerns one session (a repeated request, a retry) is judged within
//! its process.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::findings::{Code, Finding};
use crate::cassette::{self, Cassette};
use crate::matching::MessageKind;
use crate::protocol::Era;

/// Interactions identical to an earlier one of the same server process:
/// same request (under the cassette's rules), same answer and same server
/// traffic, ids aside. (Each process repeats its handshake, and replay
/// plays each process from its own interactions: a copy in another
/// process is that process's answer.)
pub(super) fn duplicates(cassette: &Cassette, findings: &mut Vec<Finding>) {
    use sha2::{Digest, Sha256};
    // Each request's key and a digest of its answer, split across the
    // cores for a big cassette: read from the text where it can be (most
    // requests), else without keeping trees.
    let rules = &cassette.rules;
    let identity = |interaction: &cassette::Interaction| {
        let cassette::ClientMessage::Request(request) = &interaction.client else {
            return None;
        };
        let key = (rules.key_from_text(MessageKind::Request, request))
            .unwrap_or_else(|| request.with(|request| rules.key(MessageKind::Request, request)));
        let mut answer = Sha256::new();
        answer.update(without_id(interaction.response.as_ref()));
        answer.update([0]);
        answer.update(
            serde_json::to_vec(&(&interaction.during, &interaction.after)).unwrap_or_default(),
        );
        let answer: [u8; 32] = answer.finalize().into();
        Some((interaction.process, key, answer))
    };
    let interactions = &cassette.interactions;
    let threads = crate::parallel::threads_for(interactions.len(), INTERACTIONS_PER_THREAD);
    let identities = crate::parallel::map_in_order(interactions, threads, identity);
    let mut seen = std::collections::HashMap::with_capacity(identities.len());
    for (i, identity) in identities.into_iter().enumerate() {
        let Some(identity) = identity else { continue };
        if let Some(first) = seen.insert(identity, i) {
            findings.push(Finding::new(
                Code::Duplicate,
                format!("/interactions/{i}"),
                format!(
                    "interaction {i} (`{}`) repeats interaction {first}: same request, same answer",
                    interactions[i].method()
                ),
            ));
        }
    }
}

/// Interactions below which the duplicate check keeps to one thread.
const INTERACTIONS_PER_THREAD: usize = 8192;

fn without_id(response: Option<&crate::json::RawMessage>) -> String {
    // The recorded text with a null id, when it can be had without a tree.
    if let Some(text) = response.and_then(|r| r.text_with_id(&Value::Null)) {
        return text;
    }
    let mut response = response.map_or(Value::Null, |r| r.to_value());
    if let Some(object) = response.as_object_mut() {
        object.remove("id");
    }
    crate::json::canonical_json(&response)
}

/// Requests were recorded but the server answered none of them: a
/// recording against a server that was down (`record --upstream` keeps the
/// 502s it answered with), which replays nothing useful.
pub(super) fn no_success(cassette: &Cassette, findings: &mut Vec<Finding>) {
    let mut requests = cassette
        .interactions
        .iter()
        .filter(|i| i.is_request())
        .peekable();
    if requests.peek().is_none() || cassette.interactions.iter().any(|i| i.response.is_some()) {
        return;
    }
    let statuses: std::collections::BTreeSet<u16> = cassette
        .interactions
        .iter()
        .filter_map(|i| Some(i.http.as_ref()?.status))
        .filter(|&status| status != 0)
        .collect();
    let count = requests.count();
    let how = match statuses.iter().map(u16::to_string).collect::<Vec<_>>() {
        list if list.is_empty() => String::new(),
        list => format!(" (HTTP status {})", list.join(", ")),
    };
    findings.push(Finding::new(
        Code::NoSuccess,
        "/interactions",
        format!("none of the {count} recorded request(s) was answered by the server{how}"),
    ));
}

/// What keeps clients of the other era from being answered (see
/// `replay::cross_era`): no successful handshake of the cassette's own era
/// to translate the other one from, or a 2026-07-28 `input_required`
/// answer whose retry was not recorded (a legacy client's answers would
/// have nowhere to go).
pub(super) fn one_era(cassette: &Cassette, findings: &mut Vec<Finding>) {
    let handshake = match cassette.protocol.era {
        Era::Legacy => "initialize",
        Era::Modern => "server/discover",
        Era::Unknown => return,
    };
    let answered = |i: &crate::cassette::Interaction| {
        i.response
            .as_ref()
            .is_some_and(|r| r.get("result").is_some())
    };
    let requests = cassette
        .interactions
        .iter()
        .filter(|i| i.is_request())
        .count();
    if requests > 0
        && !cassette
            .interactions
            .iter()
            .any(|i| i.method() == handshake && answered(i))
    {
        let other = if cassette.protocol.era == Era::Legacy {
            "2026-07-28 clients (`server/discover`)"
        } else {
            "legacy clients (`initialize`)"
        };
        findings.push(Finding::new(
            Code::OneEra,
            "/interactions",
            format!("no successful `{handshake}` was recorded, so {other} cannot be answered"),
        ));
    }
    if cassette.protocol.era != Era::Modern {
        return;
    }
    // A retry is looked for in the process that asked, as replay does.
    let mut processes = None;
    for (index, interaction) in cassette.interactions.iter().enumerate() {
        let asks = interaction.response.as_ref().is_some_and(|r| {
            r.with(|r| r.pointer("/result/resultType") == Some(&json!("input_required")))
        });
        if !asks {
            continue;
        }
        let retried = match processes.get_or_insert_with(|| by_process(cassette)) {
            None => cassette.recorded_retry(index).is_some(),
            Some(processes) => {
                let (indices, part) = &processes[&interaction.process];
                let position = indices.binary_search(&index).expect("in its process");
                part.recorded_retry(position).is_some()
            }
        };
        if !retried {
            findings.push(Finding::new(
                Code::OneEra,
                format!("/interactions/{index}/response/result"),
                format!(
                    "{} answered input_required and its retry was not recorded, so a legacy client's answers cannot be fed back",
                    interaction.label()
                ),
            ));
        }
    }
}

/// The recording's server processes, each as a cassette of its own with the
/// cassette's index of each of its interactions; `None` when it has one.
fn by_process(cassette: &Cassette) -> Option<BTreeMap<u32, (Vec<usize>, Cassette)>> {
    let first = cassette.interactions.first()?.process;
    if cassette.interactions.iter().all(|i| i.process == first) {
        return None;
    }
    let mut processes: BTreeMap<u32, (Vec<usize>, Cassette)> = BTreeMap::new();
    for (index, interaction) in cassette.interactions.iter().enumerate() {
        let (indices, part) = processes
            .entry(interaction.process)
            .or_insert_with(|| (Vec::new(), cassette.header()));
        indices.push(index);
        part.interactions.push(interaction.clone());
    }
    Some(processes)
}

/// Interactions of a server process after those of a later one: a
/// recording files each process's interactions together, in process
/// order, so a hand edit moved one (or wrote it in the wrong process).
/// Replay and verify still read each process's interactions wherever they
/// are, so it is a warning.
pub(super) fn process_order(cassette: &Cassette, findings: &mut Vec<Finding>) {
    for (index, pair) in cassette.interactions.windows(2).enumerate() {
        let (before, interaction) = (&pair[0], &pair[1]);
        if interaction.process >= before.process {
            continue;
        }
        let index = index + 1;
        findings.push(Finding::new(
            Code::ProcessOrder,
            format!("/interactions/{index}"),
            format!(
                "interaction {index} (`{}`) is server process {}'s but follows process {}'s: \
                 it is played in process {}, after that process's earlier interactions",
                interaction.label(),
                interaction.process,
                before.process,
                interaction.process,
            ),
        ));
    }
}

/// The header against what the recorded handshake says.
pub(super) fn contradictions(cassette: &Cassette, findings: &mut Vec<Finding>) {
    let (recorded, server) = cassette::describe(&cassette.interactions);
    if recorded.era != Era::Unknown && recorded.era != cassette.protocol.era {
        findings.push(Finding::new(
            Code::Contradictory,
            "/protocol/era",
            format!(
                "the header says the {:?} era, the recorded handshake is {:?}",
                cassette.protocol.era, recorded.era
            ),
        ));
    }
    if let (Some(found), Some(header)) = (&recorded.version, &cassette.protocol.version)
        && found != header
    {
        findings.push(Finding::new(
            Code::Contradictory,
            "/protocol/version",
            format!("the header says protocol version {header}, the recorded handshake {found}"),
        ));
    }
    if let (Some(found), Some(header)) = (server, &cassette.server)
        && found.info != header.info
    {
        findings.push(Finding::new(
            Code::Contradictory,
            "/server/info",
            format!(
                "the header names the server {}, the recorded handshake {}",
                header.info, found.info
            ),
        ));
    }
}

/// Hand-written cases: shadowed by an earlier case, for something the
/// recorded server does not offer, or answering with a malformed result
/// (for a tool, one its recorded `outputSchema` rejects).
pub(super) fn cases(cassette: &Cassette, version: Option<&str>, findings: &mut Vec<Finding>) {
    let cases = &cassette.rules.cases;
    let listed_tools = listed_tools(cassette);
    let outputs = super::messages::output_schemas(cassette);
    for (j, case) in cases.iter().enumerate() {
        let pointer = format!("/rules/cases/{j}");
        let when = if case.when.is_null() {
            &json!({})
        } else {
            &case.when
        };
        if let Some(i) = (cases[..j].iter()).position(|earlier| earlier.matches(&case.method, when))
        {
            findings.push(Finding::new(
                Code::UnreachableCase,
                pointer.clone(),
                format!(
                    "case {j} (`{}`) can never answer: case {i} matches every request it matches",
                    case.method
                ),
            ));
        }
        if case.result.is_some() == case.error.is_some() {
            findings.push(Finding::new(
                Code::Structure,
                pointer.clone(),
                format!("case {j} needs exactly one of `result` and `error`"),
            ));
        }
        if let Some(why) = unoffered(cassette, &listed_tools, case.method.as_str(), when) {
            findings.push(Finding::new(
                Code::UnusedCase,
                pointer.clone(),
                format!("case {j} can never be used: {why}"),
            ));
        }
        // A case for one tool answers as that tool: with what its
        // outputSchema calls for.
        if case.method == "tools/call"
            && let (Some(name), Some(result)) =
                (when.get("name").and_then(Value::as_str), &case.result)
        {
            let pointer = format!("{pointer}/result");
            super::messages::tool_output(&outputs, name, result, &pointer, findings);
        }
        if let Some(version) = version {
            let response = match (&case.result, &case.error) {
                (Some(result), None) => json!({"jsonrpc": "2.0", "id": 0, "result": result}),
                (None, Some(error)) => json!({"jsonrpc": "2.0", "id": 0, "error": error}),
                _ => continue,
            };
            let violations = crate::schema::check_message(version, &response, Some(&case.method));
            super::messages::push_violations(findings, &pointer, violations);
        }
    }
}

/// Names of the tools the recorded `tools/list` answers advertised, if
/// any were recorded.
fn listed_tools(cassette: &Cassette) -> Option<Vec<&str>> {
    let mut names = None::<Vec<&str>>;
    for interaction in cassette
        .interactions
        .iter()
        .filter(|i| i.method() == "tools/list")
    {
        let tools = interaction
            .response
            .as_ref()
            .and_then(|r| r.pointer("/result/tools"))
            .and_then(Value::as_array);
        let entry = names.get_or_insert_with(Vec::new);
        entry.extend(
            tools
                .into_iter()
                .flatten()
                .filter_map(|t| t.get("name").and_then(Value::as_str)),
        );
    }
    names
}

/// Why a case for `method` could never be asked for, if it could not.
fn unoffered(
    cassette: &Cassette,
    listed_tools: &Option<Vec<&str>>,
    method: &str,
    when: &Value,
) -> Option<String> {
    if method == "tools/call"
        && let (Some(tools), Some(name)) = (listed_tools, when.get("name").and_then(Value::as_str))
        && !tools.contains(&name)
    {
        return Some(format!(
            "the recorded server lists no tool `{name}` (it lists {})",
            tools.join(", ")
        ));
    }
    let capability = match method.split('/').next()? {
        "tools" => "tools",
        "resources" => "resources",
        "prompts" => "prompts",
        "completion" => "completions",
        "logging" => "logging",
        _ => return None,
    };
    let server = cassette.server.as_ref()?;
    let offered = server.capabilities.get(capability).is_some();
    (!offered).then(|| format!("the recorded server does not offer the `{capability}` capability"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A stdio cassette of `era` whose interactions are `(process, method,
    /// result)`, each request numbered from 1 in its process.
    fn cassette(era: &str, interactions: &[(u32, &str, Value)]) -> Cassette {
        let mut ids = BTreeMap::new();
        let interactions: Vec<Value> = interactions
            .iter()
            .map(|(process, method, result)| {
                let id = ids.entry(*process).or_insert(0);
                *id += 1;
                json!({
                    "request": {"jsonrpc": "2.0", "id": *id, "method": method,
                        "params": {"name": "t", "requestState": "s"}},
                    "response": {"jsonrpc": "2.0", "id": *id, "result": result},
                    "process": process,
                })
            })
            .collect();
        serde_json::from_value(json!({
            "format_version": crate::cassette::FORMAT_VERSION,
            "recorded_at": "2026-01-01T00:00:00Z",
            "transport": {"kind": "stdio", "command": ["server"]},
            "protocol": {"era": era},
            "interactions": interactions,
        }))
        .unwrap()
    }

    fn codes(findings: &[Finding]) -> Vec<(Code, &str)> {
        findings
            .iter()
            .map(|f| (f.code, f.pointer.as_str()))
            .collect()
    }

    #[test]
    fn a_repeat_is_a_duplicate_within_its_process_only() {
        let ok = json!({});
        let recorded = cassette(
            "legacy",
            &[
                (0, "initialize", ok.clone()),
                (0, "tools/list", ok.clone()),
                (1, "initialize", ok.clone()),
                (1, "tools/list", ok.clone()),
                (1, "tools/list", ok.clone()),
            ],
        );
        let mut findings = Vec::new();
        duplicates(&recorded, &mut findings);
        assert_eq!(codes(&findings), [(Code::Duplicate, "/interactions/4")]);
        assert!(findings[0].message.contains("repeats interaction 3"));
    }

    #[test]
    fn processes_out_of_order_are_found_where_the_number_goes_down() {
        let ok = json!({});
        let order = |processes: &[u32]| {
            let interactions: Vec<(u32, &str, Value)> =
                processes.iter().map(|&p| (p, "ping", ok.clone())).collect();
            let mut findings = Vec::new();
            process_order(&cassette("legacy", &interactions), &mut findings);
            findings
        };
        assert!(order(&[0, 0, 1, 1, 2]).is_empty());
        assert!(
            order(&[0, 2, 2]).is_empty(),
            "a number left out is no matter"
        );
        let found = order(&[0, 1, 0, 1, 1, 0]);
        assert_eq!(
            codes(&found),
            [
                (Code::ProcessOrder, "/interactions/2"),
                (Code::ProcessOrder, "/interactions/5")
            ]
        );
        assert_eq!(found[0].severity, super::super::Severity::Warning);
        assert!(
            found[0]
                .message
                .contains("server process 0's but follows process 1's"),
            "{}",
            found[0].message
        );
    }

    #[test]
    fn an_input_required_answer_is_retried_in_its_own_process() {
        let asks = json!({"resultType": "input_required", "requestState": "s"});
        let done = json!({"resultType": "complete"});
        let discover = (0, "server/discover", json!({"resultType": "complete"}));
        let with_retry = |retry_process: u32| {
            let mut recorded = cassette(
                "modern",
                &[
                    discover.clone(),
                    (0, "tools/call", asks.clone()),
                    (1, "server/discover", done.clone()),
                    (1, "tools/call", done.clone()),
                ],
            );
            recorded.interactions[3].process = retry_process;
            let retry = json!({"jsonrpc": "2.0", "id": 9, "method": "tools/call",
                "params": {"name": "t", "requestState": "s", "inputResponses": {}}});
            recorded.interactions[3].client =
                serde_json::from_value(json!({"request": retry})).unwrap();
            let mut findings = Vec::new();
            one_era(&recorded, &mut findings);
            findings
        };
        assert!(with_retry(0).is_empty(), "{:?}", with_retry(0));
        assert_eq!(
            codes(&with_retry(1)),
            [(Code::OneEra, "/interactions/1/response/result")]
        );
    }
}
