//! `Mcp-Param-*` headers (2026-07-28): a `tools/call` repeats, in a header
//! of its own, each argument the tool's input schema marks with
//! `x-mcp-header`, so that intermediaries can route on it. A server holds
//! the headers to the body as it does `Mcp-Name`: a header that disagrees,
//! or one missing for an argument the body has, is a HeaderMismatch.

use std::collections::HashMap;

use http::HeaderMap;
use serde_json::Value;

use super::situation::HeaderMismatch;
use crate::jsonrpc;

/// The prefix of the headers, lower case as `http` stores names.
pub(crate) const PREFIX: &str = "mcp-param-";

/// Every `x-mcp-header` annotation on a property reached from a schema's
/// root through `properties` alone: the property path and the header name
/// (after the prefix).
pub(crate) fn annotations(schema: &Value) -> Vec<(Vec<String>, String)> {
    let mut out = Vec::new();
    collect(schema.get("properties"), &mut Vec::new(), &mut out);
    out
}

fn collect(
    properties: Option<&Value>,
    path: &mut Vec<String>,
    out: &mut Vec<(Vec<String>, String)>,
) {
    let Some(Value::Object(properties)) = properties else {
        return;
    };
    for (name, schema) in properties {
        path.push(name.clone());
        if let Some(header) = schema.get("x-mcp-header").and_then(Value::as_str)
            && !header.is_empty()
        {
            out.push((path.clone(), header.to_owned()));
        }
        collect(schema.get("properties"), path, out);
        path.pop();
    }
}

/// An argument's value as a header carries it: primitives only.
pub(crate) fn header_text(value: &Value) -> Option<String> {
    match value {
        Value::String(s) => Some(s.clone()),
        Value::Bool(b) => Some(b.to_string()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// The tools whose calls carry `Mcp-Param-*` headers, by name: what a
/// server learnt from the tool definitions it listed.
#[derive(Debug, Clone, Default)]
pub(crate) struct ParamHeaders(HashMap<String, Vec<(Vec<String>, String)>>);

impl ParamHeaders {
    /// From tool definitions (`tools/list` items).
    pub(crate) fn from_tools<'a>(tools: impl IntoIterator<Item = &'a Value>) -> Self {
        let mut by_tool = HashMap::new();
        for tool in tools {
            let (Some(name), Some(schema)) = (
                tool.get("name").and_then(Value::as_str),
                tool.get("inputSchema"),
            ) else {
                continue;
            };
            let found = annotations(schema);
            if !found.is_empty() {
                by_tool.insert(name.to_owned(), found);
            }
        }
        ParamHeaders(by_tool)
    }

    /// Whether `message` (a `tools/call`) came with the headers its
    /// arguments call for, each equal to the argument; the mismatch
    /// otherwise.
    pub(crate) fn check(&self, headers: &HeaderMap, message: &Value) -> Result<(), HeaderMismatch> {
        if jsonrpc::method(message) != Some("tools/call") {
            return Ok(());
        }
        let Some(params) = jsonrpc::params(message) else {
            return Ok(());
        };
        let Some(annotated) = params
            .get("name")
            .and_then(Value::as_str)
            .and_then(|name| self.0.get(name))
        else {
            return Ok(());
        };
        let arguments = params.get("arguments").unwrap_or(&Value::Null);
        for (path, header) in annotated {
            let name = format!("{PREFIX}{}", header.to_ascii_lowercase());
            let value = path
                .iter()
                .try_fold(arguments, |value, key| value.get(key))
                .and_then(header_text);
            let sent = super::situation::single(headers, &name)?;
            let header = header.clone();
            let argument = || path.join(".");
            match (value, sent) {
                (None, None) => {}
                (Some(value), Some(raw)) => match super::situation::decode(raw) {
                    Some(decoded) if decoded == value => {}
                    Some(sent) => {
                        return Err(HeaderMismatch::Param {
                            header,
                            sent,
                            argument: argument(),
                            value,
                        });
                    }
                    None => return Err(HeaderMismatch::ParamNotBase64 { header }),
                },
                (Some(_), None) => {
                    return Err(HeaderMismatch::NoParam {
                        header,
                        argument: argument(),
                    });
                }
                (None, Some(_)) => {
                    return Err(HeaderMismatch::ExtraParam {
                        header,
                        argument: argument(),
                    });
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn headers(pairs: &[(&str, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.append(
                http::HeaderName::from_bytes(name.as_bytes()).unwrap(),
                value.parse().unwrap(),
            );
        }
        map
    }

    fn tools() -> ParamHeaders {
        ParamHeaders::from_tools(
            &[json!({"name": "weather", "inputSchema": {"type": "object",
            "properties": {"region": {"type": "string", "x-mcp-header": "Region"},
                "opts": {"type": "object", "properties": {"days": {"type": "integer", "x-mcp-header": "Days"}}},
                "city": {"type": "string"}}}})],
        )
    }

    fn call(arguments: Value) -> Value {
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "weather", "arguments": arguments}})
    }

    #[test]
    fn headers_must_repeat_annotated_arguments() {
        let tools = tools();
        let body = call(json!({"region": "eu", "opts": {"days": 3}, "city": "x"}));
        let right = headers(&[("mcp-param-region", "eu"), ("mcp-param-days", "3")]);
        assert_eq!(tools.check(&right, &body), Ok(()));
        let wrapped = headers(&[
            ("mcp-param-region", "=?base64?ZXU=?="),
            ("mcp-param-days", "3"),
        ]);
        assert_eq!(tools.check(&wrapped, &body), Ok(()));

        let wrong = headers(&[("mcp-param-region", "us"), ("mcp-param-days", "3")]);
        let error = tools.check(&wrong, &body).unwrap_err().to_string();
        assert!(
            error.contains("Mcp-Param-Region header `us` does not match argument `region`"),
            "{error}"
        );
        let missing = headers(&[("mcp-param-region", "eu")]);
        let error = tools.check(&missing, &body).unwrap_err().to_string();
        assert!(
            error.contains("missing Mcp-Param-Days header for argument `opts.days`"),
            "{error}"
        );
        let extra = headers(&[("mcp-param-region", "eu"), ("mcp-param-days", "3")]);
        let error = tools
            .check(&extra, &call(json!({"region": "eu"})))
            .unwrap_err()
            .to_string();
        assert!(error.contains("which the body does not have"), "{error}");
        let broken = headers(&[
            ("mcp-param-region", "=?base64?%%?="),
            ("mcp-param-days", "3"),
        ]);
        assert!(
            tools
                .check(&broken, &body)
                .unwrap_err()
                .to_string()
                .contains("not valid Base64")
        );
    }

    #[test]
    fn other_tools_and_methods_need_none() {
        let tools = tools();
        let other = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "echo", "arguments": {"region": "eu"}}});
        assert_eq!(tools.check(&HeaderMap::new(), &other), Ok(()));
        let list = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"});
        assert_eq!(tools.check(&HeaderMap::new(), &list), Ok(()));
    }
}
