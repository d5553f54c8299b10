//! What a client of ours (`stub`, `new-episodes` when it has no
//! `initialize` of the client's to reuse) says to open a session with a
//! server, in either era: the legacy `initialize` request and
//! `notifications/initialized`, or the 2026-07-28 `_meta` every request
//! carries instead.

use serde_json::{Value, json};

use crate::protocol::{LATEST_LEGACY_VERSION, META_PROTOCOL_VERSION, MODERN_VERSION};
/// 2026-07-28: the client's capabilities, in every request's `_meta`.
pub const META_CLIENT_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
/// 2026-07-28: the client's name and version, in every request's `_meta`.
pub const META_CLIENT_INFO: &str = "io.modelcontextprotocol/clientInfo";

/// `clientInfo` naming us as `name`, with this crate's version.
pub fn client_info(name: &str) -> Value {
    json!({"name": name, "version": env!("CARGO_PKG_VERSION")})
}

/// A legacy `initialize` request with id `id`, asking for
/// [`LATEST_LEGACY_VERSION`] with no capabilities.
pub fn initialize(id: Value, client_info: Value) -> Value {
    json!({
        "jsonrpc": "2.0",
        "id": id,
        "method": "initialize",
        "params": {
            "protocolVersion": LATEST_LEGACY_VERSION,
            "capabilities": {},
            "clientInfo": client_info,
        },
    })
}

/// The notification that ends a legacy handshake.
pub fn initialized() -> Value {
    json!({"jsonrpc": "2.0", "method": "notifications/initialized"})
}

/// The `_meta` a 2026-07-28 request carries: the version, no capabilities,
/// and who we are.
pub fn modern_meta(client_info: Value) -> Value {
    json!({
        META_PROTOCOL_VERSION: MODERN_VERSION,
        META_CLIENT_CAPABILITIES: {},
        META_CLIENT_INFO: client_info,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::{self, Era};

    #[test]
    fn the_legacy_request_asks_for_the_last_legacy_version() {
        let request = initialize(json!(7), client_info("t"));
        assert_eq!(
            protocol::requested_version(&request),
            Some(LATEST_LEGACY_VERSION)
        );
        assert_eq!(Era::of_version(LATEST_LEGACY_VERSION), Era::Legacy);
        assert_eq!(request["id"], 7);
        assert_eq!(
            request["params"]["clientInfo"]["version"],
            env!("CARGO_PKG_VERSION")
        );
        assert_eq!(
            crate::jsonrpc::method(&initialized()),
            Some("notifications/initialized")
        );
    }

    #[test]
    fn modern_meta_declares_the_modern_version() {
        let mut request = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}});
        request["params"]["_meta"] = modern_meta(client_info("t"));
        assert_eq!(protocol::declared_version(&request), Some(MODERN_VERSION));
        assert_eq!(request["params"]["_meta"][META_CLIENT_INFO]["name"], "t");
    }
}
