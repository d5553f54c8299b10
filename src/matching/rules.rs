//! Match rules at work: what of a live request is compared with recorded
//! ones under a cassette's [`Rules`] (stored with it, in `cassette`), and
//! which hand-written case answers it.

use std::borrow::Cow;

use serde_json::{Map, Value, json};

use super::{Key, MessageKind, key_from_canonical};
use crate::cassette::{MethodCase, Rules};
use crate::json::{self, RawMessage, canonical_json};

impl Rules {
    /// What matching compares for a message: its params without `_meta`,
    /// without ignored parts, or only the method's key parts.
    pub fn normalize<'a>(&self, method: &str, params: Option<&'a Value>) -> Cow<'a, Value> {
        let keys = self.keys.get(method);
        if self.ignore.is_empty() && keys.is_none() {
            return match params {
                Some(Value::Object(map)) if map.contains_key("_meta") => {
                    let mut map = map.clone();
                    map.remove("_meta");
                    Cow::Owned(Value::Object(map))
                }
                Some(params) => Cow::Borrowed(params),
                None => Cow::Owned(Value::Object(Map::new())),
            };
        }
        let mut params = params.cloned().unwrap_or_else(|| json!({}));
        if let Some(map) = params.as_object_mut() {
            map.remove("_meta");
        }
        let mut root = json!({ "params": params });
        for selector in &self.ignore {
            selector.remove_from(&mut root);
        }
        let Some(keys) = keys else {
            return Cow::Owned(root["params"].take());
        };
        let picked: Map<String, Value> = keys
            .iter()
            .map(|selector| {
                let found: Vec<Value> = selector
                    .select(&root)
                    .into_iter()
                    .map(|(_, v)| v.clone())
                    .collect();
                (selector.as_str().to_owned(), Value::Array(found))
            })
            .collect();
        Cow::Owned(Value::Object(picked))
    }

    /// The match key of a message under these rules.
    pub fn key(&self, kind: MessageKind, message: &Value) -> Key {
        let method = crate::jsonrpc::method(message).unwrap_or_default();
        let params = crate::jsonrpc::params(message);
        if self.ignore.is_empty() && !self.keys.contains_key(method) {
            // The common case: no copy, `_meta` skipped while writing.
            return super::key(kind, method, params);
        }
        let normalized = self.normalize(method, params);
        key_from_canonical(kind, method, &canonical_json(&normalized))
    }

    /// [`Rules::key`] read from the message's text, without a tree: `None`
    /// when the rules reshape the method's params, or the text is not plain
    /// enough to be its own canonical form ([`json::canonical_text`]), for
    /// the caller to parse instead.
    pub(crate) fn key_from_text(&self, kind: MessageKind, message: &RawMessage) -> Option<Key> {
        if message.has_escapes() {
            return None;
        }
        let method = message.method().unwrap_or_default();
        self.key_from_params_text(kind, method, message.member_text("params"))
    }

    /// [`Rules::key_from_text`] from the text of a message's `params`
    /// (which holds no escapes), found by the caller.
    pub(crate) fn key_from_params_text(
        &self,
        kind: MessageKind,
        method: &str,
        params: Option<&str>,
    ) -> Option<Key> {
        if !self.ignore.is_empty() || self.keys.contains_key(method) {
            return None;
        }
        let params = match params {
            None => "{}".to_owned(),
            Some(text) if text.starts_with('{') => json::canonical_text(text, Some("_meta"))?,
            Some(text) => json::canonical_text(text, None)?,
        };
        Some(key_from_canonical(kind, method, &params))
    }

    /// The first hand-written case that answers `method` with `params`.
    pub fn case_for(&self, method: &str, params: Option<&Value>) -> Option<(usize, &MethodCase)> {
        let empty = json!({});
        let params = params.unwrap_or(&empty);
        (self.cases.iter().enumerate()).find(|(_, case)| case.matches(method, params))
    }
}

impl MethodCase {
    /// Whether it answers `method` with `params` (or with any params that
    /// hold `params`, when `params` is another case's `when`): same
    /// method, and `when` absent or a recursive subset of them.
    pub fn matches(&self, method: &str, params: &Value) -> bool {
        self.method == method && (self.when.is_null() || crate::json::is_subset(&self.when, params))
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::cassette::Strategy;
    use crate::json::Selector;

    fn selectors(list: &[&str]) -> Vec<Selector> {
        list.iter().map(|s| s.parse().unwrap()).collect()
    }

    #[test]
    fn keys_read_from_text_are_the_keys_read_from_the_tree() {
        let plain = [
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"b":[1,{"y":2,"x":-3}],"a":"é"},"_meta":{"progressToken":7}}}"#,
            r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#,
            r#"{"jsonrpc":"2.0","id":3,"method":"m","params":{}}"#,
            r#"{"jsonrpc":"2.0","id":4,"method":"m","params":[3,{"b":1,"a":2}]}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":4,"reason":"late"}}"#,
            r#"{"jsonrpc":"2.0","id":5,"params":{"a":1}}"#,
            r#"{"method":"first","jsonrpc":"2.0","id":6,"method":"second","params":{"a":1},"params":{"b":2}}"#,
        ];
        let refused = [
            r#"{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":"line\nbreak"}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":1.5}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":1,"a":2}}"#,
        ];
        let rules = Rules::default();
        for (text, readable) in plain
            .iter()
            .map(|t| (t, true))
            .chain(refused.iter().map(|t| (t, false)))
        {
            let message: RawMessage = serde_json::from_str(text).unwrap();
            for kind in [MessageKind::Request, MessageKind::Notification] {
                let from_text = rules.key_from_text(kind, &message);
                assert_eq!(from_text.is_some(), readable, "{text}");
                if let Some(key) = from_text {
                    assert_eq!(key, message.with(|tree| rules.key(kind, tree)), "{text}");
                }
            }
        }
        // Rules that reshape a method's params are applied to the tree.
        let message: RawMessage = serde_json::from_str(plain[0]).unwrap();
        let rules = Rules {
            ignore: selectors(&["/params/arguments/a"]),
            ..Rules::default()
        };
        assert_eq!(rules.key_from_text(MessageKind::Request, &message), None);
    }

    fn call(params: Value) -> Value {
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params})
    }

    #[test]
    fn ignored_fields_do_not_change_the_key() {
        let rules = Rules {
            ignore: selectors(&["/params/arguments/timestamp", "/params/**/requestId"]),
            ..Rules::default()
        };
        let a = call(json!({"name": "t", "arguments": {"timestamp": 1, "x": {"requestId": "a"}}}));
        let b = call(json!({"name": "t", "arguments": {"timestamp": 2, "x": {"requestId": "b"}}}));
        let c = call(json!({"name": "t", "arguments": {"x": {}}}));
        let d = call(
            json!({"name": "t", "arguments": {"timestamp": 2, "x": {"requestId": "b", "other": 1}}}),
        );
        assert_eq!(
            rules.key(MessageKind::Request, &a),
            rules.key(MessageKind::Request, &b)
        );
        assert_eq!(
            rules.key(MessageKind::Request, &a),
            rules.key(MessageKind::Request, &c),
            "absent counts as ignored"
        );
        assert_ne!(
            rules.key(MessageKind::Request, &a),
            rules.key(MessageKind::Request, &d)
        );
        assert_ne!(
            Rules::default().key(MessageKind::Request, &a),
            Rules::default().key(MessageKind::Request, &b)
        );
    }

    #[test]
    fn per_method_keys_compare_only_the_named_parts() {
        let mut keys = BTreeMap::new();
        keys.insert(
            "tools/call".to_owned(),
            selectors(&["/params/name", "/params/arguments"]),
        );
        let rules = Rules {
            keys,
            ..Rules::default()
        };
        let a = call(json!({"name": "t", "arguments": {"q": 1}, "task": {"ttl": 5}}));
        let b = call(json!({"name": "t", "arguments": {"q": 1}}));
        let c = call(json!({"name": "t", "arguments": {"q": 2}}));
        assert_eq!(
            rules.key(MessageKind::Request, &a),
            rules.key(MessageKind::Request, &b)
        );
        assert_ne!(
            rules.key(MessageKind::Request, &a),
            rules.key(MessageKind::Request, &c)
        );
        let other = json!({"jsonrpc": "2.0", "id": 1, "method": "prompts/get", "params": {"name": "t", "x": 1}});
        let other2 =
            json!({"jsonrpc": "2.0", "id": 1, "method": "prompts/get", "params": {"name": "t"}});
        assert_ne!(
            rules.key(MessageKind::Request, &other),
            rules.key(MessageKind::Request, &other2),
            "other methods keep full params"
        );
    }

    #[test]
    fn the_fast_path_agrees_with_the_general_one() {
        let message = call(
            json!({"name": "t", "arguments": {"b": 1, "a": [2, 3]}, "_meta": {"progressToken": 4}}),
        );
        let normalized = Rules::default().normalize("tools/call", message.get("params"));
        assert_eq!(
            Rules::default().key(MessageKind::Request, &message),
            key_from_canonical(
                MessageKind::Request,
                "tools/call",
                &canonical_json(&normalized)
            )
        );
    }

    #[test]
    fn first_matching_case_wins_by_subset() {
        let rules: Rules = serde_json::from_value(json!({
            "cases": [
                {"method": "tools/call", "when": {"name": "weather", "arguments": {"city": "Paris"}}, "result": {"content": [{"type": "text", "text": "sunny"}]}},
                {"method": "tools/call", "when": {"name": "weather"}, "error": {"code": -32000, "message": "unknown city"}},
                {"method": "tools/call", "result": {"content": []}}
            ]
        }))
        .unwrap();
        rules.validate().unwrap();
        let params = json!({"name": "weather", "arguments": {"city": "Paris", "units": "C"}});
        assert_eq!(rules.case_for("tools/call", Some(&params)).unwrap().0, 0);
        let params = json!({"name": "weather", "arguments": {"city": "Rome"}});
        assert_eq!(rules.case_for("tools/call", Some(&params)).unwrap().0, 1);
        assert_eq!(
            rules
                .case_for("tools/call", Some(&json!({"name": "x"})))
                .unwrap()
                .0,
            2
        );
        assert!(rules.case_for("prompts/get", None).is_none());
    }

    #[test]
    fn rules_round_trip_and_reject_unknown_fields() {
        let text = r#"{"strategy":"strict","on_exhausted":"repeat-last","ignore":["/params/**/ts"],"keys":{"tools/call":["/params/name"]}}"#;
        let rules: Rules = serde_json::from_str(text).unwrap();
        assert_eq!(rules.strategy, Strategy::Strict);
        assert_eq!(serde_json::to_string(&rules).unwrap(), text);
        assert!(serde_json::from_str::<Rules>(r#"{"stratgy":"strict"}"#).is_err());
        assert!(serde_json::from_str::<Rules>(r#"{"ignore":["no-slash"]}"#).is_err());
        assert_eq!(serde_json::to_string(&Rules::default()).unwrap(), "{}");
    }

    #[test]
    fn cases_need_exactly_one_answer() {
        let rules: Rules = serde_json::from_value(json!({"cases": [{"method": "m"}]})).unwrap();
        assert_eq!(
            rules.validate().unwrap_err().to_string(),
            "/cases/0: a case needs exactly one of `result` and `error`"
        );
        let rules: Rules =
            serde_json::from_value(json!({"cases": [{"method": "m", "error": {"code": "x"}}]}))
                .unwrap();
        assert!(
            rules
                .validate()
                .unwrap_err()
                .to_string()
                .starts_with("/cases/0/error")
        );
    }
}
