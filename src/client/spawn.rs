//! Starting a stdio server: its stdin and stdout are ours to talk on, its
//! stderr passes through to ours (where its logs belong), and it runs in
//! `dir` when one is given (where a recording was made).

use std::path::Path;
use std::process::{Command, Stdio};

use super::LiveError;

/// How every server is started.
fn command(command: &[String], dir: Option<&Path>) -> Result<(String, Command), LiveError> {
    let (program, args) = command.split_first().ok_or(LiveError::NoCommand)?;
    let mut child = Command::new(program);
    child
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit());
    if let Some(dir) = dir {
        child.current_dir(dir);
    }
    Ok((program.clone(), child))
}

/// Starts `command` (program, then arguments) in `dir` (default: ours),
/// with piped stdin and stdout.
pub fn spawn(command: &[String], dir: Option<&Path>) -> Result<std::process::Child, LiveError> {
    let (program, mut child) = self::command(command, dir)?;
    child
        .spawn()
        .map_err(|source| LiveError::Spawn { program, source })
}

/// [`spawn`] for tokio: the child is killed if it is dropped while
/// running.
pub fn spawn_async(
    command: &[String],
    dir: Option<&Path>,
) -> Result<tokio::process::Child, LiveError> {
    let (program, child) = self::command(command, dir)?;
    tokio::process::Command::from(child)
        .kill_on_drop(true)
        .spawn()
        .map_err(|source| LiveError::Spawn { program, source })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_program_is_named_with_the_os_reason() {
        let error = spawn(&["/nonexistent/mcpcassette-server".into()], None).unwrap_err();
        let text = crate::error_chain::chain(&error);
        assert!(
            text.starts_with("cannot start server `/nonexistent/mcpcassette-server`: "),
            "{text}"
        );
        assert!(std::error::Error::source(&error).is_some());
        assert!(matches!(spawn(&[], None), Err(LiveError::NoCommand)));
    }

    #[test]
    fn the_server_runs_in_the_directory_given() {
        let dir = tempfile::tempdir().unwrap();
        let child = spawn(&["pwd".into()], Some(dir.path())).unwrap();
        let output = child.wait_with_output().unwrap();
        let printed = String::from_utf8(output.stdout).unwrap();
        assert_eq!(
            Path::new(printed.trim()).canonicalize().unwrap(),
            dir.path().canonicalize().unwrap()
        );
    }
}
