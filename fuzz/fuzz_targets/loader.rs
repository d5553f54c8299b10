//! The cassette and fixture loaders, and `check`: one loader decides for
//! both, so a file replay loads is one `check` reads, and a file replay
//! refuses is one `check` reports an error for.
#![no_main]

use std::path::Path;

use libfuzzer_sys::fuzz_target;
use mcpcassette::check::{self, CheckConfig, Severity};
use mcpcassette::{cassette, fixture};

/// Findings that say `check` could not read the file at all: truncated,
/// conflict markers, not JSON, bad format version (MC001–MC004). (MC005
/// also covers what a loaded cassette gets wrong, such as an unknown
/// protocol version.)
fn unreadable(report: &check::FileReport) -> bool {
    report.findings.iter().any(|f| {
        f.severity == Severity::Error
            && matches!(f.code.as_str(), "MC001" | "MC002" | "MC003" | "MC004")
    })
}

fuzz_target!(|data: &[u8]| {
    let path = Path::new("fuzz.json");
    let loaded = cassette::parse_bytes(path, data);
    let report = check::check_bytes(path, data, &CheckConfig::default());
    let is_fixture = std::str::from_utf8(data)
        .ok()
        .and_then(|t| serde_json::from_str::<serde_json::Value>(t).ok())
        .is_some_and(|v| fixture::is_fixture(&v));
    if is_fixture {
        if let Ok(text) = std::str::from_utf8(data) {
            let _ = fixture::parse(path, text);
        }
        return;
    }
    match &loaded {
        Ok(cassette) => {
            assert!(!unreadable(&report), "replay loads what check cannot read: {:?}", report.findings);
            // What loads saves and loads again, the same.
            let text = cassette::to_text(cassette);
            let again = cassette::parse(path, &text).expect("a saved cassette loads");
            assert_eq!(&again, cassette);
        }
        Err(e) => {
            assert!(report.has_errors(), "check passes what replay refuses ({e})");
            let message = e.to_string();
            assert!(message.starts_with("fuzz.json"), "{message}");
        }
    }
});
