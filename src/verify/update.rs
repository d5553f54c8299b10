//! `MCPCASSETTE_UPDATE`: what `verify` does with drift it finds, with the
//! semantics insta gives `INSTA_UPDATE`, so the habit carries over.

use std::fmt;

use serde::Serialize;

/// The variable that sets the update mode.
pub(super) const UPDATE_VAR: &str = "MCPCASSETTE_UPDATE";

/// `MCPCASSETTE_UPDATE` holds something that is not an update mode.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{UPDATE_VAR}={:?} is not an update mode; use one of: {names}", .0, names = UpdateMode::NAMES.join(", "))]
pub struct UnknownUpdateMode(
    /// The value found.
    pub String,
);

/// What to do with a cassette whose live answers drifted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum UpdateMode {
    /// `new` outside CI, `no` in CI (the same CI rule as the record modes):
    /// CI must never leave files behind that nobody reviews.
    Auto,
    /// Write `CASSETTE.new` for review.
    New,
    /// Overwrite the accepted cassette directly.
    Always,
    /// Write nothing.
    No,
}

impl UpdateMode {
    /// Every mode, as written in `MCPCASSETTE_UPDATE`.
    pub const NAMES: [&str; 4] = ["auto", "new", "always", "no"];

    /// Parses a mode name.
    pub fn parse(name: &str) -> Option<UpdateMode> {
        Some(match name {
            "auto" => UpdateMode::Auto,
            "new" => UpdateMode::New,
            "always" => UpdateMode::Always,
            "no" => UpdateMode::No,
            _ => return None,
        })
    }

    /// From `MCPCASSETTE_UPDATE` (unset or empty: `Auto`). An unknown value
    /// is an error rather than a default, so a typo cannot silently turn
    /// updating off (or on).
    pub fn from_env(env: impl Fn(&str) -> Option<String>) -> Result<UpdateMode, UnknownUpdateMode> {
        let Some(value) = env(UPDATE_VAR) else {
            return Ok(UpdateMode::Auto);
        };
        let value = value.trim();
        if value.is_empty() {
            return Ok(UpdateMode::Auto);
        }
        UpdateMode::parse(value).ok_or_else(|| UnknownUpdateMode(value.to_owned()))
    }

    /// Resolves `Auto` with [`crate::ci_detected`]; also returns why,
    /// for the log.
    pub fn resolve(self, env: impl Fn(&str) -> Option<String>) -> (UpdateMode, &'static str) {
        match self {
            UpdateMode::Auto if crate::mode::ci_detected(env) => {
                (UpdateMode::No, "auto: CI detected")
            }
            UpdateMode::Auto => (UpdateMode::New, "auto: not in CI"),
            mode => (mode, "as asked"),
        }
    }
}

impl fmt::Display for UpdateMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            UpdateMode::Auto => "auto",
            UpdateMode::New => "new",
            UpdateMode::Always => "always",
            UpdateMode::No => "no",
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mode::tests::env;

    #[test]
    fn unset_or_empty_is_auto() {
        assert_eq!(UpdateMode::from_env(env(&[])), Ok(UpdateMode::Auto));
        assert_eq!(
            UpdateMode::from_env(env(&[("MCPCASSETTE_UPDATE", "")])),
            Ok(UpdateMode::Auto)
        );
        assert_eq!(
            UpdateMode::from_env(env(&[("MCPCASSETTE_UPDATE", "  ")])),
            Ok(UpdateMode::Auto)
        );
    }

    #[test]
    fn every_name_is_read_from_the_environment() {
        for name in UpdateMode::NAMES {
            let mode = UpdateMode::from_env(env(&[("MCPCASSETTE_UPDATE", name)])).unwrap();
            assert_eq!(mode.to_string(), name);
            assert_eq!(UpdateMode::parse(name), Some(mode));
        }
    }

    #[test]
    fn unknown_value_names_the_variable_and_the_choices() {
        let error = UpdateMode::from_env(env(&[("MCPCASSETTE_UPDATE", "yes")]))
            .unwrap_err()
            .to_string();
        assert!(error.contains("MCPCASSETTE_UPDATE"), "{error}");
        assert!(error.contains("\"yes\""), "{error}");
        assert!(error.contains("auto, new, always, no"), "{error}");
        // insta's `unseen` and `force` are not modes here.
        assert!(UpdateMode::parse("unseen").is_none());
        assert!(UpdateMode::parse("NEW").is_none());
    }

    #[test]
    fn auto_writes_pending_outside_ci_and_nothing_in_ci() {
        assert_eq!(
            UpdateMode::Auto.resolve(env(&[])),
            (UpdateMode::New, "auto: not in CI")
        );
        assert_eq!(
            UpdateMode::Auto.resolve(env(&[("CI", "false")])),
            (UpdateMode::New, "auto: not in CI")
        );
        assert_eq!(
            UpdateMode::Auto.resolve(env(&[("CI", "true")])),
            (UpdateMode::No, "auto: CI detected")
        );
        assert_eq!(
            UpdateMode::Auto.resolve(env(&[("TF_BUILD", "True")])),
            (UpdateMode::No, "auto: CI detected")
        );
    }

    #[test]
    fn explicit_modes_ignore_ci() {
        for mode in [UpdateMode::New, UpdateMode::Always, UpdateMode::No] {
            assert_eq!(mode.resolve(env(&[("CI", "1")])), (mode, "as asked"));
            assert_eq!(mode.resolve(env(&[])), (mode, "as asked"));
        }
    }

    #[test]
    fn serialises_in_snake_case() {
        assert_eq!(
            serde_json::to_string(&UpdateMode::Always).unwrap(),
            "\"always\""
        );
    }
}
