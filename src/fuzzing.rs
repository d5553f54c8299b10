//! Entry points for the fuzz targets in `fuzz/` into code that is not
//! public: built only under `cfg(fuzzing)` (cargo fuzz sets it), never
//! part of the library's surface.

use serde_json::Value;

/// Feeds `chunks` to the recorder's incremental SSE parser and reads each
/// event's data as the recorder does; returns the messages found.
pub fn sse_messages(chunks: &[&[u8]]) -> Vec<Value> {
    crate::record::fuzzing_sse(chunks)
}

/// Notes a line's ids for writing back, then restores them into `reply`
/// (one encoded message).
pub fn restore_ids(line: &[u8], reply: Vec<u8>) -> Vec<u8> {
    crate::replay::fuzzing_restore_ids(line, reply)
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
