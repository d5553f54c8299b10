//! Reading each fault kind's parameters (`error`, `delay`, `disconnect`,
//! `malformed`, `http`, the list changes, `mutate`...), each error with its
//! JSON pointer and what is allowed.

use std::collections::BTreeMap;

use serde_json::Value;

use super::error::{FaultsError, kind_of, only, pointer};
use super::{
    Delay, Disconnect, Edit, EditOp, Fault, HttpStatus, ListChange, ListKind, MAX_DELAY_MS,
    Malformed, Wait,
};
use crate::jsonrpc::RpcError;

pub(super) fn parse_fault(kind: &str, value: &Value, at: &str) -> Result<Fault, FaultsError> {
    match kind {
        "error" => parse_error(value, at).map(Fault::Error),
        "tool_error" => match value {
            Value::String(text) => Ok(Fault::ToolError(text.clone())),
            Value::Object(members) => {
                only(members, &["text"], at, kind)?;
                match members.get("text") {
                    Some(Value::String(text)) => Ok(Fault::ToolError(text.clone())),
                    _ => Err(FaultsError::at(
                        &pointer(at, "text"),
                        "`tool_error.text` must be a string: the error the tool reports",
                    )),
                }
            }
            other => Err(FaultsError::at(
                at,
                format!(
                    "`tool_error` is the text of the error (or {{\"text\": …}}), not {}",
                    kind_of(other)
                ),
            )),
        },
        "delay" => parse_delay(value, at).map(Fault::Delay),
        "hang" => match value {
            Value::Bool(true) => Ok(Fault::Hang),
            other => Err(FaultsError::at(
                at,
                format!("`hang` takes `true`, not {other}"),
            )),
        },
        "disconnect" => parse_disconnect(value, at).map(Fault::Disconnect),
        "malformed" => parse_malformed(value, at).map(Fault::Malformed),
        "http" => parse_http(value, at).map(Fault::Http),
        "drop_notifications" => match value {
            Value::Bool(true) => Ok(Fault::DropNotifications(Vec::new())),
            Value::Array(methods) => methods
                .iter()
                .enumerate()
                .map(|(i, m)| match m {
                    Value::String(m) if m.starts_with("notifications/") => Ok(m.clone()),
                    other => Err(FaultsError::at(
                        &format!("{at}/{i}"),
                        format!(
                            "a notification method (`notifications/progress`) is expected, not {other}"
                        ),
                    )),
                })
                .collect::<Result<_, _>>()
                .map(Fault::DropNotifications),
            other => Err(FaultsError::at(
                at,
                format!(
                    "`drop_notifications` takes `true` (every notification) or a list of notification methods, not {other}"
                ),
            )),
        },
        "tools_changed" => parse_list_change(ListKind::Tools, value, at).map(Fault::ListChanged),
        "prompts_changed" => {
            parse_list_change(ListKind::Prompts, value, at).map(Fault::ListChanged)
        }
        "resources_changed" => {
            parse_list_change(ListKind::Resources, value, at).map(Fault::ListChanged)
        }
        "mutate" => parse_edits(value, at).map(Fault::Mutate),
        _ => unreachable!("every kind in FAULT_KINDS is parsed"),
    }
}

fn parse_error(value: &Value, at: &str) -> Result<RpcError, FaultsError> {
    let Value::Object(members) = value else {
        return Err(FaultsError::at(
            at,
            format!(
                "`error` is a JSON-RPC error {{\"code\", \"message\", \"data\"?}}, not {}",
                kind_of(value)
            ),
        ));
    };
    only(members, &["code", "message", "data"], at, "error")?;
    let code = members.get("code").and_then(Value::as_i64).ok_or_else(|| {
        FaultsError::at(
            &pointer(at, "code"),
            "`error.code` must be a whole number (-32000 for a server error, -32603 internal)",
        )
    })?;
    let message = match members.get("message") {
        Some(Value::String(message)) => message.clone(),
        None => "Server error".to_owned(),
        Some(other) => {
            return Err(FaultsError::at(
                &pointer(at, "message"),
                format!("`error.message` must be a string, not {}", kind_of(other)),
            ));
        }
    };
    let mut error = RpcError::new(code, message);
    if let Some(data) = members.get("data") {
        error = error.with_data(data.clone());
    }
    Ok(error)
}

fn parse_delay(value: &Value, at: &str) -> Result<Delay, FaultsError> {
    let ms = |value: &Value, at: &str, what: &str| -> Result<u64, FaultsError> {
        match value.as_u64() {
            Some(ms) if ms <= MAX_DELAY_MS => Ok(ms),
            _ => Err(FaultsError::at(
                at,
                format!(
                    "`{what}` must be whole milliseconds from 0 to {MAX_DELAY_MS}, not {value} (use `hang` for an answer that never comes)"
                ),
            )),
        }
    };
    let Value::Object(members) = value else {
        return Ok(Delay {
            wait: Wait::Fixed(ms(value, at, "delay")?),
            between_notifications: false,
        });
    };
    only(
        members,
        &["ms", "min", "max", "median", "sigma", "notifications"],
        at,
        "delay",
    )?;
    let get = |key: &str| members.get(key);
    let between_notifications = match get("notifications") {
        None => false,
        Some(Value::Bool(b)) => *b,
        Some(other) => {
            return Err(FaultsError::at(
                &pointer(at, "notifications"),
                format!("`delay.notifications` is true or false, not {other}"),
            ));
        }
    };
    let wait = if let Some(fixed) = get("ms") {
        if get("min").is_some() || get("median").is_some() {
            return Err(FaultsError::at(
                at,
                "a delay is `ms`, or `min` and `max`, or `median` (with `sigma`, `max`): one of them",
            ));
        }
        Wait::Fixed(ms(fixed, &pointer(at, "ms"), "delay.ms")?)
    } else if let Some(median) = get("median") {
        let median_at = pointer(at, "median");
        let median = match median.as_f64() {
            Some(m) if m > 0.0 && m <= MAX_DELAY_MS as f64 => m,
            _ => {
                return Err(FaultsError::at(
                    &median_at,
                    format!("`delay.median` must be milliseconds above 0, not {median}"),
                ));
            }
        };
        let sigma = match get("sigma") {
            None => 0.5,
            Some(sigma) => match sigma.as_f64() {
                Some(s) if (0.0..=4.0).contains(&s) => s,
                _ => {
                    return Err(FaultsError::at(
                        &pointer(at, "sigma"),
                        format!("`delay.sigma` must be a number from 0 to 4, not {sigma}"),
                    ));
                }
            },
        };
        let max = match get("max") {
            None => MAX_DELAY_MS,
            Some(max) => ms(max, &pointer(at, "max"), "delay.max")?,
        };
        Wait::LogNormal { median, sigma, max }
    } else if let (Some(min), Some(max)) = (get("min"), get("max")) {
        let min = ms(min, &pointer(at, "min"), "delay.min")?;
        let max = ms(max, &pointer(at, "max"), "delay.max")?;
        if min > max {
            return Err(FaultsError::at(
                &pointer(at, "max"),
                format!("`delay.max` ({max}) is below `delay.min` ({min})"),
            ));
        }
        Wait::Uniform { min, max }
    } else {
        return Err(FaultsError::at(
            at,
            "a delay is a number of ms, or {\"ms\"}, {\"min\", \"max\"} (uniform) or {\"median\", \"sigma\"?, \"max\"?} (log-normal)",
        ));
    };
    Ok(Delay {
        wait,
        between_notifications,
    })
}

fn parse_disconnect(value: &Value, at: &str) -> Result<Disconnect, FaultsError> {
    let mut disconnect = Disconnect { after: 0, exit: 1 };
    match value {
        Value::Bool(true) => Ok(disconnect),
        Value::Object(members) => {
            only(members, &["after", "exit"], at, "disconnect")?;
            if let Some(after) = members.get("after") {
                disconnect.after = after.as_u64().and_then(|a| usize::try_from(a).ok()).ok_or_else(|| {
                    FaultsError::at(
                        &pointer(at, "after"),
                        format!("`disconnect.after` is how many of the answer's messages go out first (0 up), not {after}"),
                    )
                })?;
            }
            if let Some(exit) = members.get("exit") {
                disconnect.exit = exit
                    .as_u64()
                    .and_then(|e| u8::try_from(e).ok())
                    .ok_or_else(|| {
                        FaultsError::at(
                            &pointer(at, "exit"),
                            format!(
                                "`disconnect.exit` is an exit status from 0 to 255, not {exit}"
                            ),
                        )
                    })?;
            }
            Ok(disconnect)
        }
        other => Err(FaultsError::at(
            at,
            format!("`disconnect` takes `true` or {{\"after\", \"exit\"}}, not {other}"),
        )),
    }
}

fn parse_malformed(value: &Value, at: &str) -> Result<Malformed, FaultsError> {
    let named = |name: &str| match name {
        "not_json" => Some(Malformed::NotJson),
        "not_jsonrpc" => Some(Malformed::NotJsonRpc),
        "truncated" => Some(Malformed::Truncated),
        _ => None,
    };
    match value {
        Value::Bool(true) => Ok(Malformed::NotJson),
        Value::String(name) => named(name).ok_or_else(|| {
            FaultsError::at(
                at,
                format!(
                    "unknown malformed answer `{name}` (allowed: not_json, not_jsonrpc, truncated)"
                ),
            )
        }),
        other => Err(FaultsError::at(
            at,
            format!(
                "`malformed` takes `true`, \"not_json\", \"not_jsonrpc\" or \"truncated\", not {other}"
            ),
        )),
    }
}

fn parse_http(value: &Value, at: &str) -> Result<HttpStatus, FaultsError> {
    let status = |value: &Value, at: &str| -> Result<u16, FaultsError> {
        match value.as_u64() {
            Some(s) if (400..=599).contains(&s) => Ok(s as u16),
            _ => Err(FaultsError::at(
                at,
                format!("an `http` fault's status is from 400 to 599, not {value}"),
            )),
        }
    };
    match value {
        Value::Object(members) => {
            only(members, &["status", "retry_after", "body"], at, "http")?;
            let Some(code) = members.get("status") else {
                return Err(FaultsError::at(
                    at,
                    "an `http` fault needs `status` (404, 429, 500, 503, …)",
                ));
            };
            let retry_after = match members.get("retry_after") {
                None => None,
                Some(value) => Some(value.as_u64().ok_or_else(|| {
                    FaultsError::at(
                        &pointer(at, "retry_after"),
                        format!("`http.retry_after` is whole seconds, not {value}"),
                    )
                })?),
            };
            let body = match members.get("body") {
                None => None,
                Some(Value::String(body)) => Some(body.clone()),
                Some(other) => Some(other.to_string()),
            };
            Ok(HttpStatus {
                status: status(code, &pointer(at, "status"))?,
                retry_after,
                body,
            })
        }
        other => Ok(HttpStatus {
            status: status(other, at)?,
            retry_after: None,
            body: None,
        }),
    }
}

fn parse_list_change(list: ListKind, value: &Value, at: &str) -> Result<ListChange, FaultsError> {
    let kind = list.kind();
    let Value::Object(members) = value else {
        return Err(FaultsError::at(
            at,
            format!(
                "`{kind}` takes {{\"remove\": [{}…], \"change\": {{…}}}}, not {}",
                list.key(),
                kind_of(value)
            ),
        ));
    };
    only(members, &["remove", "change"], at, kind)?;
    let remove = match members.get("remove") {
        None => Vec::new(),
        Some(Value::Array(items)) => items
            .iter()
            .enumerate()
            .map(|(i, item)| {
                item.as_str().map(str::to_owned).ok_or_else(|| {
                    FaultsError::at(
                        &format!("{}/{i}", pointer(at, "remove")),
                        format!("`remove` lists the {} of items, as strings", list.key()),
                    )
                })
            })
            .collect::<Result<_, _>>()?,
        Some(other) => {
            return Err(FaultsError::at(
                &pointer(at, "remove"),
                format!("`remove` is a list, not {}", kind_of(other)),
            ));
        }
    };
    let change = match members.get("change") {
        None => BTreeMap::new(),
        Some(Value::Object(items)) => {
            let mut change = BTreeMap::new();
            for (name, members) in items {
                let Value::Object(members) = members else {
                    return Err(FaultsError::at(
                        &pointer(&pointer(at, "change"), name),
                        format!(
                            "each change is an object of the members to set (`{{\"inputSchema\": …}}`), not {}",
                            kind_of(members)
                        ),
                    ));
                };
                change.insert(name.clone(), members.clone());
            }
            change
        }
        Some(other) => Err(FaultsError::at(
            &pointer(at, "change"),
            format!(
                "`change` maps names to the members to set, not {}",
                kind_of(other)
            ),
        ))?,
    };
    if remove.is_empty() && change.is_empty() {
        return Err(FaultsError::at(
            at,
            format!("`{kind}` changes nothing: give `remove` or `change`"),
        ));
    }
    Ok(ListChange {
        list,
        remove,
        change,
    })
}

fn parse_edits(value: &Value, at: &str) -> Result<Vec<Edit>, FaultsError> {
    let Value::Array(edits) = value else {
        return Err(FaultsError::at(
            at,
            format!(
                "`mutate` is a list of edits ({{\"op\": \"replace\", \"path\": \"/content/0/text\", \"value\": …}}), not {}",
                kind_of(value)
            ),
        ));
    };
    if edits.is_empty() {
        return Err(FaultsError::at(at, "`mutate` needs at least one edit"));
    }
    edits
        .iter()
        .enumerate()
        .map(|(i, edit)| {
            let at = format!("{at}/{i}");
            let Value::Object(members) = edit else {
                return Err(FaultsError::at(
                    &at,
                    format!("an edit is {{\"op\", \"path\", \"value\"?}}, not {}", kind_of(edit)),
                ));
            };
            only(members, &["op", "path", "value"], &at, "edit")?;
            let op = match members.get("op").and_then(Value::as_str) {
                Some("replace") => EditOp::Replace,
                Some("remove") => EditOp::Remove,
                Some("add") => EditOp::Add,
                _ => {
                    return Err(FaultsError::at(
                        &pointer(&at, "op"),
                        "`op` is \"replace\", \"remove\" or \"add\"",
                    ));
                }
            };
            let path = match members.get("path").and_then(Value::as_str) {
                Some(path) if path.starts_with('/') => path.to_owned(),
                _ => {
                    return Err(FaultsError::at(
                        &pointer(&at, "path"),
                        "`path` is a JSON pointer into the result, starting with `/` (`/content/0/text`)",
                    ));
                }
            };
            let value = match (op, members.get("value")) {
                (EditOp::Remove, None) => Value::Null,
                (EditOp::Remove, Some(_)) => {
                    return Err(FaultsError::at(
                        &pointer(&at, "value"),
                        "`remove` takes no `value`",
                    ));
                }
                (_, Some(value)) => value.clone(),
                (_, None) => {
                    return Err(FaultsError::at(
                        &at,
                        "`replace` and `add` need the `value` to put there",
                    ));
                }
            };
            Ok(Edit { op, path, value })
        })
        .collect()
}
