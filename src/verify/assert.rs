//! Drift checks from Rust tests: the same verification and the same report
//! text as `mcpcassette verify`, as a panic.

use super::render::{self, RenderOptions};
use super::{VerifyConfig, verify};

/// Verifies as `config` says and panics with the drift report (plain text)
/// when the live server no longer answers as recorded. Pending cassettes
/// are written as `MCPCASSETTE_UPDATE` says, as with `verify`.
#[track_caller]
pub fn assert_verified(config: &VerifyConfig) {
    let verification = match verify(config) {
        Ok(verification) => verification,
        Err(error) => panic!(
            "cannot verify {}: {}",
            config.cassette.display(),
            crate::error_chain::chain(&error)
        ),
    };
    if !verification.report.has_drift() {
        return;
    }
    let mut message = render::report(&verification.report, &RenderOptions::plain());
    if let Some(pending) = &verification.pending {
        message.push_str(&format!(
            "\nthe live version is pending in {}; review it with `mcpcassette review`\n",
            pending.display()
        ));
    }
    panic!("{message}");
}

/// Asserts that a live server still answers as a cassette recorded, next to
/// `insta::assert_json_snapshot!` in a test suite. The path is relative to
/// the calling crate's manifest directory; the server is the command
/// recorded in the cassette, or the one given.
///
/// ```no_run
/// mcpcassette::assert_cassette!("cassettes/demo-legacy.json");
/// mcpcassette::assert_cassette!("cassettes/demo-legacy.json", ["target/debug/examples/demo_server"]);
/// ```
#[macro_export]
macro_rules! assert_cassette {
    ($path:expr $(,)?) => {
        $crate::verify::assert_verified(&$crate::verify::VerifyConfig::new(
            ::std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join($path),
        ))
    };
    ($path:expr, [$($arg:expr),+ $(,)?] $(,)?) => {{
        let mut config = $crate::verify::VerifyConfig::new(
            ::std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join($path),
        );
        config.target = $crate::verify::Target::Command(vec![$(::std::string::String::from($arg)),+]);
        $crate::verify::assert_verified(&config)
    }};
}
