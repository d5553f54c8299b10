//! A live stdio server: one process, one line per message. Lines are read
//! on a thread of their own, so [`Live::recv`] can wait with a timeout.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use serde_json::Value;

use super::{Live, LiveError};

/// How long a server has to exit once its stdin is closed.
const STOP_TIMEOUT: Duration = Duration::from_secs(5);

/// A live stdio server: one process, one line per message.
pub struct StdioLive {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<Value>,
}

impl StdioLive {
    /// Starts `command` in `dir` (default: ours); its stderr passes
    /// through to ours.
    pub fn spawn(command: &[String], dir: Option<&Path>) -> Result<StdioLive, LiveError> {
        let mut child = super::spawn(command, dir)?;
        let stdout = child.stdout.take().expect("stdout is piped");
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                match serde_json::from_str::<Value>(&line) {
                    Ok(Value::Array(batch)) => batch.into_iter().for_each(|m| {
                        let _ = tx.send(m);
                    }),
                    Ok(message) => {
                        if tx.send(message).is_err() {
                            break;
                        }
                    }
                    Err(e) => tracing::warn!("the live server wrote a line that is not JSON ({e})"),
                }
            }
        });
        Ok(StdioLive {
            stdin: child.stdin.take(),
            child,
            lines,
        })
    }
}

impl Live for StdioLive {
    fn send(&mut self, message: &Value) -> Result<(), LiveError> {
        let stdin = self.stdin.as_mut().ok_or_else(|| LiveError::StdinClosed)?;
        let mut line = serde_json::to_vec(message).expect("a Value serialises");
        line.push(b'\n');
        stdin
            .write_all(&line)
            .and_then(|()| stdin.flush())
            .map_err(LiveError::Write)
    }

    fn recv(&mut self, timeout: Duration) -> Result<Option<Value>, LiveError> {
        match self.lines.recv_timeout(timeout) {
            Ok(message) => Ok(Some(message)),
            Err(RecvTimeoutError::Timeout | RecvTimeoutError::Disconnected) => Ok(None),
        }
    }

    fn close(&mut self) {
        drop(self.stdin.take());
        let deadline = Instant::now() + STOP_TIMEOUT;
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for StdioLive {
    fn drop(&mut self) {
        if self.stdin.is_some() {
            self.close();
        }
    }
}
