//! Driving a live server with a cassette's client side, one interaction at
//! a time, and recording what it says into a new cassette with the same
//! [`Builder`] recording uses, so both sides have the same shape.
//!
//! Server-to-client requests (sampling, elicitation, roots) are answered
//! with the client's recorded answers to the same method, in order.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::DriftError;
use crate::cassette::{Builder, Cassette, Direction, Event, Interaction};
use crate::jsonrpc::{self, Kind};

/// A connection to a live server: send a message, receive the next one.
pub trait Live {
    /// Sends one message.
    fn send(&mut self, message: &Value) -> Result<(), DriftError>;
    /// The next message, or `None` when `timeout` passes first (or the
    /// server has gone).
    fn recv(&mut self, timeout: Duration) -> Result<Option<Value>, DriftError>;
    /// Ends the session (closes stdin, ends the HTTP session).
    fn close(&mut self);
    /// Over HTTP, how many messages were POSTed so far: the number of the
    /// last one, for [`http_answer`](Self::http_answer). `None` where
    /// messages do not travel one per request (stdio).
    fn sent(&self) -> Option<usize> {
        None
    }
    /// The next message may be answered with an HTTP error (the recording
    /// was): such an answer is compared, not a failure.
    fn expect_http_error(&mut self) {}
    /// The HTTP answer to POST number `sent`, waiting up to `wait` for its
    /// status (and an error's body).
    fn http_answer(&mut self, sent: usize, wait: Duration) -> Option<LiveAnswer> {
        let _ = (sent, wait);
        None
    }
}

/// The HTTP status of the live answer to one POST, and its body when that
/// is not a JSON-RPC answer to the request (an error page, a rejection).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LiveAnswer {
    /// The HTTP status.
    pub status: u16,
    /// The body, kept as text, as a recording keeps it.
    pub body: Option<String>,
    /// Its media type.
    pub content_type: Option<String>,
    /// Whether it issued a session id.
    pub issued_session: bool,
    /// Whether the request carried one.
    pub had_session: bool,
}

/// How long to wait for the status of a POST's answer once its messages
/// have come.
const STATUS_WAIT: Duration = Duration::from_secs(5);

/// How long to wait for the live server.
#[derive(Debug, Clone, Copy)]
pub struct DriveConfig {
    /// For each response.
    pub timeout: Duration,
    /// For late server traffic after a response or notification, when the
    /// recording has some there.
    pub settle: Duration,
}

impl Default for DriveConfig {
    fn default() -> Self {
        DriveConfig {
            timeout: Duration::from_secs(30),
            settle: Duration::from_millis(200),
        }
    }
}

/// Sends the client side of `recorded` to `live`; returns what the live
/// server said, as a cassette with `recorded`'s transport and rules.
pub fn drive(
    recorded: &Cassette,
    live: &mut dyn Live,
    config: &DriveConfig,
) -> Result<Cassette, DriftError> {
    let mut builder = Builder::new(crate::cassette::now_rfc3339(), recorded.transport.clone());
    for interaction in &recorded.interactions {
        let mut answers = Answers::of(interaction);
        let message = interaction.client.message();
        if interaction.http.as_ref().is_some_and(|h| h.status >= 400) {
            live.expect_http_error();
        }
        let index = builder.next_interaction();
        live.send(message)?;
        let post = live.sent();
        builder.observe(Direction::ClientToServer, message.clone());
        let id = interaction.request().and_then(jsonrpc::id).cloned();
        if let Some(id) = &id {
            let deadline = Instant::now() + config.timeout;
            loop {
                let left = deadline.saturating_duration_since(Instant::now());
                let Some(reply) = live.recv(left)? else {
                    builder.unanswered(id);
                    break;
                };
                // Over HTTP, a rejection of the POST answers its request.
                if post.is_some() && jsonrpc::is_rejection(&reply) {
                    builder.respond_to(id, reply);
                    break;
                }
                let is_answer = jsonrpc::classify(&reply) == Ok(Kind::Response)
                    && jsonrpc::id(&reply) == Some(id);
                handle(reply.clone(), live, &mut builder, &mut answers)?;
                if is_answer {
                    break;
                }
            }
        }
        // Late traffic: waited for only where the recording has some (or
        // after a notification, which has no answer to wait for).
        let settle = if !interaction.after.is_empty() || id.is_none() {
            config.settle
        } else {
            Duration::ZERO
        };
        let until = Instant::now() + settle;
        loop {
            let left = until.saturating_duration_since(Instant::now());
            match live.recv(left)? {
                Some(message) => handle(message, live, &mut builder, &mut answers)?,
                None => break,
            }
        }
        if let Some(answer) = post.and_then(|post| live.http_answer(post, STATUS_WAIT))
            && let Some(http) = builder.http_mut(index)
        {
            http.status = answer.status;
            http.body = answer.body;
            http.content_type = answer.content_type;
            http.issued_session = answer.issued_session;
            http.had_session = answer.had_session;
        }
    }
    live.close();
    let mut cassette = builder.finish();
    cassette.rules = recorded.rules.clone();
    Ok(cassette)
}

/// Files a server message; answers a server request from the recording.
fn handle(
    message: Value,
    live: &mut dyn Live,
    builder: &mut Builder,
    answers: &mut Answers,
) -> Result<(), DriftError> {
    let request = jsonrpc::classify(&message) == Ok(Kind::Request);
    let answer = request.then(|| answers.answer(&message));
    builder.observe(Direction::ServerToClient, message);
    if let Some(answer) = answer {
        live.send(&answer)?;
        builder.observe(Direction::ClientToServer, answer);
    }
    Ok(())
}

/// The client's recorded answers to server requests in one interaction,
/// by method, in order.
struct Answers(HashMap<String, std::collections::VecDeque<Value>>);

impl Answers {
    fn of(interaction: &Interaction) -> Answers {
        let mut by_method: HashMap<String, std::collections::VecDeque<Value>> = HashMap::new();
        for event in interaction.during.iter().chain(&interaction.after) {
            if let Event::ServerRequest {
                server_request,
                client_response: Some(answer),
            } = event
            {
                let method = jsonrpc::method(server_request).unwrap_or_default();
                by_method
                    .entry(method.to_owned())
                    .or_default()
                    .push_back(answer.clone());
            }
        }
        Answers(by_method)
    }

    /// The recorded answer to `request`, with its id; an error when the
    /// recording has none left for its method.
    fn answer(&mut self, request: &Value) -> Value {
        let id = jsonrpc::id(request).cloned().unwrap_or(Value::Null);
        let method = jsonrpc::method(request).unwrap_or_default();
        match self.0.get_mut(method).and_then(|queue| queue.pop_front()) {
            Some(mut answer) => {
                answer["id"] = id;
                answer
            }
            None => json!({
                "jsonrpc": "2.0",
                "id": id,
                "error": {
                    "code": -32601,
                    "message": format!("mcpcassette verify: the recording has no answer to `{method}` here"),
                },
            }),
        }
    }
}

/// A live stdio server: one process, one line per message.
pub struct StdioLive {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<Value>,
}

impl StdioLive {
    /// Starts `command`; its stderr passes through to ours.
    pub fn spawn(command: &[String]) -> Result<StdioLive, DriftError> {
        Self::spawn_in(command, None)
    }

    /// Starts `command` in `dir` (default: ours).
    pub fn spawn_in(command: &[String], dir: Option<&Path>) -> Result<StdioLive, DriftError> {
        let (program, args) = command
            .split_first()
            .ok_or_else(|| DriftError::NoTarget("no server command given".into()))?;
        let mut child = Command::new(program);
        if let Some(dir) = dir {
            child.current_dir(dir);
        }
        let mut child = child
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(|source| DriftError::Spawn {
                program: program.clone(),
                source,
            })?;
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
    fn send(&mut self, message: &Value) -> Result<(), DriftError> {
        let stdin = self
            .stdin
            .as_mut()
            .ok_or_else(|| DriftError::Live("stdin is closed".into()))?;
        let mut line = serde_json::to_vec(message).expect("a Value serialises");
        line.push(b'\n');
        stdin
            .write_all(&line)
            .and_then(|()| stdin.flush())
            .map_err(|e| DriftError::Live(format!("cannot write to the server: {e}")))
    }

    fn recv(&mut self, timeout: Duration) -> Result<Option<Value>, DriftError> {
        match self.lines.recv_timeout(timeout) {
            Ok(message) => Ok(Some(message)),
            Err(RecvTimeoutError::Timeout | RecvTimeoutError::Disconnected) => Ok(None),
        }
    }

    fn close(&mut self) {
        drop(self.stdin.take());
        let deadline = Instant::now() + Duration::from_secs(5);
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
