//! Driving a live server with a cassette's client side, one interaction at
//! a time, and recording what it says into a new cassette with the same
//! [`Builder`] recording uses, so both sides have the same shape.
//!
//! Server-to-client requests (sampling, elicitation, roots) are answered
//! with the client's recorded answers to the same method, in order.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::DriftError;
use crate::cassette::{Builder, Cassette, Direction, Event, Interaction};
use crate::client::Live;
use crate::jsonrpc::{self, Kind};

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
                    .push_back(answer.to_value());
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
