//! `elicitation/create` (2025-06-18 on): form requests with their restricted
//! field schemas, URL requests (2025-11-25 on), and the user's answer.

use serde_json::Value;

use super::common::STRINGS;
use super::tasks::TASK_METADATA;
use super::version::{ALL, V2025_06_18, V2025_11_25, V2026_07_28, only, since};
use super::walker::{Field, Obj, Rule, Tagged, Ty, Variant, Walker};

const TITLED: [Field; 2] = [
    Field::opt("title", Ty::Str),
    Field::opt("description", Ty::Str),
];

static STRING_SCHEMA: Obj = Obj {
    fields: &[
        Field::req("type", Ty::Const("string")),
        TITLED[0],
        TITLED[1],
        Field::opt("minLength", Ty::Int),
        Field::opt("maxLength", Ty::Int),
        Field::opt("format", Ty::Enum(&["email", "uri", "date", "date-time"])),
        Field::opt("default", Ty::Str).since(V2025_11_25),
    ],
};

static NUMBER_SCHEMA: Obj = Obj {
    fields: &[
        Field::req("type", Ty::Enum(&["number", "integer"])),
        TITLED[0],
        TITLED[1],
        Field::opt("minimum", Ty::Num),
        Field::opt("maximum", Ty::Num),
        Field::opt("default", Ty::Num).since(V2025_11_25),
    ],
};

static BOOLEAN_SCHEMA: Obj = Obj {
    fields: &[
        Field::req("type", Ty::Const("boolean")),
        TITLED[0],
        TITLED[1],
        Field::opt("default", Ty::Bool),
    ],
};

/// `enum` with optional `enumNames` (2025-06-18's only enum form; kept as
/// "legacy titled" later).
static ENUM_SCHEMA: Obj = Obj {
    fields: &[
        Field::req("type", Ty::Const("string")),
        TITLED[0],
        TITLED[1],
        Field::req("enum", STRINGS),
        Field::opt("enumNames", STRINGS),
        Field::opt("default", Ty::Str).since(V2025_11_25),
    ],
};

/// `{const, title}` options of titled enums.
const TITLED_OPTIONS: Ty = Ty::ArrayOf(&Ty::Obj(&Obj {
    fields: &[Field::req("const", Ty::Str), Field::req("title", Ty::Str)],
}));

static TITLED_SINGLE_SELECT: Obj = Obj {
    fields: &[
        Field::req("type", Ty::Const("string")),
        TITLED[0],
        TITLED[1],
        Field::req("oneOf", TITLED_OPTIONS),
        Field::opt("default", Ty::Str),
    ],
};

const MULTI_SELECT: [Field; 4] = [
    Field::req("type", Ty::Const("array")),
    Field::opt("minItems", Ty::Int),
    Field::opt("maxItems", Ty::Int),
    Field::opt("default", STRINGS),
];

static UNTITLED_MULTI_SELECT: Obj = Obj {
    fields: &[
        MULTI_SELECT[0],
        MULTI_SELECT[1],
        MULTI_SELECT[2],
        MULTI_SELECT[3],
        TITLED[0],
        TITLED[1],
        Field::req(
            "items",
            Ty::Obj(&Obj {
                fields: &[
                    Field::req("type", Ty::Const("string")),
                    Field::req("enum", STRINGS),
                ],
            }),
        ),
    ],
};

static TITLED_MULTI_SELECT: Obj = Obj {
    fields: &[
        MULTI_SELECT[0],
        MULTI_SELECT[1],
        MULTI_SELECT[2],
        MULTI_SELECT[3],
        TITLED[0],
        TITLED[1],
        Field::req(
            "items",
            Ty::Obj(&Obj {
                fields: &[Field::req("anyOf", TITLED_OPTIONS)],
            }),
        ),
    ],
};

/// One field of a form (`PrimitiveSchemaDefinition`): flat, no nesting.
/// Officially an `anyOf`; every alternative fixes `type`, so telling them
/// apart by `type` first gives the same verdict and clearer messages.
pub(crate) const PRIMITIVE_SCHEMA: Ty = Ty::Tagged(&Tagged {
    tag: "type",
    variants: &[
        Variant::new("string", ALL, STRING_FIELD),
        Variant::new("number", ALL, Ty::Obj(&NUMBER_SCHEMA)),
        Variant::new("integer", ALL, Ty::Obj(&NUMBER_SCHEMA)),
        Variant::new("boolean", ALL, Ty::Obj(&BOOLEAN_SCHEMA)),
        Variant::new("array", since(V2025_11_25), MULTI_SELECT_FIELD),
    ],
});

/// Free text, or a single choice (plain `enum` or titled `oneOf`).
const STRING_FIELD: Ty = Ty::AnyOf(&[
    Ty::Obj(&STRING_SCHEMA),
    Ty::Obj(&ENUM_SCHEMA),
    Ty::In(since(V2025_11_25), &Ty::Obj(&TITLED_SINGLE_SELECT)),
]);

/// Several choices (2025-11-25 on).
const MULTI_SELECT_FIELD: Ty = Ty::AnyOf(&[
    Ty::Obj(&UNTITLED_MULTI_SELECT),
    Ty::Obj(&TITLED_MULTI_SELECT),
]);

static REQUESTED_SCHEMA: Obj = Obj {
    fields: &[
        Field::req("type", Ty::Const("object")),
        Field::req("properties", Ty::MapOf(&PRIMITIVE_SCHEMA)),
        Field::opt("required", STRINGS),
        Field::opt("$schema", Ty::Str).since(V2025_11_25),
    ],
};

static FORM_PARAMS: Obj = Obj {
    fields: &[
        Field::opt("mode", Ty::Const("form")).since(V2025_11_25),
        Field::req("message", Ty::Str),
        Field::req("requestedSchema", Ty::Obj(&REQUESTED_SCHEMA)),
        TASK_METADATA,
    ],
};

static URL_PARAMS: Obj = Obj {
    fields: &[
        Field::req("mode", Ty::Const("url")),
        Field::req("message", Ty::Str),
        Field::req("url", Ty::Str),
        Field::req("elicitationId", Ty::Str).within(only(V2025_11_25)),
        TASK_METADATA,
    ],
};

/// `elicitation/create` params: a form, or (2025-11-25 on) `mode: "url"`.
pub(crate) static ELICIT_PARAMS: Rule = Rule {
    expects: "an object",
    check: elicit_params,
};

fn elicit_params(walker: &mut Walker<'_>, value: &Value) {
    let url_mode = value.get("mode").and_then(Value::as_str) == Some("url");
    if url_mode && walker.version >= V2025_11_25 {
        walker.obj(&URL_PARAMS, value);
    } else {
        walker.obj(&FORM_PARAMS, value);
    }
}

/// What the user did, and (on accept) the form's values.
pub(crate) static ELICIT_RESULT: Obj = Obj {
    fields: &[
        Field::req("action", Ty::Enum(&["accept", "decline", "cancel"])),
        Field::opt("content", Ty::MapOf(&FORM_VALUE)),
        Field::opt("_meta", Ty::Object).within(since(V2025_06_18).minus(only(V2026_07_28))),
    ],
};

const FORM_VALUE: Ty = Ty::AnyOf(&[
    Ty::Str,
    Ty::Int,
    Ty::Bool,
    Ty::In(since(V2025_11_25), &STRINGS),
]);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::ViolationKind;
    use serde_json::json;

    fn run(version: super::super::version::Version, ty: &Ty, value: &Value) -> Vec<String> {
        let mut out = Vec::new();
        Walker::new(version, ViolationKind::RequestParams, "", &mut out).check(ty, value);
        out.into_iter().map(|v| v.message).collect()
    }

    #[test]
    fn fields_are_told_apart_by_type() {
        let found = run(V2025_11_25, &PRIMITIVE_SCHEMA, &json!({"type": "object"}));
        assert_eq!(
            found,
            ["`/type` must be one of string, number, integer, boolean, array; found \"object\""]
        );
        let found = run(
            V2025_11_25,
            &PRIMITIVE_SCHEMA,
            &json!({"type": "number", "default": "1"}),
        );
        assert_eq!(found, ["`/default` must be a number; found \"1\""]);
    }

    #[test]
    fn enum_forms_follow_the_version() {
        let multi = json!({"type": "array", "items": {"type": "string", "enum": ["a"]}});
        assert!(!run(V2025_06_18, &PRIMITIVE_SCHEMA, &multi).is_empty());
        assert!(run(V2025_11_25, &PRIMITIVE_SCHEMA, &multi).is_empty());
        assert_eq!(
            run(
                V2025_06_18,
                &PRIMITIVE_SCHEMA,
                &json!({"type": "string", "format": "phone"})
            ),
            ["`/format` must be one of email, uri, date, date-time; found \"phone\""]
        );
    }

    #[test]
    fn url_mode_exists_from_2025_11_25() {
        let params = Ty::Rule(&ELICIT_PARAMS);
        let url = json!({"mode": "url", "message": "m", "url": "https://x", "elicitationId": "1"});
        assert!(run(V2025_11_25, &params, &url).is_empty());
        assert_eq!(run(V2025_06_18, &params, &url).len(), 1);
        let no_id = json!({"mode": "url", "message": "m", "url": "https://x"});
        assert_eq!(
            run(V2025_11_25, &params, &no_id),
            ["`/elicitationId` is required (a string)"]
        );
        assert!(run(V2026_07_28, &params, &no_id).is_empty());
    }

    #[test]
    fn answers_are_flat_values() {
        let result = Ty::Obj(&ELICIT_RESULT);
        let answer = json!({"action": "accept", "content": {"n": 1.5}});
        assert_eq!(
            run(V2025_06_18, &result, &answer),
            ["`/content/n` must be a string, an integer or a boolean; found 1.5"]
        );
    }
}
