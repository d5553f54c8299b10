//! A client of one protocol era against a cassette of the other: no
//! recorded interaction can answer it, and the closest-request report would
//! only be noise, so replay says plainly what happened and what to do.

use serde::Serialize;
use serde_json::Value;

use crate::cassette::Cassette;
use crate::jsonrpc;
use crate::protocol::{self, Era};

/// The eras of a cassette and of the client that asked it something.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EraMismatch {
    /// The cassette's era: `legacy` or `modern`.
    pub cassette_era: &'static str,
    /// The protocol version it was recorded with, if known.
    pub cassette_version: Option<String>,
    /// The client's era.
    pub client_era: &'static str,
    /// The version the client asked for, if it said.
    pub client_version: Option<String>,
}

impl EraMismatch {
    /// The mismatch `request` shows against `cassette`, if it shows one: an
    /// `initialize` (or a request without the modern `_meta` version) to a
    /// 2026-07-28 cassette, or a `server/discover` (or a request declaring
    /// 2026-07-28) to a legacy one.
    pub fn detect(cassette: &Cassette, request: &Value) -> Option<EraMismatch> {
        let method = jsonrpc::method(request)?;
        let declared = protocol::declared_version(request);
        let client = match cassette.protocol.era {
            Era::Modern if method == "initialize" => {
                (Era::Legacy, protocol::requested_version(request))
            }
            Era::Modern
                if declared.is_none()
                    && method != "server/discover"
                    && records_declared_versions(cassette) =>
            {
                (Era::Legacy, None)
            }
            Era::Legacy if method == "server/discover" => (Era::Modern, declared),
            Era::Legacy if declared.is_some_and(|v| Era::of_version(v) == Era::Modern) => {
                (Era::Modern, declared)
            }
            _ => return None,
        };
        Some(EraMismatch {
            cassette_era: name(cassette.protocol.era),
            cassette_version: cassette.protocol.version.clone(),
            client_era: name(client.0),
            client_version: client.1.map(str::to_owned),
        })
    }

    fn client_is_legacy(&self) -> bool {
        self.client_era == "legacy"
    }

    /// The one-line explanation a client sees in the JSON-RPC error.
    pub fn message(&self) -> String {
        format!(
            "mcpcassette: the cassette was recorded in the {} and this client speaks the {}: \
             no recorded interaction can answer it. {}",
            describe(self.cassette_era, self.cassette_version.as_deref()),
            describe(self.client_era, self.client_version.as_deref()),
            self.advice()
        )
    }

    /// What to do, in one sentence.
    pub fn advice(&self) -> &'static str {
        if self.client_is_legacy() {
            "Re-record the cassette with this client, or make the client speak 2026-07-28 \
             (fastmcp's Client does by default; the TypeScript SDK 1.32, the MCP Inspector \
             and the Python mcp 1.x speak the legacy era)."
        } else {
            "Re-record the cassette with this client, or pin the client to the legacy era \
             (fastmcp: Client(..., mode=\"legacy\"); the MCP Inspector: --protocol-era legacy; \
             the TypeScript SDK 1.32 and the Python mcp 1.x speak the legacy era already)."
        }
    }

    /// The fixes a report lists first.
    pub fn fixes(&self) -> Vec<String> {
        let (client, other) = if self.client_is_legacy() {
            ("legacy", "2026-07-28")
        } else {
            ("2026-07-28", "legacy")
        };
        let pin = if self.client_is_legacy() {
            "fastmcp's Client speaks 2026-07-28 by default (mode=\"auto\"); the MCP Inspector \
             with --protocol-era modern; the TypeScript SDK 1.32 and the Python mcp 1.x speak \
             the legacy era only"
        } else {
            "fastmcp: Client(..., mode=\"legacy\"); the MCP Inspector: --protocol-era legacy; \
             the TypeScript SDK 1.32 and the Python mcp 1.x speak the legacy era already"
        };
        vec![
            format!(
                "Re-record the cassette with this client, which speaks the {client} era \
                 (the re-record command is below)."
            ),
            format!(
                "Or make the client speak the {other} era the cassette was recorded in:\n{pin}"
            ),
        ]
    }

    /// The block the stderr report shows.
    pub fn lines(&self) -> String {
        format!(
            "The cassette and the client speak different protocol eras:\n  \
             cassette: {}\n  client:   {}\n",
            describe(self.cassette_era, self.cassette_version.as_deref()),
            describe(self.client_era, self.client_version.as_deref()),
        )
    }
}

/// Whether the cassette's requests declare their version in `_meta`, as
/// 2026-07-28 clients do (a cassette of a lax client's requests does not,
/// and then a request without one is no sign of another era).
fn records_declared_versions(cassette: &Cassette) -> bool {
    cassette
        .interactions
        .iter()
        .filter_map(|i| i.request())
        .any(|r| protocol::declared_version(r).is_some())
}

fn name(era: Era) -> &'static str {
    match era {
        Era::Legacy => "legacy",
        Era::Modern => "modern",
        Era::Unknown => "unknown",
    }
}

fn describe(era: &str, version: Option<&str>) -> String {
    let how = match era {
        "legacy" => "initialize handshake",
        _ => "stateless, server/discover",
    };
    match version {
        Some(version) => format!("{era} era (protocol {version}, {how})"),
        None => format!("{era} era ({how})"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cassette::{ProtocolInfo, Transport};
    use serde_json::json;

    fn cassette(era: Era, version: &str) -> Cassette {
        let mut cassette = crate::cassette::Builder::new(
            String::new(),
            Transport::Stdio {
                command: vec![],
                cwd: None,
            },
        )
        .finish();
        cassette.protocol = ProtocolInfo {
            era,
            version: Some(version.into()),
        };
        cassette
    }

    fn modern_meta() -> Value {
        json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28"})
    }

    #[test]
    fn both_directions_are_named() {
        let modern = cassette(Era::Modern, "2026-07-28");
        let legacy = cassette(Era::Legacy, "2025-11-25");
        let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": "2025-06-18", "capabilities": {}}});
        let found = EraMismatch::detect(&modern, &init).unwrap();
        assert_eq!(found.client_era, "legacy");
        assert_eq!(found.client_version.as_deref(), Some("2025-06-18"));
        let message = found.message();
        assert!(
            message.contains("recorded in the modern era (protocol 2026-07-28")
                && message.contains("speaks the legacy era (protocol 2025-06-18")
                && message.contains("fastmcp's Client does by default"),
            "{message}"
        );
        assert_eq!(EraMismatch::detect(&legacy, &init), None);

        let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
            "params": {"name": "echo", "_meta": modern_meta()}});
        let found = EraMismatch::detect(&legacy, &call).unwrap();
        assert_eq!((found.cassette_era, found.client_era), ("legacy", "modern"));
        assert!(found.message().contains("mode=\"legacy\""));
        assert_eq!(EraMismatch::detect(&modern, &call), None);
        // A request without `_meta` is a legacy client's only where the
        // recorded requests carry it.
        let bare = json!({"jsonrpc": "2.0", "id": 4, "method": "tools/list"});
        assert_eq!(EraMismatch::detect(&modern, &bare), None);
        let mut declared = modern.clone();
        declared.interactions.push(crate::cassette::Interaction {
            client: crate::cassette::ClientMessage::Request(call.clone().into()),
            during: vec![],
            response: None,
            after: vec![],
            http: None,
            delays_ms: vec![],
            process: 0,
        });
        let found = EraMismatch::detect(&declared, &bare).unwrap();
        assert_eq!(found.client_era, "legacy");
        let discover = json!({"jsonrpc": "2.0", "id": 3, "method": "server/discover"});
        assert!(EraMismatch::detect(&legacy, &discover).is_some());
        assert_eq!(EraMismatch::detect(&modern, &discover), None);
    }
}
