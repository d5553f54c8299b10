//! What servers list and clients offer: resources, resource templates,
//! prompts (with their arguments) and roots.

use super::common::TITLE;
use super::common::{ANNOTATED, DESCRIPTION, ICONS, META};
use super::walker::{Field, Obj, Ty};

/// A resource as `resources/list` advertises it.
pub(crate) static RESOURCE: Obj = Obj {
    fields: &[
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

/// A parameterised resource (`uriTemplate`, RFC 6570).
pub(crate) static RESOURCE_TEMPLATE: Obj = Obj {
    fields: &[
        Field::req("uriTemplate", Ty::Str),
        Field::req("name", Ty::Str),
        TITLE,
        DESCRIPTION,
        Field::opt("mimeType", Ty::Str),
        ANNOTATED,
        ICONS,
        META,
    ],
};

/// A prompt as `prompts/list` advertises it.
pub(crate) static PROMPT: Obj = Obj {
    fields: &[
        Field::req("name", Ty::Str),
        TITLE,
        DESCRIPTION,
        Field::opt("arguments", Ty::ArrayOf(&Ty::Obj(&PROMPT_ARGUMENT))),
        ICONS,
        META,
    ],
};

static PROMPT_ARGUMENT: Obj = Obj {
    fields: &[
        Field::req("name", Ty::Str),
        TITLE,
        DESCRIPTION,
        Field::opt("required", Ty::Bool),
    ],
};

/// A root the client exposes (`file://` URIs).
pub(crate) static ROOT: Obj = Obj {
    fields: &[
        Field::req("uri", Ty::Str),
        Field::opt("name", Ty::Str),
        META,
    ],
};
