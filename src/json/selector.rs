//! JSON pointers with wildcards, for ignoring fields and picking match keys.
//!
//! A selector is an RFC 6901 JSON pointer rooted at a JSON-RPC message
//! (`/params/arguments/timestamp`) in which a whole segment `*` stands for
//! exactly one segment and a whole segment `**` for zero or more. Semantics:
//!
//! - The selector must start with `/`; the empty pointer (the whole
//!   document) is rejected, since the root can be neither removed nor
//!   usefully compared. As in RFC 6901, `/` is the key `""`, and a trailing
//!   `/` adds a segment `""`.
//! - `~0` is `~` and `~1` is `/`; any other `~` is an error. Wildcards are
//!   recognised before unescaping, and only as whole segments: `a*` is the
//!   literal key `a*`, while `***` (and longer runs of stars) is rejected as
//!   a likely typo, as is `**` directly followed by `**`.
//! - A plain segment matches the object member with that exact key. If it is
//!   an RFC 6901 array index (`0`, or digits without a leading zero) it also
//!   matches that array element; `01` and `-` only ever match object keys.
//! - The root itself is never a match. So `/**` matches every value below
//!   the root, and removing with it empties the top-level container.
//!   Elsewhere `**` may match zero segments: `/params/**` matches `/params`
//!   itself and everything inside it; `/params/*/**` only what is inside.

use std::fmt;
use std::str::FromStr;

use serde_json::{Map, Value};

/// A JSON pointer whose whole segments may be the wildcards `*` or `**`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Selector {
    text: String,
    segments: Vec<Segment>,
}

/// Why a selector did not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid selector `{selector}`: {reason}")]
pub struct SelectorError {
    /// The text that was given.
    pub selector: String,
    /// What is wrong with it.
    pub reason: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Segment {
    /// A literal key; `index` is set when it is also a valid array index.
    Key { name: String, index: Option<usize> },
    /// `*`: exactly one segment.
    One,
    /// `**`: zero or more segments.
    Any,
}

/// One step down a document: an object member or an array element.
#[derive(Clone, Copy)]
enum Step<'a> {
    Key(&'a str),
    Index(usize),
}

impl Segment {
    fn literal(name: String) -> Segment {
        let index = is_array_index(&name).then(|| name.parse().ok()).flatten();
        Segment::Key { name, index }
    }
}

/// RFC 6901: `0`, or ASCII digits without a leading zero.
fn is_array_index(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) && (s == "0" || !s.starts_with('0'))
}

/// Undoes RFC 6901 escaping; `None` for a `~` not followed by `0` or `1`.
fn unescape(raw: &str) -> Option<String> {
    if !raw.contains('~') {
        return Some(raw.to_owned());
    }
    let mut out = String::with_capacity(raw.len());
    let mut chars = raw.chars();
    while let Some(c) = chars.next() {
        if c == '~' {
            match chars.next() {
                Some('0') => out.push('~'),
                Some('1') => out.push('/'),
                _ => return None,
            }
        } else {
            out.push(c);
        }
    }
    Some(out)
}

/// Appends `/` and the RFC 6901 escaped form of a step to a pointer.
fn push_step(pointer: &mut String, step: Step<'_>) {
    pointer.push('/');
    match step {
        Step::Key(key) => pointer.push_str(&super::pointer_segment(key)),
        Step::Index(i) => pointer.push_str(&i.to_string()),
    }
}

impl Selector {
    /// Parses and validates a selector; see the module docs for the syntax.
    pub fn parse(text: &str) -> Result<Selector, SelectorError> {
        let error = |reason: &str| SelectorError {
            selector: text.to_owned(),
            reason: reason.to_owned(),
        };
        if text.is_empty() {
            return Err(error(
                "a selector must not be empty; it starts with `/` (the root itself cannot be selected)",
            ));
        }
        let Some(rest) = text.strip_prefix('/') else {
            return Err(error("a selector must start with `/`"));
        };
        let mut segments = Vec::new();
        for raw in rest.split('/') {
            let segment = match raw {
                "*" => Segment::One,
                "**" => {
                    if segments.last() == Some(&Segment::Any) {
                        return Err(error("`**` directly followed by `**` is redundant"));
                    }
                    Segment::Any
                }
                _ if raw.len() > 2 && raw.bytes().all(|b| b == b'*') => {
                    return Err(error(&format!(
                        "`{raw}` is not a wildcard; use `*` for one segment or `**` for any number"
                    )));
                }
                _ => Segment::literal(unescape(raw).ok_or_else(|| {
                    error("`~` must be followed by `0` (for `~`) or `1` (for `/`)")
                })?),
            };
            segments.push(segment);
        }
        Ok(Selector {
            text: text.to_owned(),
            segments,
        })
    }

    /// The selector as written.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// Removes every value the selector matches: object members are removed,
    /// array elements are replaced by `null` (so positions of the others do
    /// not shift).
    pub fn remove_from(&self, root: &mut Value) {
        let start = self.start();
        self.remove_below(root, &start);
    }

    /// Every match as (concrete JSON pointer, value), in document order (a
    /// value before what it contains, object keys in the map's iteration
    /// order, arrays by index). A value matched via several paths of `**` is
    /// returned once.
    pub fn select<'a>(&self, root: &'a Value) -> Vec<(String, &'a Value)> {
        let mut out = Vec::new();
        let mut pointer = String::new();
        self.select_below(root, &self.start(), &mut pointer, &mut out);
        out
    }

    /// Whether this selector matches a concrete JSON pointer such as
    /// `/params/arguments/x` (already escaped per RFC 6901). The empty
    /// pointer (the root) and malformed pointers never match.
    pub fn matches_pointer(&self, pointer: &str) -> bool {
        let Some(rest) = pointer.strip_prefix('/') else {
            return false;
        };
        let mut states = self.start();
        for raw in rest.split('/') {
            let Some(key) = unescape(raw) else {
                return false;
            };
            states = self.advance(&states, Step::Key(&key));
            if states.is_empty() {
                return false;
            }
        }
        self.accepts(&states)
    }

    // The matcher is a small NFA: a state is a position in `segments`, and
    // a set of states is a sorted, deduplicated `Vec`. Walking the document
    // once with a state set (instead of expanding `**` into paths) visits
    // every value at most once, which gives document order and dedup for
    // free and prunes subtrees as soon as no state survives.

    fn start(&self) -> Vec<usize> {
        let mut states = vec![0];
        self.close(&mut states);
        states
    }

    /// Adds the states reachable by letting a `**` match zero segments.
    fn close(&self, states: &mut Vec<usize>) {
        let mut i = 0;
        while i < states.len() {
            let s = states[i];
            if self.segments.get(s) == Some(&Segment::Any) && !states.contains(&(s + 1)) {
                states.push(s + 1);
            }
            i += 1;
        }
        states.sort_unstable();
        states.dedup();
    }

    fn advance(&self, states: &[usize], step: Step<'_>) -> Vec<usize> {
        let mut next = Vec::with_capacity(states.len());
        for &s in states {
            match (self.segments.get(s), step) {
                (None, _) => {}
                (Some(Segment::One), _) => next.push(s + 1),
                (Some(Segment::Any), _) => next.push(s),
                (Some(Segment::Key { name, .. }), Step::Key(key)) if name == key => {
                    next.push(s + 1)
                }
                (Some(Segment::Key { index, .. }), Step::Index(i)) if *index == Some(i) => {
                    next.push(s + 1)
                }
                (Some(Segment::Key { .. }), _) => {}
            }
        }
        self.close(&mut next);
        next
    }

    fn accepts(&self, states: &[usize]) -> bool {
        states.last() == Some(&self.segments.len())
    }

    /// The only segment that can match next, when it is a literal: then the
    /// child can be looked up instead of scanning every member.
    fn only_literal(&self, states: &[usize]) -> Option<(&str, Option<usize>)> {
        match states {
            [s] => match self.segments.get(*s) {
                Some(Segment::Key { name, index }) => Some((name, *index)),
                _ => None,
            },
            _ => None,
        }
    }

    fn select_below<'a>(
        &self,
        node: &'a Value,
        states: &[usize],
        pointer: &mut String,
        out: &mut Vec<(String, &'a Value)>,
    ) {
        match node {
            Value::Object(map) => {
                if let Some((name, _)) = self.only_literal(states) {
                    if let Some((key, child)) = map.get_key_value(name) {
                        self.select_child(child, Step::Key(key), states, pointer, out);
                    }
                    return;
                }
                for (key, child) in map {
                    self.select_child(child, Step::Key(key), states, pointer, out);
                }
            }
            Value::Array(items) => {
                if let Some((_, index)) = self.only_literal(states) {
                    if let Some(i) = index
                        && let Some(child) = items.get(i)
                    {
                        self.select_child(child, Step::Index(i), states, pointer, out);
                    }
                    return;
                }
                for (i, child) in items.iter().enumerate() {
                    self.select_child(child, Step::Index(i), states, pointer, out);
                }
            }
            _ => {}
        }
    }

    fn select_child<'a>(
        &self,
        child: &'a Value,
        step: Step<'_>,
        states: &[usize],
        pointer: &mut String,
        out: &mut Vec<(String, &'a Value)>,
    ) {
        let next = self.advance(states, step);
        if next.is_empty() {
            return;
        }
        let len = pointer.len();
        push_step(pointer, step);
        if self.accepts(&next) {
            out.push((pointer.clone(), child));
        }
        self.select_below(child, &next, pointer, out);
        pointer.truncate(len);
    }

    fn remove_below(&self, node: &mut Value, states: &[usize]) {
        match node {
            Value::Object(map) => self.remove_members(map, states),
            Value::Array(items) => {
                for (i, child) in items.iter_mut().enumerate() {
                    let next = self.advance(states, Step::Index(i));
                    if self.accepts(&next) {
                        *child = Value::Null;
                    } else if !next.is_empty() {
                        self.remove_below(child, &next);
                    }
                }
            }
            _ => {}
        }
    }

    fn remove_members(&self, map: &mut Map<String, Value>, states: &[usize]) {
        if let Some((name, _)) = self.only_literal(states) {
            let next = self.advance(states, Step::Key(name));
            if self.accepts(&next) {
                // `shift_remove` keeps the other members in order.
                map.shift_remove(name);
            } else if let Some(child) = map.get_mut(name) {
                self.remove_below(child, &next);
            }
            return;
        }
        map.retain(|key, child| {
            let next = self.advance(states, Step::Key(key));
            if self.accepts(&next) {
                return false;
            }
            if !next.is_empty() {
                self.remove_below(child, &next);
            }
            true
        });
    }
}

impl FromStr for Selector {
    type Err = SelectorError;

    fn from_str(text: &str) -> Result<Selector, SelectorError> {
        Selector::parse(text)
    }
}

impl fmt::Display for Selector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl serde::Serialize for Selector {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.text)
    }
}

impl<'de> serde::Deserialize<'de> for Selector {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Selector, D::Error> {
        let text = String::deserialize(deserializer)?;
        Selector::parse(&text).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    fn sel(text: &str) -> Selector {
        Selector::parse(text).unwrap()
    }

    fn pointers(selector: &str, root: &Value) -> Vec<String> {
        sel(selector)
            .select(root)
            .into_iter()
            .map(|(p, _)| p)
            .collect()
    }

    fn removed(selector: &str, mut root: Value) -> Value {
        sel(selector).remove_from(&mut root);
        root
    }

    fn message() -> Value {
        json!({
            "method": "tools/call",
            "params": {
                "requestId": 1,
                "name": "echo",
                "arguments": {
                    "timestamp": "2024-01-01",
                    "requestId": 2,
                    "items": [{"requestId": 3, "keep": true}, {"b": {"requestId": 4}}]
                },
                "_meta": {"progressToken": "p"}
            }
        })
    }

    fn reason(text: &str) -> String {
        let err = Selector::parse(text).unwrap_err();
        assert_eq!(err.selector, text);
        err.reason
    }

    #[test]
    fn rejects_bad_syntax() {
        assert!(reason("").contains("empty"));
        assert!(reason("params").contains("start with `/`"));
        assert!(reason("*/a").contains("start with `/`"));
        assert!(reason("/a/***").contains("`***`"));
        assert!(reason("/****").contains("`****`"));
        assert!(reason("/a~").contains('~'));
        assert!(reason("/a~2").contains('~'));
        assert!(reason("/~x/b").contains('~'));
        assert!(reason("/**/**").contains("redundant"));
        assert!(reason("/a/**/**/b").contains("redundant"));
        let err = Selector::parse("x").unwrap_err();
        assert_eq!(
            err.to_string(),
            "invalid selector `x`: a selector must start with `/`"
        );
    }

    #[test]
    fn accepts_good_syntax() {
        for text in [
            "/",
            "//",
            "/a/",
            "/params/name",
            "/*",
            "/**",
            "/**/*/**",
            "/*/*",
            "/a*",
            "/*a",
            "/a**b",
            "/~0~1",
            "/0/-/01",
        ] {
            assert_eq!(sel(text).as_str(), text);
            assert_eq!(sel(text).to_string(), text);
            assert_eq!(text.parse::<Selector>().unwrap(), sel(text));
        }
    }

    #[test]
    fn plain_pointers() {
        let m = message();
        assert_eq!(pointers("/params/name", &m), ["/params/name"]);
        assert_eq!(
            sel("/params/arguments/timestamp").select(&m),
            [(
                "/params/arguments/timestamp".to_owned(),
                &json!("2024-01-01")
            )]
        );
        assert!(pointers("/params/nope", &m).is_empty());
        assert!(pointers("/params/name/deeper", &m).is_empty());
        assert!(pointers("/method/0", &m).is_empty());
        assert_eq!(
            pointers("/params/arguments/items/1/b", &m),
            ["/params/arguments/items/1/b"]
        );
    }

    #[test]
    fn root_and_empty_keys_follow_rfc_6901() {
        let doc = json!({"": {"": 1, "x": 2}, "a": {"": 3}});
        assert_eq!(pointers("/", &doc), ["/"]);
        assert_eq!(pointers("//", &doc), ["//"]);
        assert_eq!(pointers("/a/", &doc), ["/a/"]);
        assert_eq!(removed("/", doc.clone()), json!({"a": {"": 3}}));
        // The root is never a match, not even for `/**`.
        assert!(!sel("/**").matches_pointer(""));
        assert!(pointers("/", &json!([1])).is_empty());
    }

    #[test]
    fn escapes() {
        let doc = json!({"a/b": {"m~n": 1}, "a": {"b": 2}, "~1": 3});
        assert_eq!(pointers("/a~1b/m~0n", &doc), ["/a~1b/m~0n"]);
        assert_eq!(pointers("/a/b", &doc), ["/a/b"]);
        // `~01` is `~1`, not `~/`.
        assert_eq!(pointers("/~01", &doc), ["/~01"]);
        // Concrete pointers come back escaped.
        assert_eq!(pointers("/*/*", &doc), ["/a~1b/m~0n", "/a/b"]);
        assert_eq!(
            removed("/a~1b/m~0n", doc),
            json!({"a/b": {}, "a": {"b": 2}, "~1": 3})
        );
    }

    #[test]
    fn star_matches_exactly_one_segment() {
        let m = message();
        assert_eq!(
            pointers("/params/*/requestId", &m),
            ["/params/arguments/requestId"]
        );
        assert_eq!(
            pointers("/params/arguments/items/*/requestId", &m),
            ["/params/arguments/items/0/requestId"]
        );
        assert_eq!(pointers("/*", &m), ["/method", "/params"]);
        assert!(pointers("/*/*/*/*/*/*/*", &m).is_empty());
        assert!(pointers("/params/*", &json!({"params": {}})).is_empty());
        assert!(pointers("/params/*", &json!({"params": 1})).is_empty());
        // Literal stars inside a segment are plain keys.
        let doc = json!({"a*": 1, "ab": 2});
        assert_eq!(pointers("/a*", &doc), ["/a*"]);
        assert_eq!(pointers("/*", &doc), ["/a*", "/ab"]);
    }

    #[test]
    fn double_star_matches_zero_one_or_many_segments() {
        let m = message();
        assert_eq!(
            pointers("/params/**/requestId", &m),
            [
                "/params/requestId",
                "/params/arguments/requestId",
                "/params/arguments/items/0/requestId",
                "/params/arguments/items/1/b/requestId",
            ]
        );
        assert_eq!(
            pointers("/**/progressToken", &m),
            ["/params/_meta/progressToken"]
        );
        assert_eq!(
            pointers("/params/**/items/**/b", &m),
            ["/params/arguments/items/1/b"]
        );
        // Trailing `**` includes the value itself; `*/**` starts below it.
        let doc = json!({"a": {"b": [1]}, "c": 2});
        assert_eq!(pointers("/a/**", &doc), ["/a", "/a/b", "/a/b/0"]);
        assert_eq!(pointers("/a/*/**", &doc), ["/a/b", "/a/b/0"]);
        assert_eq!(pointers("/**", &doc), ["/a", "/a/b", "/a/b/0", "/c"]);
        assert_eq!(pointers("/**/*", &doc), ["/a", "/a/b", "/a/b/0", "/c"]);
        assert_eq!(pointers("/*/**/0", &doc), ["/a/b/0"]);
        assert!(pointers("/a/**/c", &doc).is_empty());
    }

    #[test]
    fn double_star_matches_are_deduplicated_in_document_order() {
        // `/a/a/a` is reachable through `**` in several ways; reported once.
        let doc = json!({"a": {"a": {"a": 1}}, "z": {"a": 2}});
        assert_eq!(pointers("/**/a/**", &doc), ["/a", "/a/a", "/a/a/a", "/z/a"]);
        assert_eq!(pointers("/**/a/**/a", &doc), ["/a/a", "/a/a/a"]);
        let all = sel("/**/*/**").select(&doc);
        let mut seen: Vec<&String> = all.iter().map(|(p, _)| p).collect();
        let count = seen.len();
        seen.dedup();
        assert_eq!(seen.len(), count);
        // Map order (insertion, with preserve_order) is kept.
        let doc = json!({"z": 1, "a": 2, "m": 3});
        assert_eq!(pointers("/*", &doc), ["/z", "/a", "/m"]);
    }

    #[test]
    fn numeric_segments_match_indices_and_keys() {
        let doc = json!({"list": [10, 11, 12], "map": {"0": "zero", "01": "padded", "-": "dash"}});
        assert_eq!(
            sel("/list/1").select(&doc),
            [("/list/1".to_owned(), &json!(11))]
        );
        assert!(pointers("/list/3", &doc).is_empty());
        assert!(pointers("/list/01", &doc).is_empty());
        assert!(pointers("/list/-", &doc).is_empty());
        assert!(pointers("/list/99999999999999999999999", &doc).is_empty());
        assert_eq!(pointers("/map/0", &doc), ["/map/0"]);
        assert_eq!(pointers("/map/01", &doc), ["/map/01"]);
        assert_eq!(pointers("/map/-", &doc), ["/map/-"]);
        assert_eq!(pointers("/*/0", &doc), ["/list/0", "/map/0"]);
        assert_eq!(pointers("/list/*", &doc), ["/list/0", "/list/1", "/list/2"]);
    }

    #[test]
    fn removal_deletes_members_and_nulls_elements() {
        let m = message();
        assert_eq!(
            removed("/params/**/requestId", m.clone()),
            json!({
                "method": "tools/call",
                "params": {
                    "name": "echo",
                    "arguments": {
                        "timestamp": "2024-01-01",
                        "items": [{"keep": true}, {"b": {}}]
                    },
                    "_meta": {"progressToken": "p"}
                }
            })
        );
        assert_eq!(
            removed("/list/1", json!({"list": [1, 2, 3]})),
            json!({"list": [1, null, 3]})
        );
        assert_eq!(
            removed("/list/*", json!({"list": [1, [2], 3]})),
            json!({"list": [null, null, null]})
        );
        assert_eq!(
            removed("/**/x", json!([{"x": 1, "y": 2}, {"x": 3}, 4])),
            json!([{"y": 2}, {}, 4])
        );
        assert_eq!(
            removed("/**/0", json!({"a": [[1, 2], 3], "0": 4})),
            json!({"a": [null, 3]})
        );
        // `/**` empties the top level; the root itself stays.
        assert_eq!(removed("/**", m.clone()), json!({}));
        assert_eq!(removed("/**", json!([1, {"a": 2}])), json!([null, null]));
        assert_eq!(removed("/**", json!(5)), json!(5));
        // Nothing to remove: unchanged.
        assert_eq!(removed("/params/nope/x", m.clone()), m);
        assert_eq!(removed("/method/x", m.clone()), m);
    }

    #[test]
    fn removal_keeps_member_order() {
        let doc = removed("/b", json!({"a": 1, "b": 2, "c": 3, "d": 4}));
        assert_eq!(
            doc.as_object().unwrap().keys().collect::<Vec<_>>(),
            ["a", "c", "d"]
        );
        let doc = removed("/*/x", json!({"o": {"x": 1, "y": 2, "z": 3, "w": 4}}));
        assert_eq!(
            doc["o"].as_object().unwrap().keys().collect::<Vec<_>>(),
            ["y", "z", "w"]
        );
    }

    #[test]
    fn matches_concrete_pointers() {
        let s = sel("/params/**/requestId");
        assert!(s.matches_pointer("/params/requestId"));
        assert!(s.matches_pointer("/params/a/requestId"));
        assert!(s.matches_pointer("/params/a/0/b/requestId"));
        assert!(!s.matches_pointer("/params"));
        assert!(!s.matches_pointer("/requestId"));
        assert!(!s.matches_pointer("/params/requestId/x"));
        assert!(!s.matches_pointer(""));
        assert!(!s.matches_pointer("params/requestId"));

        let s = sel("/params/*");
        assert!(s.matches_pointer("/params/x"));
        assert!(s.matches_pointer("/params/"));
        assert!(!s.matches_pointer("/params"));
        assert!(!s.matches_pointer("/params/x/y"));

        assert!(sel("/a~1b").matches_pointer("/a~1b"));
        assert!(!sel("/a~1b").matches_pointer("/a/b"));
        assert!(!sel("/a~1b").matches_pointer("/a~2b"));
        assert!(sel("/*").matches_pointer("/a~1b"));
        assert!(sel("/list/0").matches_pointer("/list/0"));
        assert!(!sel("/list/0").matches_pointer("/list/00"));
        assert!(sel("/").matches_pointer("/"));
        assert!(!sel("/").matches_pointer("//"));
        assert!(sel("/**").matches_pointer("/a/b/c"));
        assert!(sel("/a/**").matches_pointer("/a"));
        assert!(!sel("/a/*/**").matches_pointer("/a"));
    }

    #[test]
    fn serde_uses_the_text() {
        let s = sel("/params/**/requestId");
        assert_eq!(
            serde_json::to_value(&s).unwrap(),
            json!("/params/**/requestId")
        );
        let back: Selector = serde_json::from_value(json!("/params/**/requestId")).unwrap();
        assert_eq!(back, s);
        let err = serde_json::from_value::<Selector>(json!("params")).unwrap_err();
        assert!(
            err.to_string()
                .contains("invalid selector `params`: a selector must start with `/`"),
            "{err}"
        );
        assert!(serde_json::from_value::<Selector>(json!(1)).is_err());
    }

    // Properties. Keys come from a small alphabet (with escapes and
    // numbers) so that random selectors hit random documents often.

    const KEYS: &[&str] = &["a", "b", "0", "1", "x/y", "t~"];

    fn json_value() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::from),
            (-3i64..3).prop_map(Value::from),
            "[a-c]{0,2}".prop_map(Value::from),
        ];
        leaf.prop_recursive(4, 40, 4, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
                prop::collection::vec((prop::sample::select(KEYS), inner), 0..4).prop_map(
                    |members| {
                        Value::Object(
                            members
                                .into_iter()
                                .map(|(k, v)| (k.to_owned(), v))
                                .collect(),
                        )
                    }
                ),
            ]
        })
    }

    fn selector_text() -> impl Strategy<Value = String> {
        let segment = prop::sample::select(&["a", "b", "0", "1", "x~1y", "t~0", "", "*", "**"][..]);
        prop::collection::vec(segment, 1..5)
            .prop_filter("no `**/**`", |segs| {
                !segs.windows(2).any(|w| w == ["**", "**"])
            })
            .prop_map(|segs| format!("/{}", segs.join("/")))
    }

    /// Every value below the root with its pointer, in pre-order.
    fn all_pointers(node: &Value, pointer: &mut String, out: &mut Vec<String>) {
        let children: Vec<(String, &Value)> = match node {
            Value::Object(map) => map.iter().map(|(k, v)| (k.clone(), v)).collect(),
            Value::Array(items) => items
                .iter()
                .enumerate()
                .map(|(i, v)| (i.to_string(), v))
                .collect(),
            _ => Vec::new(),
        };
        for (key, child) in children {
            let len = pointer.len();
            push_step(pointer, Step::Key(&key));
            out.push(pointer.clone());
            all_pointers(child, pointer, out);
            pointer.truncate(len);
        }
    }

    /// A backtracking glob match over unescaped segments, independent of
    /// the NFA.
    fn naive(pattern: &[&str], path: &[String]) -> bool {
        match pattern.split_first() {
            None => path.is_empty(),
            Some((&"**", rest)) => (0..=path.len()).any(|skip| naive(rest, &path[skip..])),
            Some((&"*", rest)) => !path.is_empty() && naive(rest, &path[1..]),
            Some((segment, rest)) => {
                path.first().map(String::as_str) == Some(*segment) && naive(rest, &path[1..])
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        #[test]
        fn display_round_trips(text in selector_text()) {
            let s = sel(&text);
            prop_assert_eq!(sel(&s.to_string()), s.clone());
            let json = serde_json::to_string(&s).unwrap();
            prop_assert_eq!(serde_json::from_str::<Selector>(&json).unwrap(), s);
        }

        #[test]
        fn select_agrees_with_matches_pointer_and_a_naive_matcher(
            doc in json_value(),
            text in selector_text(),
        ) {
            let s = sel(&text);
            let pattern: Vec<String> = text[1..]
                .split('/')
                .map(|seg| if seg == "*" || seg == "**" { seg.to_owned() } else { unescape(seg).unwrap() })
                .collect();
            let pattern: Vec<&str> = pattern.iter().map(String::as_str).collect();
            let mut every = Vec::new();
            all_pointers(&doc, &mut String::new(), &mut every);
            let expected: Vec<String> = every
                .into_iter()
                .filter(|p| {
                    let path: Vec<String> = p[1..].split('/').map(|s| unescape(s).unwrap()).collect();
                    naive(&pattern, &path)
                })
                .collect();
            let selected = s.select(&doc);
            let got: Vec<String> = selected.iter().map(|(p, _)| p.clone()).collect();
            prop_assert_eq!(&got, &expected);
            for (pointer, value) in &selected {
                prop_assert!(s.matches_pointer(pointer));
                prop_assert_eq!(doc.pointer(pointer), Some(*value));
            }
        }

        #[test]
        fn plain_selectors_agree_with_serde_json_pointer(
            doc in json_value(),
            text in selector_text().prop_filter("no wildcard", |t| !t.contains('*')),
        ) {
            let got = sel(&text).select(&doc);
            let expected: Vec<(String, &Value)> =
                doc.pointer(&text).map(|v| (text.clone(), v)).into_iter().collect();
            prop_assert_eq!(got, expected);
        }

        #[test]
        fn removal_leaves_only_nulled_elements(doc in json_value(), text in selector_text()) {
            let s = sel(&text);
            let mut after = doc.clone();
            s.remove_from(&mut after);
            for (pointer, value) in s.select(&after) {
                prop_assert_eq!(value, &Value::Null);
                let parent = &pointer[..pointer.rfind('/').unwrap()];
                prop_assert!(after.pointer(parent).unwrap().is_array(), "{}", pointer);
            }
            // Without arrays there is nothing to null: no match is left.
            if !doc.to_string().contains('[') {
                prop_assert!(s.select(&after).is_empty());
            }
            // Removing twice changes nothing more.
            let mut again = after.clone();
            s.remove_from(&mut again);
            prop_assert_eq!(again, after);
        }
    }
}
