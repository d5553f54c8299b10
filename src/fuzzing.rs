//! Entry points for the fuzz targets in `fuzz/` into code that is not
//! public: built only under `cfg(fuzzing)` (cargo fuzz sets it), never
//! part of the library's surface.

use serde_json::Value;

/// The crate's depth-safe JSON reading, as replay reads the wire.
pub mod json {
    use serde_json::Value;

    /// One message or batch; the error's text when it cannot be read.
    pub fn parse_message(bytes: &[u8]) -> Result<Value, String> {
        crate::json::parse_message(bytes).map_err(|e| e.to_string())
    }

    /// The id of a line that could not be parsed, when it can be read.
    pub fn readable_id(bytes: &[u8]) -> Option<Value> {
        crate::json::readable_id(bytes)
    }
}

/// The crate's JSON-RPC envelope functions.
pub mod jsonrpc {
    use serde_json::Value;

    /// Whether `value` is a JSON-RPC message.
    pub fn classify(value: &Value) -> bool {
        crate::jsonrpc::classify(value).is_ok()
    }

    /// A message's id.
    pub fn id(value: &Value) -> Option<&Value> {
        crate::jsonrpc::id(value)
    }

    /// A successful response.
    pub fn result_response(id: Value, result: Value) -> Value {
        crate::jsonrpc::result_response(id, result)
    }
}

/// Feeds `chunks` to the recorder's incremental SSE parser and reads each
/// event's data as the recorder does; returns the messages found.
pub fn sse_messages(chunks: &[&[u8]]) -> Vec<Value> {
    crate::record::fuzzing_sse(chunks)
}

/// Notes a line's ids for writing back, then restores them into `reply`
/// (one encoded message).
pub fn restore_ids(line: &[u8], reply: Vec<u8>) -> Vec<u8> {
    crate::server::fuzzing_restore_ids(line, reply)
}

/// The shipped legacy-era cassette, parsed once: what the matching and
/// miss-report targets ask.
pub fn shipped_cassette() -> &'static crate::cassette::Cassette {
    static CASSETTE: std::sync::OnceLock<crate::cassette::Cassette> = std::sync::OnceLock::new();
    CASSETTE.get_or_init(|| {
        crate::cassette::parse(
            std::path::Path::new("demo-legacy.json"),
            include_str!("../cassettes/demo-legacy.json"),
        )
        .expect("the shipped cassette loads")
    })
}
