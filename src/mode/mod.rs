//! Record modes, VCR-style, and where `run` gets one: the command line,
//! its environment, the project file, its ancestors' environment, or CI
//! detection (see [`Sources::resolve`]); and what `run` then does with the
//! cassette ([`RunPlan`]).

pub mod ancestors;
mod plan;
mod project;

use std::fmt;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

pub(crate) use ancestors::Ancestor;
pub use plan::{Action, Decision, MatchOptions, Refusal, RunPlan, RunRequest, find_project};
pub use project::Project;

/// The variable that sets the mode.
pub(crate) const MODE_VAR: &str = "MCPCASSETTE_MODE";

/// Errors of finding a mode.
#[derive(Debug, thiserror::Error)]
pub enum ModeError {
    /// The project file exists but cannot be read.
    #[error("cannot read {}", path.display())]
    ReadProject {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The project file is not valid.
    #[error("{}:{line}:{column}: {message}", path.display())]
    BadProject {
        /// The file.
        path: PathBuf,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// What is wrong.
        message: String,
    },
    /// `MCPCASSETTE_MODE` names no mode.
    #[error("{MODE_VAR}={value} ({place}) is not a mode; expected one of: {}", Mode::NAMES.join(", "))]
    BadVar {
        /// The value.
        value: String,
        /// Whose environment it is in.
        place: String,
    },
}

/// What `mcpcassette run` does with the cassette and the server.
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
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

/// The variables [`ci_detected`] reads.
pub(crate) const CI_VARS: [&str; 2] = ["CI", "TF_BUILD"];

/// Everything a mode can come from, strongest first: `--mode`, this
/// process's `MCPCASSETTE_MODE`, the nearest ancestor's `MCPCASSETTE_MODE`
/// (the same setting, lost when a client stripped the environment), the
/// project file's `mode`, then `auto`. `auto` asks [`ci_detected`] of this
/// process's environment when it has `CI` or `TF_BUILD`, else of the
/// nearest ancestor that has one.
pub(crate) struct Sources<'a> {
    /// `--mode`.
    pub(crate) flag: Option<Mode>,
    /// Looks a variable up in this process's environment.
    pub(crate) env: &'a dyn Fn(&str) -> Option<String>,
    /// The project file, if one was found.
    pub(crate) project: Option<&'a Project>,
    /// The ancestors, nearest first.
    pub(crate) ancestors: &'a [Ancestor],
}

impl Sources<'_> {
    /// The mode, and where it came from (`--mode`, `MCPCASSETTE_MODE`,
    /// `mcpcassette.toml:3`, `auto: CI detected (CI of process 41 (node))`).
    ///
    /// # Errors
    ///
    /// [`ModeError::BadVar`] for an `MCPCASSETTE_MODE` that names no mode.
    pub(crate) fn resolve(&self) -> Result<(Mode, String), ModeError> {
        let (asked, from) = self.asked()?;
        if asked != Mode::Auto {
            return Ok((asked, format!("from {from}")));
        }
        let (ci, whose) = self.ci();
        let how = match (ci, whose) {
            (true, Some(whose)) => format!("auto: CI detected in the environment of {whose}"),
            (true, None) => "auto: CI detected".to_owned(),
            (false, _) => "auto: not in CI".to_owned(),
        };
        Ok((if ci { Mode::None } else { Mode::Once }, how))
    }

    /// The mode asked for before `auto` is resolved, and where it was
    /// asked.
    fn asked(&self) -> Result<(Mode, String), ModeError> {
        if let Some(mode) = self.flag {
            return Ok((mode, "--mode".to_owned()));
        }
        // An empty value is as good as unset, as clap would have it.
        let set = |value: &String| !value.trim().is_empty();
        if let Some(value) = (self.env)(MODE_VAR).filter(set) {
            let mode = parse_var(&value, "this process's environment")?;
            return Ok((mode, MODE_VAR.to_owned()));
        }
        for ancestor in self.ancestors {
            if let Some(value) = ancestor.var(MODE_VAR).filter(set) {
                let place = format!("in the environment of {}", ancestor.describe());
                let mode = parse_var(&value, &place)?;
                return Ok((mode, format!("{MODE_VAR} {place}")));
            }
        }
        if let Some(project) = self.project
            && let Some(mode) = project.mode()
        {
            return Ok((mode, project.mode_location()));
        }
        Ok((Mode::Auto, "the default".to_owned()))
    }

    /// Whether CI is detected, and in whose environment when not ours.
    fn ci(&self) -> (bool, Option<String>) {
        if CI_VARS.iter().any(|name| (self.env)(name).is_some()) {
            return (ci_detected(self.env), None);
        }
        for ancestor in self.ancestors {
            if CI_VARS.iter().any(|name| ancestor.var(name).is_some()) {
                return (
                    ci_detected(|name| ancestor.var(name)),
                    Some(ancestor.describe()),
                );
            }
        }
        (false, None)
    }
}

fn parse_var(value: &str, place: &str) -> Result<Mode, ModeError> {
    Mode::parse(value.trim()).ok_or_else(|| ModeError::BadVar {
        value: value.to_owned(),
        place: place.to_owned(),
    })
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

    fn ancestor(pid: u32, vars: &[(&str, &str)]) -> Ancestor {
        Ancestor {
            pid,
            name: "node".to_owned(),
            vars: vars
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        }
    }

    fn resolve(
        flag: Option<Mode>,
        own: &[(&str, &str)],
        project: Option<&str>,
        ancestors: &[Ancestor],
    ) -> Result<(Mode, String), ModeError> {
        let env = env(own);
        let project = project
            .map(|text| Project::parse(std::path::Path::new("/p/mcpcassette.toml"), text).unwrap());
        Sources {
            flag,
            env: &env,
            project: project.as_ref(),
            ancestors,
        }
        .resolve()
    }

    #[test]
    fn precedence_flag_env_ancestors_project_auto() {
        let mode_all = [ancestor(7, &[("MCPCASSETTE_MODE", "all"), ("CI", "true")])];
        let project = Some("\nmode = \"passthrough\"\n");
        let own = [("MCPCASSETTE_MODE", "new-episodes")];
        type Row<'a> = (
            Option<Mode>,
            &'a [(&'a str, &'a str)],
            Option<&'a str>,
            &'a [Ancestor],
            Mode,
            &'a str,
        );
        let table: [Row; 9] = [
            (
                Some(Mode::Once),
                &own,
                project,
                &mode_all,
                Mode::Once,
                "from --mode",
            ),
            (
                None,
                &own,
                project,
                &mode_all,
                Mode::NewEpisodes,
                "from MCPCASSETTE_MODE",
            ),
            (
                None,
                &[],
                project,
                &mode_all,
                Mode::All,
                "from MCPCASSETTE_MODE in the environment of process 7 (node)",
            ),
            (
                None,
                &[("CI", "true")],
                project,
                &[],
                Mode::Passthrough,
                "from /p/mcpcassette.toml:2",
            ),
            (
                None,
                &[],
                Some("mode = \"auto\""),
                &[ancestor(3, &[("CI", "1")])],
                Mode::None,
                "auto: CI detected in the environment of process 3 (node)",
            ),
            (
                None,
                &[("CI", "true")],
                None,
                &[],
                Mode::None,
                "auto: CI detected",
            ),
            // Our own CI=false decides over an ancestor's CI=true.
            (
                None,
                &[("CI", "false")],
                None,
                &[ancestor(3, &[("CI", "1")])],
                Mode::Once,
                "auto: not in CI",
            ),
            // The nearest ancestor with a CI variable decides.
            (
                None,
                &[],
                None,
                &[
                    ancestor(3, &[]),
                    ancestor(2, &[("CI", "0")]),
                    ancestor(1, &[("CI", "1")]),
                ],
                Mode::Once,
                "auto: not in CI",
            ),
            (
                None,
                &[],
                None,
                &[ancestor(3, &[]), ancestor(2, &[("TF_BUILD", "True")])],
                Mode::None,
                "auto: CI detected in the environment of process 2 (node)",
            ),
        ];
        for (flag, own, project, ancestors, mode, why) in table {
            let got = resolve(flag, own, project, ancestors).unwrap();
            assert_eq!(
                got,
                (mode, why.to_owned()),
                "{flag:?} {own:?} {project:?} {ancestors:?}"
            );
        }
    }

    #[test]
    fn an_empty_mode_variable_is_unset() {
        let got = resolve(
            None,
            &[("MCPCASSETTE_MODE", ""), ("CI", "1")],
            None,
            &[ancestor(4, &[("MCPCASSETTE_MODE", " ")])],
        );
        assert_eq!(got.unwrap(), (Mode::None, "auto: CI detected".to_owned()));
    }

    #[test]
    fn a_bad_mode_variable_says_whose_it_is() {
        let error = resolve(None, &[("MCPCASSETTE_MODE", "sometimes")], None, &[]).unwrap_err();
        assert!(
            error
                .to_string()
                .contains("MCPCASSETTE_MODE=sometimes (this process's environment) is not a mode"),
            "{error}"
        );
        let error = resolve(
            None,
            &[],
            None,
            &[ancestor(9, &[("MCPCASSETTE_MODE", "x")])],
        )
        .unwrap_err();
        assert!(
            error
                .to_string()
                .contains("in the environment of process 9 (node)"),
            "{error}"
        );
    }

    #[test]
    fn names_parse_and_print_back() {
        for name in Mode::NAMES {
            assert_eq!(Mode::parse(name).unwrap().to_string(), name);
        }
        assert_eq!(Mode::parse("record"), None);
    }
}
