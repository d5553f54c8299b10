//! The canonical form of JSON: compact, object keys sorted at every
//! level, so that two values equal as JSON are equal as text (and hash
//! alike).

use serde_json::{Map, Value};

/// A value as compact JSON with object keys sorted at every level.
pub fn canonical_json(value: &Value) -> String {
    let mut out = String::with_capacity(64);
    write_canonical(&mut out, value);
    out
}

/// Writes `value` as compact JSON with object keys sorted at every level.
pub(crate) fn write_canonical(out: &mut String, value: &Value) {
    match value {
        Value::Object(map) => write_object(out, map, None),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_canonical(out, item);
            }
            out.push(']');
        }
        // Strings, numbers, booleans and null print canonically already.
        scalar => out.push_str(&scalar.to_string()),
    }
}

/// Writes `map` as [`write_canonical`] does, leaving out its own key
/// `skip` (not those of objects inside it).
pub(crate) fn write_object(out: &mut String, map: &Map<String, Value>, skip: Option<&str>) {
    let mut keys: Vec<&String> = map.keys().filter(|k| Some(k.as_str()) != skip).collect();
    keys.sort_unstable();
    out.push('{');
    for (i, k) in keys.into_iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str(&Value::from(k.as_str()).to_string());
        out.push(':');
        write_canonical(out, &map[k]);
    }
    out.push('}');
}
