//! The project file, `mcpcassette.toml`: settings that reach `run` even when
//! the client that starts it passes no environment (the MCP SDKs start
//! stdio servers with only HOME, LOGNAME, PATH, SHELL, TERM and USER).
//!
//! It is found by walking up from the working directory, then, if none is
//! found there, from the cassette's directory. Every key is optional:
//!
//! ```toml
//! mode = "none"                  # the record mode (below --mode and MCPCASSETTE_MODE)
//! cassette_dir = "tests/cassettes"  # relative --cassette paths start here
//!
//! [replay]                       # defaults for what --strategy etc. override
//! strategy = "keyed"
//! on_exhausted = "repeat-last"
//! ignore = ["/params/arguments/timestamp"]
//! fail_on_unused = true
//! ```

use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::{Mode, ModeError};
use crate::cassette::{OnExhausted, Strategy};
use crate::json::Selector;

/// The file's name.
pub(super) const FILE_NAME: &str = "mcpcassette.toml";

/// What the project file says.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProjectConfig {
    /// The record mode.
    #[serde(default, deserialize_with = "mode_name")]
    pub mode: Option<Mode>,
    /// Where relative `--cassette` paths start, relative to the file.
    #[serde(default)]
    pub cassette_dir: Option<PathBuf>,
    /// Defaults for the matching options.
    #[serde(default)]
    pub replay: ReplayDefaults,
}

/// Defaults for `run`'s matching options; the command line overrides each.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReplayDefaults {
    /// `--strategy`.
    #[serde(default)]
    pub strategy: Option<Strategy>,
    /// `--on-exhausted`.
    #[serde(default)]
    pub on_exhausted: Option<OnExhausted>,
    /// `--ignore`, added to those on the command line.
    #[serde(default)]
    pub ignore: Vec<Selector>,
    /// `--fail-on-unused`.
    #[serde(default)]
    pub fail_on_unused: Option<bool>,
}

/// A project file and where it was found.
#[derive(Debug, Clone, PartialEq)]
pub struct Project {
    /// The file.
    pub path: PathBuf,
    /// What it says.
    pub config: ProjectConfig,
    /// The 1-based line of `mode`, if set.
    mode_line: Option<usize>,
}

impl Project {
    /// The first project file in `start` or a directory above it.
    ///
    /// # Errors
    ///
    /// [`ModeError::ReadProject`] or [`ModeError::BadProject`] for a file
    /// that is found but cannot be read or parsed.
    pub fn find(start: &Path) -> Result<Option<Project>, ModeError> {
        for dir in start.ancestors() {
            let path = dir.join(FILE_NAME);
            if path.is_file() {
                return Project::load(&path).map(Some);
            }
        }
        Ok(None)
    }

    /// Reads and parses the project file at `path`.
    ///
    /// # Errors
    ///
    /// As for [`Project::find`].
    pub fn load(path: &Path) -> Result<Project, ModeError> {
        let text = std::fs::read_to_string(path).map_err(|source| ModeError::ReadProject {
            path: path.to_owned(),
            source,
        })?;
        Project::parse(path, &text)
    }

    /// Parses `text`, read from `path` (named in errors).
    ///
    /// # Errors
    ///
    /// [`ModeError::BadProject`], naming the line and column.
    pub fn parse(path: &Path, text: &str) -> Result<Project, ModeError> {
        let config: ProjectConfig = toml::from_str(text).map_err(|error| {
            let (line, column) = error
                .span()
                .map_or((1, 1), |span| line_and_column(text, span.start));
            let message = error.message().trim();
            // Name the key when the error is about its value.
            let key = text
                .lines()
                .nth(line - 1)
                .and_then(|l| l.split_once('='))
                .map(|(key, _)| key.trim())
                .filter(|key| !key.is_empty() && !message.contains(key));
            ModeError::BadProject {
                path: path.to_owned(),
                line,
                column,
                message: match key {
                    Some(key) => format!("`{key}`: {message}"),
                    None => message.to_owned(),
                },
            }
        })?;
        let mode_line = config.mode.and_then(|_| top_level_key_line(text, "mode"));
        Ok(Project {
            path: path.to_owned(),
            config,
            mode_line,
        })
    }

    /// The mode the file sets, if any.
    pub fn mode(&self) -> Option<Mode> {
        self.config.mode
    }

    /// `path:line` of the `mode` setting, for saying where a mode came from.
    pub fn mode_location(&self) -> String {
        match self.mode_line {
            Some(line) => format!("{}:{line}", self.path.display()),
            None => self.path.display().to_string(),
        }
    }

    /// Where a relative `--cassette` path starts: `cassette_dir`, relative
    /// to the file's directory.
    pub fn cassette_dir(&self) -> Option<PathBuf> {
        let dir = self.config.cassette_dir.as_ref()?;
        let base = self.path.parent().unwrap_or(Path::new("."));
        Some(base.join(dir))
    }
}

/// A mode given by name, with the names in the error.
fn mode_name<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<Option<Mode>, D::Error> {
    let name = String::deserialize(deserializer)?;
    Mode::parse(&name).map(Some).ok_or_else(|| {
        serde::de::Error::custom(format!(
            "unknown mode `{name}`, expected one of: {}",
            Mode::NAMES.join(", ")
        ))
    })
}

/// The 1-based line that sets `key` before any table header.
fn top_level_key_line(text: &str, key: &str) -> Option<usize> {
    for (n, line) in text.lines().enumerate() {
        let line = line.trim_start();
        if line.starts_with('[') {
            return None;
        }
        if let Some(rest) = line.strip_prefix(key)
            && rest.trim_start().starts_with('=')
        {
            return Some(n + 1);
        }
    }
    None
}

/// 1-based line and column of byte `offset` in `text`.
fn line_and_column(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, column)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Project, ModeError> {
        Project::parse(Path::new("/p/mcpcassette.toml"), text)
    }

    #[test]
    fn every_key_is_read() {
        let project = parse(
            "# a comment\nmode = \"none\"\ncassette_dir = \"tests/cassettes\"\n[replay]\nstrategy = \"sequential\"\non_exhausted = \"repeat-last\"\nignore = [\"/params/arguments/at\"]\nfail_on_unused = true\n",
        )
        .unwrap();
        assert_eq!(project.mode(), Some(Mode::None));
        assert_eq!(project.mode_location(), "/p/mcpcassette.toml:2");
        assert_eq!(
            project.cassette_dir(),
            Some(PathBuf::from("/p/tests/cassettes"))
        );
        let replay = &project.config.replay;
        assert_eq!(replay.strategy, Some(Strategy::Sequential));
        assert_eq!(replay.on_exhausted, Some(OnExhausted::RepeatLast));
        assert_eq!(replay.ignore.len(), 1);
        assert_eq!(replay.fail_on_unused, Some(true));
    }

    #[test]
    fn an_empty_file_sets_nothing() {
        let project = parse("").unwrap();
        assert_eq!(project.mode(), None);
        assert_eq!(project.cassette_dir(), None);
        assert_eq!(project.config.replay, ReplayDefaults::default());
    }

    #[test]
    fn errors_name_the_file_line_and_column() {
        let table = [
            ("mode = \"sometimes\"\n", 1, "sometimes"),
            ("\n\nmode = 3\n", 3, "mode"),
            ("mode = \"none\"\nmoed = \"all\"\n", 2, "moed"),
            ("[replay]\nstrategy = \"random\"\n", 2, "random"),
            ("[replay]\nignore = [\"no-slash\"]\n", 2, "no-slash"),
            ("mode = \"none\n", 1, ""),
        ];
        for (text, line, mentions) in table {
            let error = parse(text).unwrap_err();
            let shown = error.to_string();
            assert!(
                shown.starts_with(&format!("/p/mcpcassette.toml:{line}:")),
                "{text:?}: {shown}"
            );
            assert!(shown.contains(mentions), "{text:?}: {shown}");
        }
    }

    #[test]
    fn the_nearest_file_up_the_tree_wins() {
        let root = tempfile::tempdir().unwrap();
        let inner = root.path().join("a/b/c");
        std::fs::create_dir_all(&inner).unwrap();
        assert_eq!(Project::find(&inner).unwrap(), None);
        std::fs::write(root.path().join(FILE_NAME), "mode = \"all\"\n").unwrap();
        std::fs::write(root.path().join("a/b").join(FILE_NAME), "mode = \"none\"\n").unwrap();
        let found = Project::find(&inner).unwrap().unwrap();
        assert_eq!(found.path, root.path().join("a/b").join(FILE_NAME));
        assert_eq!(found.mode(), Some(Mode::None));
        std::fs::write(root.path().join("a/b").join(FILE_NAME), "mode = [").unwrap();
        assert!(matches!(
            Project::find(&inner),
            Err(ModeError::BadProject { line: 1, .. })
        ));
    }
}
