//! How MCP messages are framed on the wire.

pub(crate) mod pairing;
pub(crate) mod params;
pub(crate) mod situation;
pub(crate) mod stdio;
pub(crate) mod unread;
