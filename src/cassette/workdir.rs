//! The working directory of a recorded stdio server, so that a relative
//! command (`venv/bin/python server.py`) can be run again from elsewhere.
//!
//! It is stored relative to the cassette's directory when the two share
//! more than the root (a checkout moved to another path, or CI's, still
//! finds it), else absolute; masked like the command either way.

use std::path::{Component, Path, PathBuf};

use super::Transport;
use crate::redact::{self, Redactor};

/// The transport of a stdio recording of `command` started in `cwd`, into
/// `cassette` (when there is one), masked by `redactor` (which knows the
/// environment's secrets, so `server "$MY_TOKEN"` is masked too).
pub fn stdio_transport(
    command: &[String],
    cwd: &Path,
    cassette: Option<&Path>,
    redactor: &Redactor,
) -> Transport {
    Transport::Stdio {
        command: redactor.mask_command(command),
        cwd: Some(redactor.mask_plain(&redact::mask_tokens(&recorded_cwd(cwd, cassette)))),
    }
}

/// `transport` masked again by `redactor`, as recording masks it now: a
/// cassette recorded by an older version may hold a server command or URL
/// with secrets that were not recognised then.
pub fn mask_transport(transport: &mut Transport, redactor: &Redactor) {
    match transport {
        Transport::Stdio { command, cwd } => {
            *command = redactor.mask_command(command);
            if let Some(cwd) = cwd {
                *cwd = redactor.mask_plain(cwd);
            }
        }
        Transport::StreamableHttp { url, .. } | Transport::HttpSse { url, .. } => {
            *url = redactor.mask_command(std::slice::from_ref(url)).concat();
        }
    }
}

/// `cwd` as stored in a cassette at `cassette`.
pub fn recorded_cwd(cwd: &Path, cassette: Option<&Path>) -> String {
    let cwd = normalize(cwd);
    let relative = cassette
        .and_then(|path| normalize(&cwd.join(path)).parent().map(Path::to_owned))
        .and_then(|dir| relative_to(&cwd, &dir));
    relative.unwrap_or(cwd).display().to_string()
}

/// Where a server recorded with working directory `recorded` into the
/// cassette at `cassette` ran, seen from `cwd`.
pub(crate) fn resolve_cwd(recorded: &str, cassette: &Path, cwd: &Path) -> PathBuf {
    let recorded = Path::new(recorded);
    if recorded.is_absolute() {
        return recorded.to_owned();
    }
    let dir = normalize(&cwd.join(cassette))
        .parent()
        .map(Path::to_owned)
        .unwrap_or_else(|| cwd.to_owned());
    normalize(&dir.join(recorded))
}

/// Where the stdio server of the cassette at `cassette` was recorded (its
/// stored working directory `recorded`), seen from `cwd`, when that
/// directory exists here: the directory, and `command` made to run from
/// it ([`command_in`]).
pub(crate) fn recorded_place(
    command: &[String],
    recorded: Option<&str>,
    cassette: &Path,
    cwd: &Path,
) -> Option<(Vec<String>, PathBuf)> {
    let dir = resolve_cwd(recorded?, cassette, cwd);
    dir.is_dir().then(|| (command_in(command, &dir), dir))
}

/// `command` made to run from `dir`: a relative program path with a
/// directory in it (`venv/bin/python`, `./server`) is taken from `dir`;
/// bare names are still looked up in PATH. The rest of the arguments are
/// resolved by the server itself, which is started in `dir`.
pub(super) fn command_in(command: &[String], dir: &Path) -> Vec<String> {
    let mut command = command.to_vec();
    if let Some(program) = command.first_mut() {
        let path = Path::new(program.as_str());
        if path.is_relative() && path.components().count() > 1 || program.starts_with("./") {
            *program = normalize(&dir.join(path)).display().to_string();
        }
    }
    command
}

/// Whether `command` depends on the directory it runs in: a relative
/// program path, or an argument naming an existing relative file.
pub(crate) fn is_relative(command: &[String]) -> bool {
    let Some((program, args)) = command.split_first() else {
        return false;
    };
    let program = Path::new(program);
    (program.is_relative() && program.components().count() > 1)
        || args.iter().any(|arg| {
            !arg.starts_with('-')
                && Path::new(arg).is_relative()
                && Path::new(arg).extension().is_some()
        })
}

/// `path` without `.` and with `..` applied, lexically.
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() {
                    out.push("..");
                }
            }
            other => out.push(other),
        }
    }
    if out.as_os_str().is_empty() {
        out.push(".");
    }
    out
}

/// `target` relative to `base` (both absolute and normal), or `None` when
/// they share only the root.
fn relative_to(target: &Path, base: &Path) -> Option<PathBuf> {
    let target: Vec<Component> = target.components().collect();
    let base: Vec<Component> = base.components().collect();
    let common = target.iter().zip(&base).take_while(|(a, b)| a == b).count();
    if common <= 1 {
        return None;
    }
    let mut relative = PathBuf::new();
    for _ in common..base.len() {
        relative.push("..");
    }
    for component in &target[common..] {
        relative.push(component);
    }
    if relative.as_os_str().is_empty() {
        relative.push(".");
    }
    Some(relative)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stored_relative_to_the_cassette() {
        let cwd = Path::new("/home/u/proj");
        let table = [
            (Some("tests/cassettes/a.json"), "../.."),
            (Some("a.json"), "."),
            (Some("/home/u/proj/sub/../x/a.json"), "../"),
            (Some("/tmp/a.json"), "/home/u/proj"),
            (None, "/home/u/proj"),
        ];
        for (cassette, expected) in table {
            let stored = recorded_cwd(cwd, cassette.map(Path::new));
            assert_eq!(
                stored.trim_end_matches('/'),
                expected.trim_end_matches('/'),
                "{cassette:?}"
            );
            // And it resolves back, from anywhere.
            if let Some(cassette) = cassette {
                let absolute = cwd.join(cassette);
                assert_eq!(
                    resolve_cwd(&stored, &absolute, Path::new("/elsewhere")),
                    cwd
                );
            }
        }
    }

    #[test]
    fn a_moved_checkout_still_resolves() {
        let stored = recorded_cwd(Path::new("/home/u/proj"), Some(Path::new("t/a.json")));
        assert_eq!(
            resolve_cwd(&stored, Path::new("t/a.json"), Path::new("/ci/build/proj")),
            Path::new("/ci/build/proj")
        );
    }

    #[test]
    fn relative_programs_are_taken_from_the_directory() {
        let dir = Path::new("/p");
        let words = |w: &[&str]| w.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(
            command_in(&words(&["venv/bin/python", "server.py"]), dir),
            words(&["/p/venv/bin/python", "server.py"])
        );
        assert_eq!(command_in(&words(&["./srv"]), dir), words(&["/p/srv"]));
        assert_eq!(
            command_in(&words(&["node", "s.js"]), dir),
            words(&["node", "s.js"])
        );
        assert_eq!(command_in(&words(&["/bin/x"]), dir), words(&["/bin/x"]));
        assert!(is_relative(&words(&["venv/bin/python", "-m", "x"])));
        assert!(is_relative(&words(&["node", "server.js"])));
        assert!(!is_relative(&words(&[
            "npx",
            "-y",
            "@modelcontextprotocol/server-everything"
        ])));
        assert!(!is_relative(&words(&["/usr/bin/python3", "/srv/s.py"])));
    }
}
