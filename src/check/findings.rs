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
/// cassette's structure, `MC4xx` secrets. The `MC1xx` and `MC2xx` codes are
/// the schema's own [`ViolationKind`]s, one code each, so that a new kind
/// cannot be reported without a code; the rest are `check`'s own.
///
/// The order (findings on one line sort by it) is the declaration order,
/// with [`Code::Schema`] ordered by its kind.
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
    /// A message (or a fixture's definition or answer) breaks a rule of
    /// JSON-RPC or MCP: `MC101`…`MC211`.
    Schema(ViolationKind),
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
    /// Clients of the other protocol era cannot be answered (nothing to
    /// translate the handshake from, or an `input_required` answer without
    /// its recorded retry).
    OneEra,
    /// The server processes' interactions are not one process after
    /// another (a `process` lower than the interaction's before it).
    ProcessOrder,
    /// Something that looks like a secret.
    LikelySecret,
}

impl Code {
    /// Every code, in table order (the README's table follows it).
    pub const ALL: [Code; 31] = [
        Code::Truncated,
        Code::ConflictMarkers,
        Code::InvalidJson,
        Code::FormatVersion,
        Code::Structure,
        Code::Schema(ViolationKind::JsonRpcVersion),
        Code::Schema(ViolationKind::MethodType),
        Code::Schema(ViolationKind::IdType),
        Code::Schema(ViolationKind::ParamsType),
        Code::Schema(ViolationKind::ResultXorError),
        Code::Schema(ViolationKind::ErrorShape),
        Code::Schema(ViolationKind::UnknownMethod),
        Code::Schema(ViolationKind::RequestParams),
        Code::Schema(ViolationKind::ResultShape),
        Code::Schema(ViolationKind::Notification),
        Code::Schema(ViolationKind::ToolDefinition),
        Code::Schema(ViolationKind::InputSchema),
        Code::Schema(ViolationKind::Content),
        Code::Schema(ViolationKind::ResultType),
        Code::Schema(ViolationKind::ToolArguments),
        Code::Schema(ViolationKind::OfficialSchema),
        Code::Schema(ViolationKind::StructuredContent),
        Code::Unpaired,
        Code::Duplicate,
        Code::Contradictory,
        Code::UnreachableCase,
        Code::UnusedCase,
        Code::NoSuccess,
        Code::OneEra,
        Code::ProcessOrder,
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
            Code::Schema(kind) => match kind {
                ViolationKind::JsonRpcVersion => "MC101",
                ViolationKind::MethodType => "MC102",
                ViolationKind::IdType => "MC103",
                ViolationKind::ParamsType => "MC104",
                ViolationKind::ResultXorError => "MC105",
                ViolationKind::ErrorShape => "MC106",
                ViolationKind::UnknownMethod => "MC201",
                ViolationKind::RequestParams => "MC202",
                ViolationKind::ResultShape => "MC203",
                ViolationKind::Notification => "MC204",
                ViolationKind::ToolDefinition => "MC205",
                ViolationKind::InputSchema => "MC206",
                ViolationKind::Content => "MC207",
                ViolationKind::ResultType => "MC208",
                ViolationKind::ToolArguments => "MC209",
                ViolationKind::OfficialSchema => "MC210",
                ViolationKind::StructuredContent => "MC211",
            },
            Code::Unpaired => "MC301",
            Code::Duplicate => "MC302",
            Code::Contradictory => "MC303",
            Code::UnreachableCase => "MC304",
            Code::UnusedCase => "MC305",
            Code::NoSuccess => "MC306",
            Code::OneEra => "MC307",
            Code::ProcessOrder => "MC308",
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
            Code::Schema(kind) => match kind {
                ViolationKind::JsonRpcVersion => "jsonrpc-version",
                ViolationKind::MethodType => "method-type",
                ViolationKind::IdType => "id-type",
                ViolationKind::ParamsType => "params-type",
                ViolationKind::ResultXorError => "result-xor-error",
                ViolationKind::ErrorShape => "error-shape",
                ViolationKind::UnknownMethod => "unknown-method",
                ViolationKind::RequestParams => "request-params",
                ViolationKind::ResultShape => "result-shape",
                ViolationKind::Notification => "notification",
                ViolationKind::ToolDefinition => "tool-definition",
                ViolationKind::InputSchema => "input-schema",
                ViolationKind::Content => "content",
                ViolationKind::ResultType => "result-type",
                ViolationKind::ToolArguments => "tool-arguments",
                ViolationKind::OfficialSchema => "official-schema",
                ViolationKind::StructuredContent => "structured-content",
            },
            Code::Unpaired => "unpaired",
            Code::Duplicate => "duplicate",
            Code::Contradictory => "contradictory",
            Code::UnreachableCase => "unreachable-case",
            Code::UnusedCase => "unused-case",
            Code::NoSuccess => "no-success",
            Code::OneEra => "one-era",
            Code::ProcessOrder => "process-order",
            Code::LikelySecret => "likely-secret",
        }
    }

    /// How bad it is.
    pub fn severity(self) -> Severity {
        match self {
            Code::Schema(ViolationKind::UnknownMethod)
            | Code::Duplicate
            | Code::UnusedCase
            | Code::NoSuccess
            | Code::OneEra
            | Code::ProcessOrder => Severity::Warning,
            _ => Severity::Error,
        }
    }

    /// What it means, in a few words (SARIF's `shortDescription`).
    pub fn summary(self) -> &'static str {
        match self {
            Code::Truncated => "The file ends in the middle of its JSON",
            Code::ConflictMarkers => "The file holds git conflict markers",
            Code::InvalidJson => "The file is not valid JSON",
            Code::FormatVersion => "format_version is missing, invalid or newer than this build",
            Code::Structure => {
                "The JSON is not a cassette: a field is missing or has the wrong type"
            }
            Code::Schema(kind) => match kind {
                ViolationKind::JsonRpcVersion => "A message's jsonrpc is not \"2.0\"",
                ViolationKind::MethodType => "A message's method is not a string",
                ViolationKind::IdType => "A message's id is neither a number nor a string",
                ViolationKind::ParamsType => "A message's params is not an object",
                ViolationKind::ResultXorError => {
                    "A response carries both or neither of result and error"
                }
                ViolationKind::ErrorShape => "A response's error has the wrong shape",
                ViolationKind::UnknownMethod => {
                    "A method the recorded protocol version does not define"
                }
                ViolationKind::RequestParams => "A request's params break the MCP schema",
                ViolationKind::ResultShape => "A result breaks the MCP schema",
                ViolationKind::Notification => "A notification breaks the MCP schema",
                ViolationKind::ToolDefinition => "A tool definition breaks the MCP schema",
                ViolationKind::InputSchema => "A tool's inputSchema is not a valid object schema",
                ViolationKind::Content => "A content item breaks the MCP schema",
                ViolationKind::ResultType => "A result lacks the resultType its version requires",
                ViolationKind::ToolArguments => {
                    "A tool call's arguments break the tool's own inputSchema"
                }
                ViolationKind::OfficialSchema => "A message breaks the official MCP schema.json",
                ViolationKind::StructuredContent => {
                    "A tool result's structuredContent breaks the tool's outputSchema"
                }
            },
            Code::Unpaired => "A response that pairs with no request",
            Code::Duplicate => "An interaction identical to an earlier one",
            Code::Contradictory => "The header contradicts the recorded traffic",
            Code::UnreachableCase => "A hand-written case that an earlier case always wins over",
            Code::UnusedCase => "A hand-written case for something the server does not offer",
            Code::NoSuccess => "Requests were recorded but none was answered",
            Code::OneEra => "Clients of the other protocol era cannot be answered",
            Code::ProcessOrder => "The server processes' interactions are out of order",
            Code::LikelySecret => "Something that looks like a secret",
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
            Code::Schema(kind) => schema_hint(kind),
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
            Code::OneEra => {
                "replay translates between the protocol eras from the recorded handshake and retries (docs/cassette-format.md, \"Cross-era replay\"); record a session that has them to answer clients of both eras"
            }
            Code::ProcessOrder => {
                "a cassette holds its server processes one after another (process 0's interactions, then process 1's, …); move the interaction to its process, or fix its `process` (docs/processes.md)"
            }
            Code::LikelySecret => {
                "remove it, re-record with redaction (on by default), or add a rule: --redact SELECTOR or --redact REGEX"
            }
        }
    }
}

/// What usually fixes a schema violation of `kind`.
fn schema_hint(kind: ViolationKind) -> &'static str {
    match kind {
        ViolationKind::JsonRpcVersion => "set \"jsonrpc\": \"2.0\"",
        ViolationKind::MethodType => "`method` must be a string such as \"tools/call\"",
        ViolationKind::IdType => "use a number or a string as the id",
        ViolationKind::ParamsType => "`params` must be an object",
        ViolationKind::ResultXorError => "a response carries exactly one of `result` and `error`",
        ViolationKind::ErrorShape => {
            "an error is {\"code\": <integer>, \"message\": <string>, \"data\"?: <any>}"
        }
        ViolationKind::UnknownMethod => {
            "fine for a custom method; otherwise check the spelling against the protocol version in the header"
        }
        ViolationKind::RequestParams | ViolationKind::ResultShape | ViolationKind::Notification => {
            "compare with the schema of the protocol version in the cassette's header; a server that sends this breaks clients"
        }
        ViolationKind::ToolDefinition => "a tool needs a non-blank `name` and an `inputSchema`",
        ViolationKind::InputSchema => {
            "`inputSchema` must be a valid JSON Schema with \"type\": \"object\""
        }
        ViolationKind::Content => {
            "content items are text, image, audio, resource_link or resource, each with its required fields"
        }
        ViolationKind::ResultType => {
            "2026-07-28 results carry \"resultType\": \"complete\" (or \"input_required\")"
        }
        ViolationKind::ToolArguments => {
            "the client sent arguments the server's own inputSchema rejects; fix the client or the schema"
        }
        ViolationKind::OfficialSchema => {
            "see the official schema's definition named in the message"
        }
        ViolationKind::StructuredContent => {
            "a tool with an outputSchema answers with `structuredContent` the schema accepts (SDK clients reject anything else); the text content may carry the same JSON"
        }
    }
}

impl From<ViolationKind> for Code {
    fn from(kind: ViolationKind) -> Code {
        Code::Schema(kind)
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

impl Severity {
    /// The word the text output and SARIF use: `error` or `warning`.
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
        }
    }
}

impl Finding {
    /// The finding as the text output prints it, rustc-style: a headline,
    /// where (`path:line at pointer`) and the hint, then a blank line.
    pub fn to_text(&self, path: &std::path::Path) -> String {
        let line = self.line.map(|l| format!(":{l}")).unwrap_or_default();
        let at = if self.pointer.is_empty() {
            String::new()
        } else {
            format!(" at {}", self.pointer)
        };
        format!(
            "{}[{}] {}: {}\n  --> {}{line}{at}\n   = hint: {}\n\n",
            self.severity.as_str(),
            self.code.as_str(),
            self.name,
            self.message,
            path.display(),
            self.hint
        )
    }
}

/// At most this many findings go into a SARIF or JUnit report, whatever
/// the input; the report says how many were left out.
pub const REPORT_FINDINGS: usize = 1000;

/// A finding's message in a SARIF or JUnit report is cut after this many
/// characters (messages quote recorded values).
pub const REPORT_MESSAGE_CHARS: usize = 2000;

/// `text` cut to [`REPORT_MESSAGE_CHARS`] characters, marked when cut.
pub(super) fn bounded(text: &str) -> std::borrow::Cow<'_, str> {
    match text.char_indices().nth(REPORT_MESSAGE_CHARS) {
        None => std::borrow::Cow::Borrowed(text),
        Some((end, _)) => std::borrow::Cow::Owned(format!("{}… (cut)", &text[..end])),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_code_has_its_own_string_and_name() {
        let mut strings: Vec<&str> = Code::ALL.iter().map(|c| c.as_str()).collect();
        let mut names: Vec<&str> = Code::ALL.iter().map(|c| c.name()).collect();
        strings.sort_unstable();
        strings.dedup();
        names.sort_unstable();
        names.dedup();
        assert_eq!(strings.len(), Code::ALL.len());
        assert_eq!(names.len(), Code::ALL.len());
        assert_eq!(
            Code::from(ViolationKind::UnknownMethod).as_str(),
            "MC201",
            "schema kinds keep their codes"
        );
        assert_eq!(
            Code::Schema(ViolationKind::UnknownMethod).severity(),
            Severity::Warning
        );
    }
}
