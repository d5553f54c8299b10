//! `sampling/createMessage`: the server asks the client's LLM for a
//! completion (a JSON-RPC request until 2025-11-25, an input request after).

use super::common::{ROLE, STRINGS};
use super::content::{SAMPLING_CONTENT, SAMPLING_MESSAGE};
use super::tasks::TASK_METADATA;
use super::tools::TOOL;
use super::version::{V2025_11_25, V2026_07_28};
use super::walker::{Field, Obj, Ty};

/// How the client should pick a model.
pub(crate) static MODEL_PREFERENCES: Obj = Obj {
    fields: &[
        Field::opt(
            "hints",
            Ty::ArrayOf(&Ty::Obj(&Obj {
                fields: &[Field::opt("name", Ty::Str)],
            })),
        ),
        Field::opt("costPriority", Ty::Unit),
        Field::opt("speedPriority", Ty::Unit),
        Field::opt("intelligencePriority", Ty::Unit),
    ],
};

pub(crate) static CREATE_MESSAGE_PARAMS: Obj = Obj {
    fields: &[
        Field::req("messages", Ty::ArrayOf(&Ty::Obj(&SAMPLING_MESSAGE))),
        Field::req("maxTokens", Ty::Int),
        Field::opt("modelPreferences", Ty::Obj(&MODEL_PREFERENCES)),
        Field::opt("systemPrompt", Ty::Str),
        Field::opt(
            "includeContext",
            Ty::Enum(&["none", "thisServer", "allServers"]),
        ),
        Field::opt("temperature", Ty::Num),
        Field::opt("stopSequences", STRINGS),
        Field::opt("metadata", Ty::Object).until(V2025_11_25),
        Field::opt("metadata", super::common::SETTINGS).since(V2026_07_28),
        Field::opt("tools", Ty::ArrayOf(&TOOL)).since(V2025_11_25),
        Field::opt(
            "toolChoice",
            Ty::Obj(&Obj {
                fields: &[Field::opt("mode", Ty::Enum(&["auto", "required", "none"]))],
            }),
        )
        .since(V2025_11_25),
        TASK_METADATA,
    ],
};

pub(crate) static CREATE_MESSAGE_RESULT: Obj = Obj {
    fields: &[
        Field::req("role", ROLE),
        Field::req("content", SAMPLING_CONTENT),
        Field::req("model", Ty::Str),
        Field::opt("stopReason", Ty::Str),
    ],
};
