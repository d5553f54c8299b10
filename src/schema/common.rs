//! Shapes shared across methods: roles, log levels, annotations, icons,
//! implementation info, capabilities and the `_meta` objects.

use serde_json::Value;

use super::version::{V2025_03_26, V2025_06_18, V2025_11_25, V2026_07_28, only};
use super::walker::{Field, Obj, Rule, Ty, Walker, found, is_integer};

/// Who a message or annotation is for.
pub(crate) const ROLE: Ty = Ty::Enum(&["user", "assistant"]);

/// Syslog severities, as `logging/setLevel` and `notifications/message` use them.
pub(crate) const LOGGING_LEVEL: Ty = Ty::Enum(&crate::protocol::LOG_LEVELS);

/// A list of strings (cursors, sizes, stop sequences …).
pub(crate) const STRINGS: Ty = Ty::ArrayOf(&Ty::Str);

/// `_meta` on content, resources, prompts and tools (an object from 2025-06-18).
pub(crate) const META: Field = Field::opt("_meta", Ty::Object).since(V2025_06_18);

/// `title` of named things (2025-06-18 on).
pub(crate) const TITLE: Field = Field::opt("title", Ty::Str).since(V2025_06_18);

/// `icons` of named things (2025-11-25 on).
pub(crate) const ICONS: Field = Field::opt("icons", ICON_LIST).since(V2025_11_25);

const ICON_LIST: Ty = Ty::ArrayOf(&Ty::Obj(&ICON));

/// `description` of named things.
pub(crate) const DESCRIPTION: Field = Field::opt("description", Ty::Str);

/// Content annotations.
pub(crate) static ANNOTATIONS: Obj = Obj {
    fields: &[
        Field::opt("audience", Ty::ArrayOf(&ROLE)),
        Field::opt("priority", Ty::Unit),
        Field::opt("lastModified", Ty::Str).since(V2025_06_18),
    ],
};

/// `annotations` of content and resources.
pub(crate) const ANNOTATED: Field = Field::opt("annotations", Ty::Obj(&ANNOTATIONS));

/// An icon for a tool, prompt, resource or implementation.
pub(crate) static ICON: Obj = Obj {
    fields: &[
        Field::req("src", Ty::Str),
        Field::opt("mimeType", Ty::Str),
        Field::opt("sizes", STRINGS),
        Field::opt("theme", Ty::Enum(&["light", "dark"])),
    ],
};

/// `clientInfo` / `serverInfo`.
pub(crate) static IMPLEMENTATION: Obj = Obj {
    fields: &[
        Field::req("name", Ty::Str),
        Field::req("version", Ty::Str),
        TITLE,
        Field::opt("description", Ty::Str).since(V2025_11_25),
        ICONS,
        Field::opt("websiteUrl", Ty::Str).since(V2025_11_25),
    ],
};

/// A capability's settings: any object, but from 2026-07-28 a `JSONObject`
/// (no `null`s, no fractional numbers anywhere inside).
pub(crate) const SETTINGS: Ty = Ty::Rule(&Rule {
    expects: "an object",
    check: settings,
});

fn settings(walker: &mut Walker<'_>, value: &Value) {
    if !value.is_object() {
        return walker.mismatch("an object", value);
    }
    if walker.version >= V2026_07_28 {
        json_value(walker, value);
    }
}

/// 2026-07-28's `JSONValue`: objects, arrays, strings, integers, booleans.
fn json_value(walker: &mut Walker<'_>, value: &Value) {
    match value {
        Value::Object(map) => {
            for (key, member) in map {
                walker.at(key, |w| json_value(w, member));
            }
        }
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                walker.at(i, |w| json_value(w, item));
            }
        }
        Value::String(_) | Value::Bool(_) => {}
        other if is_integer(other) => {}
        other => walker.fail(format_args!(
            "must be a JSON value without nulls or fractional numbers; found {}",
            found(other)
        )),
    }
}

const LIST_CHANGED: Field = Field::opt("listChanged", Ty::Bool);

/// A capability with only `listChanged`.
static LISTS: Obj = Obj {
    fields: &[LIST_CHANGED],
};

/// `roots` in client capabilities: `listChanged` until 2025-11-25, an empty
/// object after.
static ROOTS_CAPABILITY: Obj = Obj {
    fields: &[LIST_CHANGED.until(V2025_11_25)],
};

static SAMPLING_CAPABILITY: Obj = Obj {
    fields: &[
        Field::opt("context", SETTINGS),
        Field::opt("tools", SETTINGS),
    ],
};

static ELICITATION_CAPABILITY: Obj = Obj {
    fields: &[Field::opt("form", SETTINGS), Field::opt("url", SETTINGS)],
};

static CLIENT_TASK_REQUESTS: Obj = Obj {
    fields: &[
        Field::opt(
            "elicitation",
            Ty::Obj(&Obj {
                fields: &[Field::opt("create", SETTINGS)],
            }),
        ),
        Field::opt(
            "sampling",
            Ty::Obj(&Obj {
                fields: &[Field::opt("createMessage", SETTINGS)],
            }),
        ),
    ],
};

static SERVER_TASK_REQUESTS: Obj = Obj {
    fields: &[Field::opt(
        "tools",
        Ty::Obj(&Obj {
            fields: &[Field::opt("call", SETTINGS)],
        }),
    )],
};

static CLIENT_TASKS: Obj = Obj {
    fields: &[
        Field::opt("cancel", SETTINGS),
        Field::opt("list", SETTINGS),
        Field::opt("requests", Ty::Obj(&CLIENT_TASK_REQUESTS)),
    ],
};

static SERVER_TASKS: Obj = Obj {
    fields: &[
        Field::opt("cancel", SETTINGS),
        Field::opt("list", SETTINGS),
        Field::opt("requests", Ty::Obj(&SERVER_TASK_REQUESTS)),
    ],
};

const EXPERIMENTAL: Field = Field::opt("experimental", Ty::MapOf(&SETTINGS));
const EXTENSIONS: Field = Field::opt("extensions", Ty::MapOf(&SETTINGS)).since(V2026_07_28);

/// What a client can do.
pub(crate) static CLIENT_CAPABILITIES: Obj = Obj {
    fields: &[
        EXPERIMENTAL,
        EXTENSIONS,
        Field::opt("roots", Ty::Obj(&ROOTS_CAPABILITY)),
        Field::opt("sampling", SETTINGS).until(V2025_06_18),
        Field::opt("sampling", Ty::Obj(&SAMPLING_CAPABILITY)).since(V2025_11_25),
        Field::opt("elicitation", SETTINGS).within(only(V2025_06_18)),
        Field::opt("elicitation", Ty::Obj(&ELICITATION_CAPABILITY)).since(V2025_11_25),
        Field::opt("tasks", Ty::Obj(&CLIENT_TASKS)).within(only(V2025_11_25)),
    ],
};

/// What a server can do.
pub(crate) static SERVER_CAPABILITIES: Obj = Obj {
    fields: &[
        EXPERIMENTAL,
        EXTENSIONS,
        Field::opt("logging", SETTINGS),
        Field::opt("completions", SETTINGS).since(V2025_03_26),
        Field::opt("prompts", Ty::Obj(&LISTS)),
        Field::opt(
            "resources",
            Ty::Obj(&Obj {
                fields: &[LIST_CHANGED, Field::opt("subscribe", Ty::Bool)],
            }),
        ),
        Field::opt("tools", Ty::Obj(&LISTS)),
        Field::opt("tasks", Ty::Obj(&SERVER_TASKS)).within(only(V2025_11_25)),
    ],
};

/// `params._meta` of a legacy request: an object with an optional progress token.
pub(crate) static LEGACY_REQUEST_META: Obj = Obj {
    fields: &[Field::opt("progressToken", Ty::Id)],
};

/// `params._meta` of every 2026-07-28 client request: the version and the
/// client's capabilities travel with each request.
pub(crate) static MODERN_REQUEST_META: Obj = Obj {
    fields: &[
        Field::req("io.modelcontextprotocol/protocolVersion", Ty::Str),
        Field::req(
            "io.modelcontextprotocol/clientCapabilities",
            Ty::Obj(&CLIENT_CAPABILITIES),
        ),
        Field::opt(
            "io.modelcontextprotocol/clientInfo",
            Ty::Obj(&IMPLEMENTATION),
        ),
        Field::opt("io.modelcontextprotocol/logLevel", LOGGING_LEVEL),
        Field::opt("progressToken", Ty::Id),
    ],
};

/// `params._meta` of a notification (2026-07-28 tags subscription streams).
pub(crate) static NOTIFICATION_META: Obj = Obj {
    fields: &[Field::opt("io.modelcontextprotocol/subscriptionId", Ty::Id).since(V2026_07_28)],
};

/// `result._meta` (2026-07-28 names the server in it).
pub(crate) static RESULT_META: Obj = Obj {
    fields: &[Field::opt(
        "io.modelcontextprotocol/serverInfo",
        Ty::Obj(&IMPLEMENTATION),
    )
    .since(V2026_07_28)],
};

/// What `subscriptions/listen` asks for and the acknowledgement echoes.
pub(crate) static SUBSCRIPTION_FILTER: Obj = Obj {
    fields: &[
        Field::opt("toolsListChanged", Ty::Bool),
        Field::opt("promptsListChanged", Ty::Bool),
        Field::opt("resourcesListChanged", Ty::Bool),
        Field::opt("resourceSubscriptions", STRINGS),
    ],
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::ViolationKind;
    use crate::schema::version::{V2025_11_25, Version};
    use serde_json::json;

    fn run(version: Version, ty: &Ty, value: &Value) -> Vec<String> {
        let mut out = Vec::new();
        Walker::new(version, ViolationKind::ResultShape, "", &mut out).check(ty, value);
        out.into_iter().map(|v| v.message).collect()
    }

    #[test]
    fn capability_settings_are_json_objects_from_2026() {
        let caps = Ty::Obj(&SERVER_CAPABILITIES);
        let value = json!({"experimental": {"x": {"ratio": 0.5, "off": null}}});
        assert!(run(V2025_11_25, &caps, &value).is_empty());
        assert_eq!(run(V2026_07_28, &caps, &value).len(), 2);
        assert_eq!(
            run(
                V2026_07_28,
                &caps,
                &json!({"tools": {"listChanged": "yes"}})
            ),
            ["`/tools/listChanged` must be a boolean; found \"yes\""]
        );
    }

    #[test]
    fn modern_request_meta_needs_version_and_capabilities() {
        let meta = Ty::Obj(&MODERN_REQUEST_META);
        let found = run(V2026_07_28, &meta, &json!({}));
        assert_eq!(
            found,
            [
                "`/io.modelcontextprotocol~1protocolVersion` is required (a string)",
                "`/io.modelcontextprotocol~1clientCapabilities` is required (an object)"
            ]
        );
    }
}
