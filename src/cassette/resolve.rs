//! The rules a replay runs with: the cassette's own, or those of a
//! `--rules` file, with the command line's overrides, checked.

use std::path::{Path, PathBuf};

use super::rules::{RuleOverrides, Rules, RulesError};

/// Why the rules to run with could not be had.
#[derive(Debug, thiserror::Error)]
pub enum ResolveError {
    /// The rules file cannot be read.
    #[error("cannot read {}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The rules file is not rules.
    #[error("{}: not valid rules", path.display())]
    Parse {
        /// The file.
        path: PathBuf,
        /// Where and why.
        source: serde_json::Error,
    },
    /// The rules, with the overrides, do not hold together.
    #[error("{}invalid rules", path.as_ref().map(|p| format!("{}: ", p.display())).unwrap_or_default())]
    Invalid {
        /// The rules file, when they came from one.
        path: Option<PathBuf>,
        /// What is wrong.
        source: RulesError,
    },
}

impl Rules {
    /// `stored` (a cassette's rules), or the rules in `file` instead, with
    /// `overrides` applied, validated.
    pub fn resolve(
        stored: &Rules,
        file: Option<&Path>,
        overrides: &RuleOverrides,
    ) -> Result<Rules, ResolveError> {
        let rules = match file {
            Some(path) => {
                let text = std::fs::read_to_string(path).map_err(|source| ResolveError::Read {
                    path: path.to_owned(),
                    source,
                })?;
                serde_json::from_str(&text).map_err(|source| ResolveError::Parse {
                    path: path.to_owned(),
                    source,
                })?
            }
            None => stored.clone(),
        };
        let rules = rules.with_overrides(overrides);
        rules.validate().map_err(|source| ResolveError::Invalid {
            path: file.map(Path::to_owned),
            source,
        })?;
        Ok(rules)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cassette::Strategy;

    #[test]
    fn a_rules_file_replaces_the_stored_rules_and_overrides_apply_last() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("rules.json");
        std::fs::write(&path, r#"{"strategy": "keyed"}"#).unwrap();
        let overrides = RuleOverrides {
            on_exhausted: Some(crate::cassette::OnExhausted::RepeatLast),
            ..RuleOverrides::default()
        };
        let rules = Rules::resolve(&Rules::default(), Some(&path), &overrides).unwrap();
        assert_eq!(rules.strategy, Strategy::Keyed);
        assert_eq!(rules.on_exhausted, crate::cassette::OnExhausted::RepeatLast);
    }

    #[test]
    fn each_failure_names_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("missing.json");
        let error = Rules::resolve(&Rules::default(), Some(&missing), &RuleOverrides::default())
            .unwrap_err();
        let error = crate::error_chain::chain(&error);
        assert!(
            error.starts_with("cannot read ") && error.contains("missing.json"),
            "{error}"
        );

        let bad = dir.path().join("bad.json");
        std::fs::write(&bad, r#"{"strategy": 3}"#).unwrap();
        let error =
            Rules::resolve(&Rules::default(), Some(&bad), &RuleOverrides::default()).unwrap_err();
        let error = crate::error_chain::chain(&error);
        assert!(error.contains("bad.json: not valid rules: "), "{error}");

        let invalid = dir.path().join("invalid.json");
        std::fs::write(&invalid, r#"{"cases": [{"method": "ping"}]}"#).unwrap();
        let error = Rules::resolve(&Rules::default(), Some(&invalid), &RuleOverrides::default())
            .unwrap_err();
        let error = crate::error_chain::chain(&error);
        assert!(
            error.contains("invalid.json: invalid rules: /cases/0: "),
            "{error}"
        );
    }
}
