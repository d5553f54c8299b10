//! How MCP messages are framed on the wire.

pub mod stdio;
