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
    /// Each method some rule names, with the rules (one bit each) that may
    /// hit it.
    by_method: Vec<(String, u64)>,
    /// The rules that may hit any method.
    any_method: u64,
    /// Per rule, the tool, prompt or resource its requests must name
    /// (`params.name` or `params.uri`, as the string's JSON text).
    named: Vec<Option<String>>,
    /// The rules with no name to look for.
    unnamed: u64,
    /// The rules that look for a resource (`uri`), not a name.
    by_uri: u64,
    /// Find `"method"`, `"name"` and `"uri"` keys.
    keys: [memchr::memmem::Finder<'static>; 3],
}

/// Rules sorted line by line, at most (one bit each).
const SORTED_RULES: usize = 64;

/// The keys whose values [`values_of`] finds.
const KEYS: [&[u8]; 3] = [b"\"method\"", b"\"name\"", b"\"uri\""];

impl Prefilter {
    pub(crate) fn new(faults: &Faults) -> Self {
        let mut prefilter = Prefilter {
            any: faults.rules.len() > SORTED_RULES,
            always: Vec::new(),
            by_method: Vec::new(),
            any_method: 0,
            named: Vec::new(),
            unnamed: 0,
            by_uri: 0,
            keys: KEYS.map(|key| memchr::memmem::Finder::new(key).into_owned()),
        };
        for (i, rule) in faults.rules.iter().enumerate().take(SORTED_RULES) {
            let bit = 1_u64 << i;
            let select = &rule.select;
            let methods: &[&str] = match (&select.method, &select.name, &select.uri) {
                (Some(method), _, _) => &[method.as_str()],
                (None, Some(_), _) => &["tools/call", "prompts/get"],
                (None, None, Some(_)) => &[
                    "resources/read",
                    "resources/subscribe",
                    "resources/unsubscribe",
                ],
                (None, None, None) => &[],
            };
            for &method in methods {
                match prefilter.by_method.iter_mut().find(|(m, _)| m == method) {
                    Some((_, rules)) => *rules |= bit,
                    None => prefilter.by_method.push((method.to_owned(), bit)),
                }
            }
            if methods.is_empty() {
                prefilter.any_method |= bit;
            }
            // The name as it is written in JSON text without escapes (a
            // line with an escape is always concerned).
            let named = (select.name.as_ref().or(select.uri.as_ref()))
                .map(|named| serde_json::to_string(named).expect("strings serialise"))
                .map(|quoted| quoted[1..quoted.len() - 1].to_owned());
            if named.is_none() {
                prefilter.unnamed |= bit;
            }
            if select.name.is_none() && select.uri.is_some() {
                prefilter.by_uri |= bit;
            }
            prefilter.any |= methods.is_empty() && named.is_none();
            prefilter.named.push(named);
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
            || self.any_method != 0
            || self.always.iter().any(|m| m == method)
            || self.by_method.iter().any(|(m, _)| m == method)
    }

    /// Whether the message on `line` may concern some rule. A line with an
    /// escape in it may spell a method or a name otherwise: it is always
    /// concerned (and parsed). Allocates nothing: it runs on every line.
    pub(crate) fn concerns_line(&self, line: &[u8]) -> bool {
        if self.any || memchr::memchr(b'\\', line).is_some() {
            return true;
        }
        // The rules that may hit a method this line names.
        let mut candidates = self.any_method;
        for method in values_of(&self.keys[0], line) {
            if self.always.iter().any(|m| m.as_bytes() == method) {
                return true;
            }
            if let Some((_, rules)) = self.by_method.iter().find(|(m, _)| m.as_bytes() == method) {
                candidates |= rules;
            }
        }
        if candidates == 0 {
            return false;
        }
        if candidates & self.unnamed != 0 {
            return true;
        }
        // Every rule left names something: is it named here?
        let named = |value: &[u8]| {
            (0..self.named.len()).any(|i| {
                candidates & (1 << i) != 0
                    && self.named[i]
                        .as_ref()
                        .is_some_and(|n| n.as_bytes() == value)
            })
        };
        (candidates & !self.by_uri != 0 && values_of(&self.keys[1], line).any(named))
            || (candidates & self.by_uri != 0 && values_of(&self.keys[2], line).any(named))
    }
}

/// Every string value of the key `key` finds in a line (a plain one,
/// without escapes), at any depth: the top-level one among them, whatever
/// else the params hold.
fn values_of<'a>(
    key: &'a memchr::memmem::Finder<'static>,
    line: &'a [u8],
) -> impl Iterator<Item = &'a [u8]> + 'a {
    let mut from = 0;
    std::iter::from_fn(move || {
        loop {
            let at = key.find(&line[from..])? + from;
            from = at + key.needle().len();
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
        let key = memchr::memmem::Finder::new(KEYS[0]);
        let found: Vec<&[u8]> = values_of(&key, line).collect();
        assert_eq!(found, [&b"inner"[..], &b"tools/call"[..]]);
        assert_eq!(values_of(&key, br#"{"id":1}"#).count(), 0);
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
        assert!(
            !p.concerns_line(call("research").as_bytes()),
            "the whole name"
        );
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
