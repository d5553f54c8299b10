//! Record modes, VCR-style, and the CI detection that picks one.

use std::fmt;

use serde::Serialize;

/// What `mcpcassette run` does with the cassette and the server.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Mode {
    /// `none` in CI, `once` elsewhere.
    Auto,
    /// Record when the cassette is missing, else replay.
    Once,
    /// Replay what matches; forward misses to the server and append them.
    NewEpisodes,
    /// Record afresh, replacing the cassette.
    All,
    /// Replay only; never start the server.
    None,
    /// Proxy to the server without recording.
    Passthrough,
}

impl Mode {
    /// Every mode, as written on the command line.
    pub const NAMES: [&str; 6] = ["auto", "once", "new-episodes", "all", "none", "passthrough"];

    /// Parses a mode name.
    pub fn parse(name: &str) -> Option<Mode> {
        Some(match name {
            "auto" => Mode::Auto,
            "once" => Mode::Once,
            "new-episodes" => Mode::NewEpisodes,
            "all" => Mode::All,
            "none" => Mode::None,
            "passthrough" => Mode::Passthrough,
            _ => return None,
        })
    }

    /// Resolves `auto`: `none` when CI is detected, `once` otherwise.
    /// Returns the mode and why it was chosen.
    pub fn resolve(self, env: impl Fn(&str) -> Option<String>) -> (Mode, &'static str) {
        match self {
            Mode::Auto if ci_detected(env) => (Mode::None, "auto: CI detected"),
            Mode::Auto => (Mode::Once, "auto: not in CI"),
            mode => (mode, "as asked"),
        }
    }
}

impl fmt::Display for Mode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = match self {
            Mode::Auto => "auto",
            Mode::Once => "once",
            Mode::NewEpisodes => "new-episodes",
            Mode::All => "all",
            Mode::None => "none",
            Mode::Passthrough => "passthrough",
        };
        f.write_str(name)
    }
}

/// Whether we run in CI: `CI` set to anything but empty, `0` or `false`
/// (any case), or `TF_BUILD` set (Azure Pipelines). `env` looks a
/// variable up, so tests can pass a table.
pub fn ci_detected(env: impl Fn(&str) -> Option<String>) -> bool {
    let ci = env("CI").is_some_and(|v| {
        let v = v.trim();
        !(v.is_empty() || v == "0" || v.eq_ignore_ascii_case("false"))
    });
    ci || env("TF_BUILD").is_some()
}

/// Looks variables up in this process's environment.
pub fn process_env(name: &str) -> Option<String> {
    std::env::var(name).ok()
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Looks variables up in a table instead of the environment.
    pub(crate) fn env(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let pairs: Vec<(String, String)> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |name| {
            pairs
                .iter()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.clone())
        }
    }

    #[test]
    fn ci_detection_table() {
        let table: [(&[(&str, &str)], bool); 12] = [
            (&[], false),
            (&[("CI", "")], false),
            (&[("CI", "0")], false),
            (&[("CI", "false")], false),
            (&[("CI", "FALSE")], false),
            (&[("CI", " false ")], false),
            (&[("CI", "true")], true),
            (&[("CI", "1")], true),
            (&[("CI", "yes")], true),
            (&[("CI", "woodpecker")], true),
            (&[("TF_BUILD", "True")], true),
            (&[("CI", "false"), ("TF_BUILD", "")], true),
        ];
        for (vars, expected) in table {
            assert_eq!(ci_detected(env(vars)), expected, "{vars:?}");
        }
    }

    #[test]
    fn auto_resolves_by_ci_and_other_modes_stay() {
        assert_eq!(
            Mode::Auto.resolve(env(&[("CI", "true")])),
            (Mode::None, "auto: CI detected")
        );
        assert_eq!(
            Mode::Auto.resolve(env(&[])),
            (Mode::Once, "auto: not in CI")
        );
        assert_eq!(Mode::All.resolve(env(&[("CI", "true")])).0, Mode::All);
    }

    #[test]
    fn names_parse_and_print_back() {
        for name in Mode::NAMES {
            assert_eq!(Mode::parse(name).unwrap().to_string(), name);
        }
        assert_eq!(Mode::parse("record"), None);
    }
}
