//! Content blocks (text, image, audio, resource links, embedded resources,
//! tool use/results), resource contents, and the messages that carry them.

use serde_json::Value;

use super::ViolationKind::Content;
use super::common::{ANNOTATED, DESCRIPTION, ICONS, META, ROLE, TITLE};
use super::version::{ALL, V2025_03_26, V2025_06_18, V2025_11_25, since, until};
use super::walker::{Field, Obj, Rule, Tagged, Ty, Variant, Walker};

const TYPE: Field = Field::req("type", Ty::Str);

static TEXT: Obj = Obj {
    fields: &[TYPE, Field::req("text", Ty::Str), ANNOTATED, META],
};

/// Image and audio blocks: base64 `data` plus its MIME type.
static MEDIA: Obj = Obj {
    fields: &[
        TYPE,
        Field::req("data", Ty::Str),
        Field::req("mimeType", Ty::Str),
        ANNOTATED,
        META,
    ],
};

static RESOURCE_LINK: Obj = Obj {
    fields: &[
        TYPE,
        Field::req("uri", Ty::Str),
        Field::req("name", Ty::Str),
        TITLE,
        DESCRIPTION,
        Field::opt("mimeType", Ty::Str),
        Field::opt("size", Ty::Int),
        ANNOTATED,
        ICONS,
        META,
    ],
};

static EMBEDDED_RESOURCE: Obj = Obj {
    fields: &[
        TYPE,
        Field::req("resource", RESOURCE_CONTENTS),
        ANNOTATED,
        META,
    ],
};

static TOOL_USE: Obj = Obj {
    fields: &[
        TYPE,
        Field::req("id", Ty::Str),
        Field::req("name", Ty::Str),
        Field::req("input", Ty::Object),
        META,
    ],
};

static TOOL_RESULT: Obj = Obj {
    fields: &[
        TYPE,
        Field::req("toolUseId", Ty::Str),
        Field::req("content", Ty::ArrayOf(&CONTENT_BLOCK)),
        Field::opt("isError", Ty::Bool),
        STRUCTURED_CONTENT,
        META,
    ],
};

/// What tools return and prompts contain (`ContentBlock`).
pub(crate) const CONTENT_BLOCK: Ty = Ty::Kind(
    Content,
    &Ty::Tagged(&Tagged {
        tag: "type",
        variants: &[
            Variant::new("text", ALL, Ty::Obj(&TEXT)),
            Variant::new("image", ALL, Ty::Obj(&MEDIA)),
            Variant::new("audio", since(V2025_03_26), Ty::Obj(&MEDIA)),
            Variant::new("resource_link", since(V2025_06_18), Ty::Obj(&RESOURCE_LINK)),
            Variant::new("resource", ALL, Ty::Obj(&EMBEDDED_RESOURCE)),
        ],
    }),
);

/// One block of an LLM conversation (`SamplingMessageContentBlock`).
const SAMPLING_BLOCK: Ty = Ty::Kind(
    Content,
    &Ty::Tagged(&Tagged {
        tag: "type",
        variants: &[
            Variant::new("text", ALL, Ty::Obj(&TEXT)),
            Variant::new("image", ALL, Ty::Obj(&MEDIA)),
            Variant::new("audio", since(V2025_03_26), Ty::Obj(&MEDIA)),
            Variant::new("tool_use", since(V2025_11_25), Ty::Obj(&TOOL_USE)),
            Variant::new("tool_result", since(V2025_11_25), Ty::Obj(&TOOL_RESULT)),
        ],
    }),
);

/// Sampling content: one block, or (2025-11-25 on) a list of blocks.
pub(crate) const SAMPLING_CONTENT: Ty = Ty::Rule(&Rule {
    expects: "a content block (or, from 2025-11-25, a list of them)",
    check: sampling_content,
});

fn sampling_content(walker: &mut Walker<'_>, value: &Value) {
    if value.is_array() && walker.version >= V2025_11_25 {
        walker.check(&Ty::ArrayOf(&SAMPLING_BLOCK), value);
    } else {
        walker.check(&SAMPLING_BLOCK, value);
    }
}

/// A message of a prompt.
pub(crate) static PROMPT_MESSAGE: Obj = Obj {
    fields: &[
        Field::req("role", ROLE),
        Field::req("content", CONTENT_BLOCK),
    ],
};

/// A message of a sampling conversation.
pub(crate) static SAMPLING_MESSAGE: Obj = Obj {
    fields: &[
        Field::req("role", ROLE),
        Field::req("content", SAMPLING_CONTENT),
        Field::opt("_meta", Ty::Object).since(V2025_11_25),
    ],
};

/// What `resources/read` returns and embedded resources carry: `uri` plus
/// `text` or base64 `blob` (`TextResourceContents | BlobResourceContents`).
pub(crate) const RESOURCE_CONTENTS: Ty = Ty::Rule(&Rule {
    expects: "an object with `uri` and `text` or `blob`",
    check: resource_contents,
});

static CONTENTS_COMMON: Obj = Obj {
    fields: &[
        Field::req("uri", Ty::Str),
        Field::opt("mimeType", Ty::Str),
        META,
    ],
};

fn resource_contents(walker: &mut Walker<'_>, value: &Value) {
    walker.obj(&CONTENTS_COMMON, value);
    let Some(map) = value.as_object() else {
        return;
    };
    // Either alternative fits when its member is a string; otherwise say
    // what is wrong with the member that is there.
    let text = map.get("text");
    let blob = map.get("blob");
    if text.is_some_and(Value::is_string) || blob.is_some_and(Value::is_string) {
        return;
    }
    match (text, blob) {
        (None, None) => walker.fail("needs `text` (a string) or `blob` (a base64 string)"),
        (Some(text), _) => walker.at("text", |w| w.mismatch("a string", text)),
        (None, Some(blob)) => walker.at("blob", |w| w.mismatch("a base64 string", blob)),
    }
}

/// `structuredContent` of a tool result: an object from 2025-06-18 until
/// 2025-11-25 (2026-07-28 allows any JSON value).
pub(crate) const STRUCTURED_CONTENT: Field =
    Field::opt("structuredContent", Ty::Object).within(since(V2025_06_18).and(until(V2025_11_25)));

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::ViolationKind;
    use crate::schema::version::{V2024_11_05, V2026_07_28, Version};
    use serde_json::json;

    fn run(version: Version, ty: &Ty, value: &Value) -> Vec<(ViolationKind, String)> {
        let mut out = Vec::new();
        Walker::new(version, ViolationKind::ResultShape, "", &mut out).check(ty, value);
        out.into_iter().map(|v| (v.kind, v.message)).collect()
    }

    #[test]
    fn block_types_depend_on_the_version() {
        let audio = json!({"type": "audio", "data": "AAA=", "mimeType": "audio/wav"});
        assert_eq!(
            run(V2024_11_05, &CONTENT_BLOCK, &audio),
            [(
                Content,
                "`/type` must be one of text, image, resource; found \"audio\"".to_owned()
            )]
        );
        assert!(run(V2025_03_26, &CONTENT_BLOCK, &audio).is_empty());
        let link = json!({"type": "resource_link", "uri": "file:///a", "name": "a"});
        assert!(!run(V2025_03_26, &CONTENT_BLOCK, &link).is_empty());
        assert!(run(V2025_06_18, &CONTENT_BLOCK, &link).is_empty());
    }

    #[test]
    fn resource_contents_need_text_or_blob() {
        let ok = json!({"uri": "file:///a", "text": 3, "blob": "AA=="});
        assert!(run(V2024_11_05, &RESOURCE_CONTENTS, &ok).is_empty());
        let found = run(
            V2024_11_05,
            &RESOURCE_CONTENTS,
            &json!({"uri": "file:///a"}),
        );
        assert_eq!(
            found[0].1,
            "the value needs `text` (a string) or `blob` (a base64 string)"
        );
    }

    #[test]
    fn sampling_content_may_be_a_list_from_2025_11_25() {
        let list = json!([{"type": "text", "text": "hi"}]);
        assert!(!run(V2025_06_18, &SAMPLING_CONTENT, &list).is_empty());
        assert!(run(V2025_11_25, &SAMPLING_CONTENT, &list).is_empty());
        let tool_use = json!({"type": "tool_use", "id": "1", "name": "f", "input": {}});
        assert!(run(V2026_07_28, &SAMPLING_CONTENT, &tool_use).is_empty());
        assert!(!run(V2026_07_28, &CONTENT_BLOCK, &tool_use).is_empty());
    }
}
