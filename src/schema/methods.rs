//! Every request method of every version: where it exists, what its params
//! and result must contain, and the rules all requests and results share
//! (`_meta`, 2026-07-28's `resultType`, `input_required` and cacheable
//! results, 2025-11-25's task-augmented answers).

use serde_json::Value;

use super::ViolationKind::ResultType;
use super::catalog::{PROMPT, RESOURCE, RESOURCE_TEMPLATE, ROOT};
use super::common::{
    CLIENT_CAPABILITIES, IMPLEMENTATION, LEGACY_REQUEST_META, LOGGING_LEVEL, MODERN_REQUEST_META,
    RESULT_META, SERVER_CAPABILITIES, STRINGS, SUBSCRIPTION_FILTER,
};
use super::content::{CONTENT_BLOCK, PROMPT_MESSAGE, RESOURCE_CONTENTS, STRUCTURED_CONTENT};
use super::elicitation::{ELICIT_PARAMS, ELICIT_RESULT};
use super::sampling::{CREATE_MESSAGE_PARAMS, CREATE_MESSAGE_RESULT};
use super::tasks::{CREATE_TASK_RESULT, LIST_TASKS, TASK, TASK_ID, TASK_METADATA, TASKS};
use super::tools::TOOL;
use super::version::{ALL, LEGACY, NONE, V2025_06_18, V2026_07_28, Version, Versions, only, since};
use super::walker::{Field, Obj, Rule, Tagged, Ty, Variant, Walker};

/// One request method.
pub(crate) struct Method {
    pub(crate) name: &'static str,
    /// Where it is a JSON-RPC request.
    pub(crate) versions: Versions,
    /// Where it only appears inside `inputRequests` (2026-07-28 turned the
    /// server→client requests into those).
    pub(crate) embedded: Versions,
    /// Its own params (`_meta` is handled for all methods).
    pub(crate) params: Ty,
    /// Where `params` must be there (every 2026-07-28 request needs it for `_meta`).
    pub(crate) params_required: Versions,
    pub(crate) result: Ty,
    /// Where the answer may be an `InputRequiredResult`.
    pub(crate) input_required: Versions,
    /// Where the request may be task-augmented (answered with a `CreateTaskResult`).
    pub(crate) tasks: Versions,
}

impl Method {
    const fn new(name: &'static str, versions: Versions, params: Ty, result: Ty) -> Method {
        Method {
            name,
            versions,
            embedded: NONE,
            params,
            params_required: NONE,
            result,
            input_required: NONE,
            tasks: NONE,
        }
    }

    /// `params` is required wherever the method exists.
    const fn params_required(self) -> Method {
        Method {
            params_required: ALL,
            ..self
        }
    }

    const fn embedded(self, versions: Versions) -> Method {
        Method {
            embedded: versions,
            ..self
        }
    }

    const fn input_required(self) -> Method {
        Method {
            input_required: only(V2026_07_28),
            ..self
        }
    }

    const fn tasks(self) -> Method {
        Method {
            tasks: TASKS,
            ..self
        }
    }

    /// Whether the method is known in `version` at all.
    pub(crate) fn exists(&self, version: Version) -> bool {
        self.versions.or(self.embedded).contains(version)
    }
}

const EMPTY: Ty = Ty::Obj(&Obj { fields: &[] });

/// `cacheScope` and `ttlMs`: 2026-07-28 list/read/discover results say how
/// long they may be cached and by whom.
const CACHE_SCOPE: Field =
    Field::req("cacheScope", Ty::Enum(&["public", "private"])).since(V2026_07_28);
const TTL_MS: Field = Field::req("ttlMs", Ty::NonNegInt).since(V2026_07_28);
const NEXT_CURSOR: Field = Field::opt("nextCursor", Ty::Str);

/// `inputResponses`/`requestState`: the retry of an `input_required` request.
const INPUT_RESPONSES_FIELD: Field =
    Field::opt("inputResponses", INPUT_RESPONSES).since(V2026_07_28);
const REQUEST_STATE: Field = Field::opt("requestState", Ty::Str).since(V2026_07_28);

const PAGINATED: Ty = Ty::Obj(&Obj {
    fields: &[Field::opt("cursor", Ty::Str)],
});

const URI: Ty = Ty::Obj(&Obj {
    fields: &[Field::req("uri", Ty::Str)],
});

const fn listing(name: &'static str, item: &'static Ty) -> [Field; 4] {
    [
        Field::req(name, Ty::ArrayOf(item)),
        NEXT_CURSOR,
        CACHE_SCOPE,
        TTL_MS,
    ]
}

const LIST_TOOLS: [Field; 4] = listing("tools", &TOOL);
const LIST_PROMPTS: [Field; 4] = listing("prompts", &PROMPT_TY);
const LIST_RESOURCES: [Field; 4] = listing("resources", &RESOURCE_TY);
const LIST_TEMPLATES: [Field; 4] = listing("resourceTemplates", &TEMPLATE_TY);
static PROMPT_TY: Ty = Ty::Obj(&PROMPT);
static RESOURCE_TY: Ty = Ty::Obj(&RESOURCE);
static TEMPLATE_TY: Ty = Ty::Obj(&RESOURCE_TEMPLATE);

/// The completion values of `completion/complete` (at most 100 from 2026-07-28).
const COMPLETION_VALUES: Ty = Ty::Rule(&Rule {
    expects: "an array of strings",
    check: |walker, value| {
        walker.check(&Ty::ArrayOf(&Ty::Str), value);
        let count = value.as_array().map_or(0, Vec::len);
        if walker.version >= V2026_07_28 && count > 100 {
            walker.fail(format_args!("must hold at most 100 values; found {count}"));
        }
    },
});

/// `ref` of `completion/complete`: a prompt or a resource template.
const COMPLETION_REF: Ty = Ty::Tagged(&Tagged {
    tag: "type",
    variants: &[
        Variant::new(
            "ref/prompt",
            ALL,
            Ty::Obj(&Obj {
                fields: &[Field::req("name", Ty::Str), super::common::TITLE],
            }),
        ),
        Variant::new(
            "ref/resource",
            ALL,
            Ty::Obj(&Obj {
                fields: &[Field::req("uri", Ty::Str)],
            }),
        ),
    ],
});

/// Every request method of every version.
pub(crate) static METHODS: [Method; 22] = [
    Method::new(
        "initialize",
        LEGACY,
        Ty::Obj(&Obj {
            fields: &[
                Field::req("protocolVersion", Ty::Str),
                Field::req("capabilities", Ty::Obj(&CLIENT_CAPABILITIES)),
                Field::req("clientInfo", Ty::Obj(&IMPLEMENTATION)),
            ],
        }),
        Ty::Obj(&Obj {
            fields: &[
                Field::req("protocolVersion", Ty::Str),
                Field::req("capabilities", Ty::Obj(&SERVER_CAPABILITIES)),
                Field::req("serverInfo", Ty::Obj(&IMPLEMENTATION)),
                Field::opt("instructions", Ty::Str),
            ],
        }),
    )
    .params_required(),
    Method::new("ping", LEGACY, EMPTY, EMPTY),
    Method::new(
        "server/discover",
        only(V2026_07_28),
        EMPTY,
        Ty::Obj(&Obj {
            fields: &[
                Field::req("supportedVersions", STRINGS),
                Field::req("capabilities", Ty::Obj(&SERVER_CAPABILITIES)),
                Field::opt("instructions", Ty::Str),
                CACHE_SCOPE,
                TTL_MS,
            ],
        }),
    ),
    Method::new(
        "resources/list",
        ALL,
        PAGINATED,
        Ty::Obj(&Obj {
            fields: &LIST_RESOURCES,
        }),
    ),
    Method::new(
        "resources/templates/list",
        ALL,
        PAGINATED,
        Ty::Obj(&Obj {
            fields: &LIST_TEMPLATES,
        }),
    ),
    Method::new(
        "resources/read",
        ALL,
        Ty::Obj(&Obj {
            fields: &[
                Field::req("uri", Ty::Str),
                INPUT_RESPONSES_FIELD,
                REQUEST_STATE,
            ],
        }),
        Ty::Obj(&Obj {
            fields: &[
                Field::req("contents", Ty::ArrayOf(&RESOURCE_CONTENTS)),
                CACHE_SCOPE,
                TTL_MS,
            ],
        }),
    )
    .params_required()
    .input_required(),
    Method::new("resources/subscribe", LEGACY, URI, EMPTY).params_required(),
    Method::new("resources/unsubscribe", LEGACY, URI, EMPTY).params_required(),
    Method::new(
        "prompts/list",
        ALL,
        PAGINATED,
        Ty::Obj(&Obj {
            fields: &LIST_PROMPTS,
        }),
    ),
    Method::new(
        "prompts/get",
        ALL,
        Ty::Obj(&Obj {
            fields: &[
                Field::req("name", Ty::Str),
                Field::opt("arguments", Ty::MapOf(&Ty::Str)),
                INPUT_RESPONSES_FIELD,
                REQUEST_STATE,
            ],
        }),
        Ty::Obj(&Obj {
            fields: &[
                Field::req("messages", Ty::ArrayOf(&Ty::Obj(&PROMPT_MESSAGE))),
                Field::opt("description", Ty::Str),
            ],
        }),
    )
    .params_required()
    .input_required(),
    Method::new(
        "tools/list",
        ALL,
        PAGINATED,
        Ty::Obj(&Obj {
            fields: &LIST_TOOLS,
        }),
    ),
    Method::new(
        "tools/call",
        ALL,
        Ty::Obj(&Obj {
            fields: &[
                Field::req("name", Ty::Str),
                Field::opt("arguments", Ty::Object),
                TASK_METADATA,
                INPUT_RESPONSES_FIELD,
                REQUEST_STATE,
            ],
        }),
        Ty::Obj(&Obj {
            fields: &[
                Field::req("content", Ty::ArrayOf(&CONTENT_BLOCK)),
                Field::opt("isError", Ty::Bool),
                STRUCTURED_CONTENT,
            ],
        }),
    )
    .params_required()
    .input_required()
    .tasks(),
    Method::new(
        "logging/setLevel",
        LEGACY,
        Ty::Obj(&Obj {
            fields: &[Field::req("level", LOGGING_LEVEL)],
        }),
        EMPTY,
    )
    .params_required(),
    Method::new(
        "completion/complete",
        ALL,
        Ty::Obj(&Obj {
            fields: &[
                Field::req("ref", COMPLETION_REF),
                Field::req(
                    "argument",
                    Ty::Obj(&Obj {
                        fields: &[Field::req("name", Ty::Str), Field::req("value", Ty::Str)],
                    }),
                ),
                Field::opt(
                    "context",
                    Ty::Obj(&Obj {
                        fields: &[Field::opt("arguments", Ty::MapOf(&Ty::Str))],
                    }),
                )
                .since(V2025_06_18),
            ],
        }),
        Ty::Obj(&Obj {
            fields: &[Field::req(
                "completion",
                Ty::Obj(&Obj {
                    fields: &[
                        Field::req("values", COMPLETION_VALUES),
                        Field::opt("total", Ty::Int),
                        Field::opt("hasMore", Ty::Bool),
                    ],
                }),
            )],
        }),
    )
    .params_required(),
    Method::new(
        "subscriptions/listen",
        only(V2026_07_28),
        Ty::Obj(&Obj {
            fields: &[Field::req("notifications", Ty::Obj(&SUBSCRIPTION_FILTER))],
        }),
        Ty::Obj(&Obj {
            fields: &[Field::req(
                "_meta",
                Ty::Obj(&Obj {
                    fields: &[Field::req("io.modelcontextprotocol/subscriptionId", Ty::Id)],
                }),
            )],
        }),
    ),
    Method::new(
        "sampling/createMessage",
        LEGACY,
        Ty::Obj(&CREATE_MESSAGE_PARAMS),
        Ty::Obj(&CREATE_MESSAGE_RESULT),
    )
    .params_required()
    .embedded(only(V2026_07_28))
    .tasks(),
    Method::new(
        "roots/list",
        LEGACY,
        // 2026-07-28 has no generic request `_meta` for input requests.
        Ty::Obj(&Obj {
            fields: &[Field::opt("_meta", Ty::Object).since(V2026_07_28)],
        }),
        Ty::Obj(&Obj {
            fields: &[Field::req("roots", Ty::ArrayOf(&Ty::Obj(&ROOT)))],
        }),
    )
    .embedded(only(V2026_07_28)),
    Method::new(
        "elicitation/create",
        since(V2025_06_18).and(LEGACY),
        Ty::Rule(&ELICIT_PARAMS),
        Ty::Obj(&ELICIT_RESULT),
    )
    .params_required()
    .embedded(only(V2026_07_28))
    .tasks(),
    Method::new("tasks/get", TASKS, Ty::Obj(&TASK_ID), Ty::Obj(&TASK)).params_required(),
    Method::new("tasks/result", TASKS, Ty::Obj(&TASK_ID), EMPTY).params_required(),
    Method::new("tasks/cancel", TASKS, Ty::Obj(&TASK_ID), Ty::Obj(&TASK)).params_required(),
    Method::new("tasks/list", TASKS, PAGINATED, Ty::Obj(&LIST_TASKS)),
];

/// The method named `name`, in whatever version it exists.
pub(crate) fn find(name: &str) -> Option<&'static Method> {
    METHODS.iter().find(|m| m.name == name)
}

/// Legacy requests may carry a progress token in `_meta`.
static LEGACY_PARAMS: Obj = Obj {
    fields: &[Field::opt("_meta", Ty::Obj(&LEGACY_REQUEST_META))],
};

/// 2026-07-28 client requests must carry the version and capabilities.
static MODERN_PARAMS: Obj = Obj {
    fields: &[Field::req("_meta", Ty::Obj(&MODERN_REQUEST_META))],
};

/// Checks the `params` of a request for `method` (at the walker's pointer).
pub(crate) fn check_params(walker: &mut Walker<'_>, method: &Method, params: &Value) {
    if !params.is_object() {
        return walker.mismatch("an object", params);
    }
    let version = walker.version;
    if method.versions.contains(version) {
        let meta = if version >= V2026_07_28 {
            &MODERN_PARAMS
        } else {
            &LEGACY_PARAMS
        };
        walker.obj(meta, params);
    }
    walker.check(&method.params, params);
}

/// The `_meta` rule a legacy envelope applies to any request, custom ones included.
pub(crate) fn check_legacy_meta(walker: &mut Walker<'_>, params: &Value) {
    walker.obj(&LEGACY_PARAMS, params);
}

/// Checks a request object's `params` member (present or not) for `method`,
/// at the walker's pointer (the request).
pub(crate) fn check_request_params(walker: &mut Walker<'_>, method: &Method, request: &Value) {
    let version = walker.version;
    match request.get("params") {
        Some(params) if params.is_object() => {
            walker.at("params", |w| check_params(w, method, params))
        }
        // Not an object: the envelope check reports it.
        Some(_) => {}
        None if method.params_required.contains(version)
            || (version >= V2026_07_28 && method.versions.contains(version)) =>
        {
            walker.missing("params", "an object", None)
        }
        None => {}
    }
}

/// `resultType` of 2026-07-28 results.
const RESULT_TYPE: Field =
    Field::req("resultType", Ty::Kind(ResultType, &Ty::Str)).since(V2026_07_28);

/// What every JSON-RPC result shares.
static RESULT: Obj = Obj {
    fields: &[Field::opt("_meta", Ty::Obj(&RESULT_META)), RESULT_TYPE],
};

/// Rules every result of a JSON-RPC response follows, whatever it answers.
pub(crate) fn check_any_result(walker: &mut Walker<'_>, result: &Value) {
    walker.obj(&RESULT, result);
}

/// Checks a result of `method`. `json_rpc`: whether the result is (or
/// describes) a JSON-RPC result, which 2026-07-28 gives a `resultType`
/// (the input responses embedded in a retry have none).
pub(crate) fn check_result(
    walker: &mut Walker<'_>,
    method: &Method,
    result: &Value,
    json_rpc: bool,
) {
    if !result.is_object() {
        return walker.mismatch("an object", result);
    }
    let version = walker.version;
    if json_rpc {
        check_any_result(walker, result);
    }
    let result_type = result.get("resultType").and_then(Value::as_str);
    if method.input_required.contains(version) && result_type == Some("input_required") {
        walker.obj(&INPUT_REQUIRED_RESULT, result);
    } else if method.tasks.contains(version) && result.get("task").is_some_and(Value::is_object) {
        walker.obj(&CREATE_TASK_RESULT, result);
    } else {
        walker.check(&method.result, result);
    }
}

/// A 2026-07-28 answer asking the client for input before the retry.
pub(crate) static INPUT_REQUIRED_RESULT: Obj = Obj {
    fields: &[
        RESULT_TYPE,
        Field::opt("inputRequests", Ty::MapOf(&INPUT_REQUEST)),
        Field::opt("requestState", Ty::Str),
    ],
};

/// What the server wants the client to do: a sampling, roots or
/// elicitation request without the JSON-RPC envelope.
pub(crate) const INPUT_REQUEST: Ty = Ty::Rule(&Rule {
    expects: "an input request (`method` and `params`)",
    check: input_request,
});

fn embedded_methods(version: Version) -> impl Iterator<Item = &'static Method> {
    METHODS.iter().filter(move |m| m.embedded.contains(version))
}

fn input_request(walker: &mut Walker<'_>, value: &Value) {
    if !value.is_object() {
        return walker.mismatch("an input request (`method` and `params`)", value);
    }
    let version = walker.version;
    let name = value.get("method");
    match name
        .and_then(Value::as_str)
        .and_then(find)
        .filter(|m| m.embedded.contains(version))
    {
        Some(method) => check_request_params(walker, method, value),
        None => {
            let names: Vec<&str> = embedded_methods(version).map(|m| m.name).collect();
            let expected = format!("one of {}", names.join(", "));
            match name {
                Some(name) => walker.at("method", |w| w.mismatch(expected, name)),
                None => walker.missing("method", expected, None),
            }
        }
    }
}

/// The client's answers to input requests, keyed like the requests: each
/// is the result of one of the embedded methods.
pub(crate) const INPUT_RESPONSES: Ty = Ty::MapOf(&Ty::Rule(&Rule {
    expects: "a sampling, roots or elicitation result",
    check: input_response,
}));

fn input_response(walker: &mut Walker<'_>, value: &Value) {
    let methods = embedded_methods(walker.version);
    if let Err(closest) = walker.first_fit(methods, |w, m| check_result(w, m, value, false)) {
        walker.extend(closest.unwrap_or_default());
    }
}

/// The message for a method `name` unknown in `version`.
pub(crate) fn unknown(name: &str, version: Version, is_request: bool) -> String {
    let elsewhere = find(name)
        .filter(|m| !m.exists(version))
        .map(|m| m.versions.or(m.embedded))
        .or_else(|| {
            super::notifications::find(name)
                .filter(|n| !n.versions.contains(version))
                .map(|n| n.versions)
        });
    let what = if is_request { "method" } else { "notification" };
    match elsewhere {
        Some(versions) => format!(
            "`{name}` is not a {what} of MCP {} (it exists in {})",
            version.as_str(),
            versions.describe()
        ),
        None => format!(
            "`{name}` is not a {what} of MCP {} (a custom {what}?)",
            version.as_str()
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::ViolationKind;
    use crate::schema::version::{V2024_11_05, V2025_03_26};
    use serde_json::json;

    fn params(version: Version, name: &str, request: Value) -> Vec<(ViolationKind, String)> {
        let mut out = Vec::new();
        let method = find(name).unwrap();
        check_request_params(
            &mut Walker::new(version, ViolationKind::RequestParams, "", &mut out),
            method,
            &request,
        );
        out.into_iter().map(|v| (v.kind, v.message)).collect()
    }

    #[test]
    fn every_method_is_listed_once() {
        let mut names: Vec<&str> = METHODS.iter().map(|m| m.name).collect();
        let count = names.len();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), count);
    }

    #[test]
    fn modern_requests_need_meta() {
        let found = params(V2026_07_28, "tools/list", json!({}));
        assert_eq!(found[0].1, "`/params` is required (an object)");
        let found = params(V2026_07_28, "tools/list", json!({"params": {}}));
        assert_eq!(found[0].1, "`/params/_meta` is required (an object)");
        assert!(params(V2025_03_26, "tools/list", json!({})).is_empty());
    }

    #[test]
    fn legacy_meta_carries_a_progress_token() {
        let found = params(
            V2024_11_05,
            "ping",
            json!({"params": {"_meta": {"progressToken": 1.5}}}),
        );
        assert_eq!(found[0].0, ViolationKind::RequestParams);
        assert_eq!(
            found[0].1,
            "`/params/_meta/progressToken` must be a string or an integer; found 1.5"
        );
    }

    #[test]
    fn input_required_results_replace_the_method_result() {
        let mut out = Vec::new();
        let method = find("tools/call").unwrap();
        let result = json!({"resultType": "input_required", "inputRequests": {
            "a": {"method": "roots/list"},
            "b": {"method": "ping"}
        }});
        check_result(
            &mut Walker::new(V2026_07_28, ViolationKind::ResultShape, "", &mut out),
            method,
            &result,
            true,
        );
        assert_eq!(out.len(), 1);
        assert_eq!(
            out[0].message,
            "`/inputRequests/b/method` must be one of sampling/createMessage, roots/list, elicitation/create; found \"ping\""
        );
    }

    #[test]
    fn unknown_methods_say_where_they_exist() {
        assert_eq!(
            unknown("initialize", V2026_07_28, true),
            "`initialize` is not a method of MCP 2026-07-28 (it exists in 2024-11-05, 2025-03-26, 2025-06-18, 2025-11-25)"
        );
        assert_eq!(
            unknown("x/y", V2024_11_05, true),
            "`x/y` is not a method of MCP 2024-11-05 (a custom method?)"
        );
    }
}
