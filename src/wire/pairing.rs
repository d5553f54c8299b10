//! Following a session as it passes: [`Pairing`] learns the protocol
//! version from the handshake and pairs each response with its request.
//! The recorder's schema watch and `inspect` both follow sessions with it.

use std::borrow::Cow;
use std::collections::HashMap;

use serde_json::Value;

use crate::cassette::Direction;
use crate::jsonrpc::{self, Kind};
use crate::protocol;
use crate::schema::{self, Violation, ViolationKind};

/// A session followed from both ends: the protocol version, learnt from the
/// handshake (negotiated, legacy) or from each request (declared, modern),
/// and which request each response answers (by direction and id). Every
/// message comes with a tag `T` (when it was seen, say), handed back with
/// it and, for a response, with its request's.
///
/// Each side may be looked at by the thread that forwarded it, after
/// forwarding, so a fast answer can overtake its request: such a response
/// is held until its request turns up ([`Pairing::unpaired`] hands out
/// those that never do).
#[derive(Debug)]
pub(crate) struct Pairing<T> {
    /// The negotiated (legacy) or declared (modern) protocol version.
    version: Option<String>,
    /// Methods (and tags) of requests awaiting an answer, by direction and id.
    pending: HashMap<(bool, String), (String, T)>,
    /// Responses seen before their requests, by direction and id.
    early: HashMap<(bool, String), (Value, T)>,
}

impl<T> Default for Pairing<T> {
    fn default() -> Self {
        Pairing {
            version: None,
            pending: HashMap::new(),
            early: HashMap::new(),
        }
    }
}

/// One message as [`Pairing`] understands it.
#[derive(Debug, Clone)]
pub(crate) struct Paired<'a, T> {
    /// Which way it went.
    pub direction: Direction,
    /// The message (owned when it was held back).
    pub message: Cow<'a, Value>,
    /// Its tag.
    pub tag: T,
    /// What it is; `None` when it is not a JSON-RPC message.
    pub kind: Option<Kind>,
    /// For a response: the method of the request it answers, and that
    /// request's tag. `None` for a response without an id (an error about
    /// an unreadable request) and for one whose request was never seen.
    pub request: Option<(String, T)>,
}

impl<T> Paired<'_, T> {
    /// The method of a request or notification, or of the request a
    /// response answers.
    pub(crate) fn method(&self) -> Option<&str> {
        jsonrpc::method(&self.message).or_else(|| self.request.as_ref().map(|(m, _)| m.as_str()))
    }
}

impl<T: Clone> Pairing<T> {
    /// Takes one message; returns the messages it makes understood, in
    /// order: usually just this one; none for a response whose request was
    /// not seen yet; a request, then the responses that overtook it.
    pub(crate) fn message<'a>(
        &mut self,
        direction: Direction,
        message: &'a Value,
        tag: T,
    ) -> Vec<Paired<'a, T>> {
        self.take(direction, Cow::Borrowed(message), tag)
    }

    fn take<'a>(
        &mut self,
        direction: Direction,
        message: Cow<'a, Value>,
        tag: T,
    ) -> Vec<Paired<'a, T>> {
        let from_client = direction == Direction::ClientToServer;
        let kind = jsonrpc::classify(&message).ok();
        let mut request = None;
        match kind {
            Some(Kind::Request) => {
                if let Some(version) = protocol::declared_version(&message) {
                    self.version = Some(version.to_owned());
                }
                if let Some(id) = jsonrpc::id(&message) {
                    let key = (from_client, jsonrpc::id_key(id));
                    let method = jsonrpc::method(&message).unwrap_or_default().to_owned();
                    self.pending.insert(key.clone(), (method, tag.clone()));
                    let mut out = vec![Paired {
                        direction,
                        message,
                        tag,
                        kind,
                        request: None,
                    }];
                    if let Some((response, tag)) = self.early.remove(&(!from_client, key.1)) {
                        out.extend(self.take(direction.reverse(), Cow::Owned(response), tag));
                    }
                    return out;
                }
            }
            Some(Kind::Response) => {
                // A response travels the other way from its request; one
                // with a null id answers nothing that can be named.
                if let Some(id) = jsonrpc::id(&message).filter(|id| !id.is_null()) {
                    let key = (!from_client, jsonrpc::id_key(id));
                    request = self.pending.remove(&key);
                    let Some((method, _)) = &request else {
                        self.early
                            .insert((from_client, key.1), (message.into_owned(), tag));
                        return Vec::new();
                    };
                    if method == "initialize"
                        && let Some(version) = message
                            .pointer("/result/protocolVersion")
                            .and_then(Value::as_str)
                    {
                        self.version = Some(version.to_owned());
                    }
                }
            }
            _ => {}
        }
        vec![Paired {
            direction,
            message,
            tag,
            kind,
            request,
        }]
    }

    /// Responses held back whose requests never came, in no particular
    /// order; they are forgotten.
    pub(crate) fn unpaired(&mut self) -> Vec<Paired<'static, T>> {
        self.early
            .drain()
            .map(|((from_client, _), (message, tag))| Paired {
                direction: if from_client {
                    Direction::ClientToServer
                } else {
                    Direction::ServerToClient
                },
                kind: jsonrpc::classify(&message).ok(),
                message: Cow::Owned(message),
                tag,
                request: None,
            })
            .collect()
    }

    /// Requests still awaiting an answer.
    pub(crate) fn awaiting(&self) -> usize {
        self.pending.len()
    }
}

impl<T> Pairing<T> {
    /// The session's protocol version, once known.
    pub(crate) fn version(&self) -> Option<&str> {
        self.version.as_deref()
    }

    /// How `message` breaks the MCP shapes of the session's version, as
    /// `check` would say (`answers`: the method a response answers).
    /// Nothing before the version is known or when this build does not know
    /// it; unknown methods are left out (custom methods are legal).
    pub(crate) fn violations(&self, message: &Value, answers: Option<&str>) -> Vec<Violation> {
        let Some(version) = self.checked_version() else {
            return Vec::new();
        };
        let mut violations = schema::check_message(version, message, answers);
        violations.retain(|v| v.kind != ViolationKind::UnknownMethod);
        violations
    }

    /// The version messages are checked against: the session's, if this
    /// build knows its shapes.
    pub(crate) fn checked_version(&self) -> Option<&str> {
        self.version
            .as_deref()
            .filter(|v| schema::VERSIONS.contains(v))
    }
}
