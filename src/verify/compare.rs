//! Comparing a recording with the live server's answers, interaction by
//! interaction: the response and the server traffic around it, without
//! JSON-RPC ids, after normalisation.

use std::path::Path;

use serde_json::{Map, Value, json};

use super::normalize::apply_all;
use super::{
    Counts, DriftReport, InteractionDrift, Normalized, NotificationCounts, Status, hints, tools,
};
use crate::cassette::NormalizeRule;
use crate::cassette::{Cassette, Event, Interaction};

/// Compares `recorded` with `live` (the same client messages, re-sent).
pub fn compare(
    path: &Path,
    recorded: &Cassette,
    live: &Cassette,
    rules: &[NormalizeRule],
) -> DriftReport {
    let mut recorded_counts = vec![0; rules.len()];
    let mut live_counts = vec![0; rules.len()];
    let mut interactions = Vec::new();
    let mut counts = Counts::default();
    for (index, old) in recorded.interactions.iter().enumerate() {
        let new = live.interactions.get(index);
        let drift = compare_one(
            index,
            old,
            new,
            rules,
            &mut recorded_counts,
            &mut live_counts,
        );
        match drift.status {
            Status::Same => counts.same += 1,
            Status::Changed => counts.changed += 1,
            Status::Missing => counts.missing += 1,
        }
        let notifications = &drift.notifications;
        counts.notifications.same += notifications.same;
        counts.notifications.changed += notifications.changed;
        counts.notifications.missing += notifications.missing;
        counts.notifications.new += notifications.new;
        interactions.push(drift);
    }
    let normalized = rules
        .iter()
        .zip(recorded_counts.iter().zip(&live_counts))
        .map(|(rule, (&recorded, &live))| Normalized {
            rule: rule.to_string(),
            recorded,
            live,
        })
        .collect();
    DriftReport {
        cassette: path.to_owned(),
        interactions,
        normalized,
        counts,
    }
}

/// How interaction `index` of a recording compares with its live run
/// (`None`: the live run never got to it), on its own: for showing one
/// change (`review`).
pub fn interaction(
    index: usize,
    old: &Interaction,
    new: Option<&Interaction>,
    rules: &[NormalizeRule],
) -> InteractionDrift {
    let mut counts = (vec![0; rules.len()], vec![0; rules.len()]);
    compare_one(index, old, new, rules, &mut counts.0, &mut counts.1)
}

/// Compares one interaction; adds what each rule replaced to the counts.
fn compare_one(
    index: usize,
    old: &Interaction,
    new: Option<&Interaction>,
    rules: &[NormalizeRule],
    recorded_counts: &mut [usize],
    live_counts: &mut [usize],
) -> InteractionDrift {
    let recorded_view = view(old, rules, recorded_counts);
    let live_view = new.map_or(Value::Null, |new| view(new, rules, live_counts));
    let status = if old.response.is_some() && new.is_none_or(|n| n.response.is_none()) {
        Status::Missing
    } else if recorded_view == live_view {
        Status::Same
    } else {
        Status::Changed
    };
    let notifications = traffic_counts(&recorded_view, &live_view);
    let tool_changes = match (
        old.method(),
        old.response.as_ref(),
        new.and_then(|n| n.response.as_ref()),
    ) {
        ("tools/list", Some(a), Some(b)) => tools::classify(
            a.get("result").unwrap_or(&Value::Null),
            b.get("result").unwrap_or(&Value::Null),
        ),
        _ => Vec::new(),
    };
    let normalize_hints = match status {
        Status::Changed => hints::suggest(&recorded_view, &live_view),
        _ => Vec::new(),
    };
    InteractionDrift {
        index,
        process: old.process,
        label: old.label(),
        status,
        recorded: recorded_view,
        live: live_view,
        notifications,
        tool_changes,
        normalize_hints,
    }
}

/// What is compared of an interaction: the response and the server's
/// traffic (notifications and server requests, `during` and `after` as one
/// sequence, since where a late notification lands is timing), without
/// JSON-RPC ids; over HTTP, an error status (4xx, 5xx) on either side, and
/// the body of an error that has no JSON-RPC response. (Success statuses
/// are not compared: 200 and 202 say the same.) The client's own answers are left out: verify sends the
/// recorded ones.
fn view(interaction: &Interaction, rules: &[NormalizeRule], counts: &mut [usize]) -> Value {
    let mut prepare = |message: &Value| {
        let mut message = without_envelope(message);
        apply_all(rules, &mut message, counts);
        message
    };
    let http_error = interaction.http.as_ref().filter(|http| http.status >= 400);
    // A rejection kept only as the body (recorded before rejections were
    // paired with their request) is the response it carries.
    let rejection = http_error
        .filter(|_| interaction.response.is_none())
        .and_then(|http| serde_json::from_str::<Value>(http.body.as_deref()?).ok())
        .filter(crate::jsonrpc::is_rejection);
    let response = interaction
        .response
        .as_deref()
        .or(rejection.as_ref())
        .map_or(Value::Null, &mut prepare);
    let traffic: Vec<Value> = interaction
        .during
        .iter()
        .chain(&interaction.after)
        .map(|event| match event {
            Event::Notification { notification } => prepare(notification),
            Event::ServerRequest { server_request, .. } => prepare(server_request),
        })
        .collect();
    let mut view = json!({"response": response, "traffic": traffic});
    // An HTTP error status is part of the answer; so is its body when no
    // JSON-RPC response says it.
    if let Some(http) = http_error {
        let mut error = json!({"status": http.status});
        if response.is_null()
            && let Some(body) = &http.body
        {
            error["body"] = Value::String(body.clone());
        }
        view["http_error"] = error;
    }
    view
}

/// A server message as it is compared: without its envelope, normalised by
/// `rules`.
pub(super) fn comparable(message: &Value, rules: &[NormalizeRule]) -> Value {
    let mut message = without_envelope(message);
    apply_all(rules, &mut message, &mut vec![0; rules.len()]);
    message
}

/// A message without `jsonrpc` and `id`, which say nothing about drift.
fn without_envelope(message: &Value) -> Value {
    match message {
        Value::Object(map) => Value::Object(
            map.iter()
                .filter(|(k, _)| *k != "jsonrpc" && *k != "id")
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect::<Map<_, _>>(),
        ),
        other => other.clone(),
    }
}

/// Server traffic compared position by position.
fn traffic_counts(recorded: &Value, live: &Value) -> NotificationCounts {
    let empty = Vec::new();
    let old = recorded["traffic"].as_array().unwrap_or(&empty);
    let new = live["traffic"].as_array().unwrap_or(&empty);
    let mut counts = NotificationCounts::default();
    for i in 0..old.len().max(new.len()) {
        match (old.get(i), new.get(i)) {
            (Some(a), Some(b)) if a == b => counts.same += 1,
            (Some(_), Some(_)) => counts.changed += 1,
            (Some(_), None) => counts.missing += 1,
            (None, Some(_)) => counts.new += 1,
            (None, None) => {}
        }
    }
    counts
}
