//! Telling, cheaply, which client messages no fault rule can concern, so
//! that they go straight to the handler (replay's text path, which answers
//! a plain request without parsing it): a faults file that matches nothing
//! must cost (almost) nothing.

use crate::cassette::{Fault, Faults};

/// What the rules of one overlay may concern.
#[derive(Debug)]
pub(crate) struct Prefilter {
    /// Some rule may hit any request (or there are too many rules to sort
    /// lines by): every message is concerned.
    any: bool,
    /// Methods concerned whatever else the message says (the lists a
    /// change edits, the calls it refuses, cancellations of hung requests).
    always: Vec<String>,
    /// Per rule: the methods it may hit (empty: any), and what its requests
    /// must contain (the tool, prompt or resource it names, as JSON).
    rules: Vec<(Vec<String>, Option<memchr::memmem::Finder<'static>>)>,
    /// Finds `"method"` keys.
    method_key: memchr::memmem::Finder<'static>,
}

/// Rules sorted line by line, at most (one bit each).
const SORTED_RULES: usize = 64;

impl Prefilter {
    pub(crate) fn new(faults: &Faults) -> Self {
        let mut prefilter = Prefilter {
            any: faults.rules.len() > SORTED_RULES,
            always: Vec::new(),
            rules: Vec::new(),
            method_key: memchr::memmem::Finder::new(METHOD_KEY).into_owned(),
        };
        for rule in &faults.rules {
            let select = &rule.select;
            let methods: Vec<String> = match (&select.method, &select.name, &select.uri) {
                (Some(method), _, _) => vec![method.clone()],
                (None, Some(_), _) => vec!["tools/call".into(), "prompts/get".into()],
                (None, None, Some(_)) => vec![
                    "resources/read".into(),
                    "resources/subscribe".into(),
                    "resources/unsubscribe".into(),
                ],
                (None, None, None) => Vec::new(),
            };
            let needle = select.name.as_ref().or(select.uri.as_ref()).map(|named| {
                let quoted = serde_json::to_string(named).expect("strings serialise");
                memchr::memmem::Finder::new(quoted.as_bytes()).into_owned()
            });
            prefilter.any |= methods.is_empty() && needle.is_none();
            prefilter.rules.push((methods, needle));
            match &rule.fault {
                Fault::ListChanged(change) => {
                    for method in [
                        change.list.list_method(),
                        change.list.use_method(),
                        "subscriptions/listen",
                        "initialize",
                        "server/discover",
                    ] {
                        prefilter.always.push(method.to_owned());
                    }
                }
                Fault::Hang => prefilter.always.push("notifications/cancelled".to_owned()),
                _ => {}
            }
        }
        prefilter
    }

    /// Whether a message of `method` may concern some rule.
    pub(crate) fn concerns_method(&self, method: &str) -> bool {
        self.any
            || self.always.iter().any(|m| m == method)
            || (self.rules.iter())
                .any(|(methods, _)| methods.is_empty() || methods.iter().any(|m| m == method))
    }

    /// Whether the message on `line` may concern some rule. A line with an
    /// escape in it may spell a method or a name otherwise: it is always
    /// concerned (and parsed). Allocates nothing: it runs on every line.
    pub(crate) fn concerns_line(&self, line: &[u8]) -> bool {
        if self.any || memchr::memchr(b'\\', line).is_some() {
            return true;
        }
        // Bit i: rule i may hit a method this line names.
        let mut candidates: u64 = 0;
        for (i, (methods, _)) in self.rules.iter().enumerate() {
            if methods.is_empty() {
                candidates |= 1 << i;
            }
        }
        for method in methods_in(&self.method_key, line) {
            if self.always.iter().any(|m| m.as_bytes() == method) {
                return true;
            }
            for (i, (methods, _)) in self.rules.iter().enumerate() {
                if methods.iter().any(|m| m.as_bytes() == method) {
                    candidates |= 1 << i;
                }
            }
        }
        (self.rules.iter().enumerate())
            .filter(|(i, _)| candidates & (1 << i) != 0)
            .any(|(_, (_, needle))| needle.as_ref().is_none_or(|n| n.find(line).is_some()))
    }
}

/// The key whose values [`methods_in`] finds.
const METHOD_KEY: &[u8] = b"\"method\"";

/// Every `"method": "…"` value in a line (a plain one, without escapes):
/// the top-level one among them, whatever else the params hold.
fn methods_in<'a>(
    key: &'a memchr::memmem::Finder<'static>,
    line: &'a [u8],
) -> impl Iterator<Item = &'a [u8]> + 'a {
    let mut from = 0;
    std::iter::from_fn(move || {
        loop {
            let at = key.find(&line[from..])? + from;
            from = at + METHOD_KEY.len();
            let rest = &line[from..];
            let skip = |s: &[u8]| s.iter().take_while(|b| b.is_ascii_whitespace()).count();
            let mut i = skip(rest);
            if rest.get(i) != Some(&b':') {
                continue;
            }
            i += 1;
            i += skip(&rest[i..]);
            if rest.get(i) != Some(&b'"') {
                continue;
            }
            let start = i + 1;
            let end = memchr::memchr(b'"', &rest[start..])? + start;
            return Some(&rest[start..end]);
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn prefilter(rules: serde_json::Value) -> Prefilter {
        Prefilter::new(&Faults::from_document(&rules).unwrap())
    }

    #[test]
    fn methods_are_found_in_a_line_wherever_they_are() {
        let line =
            br#"{"params":{"method" : "inner"},"jsonrpc":"2.0","method":"tools/call","id":1}"#;
        let key = memchr::memmem::Finder::new(METHOD_KEY);
        let found: Vec<&[u8]> = methods_in(&key, line).collect();
        assert_eq!(found, [&b"inner"[..], &b"tools/call"[..]]);
        assert_eq!(methods_in(&key, br#"{"id":1}"#).count(), 0);
    }

    #[test]
    fn only_lines_a_rule_may_hit_are_concerned() {
        let p = prefilter(json!([{"name": "search", "hang": true}]));
        let call = |name: &str| {
            format!(
                r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"{name}"}}}}"#
            )
        };
        assert!(p.concerns_line(call("search").as_bytes()));
        assert!(!p.concerns_line(call("echo").as_bytes()));
        assert!(p.concerns_line(
            br#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}"#
        ));
        assert!(
            p.concerns_line(br#"{"method":"tools/call","params":{"name":"s\u0065arch"}}"#),
            "escapes are parsed"
        );
        assert!(!p.concerns_method("tools/list"));
        assert!(p.concerns_method("prompts/get"));
        let p = prefilter(json!([{"nth": 3, "delay": 5}]));
        assert!(
            p.concerns_line(br#"{"method":"ping","id":1}"#),
            "a rule on every request"
        );
        let p = prefilter(json!([{"method": "tools/call", "tools_changed": {"remove": ["a"]}}]));
        assert!(p.concerns_method("tools/list") && p.concerns_method("subscriptions/listen"));
    }
}
