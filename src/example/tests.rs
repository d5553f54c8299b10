use proptest::prelude::*;
use serde_json::{Value, json};

use super::*;

/// The generated value, after checking that the schema accepts it.
#[track_caller]
fn valid(schema: Value) -> Value {
    let value = from_schema(&schema);
    assert_eq!(
        accepts(&schema, &value),
        Some(true),
        "{value} does not satisfy {schema}"
    );
    value
}

#[test]
fn objects_get_required_and_optional_properties_of_their_types() {
    let value = valid(json!({
        "type": "object",
        "properties": {
            "temperature": {"type": "number"},
            "conditions": {"type": "string"},
            "count": {"type": "integer", "minimum": 3},
            "ok": {"type": "boolean"},
            "nothing": {"type": "null"},
            "optional": {"type": "string"}
        },
        "required": ["temperature", "conditions", "count", "ok", "nothing"],
        "additionalProperties": false
    }));
    assert_eq!(
        value,
        json!({"temperature": 0, "conditions": "example", "count": 3, "ok": true,
               "nothing": null, "optional": "example"})
    );
    // Required names without a property schema, and a minimum count.
    let value = valid(json!({"type": "object", "required": ["a"], "minProperties": 3}));
    assert_eq!(value.as_object().unwrap().len(), 3);
    assert!(value.get("a").is_some());
    // A maximum count leaves optional ones out.
    let value = valid(json!({
        "type": "object", "maxProperties": 1, "required": ["b"],
        "properties": {"a": {"type": "string"}, "b": {"type": "string"}}
    }));
    assert_eq!(value, json!({"b": "example"}));
}

#[test]
fn const_examples_default_and_enum_come_first() {
    assert_eq!(valid(json!({"const": {"k": [1]}})), json!({"k": [1]}));
    assert_eq!(
        valid(json!({"type": "string", "examples": ["Paris"], "default": "Oslo"})),
        "Paris"
    );
    assert_eq!(valid(json!({"type": "integer", "default": 7})), 7);
    assert_eq!(valid(json!({"enum": ["b", "a"]})), "b");
    // A default the schema itself refuses is not used.
    assert_eq!(
        valid(json!({"type": "integer", "minimum": 5, "default": 1})),
        5
    );
    assert_eq!(
        valid(json!({"type": "string", "enum": ["x", "y"], "examples": ["z"]})),
        "x"
    );
}

#[test]
fn formats_are_valid_strings() {
    for format in [
        "date-time",
        "date",
        "time",
        "duration",
        "email",
        "idn-email",
        "hostname",
        "ipv4",
        "ipv6",
        "uri",
        "uri-reference",
        "iri",
        "uri-template",
        "uuid",
        "json-pointer",
        "relative-json-pointer",
        "regex",
    ] {
        let value = valid(json!({"type": "string", "format": format}));
        // Not the plain fallback: the format was understood.
        assert_ne!(value, "example", "{format}");
    }
    assert_eq!(
        valid(json!({"type": "string", "format": "date-time"})),
        "2026-01-01T00:00:00Z"
    );
    assert_eq!(
        valid(json!({"type": "string", "format": "uuid"})),
        "00000000-0000-4000-8000-000000000000"
    );
    // An unknown format is any string.
    assert_eq!(
        valid(json!({"type": "string", "format": "zip-code"})),
        "example"
    );
}

#[test]
fn strings_keep_their_lengths_and_patterns() {
    assert_eq!(
        valid(json!({"type": "string", "minLength": 10})),
        "examplexxx"
    );
    assert_eq!(valid(json!({"type": "string", "maxLength": 3})), "exa");
    assert_eq!(
        valid(json!({"type": "string", "pattern": "^[A-Z]{3}-\\d{2,4}$"})),
        "AAA-00"
    );
    valid(json!({"type": "string", "pattern": "^(foo|bar)+baz?$"}));
    valid(json!({"type": "string", "pattern": "^.+@.+$"}));
    valid(json!({"type": "string", "pattern": "^[a-z]+$", "minLength": 12}));
    valid(json!({"type": "string", "pattern": "\\d$", "minLength": 5}));
}

#[test]
fn numbers_respect_bounds_and_multiples() {
    assert_eq!(valid(json!({"type": "integer"})), 0);
    assert_eq!(
        valid(json!({"type": "integer", "minimum": 1, "maximum": 10})),
        1
    );
    assert_eq!(valid(json!({"type": "integer", "exclusiveMinimum": 1})), 2);
    assert_eq!(valid(json!({"type": "number", "maximum": -5})), -5);
    assert_eq!(valid(json!({"type": "number", "exclusiveMaximum": 0})), -1);
    assert_eq!(
        valid(json!({"type": "integer", "minimum": 7, "multipleOf": 5})),
        10
    );
    assert_eq!(
        valid(json!({"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1})),
        0.5
    );
    valid(json!({"type": "number", "minimum": 0.1, "multipleOf": 0.25}));
    valid(json!({"type": "integer", "multipleOf": 0.5, "minimum": 1}));
    // Draft-04 spelling: a boolean beside the bound.
    let draft4 = json!({"$schema": "http://json-schema.org/draft-04/schema#",
                        "type": "integer", "minimum": 3, "exclusiveMinimum": true});
    assert_eq!(valid(draft4), 4);
}

#[test]
fn arrays_get_their_minimum_items_unique_when_asked() {
    assert_eq!(
        valid(json!({"type": "array", "items": {"type": "string"}})),
        json!(["example"])
    );
    let value = valid(json!({
        "type": "array", "minItems": 3, "uniqueItems": true,
        "items": {"type": "string", "format": "email"}
    }));
    assert_eq!(value.as_array().unwrap().len(), 3);
    valid(
        json!({"type": "array", "minItems": 3, "uniqueItems": true, "items": {"type": "integer", "maximum": 5}}),
    );
    valid(
        json!({"type": "array", "minItems": 2, "uniqueItems": true, "items": {"enum": [1, 2, 3]}}),
    );
    assert_eq!(valid(json!({"type": "array", "maxItems": 0})), json!([]));
    assert_eq!(
        valid(
            json!({"type": "array", "prefixItems": [{"type": "integer"}, {"type": "string"}], "items": false})
        ),
        json!([0, "example"])
    );
    // Draft-07 tuples.
    valid(json!({"$schema": "http://json-schema.org/draft-07/schema#",
                 "type": "array", "items": [{"type": "boolean"}], "additionalItems": false}));
    valid(json!({"type": "array", "items": {"type": "integer"}, "contains": {"const": 42}}));
}

#[test]
fn combinators_refs_and_nullables() {
    assert_eq!(
        valid(json!({"anyOf": [{"type": "null"}, {"type": "string", "format": "uri"}]})),
        "https://example.com/"
    );
    assert_eq!(valid(json!({"type": ["null", "integer"]})), 0);
    valid(json!({"oneOf": [{"type": "number"}, {"type": "integer"}, {"type": "string"}]}));
    valid(json!({
        "type": "object",
        "properties": {"kind": {"type": "string"}},
        "oneOf": [
            {"properties": {"kind": {"const": "a"}}, "required": ["kind", "a"]},
            {"properties": {"kind": {"const": "b"}}, "required": ["kind", "b"]}
        ]
    }));
    let value = valid(json!({
        "allOf": [
            {"type": "object", "properties": {"a": {"type": "integer", "minimum": 2}}, "required": ["a"]},
            {"properties": {"a": {"maximum": 9}, "b": {"type": "string"}}, "required": ["b"]}
        ]
    }));
    assert_eq!(value["a"], 2);
    let value = valid(json!({
        "$defs": {
            "point": {"type": "object", "properties": {"x": {"type": "number"}, "y": {"type": "number"}}, "required": ["x", "y"]},
            "tree": {"type": "object", "properties": {"value": {"type": "integer"}, "children": {"type": "array", "items": {"$ref": "#/$defs/tree"}}}, "required": ["value"]}
        },
        "type": "object",
        "properties": {"at": {"$ref": "#/$defs/point"}, "tree": {"$ref": "#/$defs/tree"}},
        "required": ["at", "tree"]
    }));
    assert_eq!(value["at"], json!({"x": 0, "y": 0}));
    // Draft-07 `definitions`, and a `$ref` with siblings.
    valid(json!({
        "definitions": {"name": {"type": "string", "minLength": 2}},
        "type": "object",
        "properties": {"n": {"$ref": "#/definitions/name", "maxLength": 4}},
        "required": ["n"]
    }));
    // A `not` the first walk breaks is retried plainly.
    valid(
        json!({"type": "object", "properties": {"a": {"type": "string"}}, "not": {"required": ["a"]}}),
    );
}

#[test]
fn absurd_minimums_are_capped_not_allocated() {
    let value = from_schema(&json!({"type": "array", "minItems": 4_000_000_000u64}));
    assert_eq!(value.as_array().unwrap().len(), 10_000);
    let value = from_schema(&json!({"type": "string", "minLength": 4_000_000_000u64}));
    assert_eq!(value.as_str().unwrap().len(), 10_000);
    // Unsupported patterns (look-around) and unsatisfiable schemas still
    // give a value, which `accepts` then rejects.
    assert_eq!(
        from_schema(&json!({"type": "string", "pattern": "^(?=a)b$"})),
        "example"
    );
    let impossible = json!({"type": "string", "minLength": 3, "maxLength": 1});
    assert_eq!(accepts(&impossible, &from_schema(&impossible)), Some(false));
    assert_eq!(
        accepts(&json!({"$ref": "https://example.com/s.json"}), &json!(1)),
        None
    );
}

#[test]
fn results_are_valid_for_their_method() {
    let schema = json!({
        "type": "object",
        "properties": {"sum": {"type": "number"}},
        "required": ["sum"]
    });
    let result = tool_result(Some(&schema), "ignored");
    assert_eq!(result["structuredContent"], json!({"sum": 0}));
    assert_eq!(result["content"][0]["text"], r#"{"sum":0}"#);
    assert_eq!(
        tool_result(None, "add(1, 2)"),
        json!({"content": [{"type": "text", "text": "add(1, 2)"}]})
    );
    let tools = [json!({"name": "add", "inputSchema": {"type": "object"}, "outputSchema": schema})];
    let call = method_result("tools/call", Some(&json!({"name": "add"})), &tools);
    assert_eq!(call["structuredContent"], json!({"sum": 0}));
    let plain = method_result("tools/call", Some(&json!({"name": "other"})), &tools);
    assert_eq!(
        plain,
        json!({"content": [{"type": "text", "text": PLACEHOLDER}]})
    );
    let read = method_result("resources/read", Some(&json!({"uri": "file:///a"})), &[]);
    assert_eq!(read["contents"][0]["uri"], "file:///a");
    for (method, params) in [
        ("tools/call", json!({"name": "add"})),
        ("tools/call", json!({"name": "other"})),
        ("prompts/get", json!({"name": "p"})),
        ("resources/read", json!({"uri": "file:///a"})),
        ("tools/list", json!({})),
        ("resources/list", json!({})),
        ("resources/templates/list", json!({})),
        ("prompts/list", json!({})),
        ("completion/complete", json!({})),
        ("ping", json!({})),
        ("logging/setLevel", json!({"level": "info"})),
    ] {
        let result = method_result(method, Some(&params), &tools);
        let response = json!({"jsonrpc": "2.0", "id": 1, "result": result});
        let violations = crate::schema::check_message("2025-11-25", &response, Some(method));
        assert!(violations.is_empty(), "{method}: {violations:?}");
    }
}

/// Schemas of the kinds tools declare: scalars with bounds and formats,
/// objects, arrays, combinators, nullables, nested a few levels.
fn parts() -> impl Strategy<Value = Value> {
    parts_with(true)
}

/// Schema parts; with `refs`, some are `$ref`s to `#/$defs/shared`.
fn parts_with(refs: bool) -> BoxedStrategy<Value> {
    let leaf = prop_oneof![
        Just(json!({"type": "string"})),
        Just(json!({"type": "boolean"})),
        Just(json!({"type": "null"})),
        Just(json!({})),
        (0usize..8, proptest::option::of(0usize..8)).prop_map(|(min, extra)| {
            let mut s = json!({"type": "string", "minLength": min});
            if let Some(extra) = extra {
                s["maxLength"] = json!(min + extra);
            }
            s
        }),
        prop::sample::select(vec![
            "date-time",
            "date",
            "time",
            "email",
            "uri",
            "uuid",
            "hostname",
            "ipv4",
            "ipv6",
            "duration",
            "json-pointer",
        ])
        .prop_map(|f| json!({"type": "string", "format": f})),
        prop::sample::select(vec![
            "^[a-z]+$",
            "^\\d{3}-\\d{4}$",
            "^(yes|no)$",
            "[A-F0-9]{8}",
            "^v\\d+\\.\\d+$"
        ])
        .prop_map(|p| json!({"type": "string", "pattern": p})),
        (
            prop::bool::ANY,
            proptest::option::of(-50i64..50),
            proptest::option::of(0i64..50),
            proptest::option::of(1i64..6),
            prop::bool::ANY,
        )
            .prop_map(|(integer, min, span, multiple, exclusive)| {
                let mut s = json!({"type": if integer { "integer" } else { "number" }});
                let (min_key, max_key) = if exclusive {
                    ("exclusiveMinimum", "exclusiveMaximum")
                } else {
                    ("minimum", "maximum")
                };
                if let Some(min) = min {
                    s[min_key] = json!(min);
                    if let Some(span) = span {
                        // Leaves room for a multiple of up to 5, exclusive or not.
                        s[max_key] = json!(min + span + 12);
                    }
                }
                if let Some(multiple) = multiple {
                    s["multipleOf"] = json!(multiple);
                }
                s
            }),
        prop::sample::subsequence(
            vec![json!("a"), json!(1), json!(null), json!({"k": true})],
            1..4
        )
        .prop_map(|values| json!({"enum": values})),
        any::<i32>().prop_map(|n| json!({"const": n})),
        (prop::bool::ANY, -5i64..5).prop_map(|(string, n)| {
            if string {
                json!({"type": "string", "default": format!("d{n}")})
            } else {
                json!({"type": "integer", "minimum": 0, "default": n})
            }
        }),
    ];
    leaf.prop_recursive(4, 40, 6, move |inner| {
        prop_oneof![
            (
                prop::collection::vec(("[a-z]{1,6}", inner.clone(), prop::bool::ANY), 0..5),
                prop::bool::ANY,
            )
                .prop_map(|(members, closed)| {
                    let mut properties = serde_json::Map::new();
                    let mut required = Vec::new();
                    for (name, schema, is_required) in members {
                        // `required` must not name a property twice.
                        let new = properties.insert(name.clone(), schema).is_none();
                        if new && is_required {
                            required.push(json!(name));
                        }
                    }
                    let mut s = json!({"type": "object", "properties": properties, "required": required});
                    if closed {
                        s["additionalProperties"] = json!(false);
                    }
                    s
                }),
            (inner.clone(), 0usize..4, prop::bool::ANY).prop_map(|(items, min, unique)| {
                json!({"type": "array", "items": items, "minItems": min, "uniqueItems": unique && min <= 1})
            }),
            prop::collection::vec(inner.clone(), 1..4).prop_map(|branches| json!({"anyOf": branches})),
            inner.clone().prop_map(|s| json!({"anyOf": [s, {"type": "null"}]})),
            inner.clone().prop_map(|s| json!({"allOf": [s]})),
            // Within a subschema, `#/$defs/…` names the root's: see
            // `schemas`.
            Just(if refs { json!({"$ref": "#/$defs/shared"}) } else { json!({"type": "integer"}) }),
            inner.clone().prop_map(|s| json!({"type": "array", "items": {"$ref": "#/$defs/shared"}, "minItems": 1, "maxItems": 1, "prefixItems": [s]})),
        ]
    })
    .boxed()
}

/// [`parts`] at the root, with the `$defs` entry their `$ref`s name.
fn schemas() -> impl Strategy<Value = Value> {
    (parts(), parts_with(false)).prop_map(|(root, shared)| {
        let mut root = match root {
            Value::Object(map) => map,
            other => [("allOf".to_owned(), json!([other]))].into_iter().collect(),
        };
        root.insert("$defs".into(), json!({"shared": shared}));
        Value::Object(root)
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    /// Whatever the schema, the value is one it accepts (checked by the
    /// `jsonschema` crate, formats included), and the same every time.
    #[test]
    fn generated_values_satisfy_their_schema(schema in schemas()) {
        let value = from_schema(&schema);
        prop_assert_eq!(accepts(&schema, &value), Some(true), "{} for {}", value, schema);
        prop_assert_eq!(from_schema(&schema), value);
    }

    /// A tool's output schema (an object of such schemas) gives a
    /// `tools/call` result whose `structuredContent` it accepts and whose
    /// text is that JSON.
    #[test]
    fn tool_results_carry_structured_content_and_its_json(
        properties in prop::collection::btree_map("[a-z]{1,8}", parts(), 0..6)
    ) {
        let required: Vec<&String> = properties.keys().collect();
        let schema = json!({"type": "object", "properties": properties, "required": required,
                            "$defs": {"shared": {"type": "string", "format": "date"}}});
        let result = tool_result(Some(&schema), "");
        let structured = &result["structuredContent"];
        prop_assert_eq!(accepts(&schema, structured), Some(true));
        let text: Value = serde_json::from_str(result["content"][0]["text"].as_str().unwrap()).unwrap();
        prop_assert_eq!(&text, structured);
    }
}
