//! The canonical form of JSON: compact, object keys sorted at every
//! level, so that two values equal as JSON are equal as text (and hash
//! alike).

use serde_json::{Map, Value};

/// A value as compact JSON with object keys sorted at every level.
pub fn canonical_json(value: &Value) -> String {
    let mut bytes = Vec::with_capacity(64);
    canonical_bytes(&mut bytes, value);
    into_text(bytes)
}

/// `map` as [`canonical_json`] writes it, leaving out its own key `skip`
/// (not those of objects inside it).
pub(crate) fn canonical_object(map: &Map<String, Value>, skip: Option<&str>) -> String {
    let mut bytes = Vec::with_capacity(64);
    object_bytes(&mut bytes, map, skip);
    into_text(bytes)
}

/// The recursion behind both, on bytes: serde_json writes each key and
/// scalar straight into the buffer (no `String` or `Value` per key, as
/// matching computes a key for every recorded interaction at load).
fn canonical_bytes(out: &mut Vec<u8>, value: &Value) {
    match value {
        Value::Object(map) => object_bytes(out, map, None),
        Value::Array(items) => {
            out.push(b'[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                canonical_bytes(out, item);
            }
            out.push(b']');
        }
        // Strings, numbers, booleans and null print canonically already.
        scalar => serde_json::to_writer(&mut *out, scalar).expect("writing to a Vec cannot fail"),
    }
}

fn object_bytes(out: &mut Vec<u8>, map: &Map<String, Value>, skip: Option<&str>) {
    let mut members: Vec<(&String, &Value)> = map
        .iter()
        .filter(|(k, _)| Some(k.as_str()) != skip)
        .collect();
    members.sort_unstable_by(|a, b| a.0.cmp(b.0));
    out.push(b'{');
    for (i, (k, v)) in members.into_iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        serde_json::to_writer(&mut *out, k).expect("writing to a Vec cannot fail");
        out.push(b':');
        canonical_bytes(out, v);
    }
    out.push(b'}');
}

/// Compact, valid JSON `text` in the canonical form [`canonical_json`]
/// writes for its parsed tree (leaving out the object's own key `skip`),
/// straight from the text: `None` when the text alone cannot say how
/// serde_json would print it — a backslash anywhere (escapes print
/// differently), a number that is not a plain integer of up to 18 digits
/// (`1.0`, `1e2`, `-0`), or a key written twice (a tree keeps the last) —
/// for the caller to parse instead. Loading a cassette computes a match key
/// for every recorded request, and most are plain enough for this.
pub(crate) fn canonical_text(text: &str, skip: Option<&str>) -> Option<String> {
    if memchr::memchr(b'\\', text.as_bytes()).is_some() {
        return None;
    }
    let mut out = String::with_capacity(text.len());
    text_into(&mut out, text, skip)?;
    Some(out)
}

/// The recursion behind [`canonical_text`], on text without backslashes.
fn text_into(out: &mut String, text: &str, skip: Option<&str>) -> Option<()> {
    match text.as_bytes().first()? {
        b'{' => {
            let mut members: Vec<(&str, &str)> = super::raw::members(text)
                // The key without its quotes: a quote sorts after some
                // characters a key may hold (a space, `!`).
                .map(|(key, value)| (&key[1..key.len() - 1], value))
                .filter(|(key, _)| Some(*key) != skip)
                .collect();
            members.sort_unstable_by(|a, b| a.0.cmp(b.0));
            if members.windows(2).any(|pair| pair[0].0 == pair[1].0) {
                return None;
            }
            out.push('{');
            for (i, (key, value)) in members.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push('"');
                out.push_str(key);
                out.push_str("\":");
                text_into(out, value, None)?;
            }
            out.push('}');
        }
        b'[' => {
            out.push('[');
            for (i, item) in super::raw::items(text).enumerate() {
                if i > 0 {
                    out.push(',');
                }
                text_into(out, item, None)?;
            }
            out.push(']');
        }
        b'"' | b't' | b'f' | b'n' => out.push_str(text),
        _ => {
            let digits = text.strip_prefix('-').unwrap_or(text);
            let plain =
                digits.len() <= 18 && digits.bytes().all(|b| b.is_ascii_digit()) && text != "-0";
            if !plain {
                return None;
            }
            out.push_str(text);
        }
    }
    Some(())
}

/// What serde_json wrote (always UTF-8), as text, without a copy.
fn into_text(bytes: Vec<u8>) -> String {
    String::from_utf8(bytes).expect("serde_json writes UTF-8")
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    /// `value` with every object's keys in reverse order.
    fn reversed(value: &Value) -> Value {
        match value {
            Value::Object(map) => Value::Object(
                map.iter()
                    .rev()
                    .map(|(k, v)| (k.clone(), reversed(v)))
                    .collect(),
            ),
            Value::Array(items) => Value::Array(items.iter().map(reversed).collect()),
            scalar => scalar.clone(),
        }
    }

    /// JSON whose text needs no escapes: small integers, and strings and
    /// keys of characters that sort on either side of a quote.
    fn plain_value() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::from),
            (-1000i64..1000).prop_map(Value::from),
            "[ !#a_é]{0,4}".prop_map(Value::from),
        ];
        crate::json::strategy::json_tree(leaf, "[ !#a_é]{0,3}")
    }

    proptest! {
        /// Read from text or from the tree, the canonical form is the same,
        /// whatever the text holds and in whatever order its keys come.
        #[test]
        fn canonical_text_is_the_canonical_form_of_the_tree(
            value in crate::json::strategy::json_value(),
        ) {
            let text = serde_json::to_string(&reversed(&value)).unwrap();
            if let Some(canonical) = canonical_text(&text, None) {
                prop_assert_eq!(canonical, canonical_json(&value));
            }
        }

        /// Text without escapes, floats or repeated keys is always read
        /// from the text, `skip` left out at the top only.
        #[test]
        fn plain_text_is_read_without_a_tree(value in plain_value(), skip in "[ !#a_]{0,2}") {
            let text = serde_json::to_string(&reversed(&value)).unwrap();
            prop_assert_eq!(canonical_text(&text, None), Some(canonical_json(&value)));
            if let Value::Object(map) = &value {
                prop_assert_eq!(
                    canonical_text(&text, Some(&skip)),
                    Some(canonical_object(map, Some(&skip)))
                );
            }
        }
    }

    #[test]
    fn canonical_text_sorts_keys_skips_one_and_refuses_what_it_cannot_vouch_for() {
        assert_eq!(
            canonical_text(
                r#"{"b":[1,-2,{"z":null,"a ":true,"a":false}],"_meta":{"y":1},"a":"é"}"#,
                Some("_meta")
            )
            .as_deref(),
            Some(r#"{"a":"é","b":[1,-2,{"a":false,"a ":true,"z":null}]}"#)
        );
        for refused in [
            r#"{"a":"\n"}"#,
            r#"{"a":1.0}"#,
            r#"[1e2]"#,
            "-0",
            r#"{"a":1,"a":2}"#,
            "1234567890123456789",
        ] {
            assert_eq!(canonical_text(refused, None), None, "{refused}");
        }
    }

    #[test]
    fn keys_sorted_at_every_level_compact_and_escaped_as_serde_json_writes() {
        let value = json!({
            "b": [1, 2.5, -3, {"z": null, "a": true}],
            "a\"q": "line\nbreak \u{e9} \u{1f600}",
            "_meta": {"y": 1, "x": 2},
        });
        assert_eq!(
            canonical_json(&value),
            r#"{"_meta":{"x":2,"y":1},"a\"q":"line\nbreak é 😀","b":[1,2.5,-3,{"a":true,"z":null}]}"#
        );
        assert_eq!(
            canonical_object(value.as_object().unwrap(), Some("_meta")),
            r#"{"a\"q":"line\nbreak é 😀","b":[1,2.5,-3,{"a":true,"z":null}]}"#
        );
        assert_eq!(canonical_json(&json!("x")), r#""x""#);
    }
}
