//! What `check` reports: stable codes, severities and findings.
//!
//! Codes are part of the interface (scripts match on them and the README
//! documents them): a code keeps its meaning forever, new checks get new
//! codes.

use serde::Serialize;

use crate::schema::ViolationKind;

/// How bad a finding is. Any error makes `check` exit 1.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    /// Worth a look; the cassette still works.
    Warning,
    /// The cassette is wrong or unsafe to commit.
    Error,
}

/// One kind of finding. The numbering groups them: `MC0xx` the file,
/// `MC1xx` the JSON-RPC envelope, `MC2xx` MCP shapes, `MC3xx` the
/// cassette's structure, `MC4xx` secrets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Code {
    /// The file ends in the middle of its JSON.
    Truncated,
    /// The file holds git conflict markers.
    ConflictMarkers,
    /// The file is not valid JSON.
    InvalidJson,
    /// `format_version` is missing, invalid or newer than this build.
    FormatVersion,
    /// The JSON is not a cassette (a field is missing or has the wrong type).
    Structure,
    /// `jsonrpc` is not `"2.0"`.
    JsonRpcVersion,
    /// `method` is not a string.
    MethodType,
    /// `id` is not a number or a string.
    IdType,
    /// `params` is not an object or an array.
    ParamsType,
    /// A response has both or neither of `result` and `error`.
    ResultXorError,
    /// An `error` lacks an integer `code` or a string `message`.
    ErrorShape,
    /// A method the cassette's protocol version does not define.
    UnknownMethod,
    /// A request's params do not fit its method.
    RequestParams,
    /// A result does not fit its method.
    ResultShape,
    /// A notification's params do not fit its method.
    Notification,
    /// A tool definition is malformed (blank name, missing fields).
    ToolDefinition,
    /// A tool's `inputSchema` (or `outputSchema`) is not a valid object schema.
    InputSchema,
    /// A content item is malformed.
    Content,
    /// `resultType` is missing or wrong (2026-07-28).
    ResultType,
    /// Recorded tool arguments break the tool's advertised `inputSchema`.
    ToolArguments,
    /// A `tools/call` result lacks the `structuredContent` the tool's
    /// `outputSchema` calls for, or carries one the schema rejects.
    StructuredContent,
    /// A message breaks the official schema given with `--schema`.
    OfficialSchema,
    /// A response that pairs with no request.
    Unpaired,
    /// An interaction identical to an earlier one.
    Duplicate,
    /// The header contradicts the recorded traffic.
    Contradictory,
    /// A hand-written case that an earlier case always wins over.
    UnreachableCase,
    /// A hand-written case for something the server does not offer.
    UnusedCase,
    /// Requests were recorded but none was answered (the upstream was down).
    NoSuccess,
    /// Something that looks like a secret.
    LikelySecret,
}

impl Code {
    /// Every code, in table order (the README's table follows it).
    pub const ALL: [Code; 29] = [
        Code::Truncated,
        Code::ConflictMarkers,
        Code::InvalidJson,
        Code::FormatVersion,
        Code::Structure,
        Code::JsonRpcVersion,
        Code::MethodType,
        Code::IdType,
        Code::ParamsType,
        Code::ResultXorError,
        Code::ErrorShape,
        Code::UnknownMethod,
        Code::RequestParams,
        Code::ResultShape,
        Code::Notification,
        Code::ToolDefinition,
        Code::InputSchema,
        Code::Content,
        Code::ResultType,
        Code::ToolArguments,
        Code::OfficialSchema,
        Code::StructuredContent,
        Code::Unpaired,
        Code::Duplicate,
        Code::Contradictory,
        Code::UnreachableCase,
        Code::UnusedCase,
        Code::NoSuccess,
        Code::LikelySecret,
    ];

    /// The stable code, `MC` and three digits.
    pub fn as_str(self) -> &'static str {
        match self {
            Code::Truncated => "MC001",
            Code::ConflictMarkers => "MC002",
            Code::InvalidJson => "MC003",
            Code::FormatVersion => "MC004",
            Code::Structure => "MC005",
            Code::JsonRpcVersion => "MC101",
            Code::MethodType => "MC102",
            Code::IdType => "MC103",
            Code::ParamsType => "MC104",
            Code::ResultXorError => "MC105",
            Code::ErrorShape => "MC106",
            Code::UnknownMethod => "MC201",
            Code::RequestParams => "MC202",
            Code::ResultShape => "MC203",
            Code::Notification => "MC204",
            Code::ToolDefinition => "MC205",
            Code::InputSchema => "MC206",
            Code::Content => "MC207",
            Code::ResultType => "MC208",
            Code::ToolArguments => "MC209",
            Code::OfficialSchema => "MC210",
            Code::StructuredContent => "MC211",
            Code::Unpaired => "MC301",
            Code::Duplicate => "MC302",
            Code::Contradictory => "MC303",
            Code::UnreachableCase => "MC304",
            Code::UnusedCase => "MC305",
            Code::NoSuccess => "MC306",
            Code::LikelySecret => "MC401",
        }
    }

    /// A short name, for tables and `--json`.
    pub fn name(self) -> &'static str {
        match self {
            Code::Truncated => "truncated",
            Code::ConflictMarkers => "conflict-markers",
            Code::InvalidJson => "invalid-json",
            Code::FormatVersion => "format-version",
            Code::Structure => "structure",
            Code::JsonRpcVersion => "jsonrpc-version",
            Code::MethodType => "method-type",
            Code::IdType => "id-type",
            Code::ParamsType => "params-type",
            Code::ResultXorError => "result-xor-error",
            Code::ErrorShape => "error-shape",
            Code::UnknownMethod => "unknown-method",
            Code::RequestParams => "request-params",
            Code::ResultShape => "result-shape",
            Code::Notification => "notification",
            Code::ToolDefinition => "tool-definition",
            Code::InputSchema => "input-schema",
            Code::Content => "content",
            Code::ResultType => "result-type",
            Code::ToolArguments => "tool-arguments",
            Code::OfficialSchema => "official-schema",
            Code::StructuredContent => "structured-content",
            Code::Unpaired => "unpaired",
            Code::Duplicate => "duplicate",
            Code::Contradictory => "contradictory",
            Code::UnreachableCase => "unreachable-case",
            Code::UnusedCase => "unused-case",
            Code::NoSuccess => "no-success",
            Code::LikelySecret => "likely-secret",
        }
    }

    /// How bad it is.
    pub fn severity(self) -> Severity {
        match self {
            Code::UnknownMethod | Code::Duplicate | Code::UnusedCase | Code::NoSuccess => {
                Severity::Warning
            }
            _ => Severity::Error,
        }
    }

    /// What usually fixes it.
    pub fn hint(self) -> &'static str {
        match self {
            Code::Truncated => {
                "the file was cut short (an interrupted write or copy); re-record, or restore it from version control"
            }
            Code::ConflictMarkers => {
                "resolve the merge: keep one side, or re-record the cassette instead of merging it"
            }
            Code::InvalidJson => "fix the JSON syntax at the position shown",
            Code::FormatVersion => {
                "a cassette has \"format_version\": 1 (a fixture \"fixture_version\": 1); a newer version needs a newer mcpcassette"
            }
            Code::Structure => {
                "see docs/cassette-format.md (or docs/fixture-format.md) for the fields and their types"
            }
            Code::JsonRpcVersion => "set \"jsonrpc\": \"2.0\"",
            Code::MethodType => "`method` must be a string such as \"tools/call\"",
            Code::IdType => "use a number or a string as the id",
            Code::ParamsType => "`params` must be an object",
            Code::ResultXorError => "a response carries exactly one of `result` and `error`",
            Code::ErrorShape => {
                "an error is {\"code\": <integer>, \"message\": <string>, \"data\"?: <any>}"
            }
            Code::UnknownMethod => {
                "fine for a custom method; otherwise check the spelling against the protocol version in the header"
            }
            Code::RequestParams | Code::ResultShape | Code::Notification => {
                "compare with the schema of the protocol version in the cassette's header; a server that sends this breaks clients"
            }
            Code::ToolDefinition => "a tool needs a non-blank `name` and an `inputSchema`",
            Code::InputSchema => {
                "`inputSchema` must be a valid JSON Schema with \"type\": \"object\""
            }
            Code::Content => {
                "content items are text, image, audio, resource_link or resource, each with its required fields"
            }
            Code::ResultType => {
                "2026-07-28 results carry \"resultType\": \"complete\" (or \"input_required\")"
            }
            Code::ToolArguments => {
                "the client sent arguments the server's own inputSchema rejects; fix the client or the schema"
            }
            Code::OfficialSchema => "see the official schema's definition named in the message",
            Code::StructuredContent => {
                "a tool with an outputSchema answers with `structuredContent` the schema accepts (SDK clients reject anything else); the text content may carry the same JSON"
            }
            Code::Unpaired => "a response's id must equal its request's id",
            Code::Duplicate => {
                "remove the copy, or keep it if the server is expected to answer the same request twice"
            }
            Code::Contradictory => {
                "re-record, or make the header agree with the recorded handshake"
            }
            Code::UnreachableCase => {
                "an earlier case matches everything this one does: reorder the cases or narrow the earlier `when`"
            }
            Code::UnusedCase => {
                "the recorded server does not offer this; check the tool or method name"
            }
            Code::NoSuccess => {
                "the server never answered while recording (for `record --upstream`: was it running at that URL?); start it and record again"
            }
            Code::LikelySecret => {
                "remove it, re-record with redaction (on by default), or add a rule: --redact SELECTOR or --redact REGEX"
            }
        }
    }
}

impl From<ViolationKind> for Code {
    fn from(kind: ViolationKind) -> Code {
        match kind {
            ViolationKind::JsonRpcVersion => Code::JsonRpcVersion,
            ViolationKind::MethodType => Code::MethodType,
            ViolationKind::IdType => Code::IdType,
            ViolationKind::ParamsType => Code::ParamsType,
            ViolationKind::ResultXorError => Code::ResultXorError,
            ViolationKind::ErrorShape => Code::ErrorShape,
            ViolationKind::UnknownMethod => Code::UnknownMethod,
            ViolationKind::RequestParams => Code::RequestParams,
            ViolationKind::ResultShape => Code::ResultShape,
            ViolationKind::Notification => Code::Notification,
            ViolationKind::ToolDefinition => Code::ToolDefinition,
            ViolationKind::InputSchema => Code::InputSchema,
            ViolationKind::Content => Code::Content,
            ViolationKind::ResultType => Code::ResultType,
            ViolationKind::ToolArguments => Code::ToolArguments,
            ViolationKind::OfficialSchema => Code::OfficialSchema,
            ViolationKind::StructuredContent => Code::StructuredContent,
        }
    }
}

impl Serialize for Code {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

/// One thing `check` found, and where.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Finding {
    /// The stable code.
    pub code: Code,
    /// The code's short name.
    pub name: &'static str,
    /// How bad it is.
    pub severity: Severity,
    /// 1-based line in the file, when known.
    pub line: Option<usize>,
    /// Where in the document, as a JSON pointer.
    pub pointer: String,
    /// What is wrong (secrets masked).
    pub message: String,
    /// What usually fixes it.
    pub hint: &'static str,
}

impl Finding {
    /// A finding at `pointer`; the line is filled in once the file's
    /// layout is known.
    pub fn new(code: Code, pointer: impl Into<String>, message: impl Into<String>) -> Finding {
        Finding {
            code,
            name: code.name(),
            severity: code.severity(),
            line: None,
            pointer: pointer.into(),
            message: message.into(),
            hint: code.hint(),
        }
    }

    /// The same finding at a known line.
    pub fn at_line(mut self, line: usize) -> Finding {
        self.line = Some(line);
        self
    }
}
