//! Recursive subset matching, for hand-written `when` cases: a case names
//! only the fields it cares about, and a live message may carry more.

use serde_json::{Number, Value};

use super::push_key;

/// Whether `pattern` is a recursive subset of `value`: objects match when
/// every key of the pattern is present in the value and matches (the value
/// may carry extra keys); arrays match when they have the same length and
/// match position by position; everything else (strings, numbers, booleans,
/// null) by equality (numbers compared as JSON numbers: 1 == 1.0).
pub(crate) fn is_subset(pattern: &Value, value: &Value) -> bool {
    // Kept apart from `first_mismatch` so the common case builds no pointer.
    match (pattern, value) {
        (Value::Object(p), Value::Object(v)) => p
            .iter()
            .all(|(key, p)| v.get(key).is_some_and(|v| is_subset(p, v))),
        (Value::Array(p), Value::Array(v)) => {
            p.len() == v.len() && p.iter().zip(v).all(|(p, v)| is_subset(p, v))
        }
        (Value::Number(p), Value::Number(v)) => same_number(p, v),
        (p, v) => p == v,
    }
}

/// Where the first mismatch is, for error messages.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Mismatch {
    /// RFC 6901 pointer to the mismatch, relative to the compared values
    /// (`""` when the values themselves differ).
    pub pointer: String,
    /// What the pattern has there.
    pub expected: Value,
    /// What the value has there; `None` for a missing key.
    pub found: Option<Value>,
    /// Short human text: "missing key", "array length 2, expected 3", ...
    pub reason: String,
}

/// The first place, in the pattern's order, where `pattern` is not a subset
/// of `value`; `None` exactly when [`is_subset`] holds.
pub(crate) fn first_mismatch(pattern: &Value, value: &Value) -> Option<Mismatch> {
    let mut pointer = String::new();
    find(pattern, value, &mut pointer)
}

fn find(pattern: &Value, value: &Value, pointer: &mut String) -> Option<Mismatch> {
    let mismatch = |pointer: &str, reason: String| Mismatch {
        pointer: pointer.to_owned(),
        expected: pattern.clone(),
        found: Some(value.clone()),
        reason,
    };
    match (pattern, value) {
        (Value::Object(p), Value::Object(v)) => {
            for (key, p) in p {
                let len = pointer.len();
                push_key(pointer, key);
                let found = match v.get(key) {
                    None => Some(Mismatch {
                        pointer: pointer.clone(),
                        expected: p.clone(),
                        found: None,
                        reason: "missing key".to_owned(),
                    }),
                    Some(v) => find(p, v, pointer),
                };
                if found.is_some() {
                    return found;
                }
                pointer.truncate(len);
            }
            None
        }
        (Value::Array(p), Value::Array(v)) => {
            if p.len() != v.len() {
                let reason = format!("array length {}, expected {}", v.len(), p.len());
                return Some(mismatch(pointer, reason));
            }
            for (i, (p, v)) in p.iter().zip(v).enumerate() {
                let len = pointer.len();
                pointer.push('/');
                pointer.push_str(&i.to_string());
                let found = find(p, v, pointer);
                if found.is_some() {
                    return found;
                }
                pointer.truncate(len);
            }
            None
        }
        (Value::Number(p), Value::Number(v)) if same_number(p, v) => None,
        (p, v) if is_scalar(p) && is_scalar(v) => {
            if p == v {
                return None;
            }
            // Show the values themselves: `expected "1", found 1` says more
            // than "expected a string, found a number".
            let reason = format!("expected {}, found {}", short(p), short(v));
            Some(mismatch(pointer, reason))
        }
        (p, v) => {
            let reason = format!(
                "expected {}, found {}",
                super::kind_of(p),
                super::kind_of(v)
            );
            Some(mismatch(pointer, reason))
        }
    }
}

/// JSON has one number type: integers compare exactly (even beyond `f64`
/// precision), anything involving a float compares as `f64`.
fn same_number(a: &Number, b: &Number) -> bool {
    match (as_integer(a), as_integer(b)) {
        (Some(a), Some(b)) => a == b,
        _ => a.as_f64() == b.as_f64(),
    }
}

fn as_integer(n: &Number) -> Option<i128> {
    n.as_i64()
        .map(i128::from)
        .or_else(|| n.as_u64().map(i128::from))
}

fn is_scalar(v: &Value) -> bool {
    !matches!(v, Value::Object(_) | Value::Array(_))
}

/// A scalar as JSON text, cut short so a reason stays one readable line.
fn short(v: &Value) -> String {
    const MAX: usize = 60;
    let text = v.to_string();
    match text.char_indices().nth(MAX) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    fn mismatch(pattern: Value, value: Value) -> Mismatch {
        let found = first_mismatch(&pattern, &value).expect("a mismatch");
        assert!(!is_subset(&pattern, &value));
        found
    }

    #[test]
    fn extra_keys_are_ignored() {
        let value = json!({"name": "echo", "arguments": {"x": 1, "y": 2}, "_meta": {}});
        assert!(is_subset(&json!({}), &value));
        assert!(is_subset(&json!({"name": "echo"}), &value));
        assert!(is_subset(&json!({"arguments": {"y": 2}}), &value));
        assert!(is_subset(&json!({"arguments": {}}), &value));
        assert!(is_subset(&value, &value));
        assert!(!is_subset(&json!({"name": "other"}), &value));
        assert!(!is_subset(&json!({"missing": null}), &value));
        assert!(!is_subset(&value, &json!({"name": "echo"})));
        assert_eq!(first_mismatch(&json!({"name": "echo"}), &value), None);
    }

    #[test]
    fn arrays_match_by_position_and_length() {
        let value = json!({"items": [{"a": 1, "b": 2}, [1, 2], 3]});
        assert!(is_subset(&json!({"items": [{"a": 1}, [1, 2], 3]}), &value));
        assert!(is_subset(&json!({"items": [{}, [1, 2], 3]}), &value));
        assert!(!is_subset(&json!({"items": [{"a": 1}, [1, 2]]}), &value));
        assert!(!is_subset(&json!({"items": [[1, 2], {"a": 1}, 3]}), &value));
        assert!(!is_subset(&json!({"items": [{"a": 1}, [2, 1], 3]}), &value));
        assert!(!is_subset(&json!({"items": [{"a": 1}, [1], 3]}), &value));
        assert!(is_subset(&json!([]), &json!([])));
        assert!(!is_subset(&json!([]), &json!([1])));
    }

    #[test]
    fn scalars_compare_by_equality() {
        assert!(is_subset(&json!(null), &json!(null)));
        assert!(is_subset(&json!(true), &json!(true)));
        assert!(is_subset(&json!("a"), &json!("a")));
        assert!(!is_subset(&json!("a"), &json!("b")));
        assert!(!is_subset(&json!("1"), &json!(1)));
        assert!(!is_subset(&json!(null), &json!(false)));
        assert!(!is_subset(&json!(0), &json!(false)));
        assert!(!is_subset(&json!(null), &json!({})));
        assert!(!is_subset(&json!({}), &json!(null)));
        assert!(!is_subset(&json!({}), &json!([])));
        assert!(!is_subset(&json!([]), &json!({})));
    }

    #[test]
    fn numbers_compare_as_json_numbers() {
        assert!(is_subset(&json!(1), &json!(1.0)));
        assert!(is_subset(&json!(1.0), &json!(1)));
        assert!(is_subset(&json!(-2), &json!(-2.0)));
        assert!(is_subset(&json!(0), &json!(-0.0)));
        assert!(is_subset(&json!({"n": [1]}), &json!({"n": [1.0]})));
        assert!(!is_subset(&json!(1), &json!(1.5)));
        assert!(!is_subset(&json!(-1), &json!(u64::MAX)));
        assert!(is_subset(&json!(u64::MAX), &json!(u64::MAX)));
        // Integers compare exactly, even where `f64` would round them equal.
        assert!(!is_subset(&json!(i64::MAX), &json!(i64::MAX as u64 + 1)));
        assert!(!is_subset(&json!(1u64 << 60), &json!((1u64 << 60) + 1)));
        assert_eq!(first_mismatch(&json!(2), &json!(2.0)), None);
        let parsed: Value = serde_json::from_str("1e0").unwrap();
        assert!(is_subset(&json!(1), &parsed));
    }

    #[test]
    fn missing_key() {
        let m = mismatch(
            json!({"params": {"arguments": {"x": 1}}}),
            json!({"params": {"arguments": {"y": 1}}}),
        );
        assert_eq!(
            m,
            Mismatch {
                pointer: "/params/arguments/x".to_owned(),
                expected: json!(1),
                found: None,
                reason: "missing key".to_owned(),
            }
        );
    }

    #[test]
    fn array_length() {
        let m = mismatch(json!({"a": [1, 2, 3]}), json!({"a": [1, 2]}));
        assert_eq!(m.pointer, "/a");
        assert_eq!(m.expected, json!([1, 2, 3]));
        assert_eq!(m.found, Some(json!([1, 2])));
        assert_eq!(m.reason, "array length 2, expected 3");
    }

    #[test]
    fn scalar_differences() {
        let m = mismatch(json!({"a": [1, {"b": "a"}]}), json!({"a": [1, {"b": "b"}]}));
        assert_eq!(m.pointer, "/a/1/b");
        assert_eq!(m.expected, json!("a"));
        assert_eq!(m.found, Some(json!("b")));
        assert_eq!(m.reason, "expected \"a\", found \"b\"");
        assert_eq!(
            mismatch(json!("1"), json!(1)).reason,
            "expected \"1\", found 1"
        );
        assert_eq!(
            mismatch(json!(1), json!(2.5)).reason,
            "expected 1, found 2.5"
        );
        assert_eq!(
            mismatch(json!(null), json!(true)).reason,
            "expected null, found true"
        );
        let long = "x".repeat(200);
        let reason = mismatch(json!("a"), json!(long)).reason;
        assert!(
            reason.ends_with('…') && reason.chars().count() < 90,
            "{reason}"
        );
    }

    #[test]
    fn type_differences() {
        let m = mismatch(json!({"a": {}}), json!({"a": []}));
        assert_eq!(m.pointer, "/a");
        assert_eq!(m.reason, "expected an object, found an array");
        assert_eq!(m.found, Some(json!([])));
        assert_eq!(
            mismatch(json!([]), json!({})).reason,
            "expected an array, found an object"
        );
        assert_eq!(
            mismatch(json!("x"), json!({})).reason,
            "expected a string, found an object"
        );
        assert_eq!(
            mismatch(json!({}), json!(null)).reason,
            "expected an object, found null"
        );
        assert_eq!(
            mismatch(json!([1]), json!(1)).reason,
            "expected an array, found a number"
        );
        assert_eq!(
            mismatch(json!({"a": 1}), json!(true)).reason,
            "expected an object, found a boolean"
        );
    }

    #[test]
    fn first_mismatch_follows_pattern_order_and_escapes_keys() {
        let m = mismatch(json!({"b": 1, "a": 2}), json!({"a": 3, "b": 4}));
        assert_eq!(m.pointer, "/b");
        let m = mismatch(json!({"a/b": {"m~n": 1}}), json!({"a/b": {"m~n": 2}}));
        assert_eq!(m.pointer, "/a~1b/m~0n");
        let m = mismatch(json!([[0, 1], [2]]), json!([[0, 1], [3]]));
        assert_eq!(m.pointer, "/1/0");
        assert_eq!(mismatch(json!(1), json!(2)).pointer, "");
    }

    fn json_value() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::from),
            any::<i64>().prop_map(Value::from),
            (-4i64..4).prop_map(Value::from),
            (-4i64..4).prop_map(|n| Value::from(n as f64)),
            any::<f64>()
                .prop_filter("finite", |f| f.is_finite())
                .prop_map(Value::from),
            "[a-c/~]{0,3}".prop_map(Value::from),
        ];
        crate::json::strategy::json_tree(leaf, "[a-c/~]{0,2}")
    }

    /// Drops object members where `keep` says so: always a subset.
    fn prune(value: &Value, keep: &mut impl Iterator<Item = bool>) -> Value {
        match value {
            Value::Object(map) => Value::Object(
                map.iter()
                    .filter_map(|(k, v)| {
                        let kept = keep.next().unwrap_or(true);
                        kept.then(|| (k.clone(), prune(v, keep)))
                    })
                    .collect(),
            ),
            Value::Array(items) => Value::Array(items.iter().map(|v| prune(v, keep)).collect()),
            other => other.clone(),
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        #[test]
        fn every_value_is_a_subset_of_itself(v in json_value()) {
            prop_assert!(is_subset(&v, &v));
            prop_assert_eq!(first_mismatch(&v, &v), None);
        }

        #[test]
        fn pruned_values_are_subsets(v in json_value(), keep in prop::collection::vec(any::<bool>(), 0..64)) {
            let pattern = prune(&v, &mut keep.into_iter());
            prop_assert!(is_subset(&pattern, &v));
        }

        #[test]
        fn first_mismatch_agrees_and_points_at_the_spot(p in json_value(), v in json_value()) {
            let found = first_mismatch(&p, &v);
            prop_assert_eq!(found.is_none(), is_subset(&p, &v));
            if let Some(m) = found {
                prop_assert_eq!(p.pointer(&m.pointer), Some(&m.expected));
                prop_assert_eq!(v.pointer(&m.pointer), m.found.as_ref());
                prop_assert!(!is_subset(&m.expected, m.found.as_ref().unwrap_or(&Value::Null)) || m.found.is_none());
                prop_assert!(!m.reason.is_empty());
            }
        }

        #[test]
        fn an_extra_pattern_key_breaks_the_match(v in json_value()) {
            if let Value::Object(map) = &v {
                let mut pattern = map.clone();
                pattern.insert("not-in-the-alphabet".to_owned(), Value::Null);
                let m = first_mismatch(&Value::Object(pattern), &v).unwrap();
                prop_assert_eq!(m.pointer, "/not-in-the-alphabet");
                prop_assert_eq!(m.reason, "missing key");
            }
        }
    }
}
