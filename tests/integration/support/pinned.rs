//! Where the ignored interop tests find the pinned peers: paths named by
//! environment variables that `.ci/run` sets.

use std::path::PathBuf;

/// The path `variable` names, made absolute (not canonical: a venv's
/// `bin/python` is a symlink whose target would not see the venv), or a
/// panic saying how to get `what`, so a run without it fails rather than
/// passes vacuously.
pub fn required(variable: &str, what: &str) -> PathBuf {
    let Some(value) = std::env::var_os(variable) else {
        panic!(
            "{variable} is not set. This test needs {what}: run `bash .ci/run` (it installs \
             the pinned packages into .ci/work/ and sets {variable}), or set {variable} yourself"
        );
    };
    let path = std::path::absolute(PathBuf::from(value)).unwrap();
    assert!(
        path.exists(),
        "{variable}={} does not exist; it must name {what}",
        path.display()
    );
    path
}
