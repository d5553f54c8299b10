//! A scripted MCP client that talks to a child process over stdio.

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::thread;
use std::time::Duration;

use serde_json::{Value, json};

const TIMEOUT: Duration = Duration::from_secs(20);

/// Answers the server's own requests (sampling, elicitation, roots).
pub type Responder = Box<dyn FnMut(&Value) -> Value + Send>;

/// What a request brought back: server messages in arrival order, then the
/// response.
#[derive(Debug, Clone, PartialEq)]
pub struct Exchange {
    /// Notifications and server requests that came before the response.
    pub before: Vec<Value>,
    /// The response.
    pub response: Value,
}

impl Exchange {
    /// `result`, or a panic naming the error.
    pub fn result(&self) -> &Value {
        self.response
            .get("result")
            .unwrap_or_else(|| panic!("expected a result, got {}", self.response))
    }

    /// The text of the first content item of a tool result.
    pub fn text(&self) -> &str {
        self.result()["content"][0]["text"]
            .as_str()
            .unwrap_or_else(|| panic!("no text in {}", self.response))
    }

    /// Messages before the response with the given method.
    pub fn with_method(&self, method: &str) -> Vec<&Value> {
        self.before
            .iter()
            .filter(|m| m["method"] == method)
            .collect()
    }

    /// The exchange with ids removed, for comparing runs whose ids differ
    /// (replay gives server requests fresh ids).
    pub fn without_ids(&self) -> Exchange {
        let strip = |v: &Value| {
            let mut v = v.clone();
            if let Some(o) = v.as_object_mut() {
                o.remove("id");
            }
            v
        };
        Exchange {
            before: self.before.iter().map(strip).collect(),
            response: strip(&self.response),
        }
    }
}

/// A child process driven line by line.
pub struct Peer {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<Value>,
    stderr: Option<thread::JoinHandle<String>>,
    next_id: i64,
    responder: Responder,
    /// Client answers sent to server requests, in order.
    pub answered: Vec<Value>,
}

impl Peer {
    /// Starts `command` with piped stdio.
    pub fn spawn(mut command: Command) -> Peer {
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {command:?}: {e}"));
        let stdout = child.stdout.take().unwrap();
        let mut stderr = child.stderr.take().unwrap();
        let (tx, lines) = channel();
        thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                let value: Value = serde_json::from_str(&line)
                    .unwrap_or_else(|e| panic!("stdout carried a non-JSON line ({e}): {line}"));
                if tx.send(value).is_err() {
                    break;
                }
            }
        });
        let stderr = thread::spawn(move || {
            let mut text = String::new();
            let _ = stderr.read_to_string(&mut text);
            text
        });
        Peer {
            stdin: child.stdin.take(),
            child,
            lines,
            stderr: Some(stderr),
            next_id: 1,
            responder: Box::new(default_responder),
            answered: Vec::new(),
        }
    }

    /// Replaces the answers given to server requests.
    pub fn respond_with(mut self, responder: impl FnMut(&Value) -> Value + Send + 'static) -> Self {
        self.responder = Box::new(responder);
        self
    }

    /// Sends one message.
    pub fn send(&mut self, message: &Value) {
        let mut line = serde_json::to_vec(message).unwrap();
        line.push(b'\n');
        self.send_raw(&line);
    }

    /// Sends raw bytes.
    pub fn send_raw(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().expect("stdin is open");
        stdin.write_all(bytes).unwrap();
        stdin.flush().unwrap();
    }

    /// The next message from the child.
    pub fn recv(&mut self) -> Value {
        match self.lines.recv_timeout(TIMEOUT) {
            Ok(v) => v,
            Err(RecvTimeoutError::Timeout) => panic!("no message within {TIMEOUT:?}"),
            Err(RecvTimeoutError::Disconnected) => panic!("the child closed stdout"),
        }
    }

    /// A fresh request id.
    pub fn next_id(&mut self) -> i64 {
        self.next_id += 1;
        self.next_id - 1
    }

    /// Sends a request and collects everything up to its response,
    /// answering server requests on the way.
    pub fn request(&mut self, method: &str, params: Value) -> Exchange {
        let id = self.next_id();
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        self.until_response(&json!(id))
    }

    /// Calls the tool `name` with `arguments` (a `tools/call` request).
    pub fn call_tool(&mut self, name: &str, arguments: Value) -> Exchange {
        self.request("tools/call", json!({"name": name, "arguments": arguments}))
    }

    /// Collects messages until the response with `id`.
    pub fn until_response(&mut self, id: &Value) -> Exchange {
        let mut before = Vec::new();
        loop {
            let message = self.recv();
            if message.get("method").is_none() && message.get("id") == Some(id) {
                return Exchange {
                    before,
                    response: message,
                };
            }
            if message.get("method").is_some() && message.get("id").is_some() {
                let answer = json!({"jsonrpc": "2.0", "id": message["id"], "result": (self.responder)(&message)});
                self.send(&answer);
                self.answered.push(answer);
            }
            before.push(message);
        }
    }

    /// Sends a notification.
    pub fn notify(&mut self, method: &str, params: Value) {
        self.send(&json!({"jsonrpc": "2.0", "method": method, "params": params}));
    }

    /// Closes stdin and waits for the child; returns its status and stderr.
    pub fn finish(mut self) -> (ExitStatus, String) {
        drop(self.stdin.take());
        let status = self.child.wait().unwrap();
        let stderr = self.stderr.take().unwrap().join().unwrap();
        (status, stderr)
    }

    /// The child's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Waits for the child without closing stdin.
    pub fn wait(mut self) -> (ExitStatus, String) {
        let status = self.child.wait().unwrap();
        let stderr = self.stderr.take().unwrap().join().unwrap();
        (status, stderr)
    }
}

impl Drop for Peer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Canned client answers to the demo server's requests.
pub fn default_responder(request: &Value) -> Value {
    match request["method"].as_str() {
        Some("sampling/createMessage") => json!({
            "role": "assistant",
            "content": {"type": "text", "text": "a short summary"},
            "model": "test-model",
            "stopReason": "endTurn"
        }),
        Some("elicitation/create") => json!({"action": "accept", "content": {"confirm": true}}),
        Some("roots/list") => {
            json!({"roots": [{"uri": "file:///work/project", "name": "project"}]})
        }
        _ => json!({}),
    }
}
