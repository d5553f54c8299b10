//! One way to start `mcpcassette` as a child process: a builder naming the
//! subcommand and its flags, ended by how the test talks to the child.
//!
//! ```ignore
//! // Replay over Streamable HTTP; the handle has the URL, and stops it.
//! let replayer = Cli::replay(&cassette).arg("--fail-on-unused").listen().capture_stderr().start();
//! post(&replayer.url, &message, &[]).await;
//! let (status, stderr) = replayer.stop_with_stderr();
//!
//! // The recording proxy in front of a live HTTP server.
//! let recorder = Cli::record(&cassette).upstream(&live.url).listen().start();
//!
//! // Over stdio, driven line by line.
//! let mut peer = Cli::replay(&cassette).peer();
//! ```
//!
//! `start` waits for the URL the child prints first (so the builder must
//! have `listen`ed); the child's stderr is the test's unless
//! [`Cli::capture_stderr`] keeps it for [`Served::stop_with_stderr`] (it
//! is read only then, so a child that writes much would block on it). [`Cli::command`] gives the `Command` for anything else
//! (`output()`, a peer of another kind).

use std::ffi::OsStr;
use std::path::Path;
use std::process::{Command, Stdio};

use super::http::Served;
use super::mcpcassette;
use super::peer::Peer;

/// `mcpcassette SUBCOMMAND ...`, being built.
pub struct Cli {
    command: Command,
    capture_stderr: bool,
}

impl Cli {
    /// `mcpcassette SUBCOMMAND`.
    pub fn new(subcommand: &str) -> Cli {
        let mut command = mcpcassette();
        command.arg(subcommand);
        Cli {
            command,
            capture_stderr: false,
        }
    }

    /// `mcpcassette replay CASSETTE`.
    pub fn replay(cassette: &Path) -> Cli {
        Cli::new("replay").arg(cassette)
    }

    /// `mcpcassette record --cassette CASSETTE`.
    pub fn record(cassette: &Path) -> Cli {
        Cli::new("record").arg("--cassette").arg(cassette)
    }

    /// `mcpcassette serve FIXTURE`.
    pub fn serve(fixture: &Path) -> Cli {
        Cli::new("serve").arg(fixture)
    }

    /// `mcpcassette inspect`.
    pub fn inspect() -> Cli {
        Cli::new("inspect")
    }

    pub fn arg(mut self, arg: impl AsRef<OsStr>) -> Cli {
        self.command.arg(arg);
        self
    }

    pub fn args<I, S>(mut self, args: I) -> Cli
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        self.command.args(args);
        self
    }

    pub fn env(mut self, key: impl AsRef<OsStr>, value: impl AsRef<OsStr>) -> Cli {
        self.command.env(key, value);
        self
    }

    /// `--upstream URL`: record (or inspect) a live HTTP server.
    pub fn upstream(self, url: &str) -> Cli {
        self.args(["--upstream", url])
    }

    /// `--listen 127.0.0.1:0`: serve Streamable HTTP on a free port.
    pub fn listen(self) -> Cli {
        self.args(["--listen", "127.0.0.1:0"])
    }

    /// Keeps the child's stderr for [`Served::stop_with_stderr`].
    pub fn capture_stderr(mut self) -> Cli {
        self.capture_stderr = true;
        self
    }

    /// Starts the child and waits for the URL it prints first.
    pub fn start(self) -> Served {
        if self.capture_stderr {
            Served::start_capturing_stderr(self.command)
        } else {
            Served::start(self.command)
        }
    }

    /// Starts the child with piped stdio, driven by a [`Peer`].
    pub fn peer(self) -> Peer {
        Peer::spawn(self.command)
    }

    /// The command as built.
    pub fn command(self) -> Command {
        self.command
    }

    /// Runs the child to the end, stdin closed; its output.
    pub fn output(mut self) -> std::process::Output {
        self.command.stdin(Stdio::null()).output().unwrap()
    }
}
