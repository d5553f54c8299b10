//! What the schema checks report: one problem, where it is, and which rule
//! it broke (callers map kinds to their own finding codes).

use serde::Serialize;

/// Which rule a message breaks, from the JSON-RPC envelope down to a single
/// tool argument. The most specific kind wins: a bad content block inside a
/// `tools/call` result is [`Content`](ViolationKind::Content), not
/// [`ResultShape`](ViolationKind::ResultShape). Ordered from the envelope
/// inwards, as `check` sorts its findings.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Copy, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ViolationKind {
    /// `jsonrpc` is not `"2.0"`, or the message is not a JSON object.
    JsonRpcVersion,
    /// `method` is not a string.
    MethodType,
    /// `id` is missing where required, or not a string/integer (or a `null`
    /// outside an error response).
    IdType,
    /// `params` is not an object.
    ParamsType,
    /// A response without exactly one of `result` and `error`.
    ResultXorError,
    /// `error` lacks an integer `code` or a string `message`.
    ErrorShape,
    /// A method or notification this protocol version does not define.
    /// Custom methods are legal, so callers treat this as a warning.
    UnknownMethod,
    /// A request's `params` do not fit its method.
    RequestParams,
    /// A result does not fit the method it answers.
    ResultShape,
    /// A notification's `params` do not fit it.
    Notification,
    /// A tool definition (outside its schemas) is malformed.
    ToolDefinition,
    /// A tool's `inputSchema`/`outputSchema` is not a valid object schema.
    InputSchema,
    /// A content block (text, image, audio, resource link, embedded
    /// resource, tool use/result) is malformed.
    Content,
    /// `resultType` is missing or malformed (2026-07-28).
    ResultType,
    /// Recorded tool arguments do not satisfy the tool's `inputSchema`.
    ToolArguments,
    /// A `tools/call` result of a tool with an `outputSchema` has no
    /// `structuredContent`, or one the schema rejects.
    StructuredContent,
    /// The message breaks the official schema.json it was checked against.
    OfficialSchema,
}

/// One problem found in a message.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Violation {
    /// Which rule was broken.
    pub kind: ViolationKind,
    /// JSON pointer to the offending value (for a missing member: where it
    /// belongs), rooted at what was checked (usually the message:
    /// `/result/tools/0/inputSchema`).
    pub pointer: String,
    /// What was expected and what was found.
    pub message: String,
}

impl Violation {
    /// A violation of `kind` at `pointer`.
    pub fn new(
        kind: ViolationKind,
        pointer: impl Into<String>,
        message: impl Into<String>,
    ) -> Self {
        Violation {
            kind,
            pointer: pointer.into(),
            message: message.into(),
        }
    }
}

impl std::fmt::Display for Violation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}
