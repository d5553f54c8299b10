//! MCP protocol versions and eras: the facts replay needs to answer a
//! handshake the way the recorded server would.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The released protocol versions that use the `initialize` handshake.
pub const LEGACY_VERSIONS: [&str; 4] = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"];

/// The stateless protocol version (no handshake, `server/discover`).
pub const MODERN_VERSION: &str = "2026-07-28";

/// The `_meta` key that carries the protocol version on every modern request.
pub const META_PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";

/// The `_meta` key under which a modern server names itself.
pub const META_SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";

/// Which generation of the protocol a session speaks.
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Era {
    /// 2024-11-05 … 2025-11-25: `initialize` → `notifications/initialized`.
    Legacy,
    /// 2026-07-28 and later: stateless, `server/discover`, per-request `_meta`.
    Modern,
    /// No successful handshake was recorded.
    #[cfg_attr(feature = "cli", value(skip))]
    Unknown,
}

impl Era {
    /// The era a version string belongs to.
    pub fn of_version(version: &str) -> Era {
        if LEGACY_VERSIONS.contains(&version) {
            Era::Legacy
        } else if version >= MODERN_VERSION {
            Era::Modern
        } else {
            Era::Unknown
        }
    }
}

/// The version a modern request declares in `params._meta`.
pub fn declared_version(request: &Value) -> Option<&str> {
    request
        .get("params")?
        .get("_meta")?
        .get(META_PROTOCOL_VERSION)?
        .as_str()
}

/// The version a legacy `initialize` request asks for.
pub fn requested_version(initialize: &Value) -> Option<&str> {
    initialize.get("params")?.get("protocolVersion")?.as_str()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn versions_map_to_eras() {
        assert_eq!(Era::of_version("2024-11-05"), Era::Legacy);
        assert_eq!(Era::of_version("2025-11-25"), Era::Legacy);
        assert_eq!(Era::of_version("2026-07-28"), Era::Modern);
        assert_eq!(Era::of_version("2023-01-01"), Era::Unknown);
    }

    #[test]
    fn reads_declared_and_requested_versions() {
        let modern = json!({"params": {"_meta": {META_PROTOCOL_VERSION: "2026-07-28"}}});
        assert_eq!(declared_version(&modern), Some("2026-07-28"));
        let init = json!({"params": {"protocolVersion": "2025-06-18"}});
        assert_eq!(requested_version(&init), Some("2025-06-18"));
        assert_eq!(declared_version(&init), None);
    }
}
