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

/// What serde_json wrote (always UTF-8), as text, without a copy.
fn into_text(bytes: Vec<u8>) -> String {
    String::from_utf8(bytes).expect("serde_json writes UTF-8")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

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
