//! HTTP servers run as child processes: the `rmcp_http_server` example and
//! `mcpcassette` in `--listen` mode, each printing its URL first.

use std::io::{BufRead, BufReader, Read};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc::channel;
use std::time::Duration;

use super::demo_server_path;

/// A command that runs the `rmcp_http_server` example.
pub fn rmcp_http_server() -> Command {
    Command::new(demo_server_path().with_file_name("rmcp_http_server"))
}

/// A child process that prints its URL first and is stopped with SIGINT.
pub struct Served {
    child: Child,
    pub url: String,
}

impl Served {
    /// Starts `command`, its stderr inherited, and waits for its URL.
    pub fn start(command: Command) -> Served {
        Served::spawn(command, Stdio::inherit())
    }

    /// Starts `command`, its stderr captured for [`Served::stop_with_stderr`],
    /// and waits for its URL.
    pub fn start_capturing_stderr(command: Command) -> Served {
        Served::spawn(command, Stdio::piped())
    }

    /// Starts `command` with the given stderr and waits up to `patience`
    /// for a first line `PREFIX<url>` (servers other than ours announce
    /// themselves in their own words, e.g. `URL http://…`).
    pub fn start_announced(
        mut command: Command,
        stderr: Stdio,
        prefix: &str,
        patience: Duration,
    ) -> Served {
        let mut child = command
            .stdout(Stdio::piped())
            .stderr(stderr)
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {command:?}: {e}"));
        let mut stdout = BufReader::new(child.stdout.take().unwrap());
        let (tx, rx) = channel();
        std::thread::spawn(move || {
            let mut line = String::new();
            let read = stdout.read_line(&mut line);
            let _ = tx.send((read.map(|_| line), stdout));
        });
        let mut served = Served {
            child,
            url: String::new(),
        };
        let (line, stdout) = rx.recv_timeout(patience).unwrap_or_else(|_| {
            panic!("{command:?} printed no URL within {patience:?}");
        });
        let line = line.unwrap();
        let url = line
            .strip_prefix(prefix)
            .filter(|url| url.starts_with("http://127.0.0.1:"))
            .unwrap_or_else(|| panic!("{command:?}: unexpected first line {line:?}"));
        served.url = url.trim().to_owned();
        served.child.stdout = Some(stdout.into_inner());
        served
    }

    fn spawn(mut command: Command, stderr: Stdio) -> Served {
        let mut child = command
            .stdout(Stdio::piped())
            .stderr(stderr)
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.as_mut().unwrap())
            .read_line(&mut line)
            .unwrap();
        assert!(
            line.starts_with("http://127.0.0.1:"),
            "unexpected first line {line:?}"
        );
        Served {
            child,
            url: line.trim().to_owned(),
        }
    }

    fn interrupt(&self) {
        nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(self.child.id() as i32),
            nix::sys::signal::Signal::SIGINT,
        )
        .unwrap();
    }

    /// SIGINT, then wait: record writes its cassette, replay its summary.
    pub fn stop(mut self) -> ExitStatus {
        self.interrupt();
        self.child.wait().unwrap()
    }

    /// SIGINT, then wait; returns the status and stderr. Only for a server
    /// started with [`Served::start_capturing_stderr`].
    pub fn stop_with_stderr(mut self) -> (ExitStatus, String) {
        self.interrupt();
        let mut stderr = String::new();
        self.child
            .stderr
            .take()
            .expect("stderr is captured")
            .read_to_string(&mut stderr)
            .unwrap();
        (self.child.wait().unwrap(), stderr)
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
