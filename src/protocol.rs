//! MCP protocol versions and eras: the facts replay needs to answer a
//! handshake the way the recorded server would, and the one list of the
//! versions this crate knows ([`Version`]).

use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A protocol version this crate knows, oldest first (so `<` is "older
/// than"). On the wire, and in serde, it is its date string.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Version {
    /// The first release: `initialize` handshake, HTTP+SSE transport.
    V2024_11_05,
    /// Streamable HTTP, JSON-RPC batches, audio content.
    V2025_03_26,
    /// Structured tool output, elicitation, resource links; no batches.
    V2025_06_18,
    /// Tasks, sampling with tools; the last version with `initialize`.
    V2025_11_25,
    /// Stateless: `server/discover` and the version in every request's
    /// `_meta`.
    V2026_07_28,
}

impl Version {
    /// Every known version, oldest first.
    pub const ALL: [Version; 5] = [
        Version::V2024_11_05,
        Version::V2025_03_26,
        Version::V2025_06_18,
        Version::V2025_11_25,
        Version::V2026_07_28,
    ];

    /// The version named `name`, if it is one we know.
    pub fn parse(name: &str) -> Option<Version> {
        Version::ALL.into_iter().find(|v| v.as_str() == name)
    }

    /// The version's name as it appears on the wire.
    pub const fn as_str(self) -> &'static str {
        match self {
            Version::V2024_11_05 => "2024-11-05",
            Version::V2025_03_26 => "2025-03-26",
            Version::V2025_06_18 => "2025-06-18",
            Version::V2025_11_25 => "2025-11-25",
            Version::V2026_07_28 => "2026-07-28",
        }
    }

    /// The generation it belongs to: [`Era::Legacy`] up to 2025-11-25,
    /// [`Era::Modern`] from 2026-07-28.
    pub const fn era(self) -> Era {
        match self {
            Version::V2026_07_28 => Era::Modern,
            _ => Era::Legacy,
        }
    }
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for Version {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for Version {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Version, D::Error> {
        let name = <std::borrow::Cow<'de, str>>::deserialize(deserializer)?;
        Version::parse(&name).ok_or_else(|| {
            serde::de::Error::custom(format!(
                "`{name}` is not an MCP protocol version this build knows"
            ))
        })
    }
}

/// The released protocol versions that use the `initialize` handshake.
pub const LEGACY_VERSIONS: [&str; 4] = [
    Version::V2024_11_05.as_str(),
    Version::V2025_03_26.as_str(),
    Version::V2025_06_18.as_str(),
    Version::V2025_11_25.as_str(),
];

/// The newest legacy version: what a client of ours asks for in a legacy
/// `initialize` when it has nothing else to go on.
pub const LATEST_LEGACY_VERSION: &str = Version::V2025_11_25.as_str();

/// The stateless protocol version (no handshake, `server/discover`).
pub const MODERN_VERSION: &str = Version::V2026_07_28.as_str();

/// The `_meta` key that carries the protocol version on every modern request.
pub const META_PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";

/// The `_meta` key under which a modern server names itself.
pub const META_SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";

/// The `_meta` key of the capabilities a 2026-07-28 request declares.
pub const META_CLIENT_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";

/// The `_meta` key that tags every message on a 2026-07-28 listen stream
/// with the id of the `subscriptions/listen` request that opened it.
pub const META_SUBSCRIPTION_ID: &str = "io.modelcontextprotocol/subscriptionId";

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
    /// The era a version string belongs to; one newer than any we know
    /// counts as modern.
    pub fn of_version(version: &str) -> Era {
        match Version::parse(version) {
            Some(known) => known.era(),
            None if version >= MODERN_VERSION => Era::Modern,
            None => Era::Unknown,
        }
    }
}

/// The syslog severities of `logging/setLevel` and `notifications/message`,
/// least severe first.
pub const LOG_LEVELS: [&str; 8] = [
    "debug",
    "info",
    "notice",
    "warning",
    "error",
    "critical",
    "alert",
    "emergency",
];

/// How severe log level `level` is (0 = debug), if it is one.
pub fn log_severity(level: &str) -> Option<usize> {
    LOG_LEVELS.iter().position(|l| *l == level)
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
    fn versions_are_their_strings() {
        for version in Version::ALL {
            assert_eq!(Version::parse(version.as_str()), Some(version));
            assert_eq!(version.to_string(), version.as_str());
            let json = serde_json::to_value(version).unwrap();
            assert_eq!(json, json!(version.as_str()));
            assert_eq!(serde_json::from_value::<Version>(json).unwrap(), version);
            assert_eq!(Era::of_version(version.as_str()), version.era());
        }
        assert!(Version::ALL.is_sorted());
        assert_eq!(Version::parse("2023-01-01"), None);
        assert!(serde_json::from_value::<Version>(json!("2023-01-01")).is_err());
        assert_eq!(
            LATEST_LEGACY_VERSION,
            LEGACY_VERSIONS[LEGACY_VERSIONS.len() - 1]
        );
        assert_eq!(Era::of_version("2027-01-01"), Era::Modern);
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
