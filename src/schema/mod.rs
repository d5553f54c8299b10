//! What MCP messages must look like, version by version (built in), and
//! validation against an official schema.json on request.
