//! The environment of the processes above this one, for the few variables
//! that choose a mode. MCP clients (the TypeScript and Python SDKs, fastmcp,
//! the Inspector) start stdio servers with a reduced environment, so `CI`
//! and `MCPCASSETTE_MODE` set for the test run never reach `run`; the test
//! runner that started the client still has them.
//!
//! On Linux, `/proc/<pid>/environ` of the parent, its parent and so on (at
//! most [`MAX_DEPTH`] processes) is read, and only the [`WATCHED`] names
//! are kept: everything else there (secrets included) is dropped as it is
//! read, never stored or logged. Elsewhere, and for processes that cannot
//! be read (another user's), nothing is found.

use std::path::Path;

/// The only variables kept from an ancestor's environment.
pub const WATCHED: [&str; 3] = ["CI", "TF_BUILD", "MCPCASSETTE_MODE"];

/// How many processes up the chain are looked at.
pub const MAX_DEPTH: usize = 32;

/// An ancestor process and the watched variables it has.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ancestor {
    /// Its process id.
    pub pid: u32,
    /// Its name (`/proc/<pid>/comm`), for saying where a mode came from.
    pub name: String,
    /// The [`WATCHED`] variables it has, as `(name, value)`.
    pub vars: Vec<(String, String)>,
}

impl Ancestor {
    /// The value of a watched variable.
    pub fn var(&self, name: &str) -> Option<String> {
        self.vars
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.clone())
    }

    /// `process 1234 (node)`.
    pub fn describe(&self) -> String {
        format!("process {} ({})", self.pid, self.name)
    }
}

/// This process's ancestors, nearest first, with their watched variables.
pub fn ancestors() -> Vec<Ancestor> {
    ancestors_of(std::process::id(), Path::new("/proc"))
}

/// The ancestors of `pid` as `proc` (a procfs mount) shows them.
pub fn ancestors_of(pid: u32, proc: &Path) -> Vec<Ancestor> {
    let mut found = Vec::new();
    let mut current = pid;
    for _ in 0..MAX_DEPTH {
        let Some(parent) = parent_of(current, proc) else {
            break;
        };
        if parent == 0 || parent == current {
            break;
        }
        found.push(Ancestor {
            pid: parent,
            name: std::fs::read_to_string(proc.join(parent.to_string()).join("comm"))
                .map(|name| name.trim_end().to_owned())
                .unwrap_or_else(|_| "?".to_owned()),
            vars: watched_vars(parent, proc),
        });
        current = parent;
    }
    found
}

/// The parent's pid, from `/proc/<pid>/stat` (`pid (comm) state ppid …`;
/// the name may itself hold parentheses, so the last `)` ends it).
fn parent_of(pid: u32, proc: &Path) -> Option<u32> {
    let stat = std::fs::read_to_string(proc.join(pid.to_string()).join("stat")).ok()?;
    let after_name = &stat[stat.rfind(')')? + 1..];
    after_name.split_whitespace().nth(1)?.parse().ok()
}

/// The watched variables in `/proc/<pid>/environ`; the rest is dropped.
pub fn watched_vars(pid: u32, proc: &Path) -> Vec<(String, String)> {
    let Ok(environ) = std::fs::read(proc.join(pid.to_string()).join("environ")) else {
        return Vec::new();
    };
    parse_watched(&environ)
}

/// The watched variables of a NUL-separated `NAME=value` block.
fn parse_watched(environ: &[u8]) -> Vec<(String, String)> {
    environ
        .split(|&b| b == 0)
        .filter_map(|entry| {
            let equals = entry.iter().position(|&b| b == b'=')?;
            let name = std::str::from_utf8(&entry[..equals]).ok()?;
            WATCHED.contains(&name).then(|| {
                let value = String::from_utf8_lossy(&entry[equals + 1..]).into_owned();
                (name.to_owned(), value)
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_watched_names_are_kept() {
        let environ = b"HOME=/root\0CI=true\0GITHUB_TOKEN=ghp_secret\0MCPCASSETTE_MODE=none\0CIX=1\0TF_BUILD=\0\0";
        assert_eq!(
            parse_watched(environ),
            [
                ("CI".to_owned(), "true".to_owned()),
                ("MCPCASSETTE_MODE".to_owned(), "none".to_owned()),
                ("TF_BUILD".to_owned(), String::new()),
            ]
        );
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_child_sees_the_watched_variables_of_its_parent() {
        use std::io::Read;
        // A shell with CI set starts a child with an empty environment; the
        // child prints its ancestors as this function finds them.
        let mut child = std::process::Command::new("sh")
            .args(["-c", "env -i sh -c 'cat /proc/$$/stat; echo; sleep 5'; :"])
            .env_clear()
            .env("CI", "woodpecker")
            .env("API_TOKEN", "never-read")
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut line = String::new();
        let mut stdout = child.stdout.take().unwrap();
        let mut byte = [0u8; 1];
        while stdout.read(&mut byte).unwrap() == 1 && byte[0] != b'\n' {
            line.push(byte[0] as char);
        }
        let grandchild: u32 = line.split_whitespace().next().unwrap().parse().unwrap();
        let found = ancestors_of(grandchild, Path::new("/proc"));
        let own = watched_vars(grandchild, Path::new("/proc"));
        let _ = std::process::Command::new("kill")
            .arg(grandchild.to_string())
            .status();
        let _ = child.kill();
        let _ = child.wait();
        let parent = found.first().expect("the shell is found");
        assert_eq!(parent.pid, child.id());
        assert_eq!(parent.name, "sh");
        assert_eq!(parent.vars, [("CI".to_owned(), "woodpecker".to_owned())]);
        assert!(
            found.iter().any(|a| a.pid == std::process::id()),
            "the chain goes up to this test: {found:?}"
        );
        assert_eq!(own, [], "the child's own environment is empty");
    }
}
