//! Reading a recording's protocol era and version and the server's
//! identity off its handshake (the first successful `initialize` or
//! `server/discover`), and which interactions that needs.

use serde_json::Value;

use crate::cassette::format::{Interaction, ProtocolInfo, ServerIdentity};
use crate::protocol::{self, Era};

/// What an interaction is to `describe`: a successful handshake, a request
/// that declares its protocol version.
pub(super) fn describes(interaction: &Interaction) -> (bool, bool) {
    let handshake = matches!(interaction.method(), "initialize" | "server/discover")
        && interaction
            .response
            .as_ref()
            .is_some_and(|r| r.has_member("result"));
    let declares = interaction.is_request()
        && interaction
            .client
            .raw()
            .meta_member(protocol::META_PROTOCOL_VERSION)
            .is_some_and(|version| version.is_string());
    (handshake, declares)
}

/// Reads era, version and server identity off the recorded handshake: the
/// first successful `initialize` (legacy) or `server/discover` (modern).
pub fn describe(interactions: &[Interaction]) -> (ProtocolInfo, Option<ServerIdentity>) {
    describe_from(interactions.iter())
}

pub(super) fn describe_from<'a>(
    mut interactions: impl Iterator<Item = &'a Interaction> + Clone,
) -> (ProtocolInfo, Option<ServerIdentity>) {
    let handshake = interactions.clone().find_map(|i| {
        let result = i.response.as_ref()?.get("result")?;
        match i.method() {
            "initialize" | "server/discover" => Some((i, result)),
            _ => None,
        }
    });
    let Some((interaction, result)) = handshake else {
        return (
            ProtocolInfo {
                era: Era::Unknown,
                version: None,
            },
            None,
        );
    };
    let version = if interaction.method() == "initialize" {
        result
            .get("protocolVersion")
            .and_then(Value::as_str)
            .map(str::to_owned)
    } else {
        let declared = interactions.find_map(|i| i.request().and_then(protocol::declared_version));
        let supported = result
            .get("supportedVersions")
            .and_then(Value::as_array)
            .and_then(|v| v.iter().filter_map(Value::as_str).max());
        declared.or(supported).map(str::to_owned)
    };
    let era = if interaction.method() == "initialize" {
        Era::Legacy
    } else {
        Era::Modern
    };
    let field = |name: &str| result.get(name).cloned().unwrap_or(Value::Null);
    // Modern servers put their identity in `_meta`.
    let info = result
        .get("serverInfo")
        .or_else(|| result.get("_meta")?.get(protocol::META_SERVER_INFO))
        .cloned()
        .unwrap_or(Value::Null);
    let server = ServerIdentity {
        info,
        capabilities: field("capabilities"),
        instructions: result
            .get("instructions")
            .and_then(Value::as_str)
            .map(str::to_owned),
    };
    (ProtocolInfo { era, version }, Some(server))
}
