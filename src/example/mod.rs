//! Example values: a JSON value a JSON Schema accepts ([`from_schema`]),
//! and a result valid for an MCP method ([`tool_result`],
//! [`method_result`]).
//!
//! Stand-ins (fixtures, `stub`, the mock, hand-written cases a miss report
//! suggests) answer clients that check what they get: the TypeScript and
//! Python SDKs reject a `tools/call` result without `structuredContent`
//! when the tool declares an `outputSchema`, and validate it against that
//! schema. Values are made from the schema alone, deterministically, so a
//! fixture answers the same every run.

mod pattern;
mod results;
mod schema;
#[cfg(test)]
mod tests;

#[cfg(test)]
pub(crate) use results::PLACEHOLDER;
pub(crate) use results::{method_result, tool_result};
#[cfg(test)]
pub(crate) use schema::accepts;
pub use schema::from_schema;
