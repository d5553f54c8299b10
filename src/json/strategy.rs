//! Arbitrary JSON values for property tests.

use proptest::prelude::*;
use serde_json::Value;

/// Any JSON value a few levels deep, with strings that hold what text
/// handling gets wrong: spaces, quotes, backslashes, escapes, non-ASCII.
pub(crate) fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(Value::from),
        // Past 16 bytes too: the compacting pass reads short strings and
        // long ones differently.
        "[ a\"\\\\\n\té/{}:,]{0,24}".prop_map(Value::from),
    ];
    json_tree(leaf, "[ a\"\\\\:é]{0,3}")
}

/// JSON a few levels deep over `leaf`: arrays and objects of up to three
/// members, their keys drawn from the regex `keys`. Each property picks the
/// leaves and keys that exercise what it tests.
pub(crate) fn json_tree(
    leaf: impl Strategy<Value = Value> + 'static,
    keys: &'static str,
) -> impl Strategy<Value = Value> {
    leaf.prop_recursive(4, 40, 4, move |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::btree_map(keys, inner, 0..4)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}
