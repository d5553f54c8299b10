//! `mcpcassette finish --scope DIR`: what a test-runner integration runs
//! when a test ends, so that every server process the test started counts
//! and the cassette is whole, however its clients stopped them.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use mcpcassette::cassette::{self, Scope};
use serde_json::{Value, json};

use super::args::FinishArgs;
use super::exit;

/// Rebuilds the cassette from killed recorders' journals, marks the
/// reports of processes that died without a final one, and prints the
/// scope's outcome as JSON on stdout.
pub fn run(args: FinishArgs) -> anyhow::Result<ExitCode> {
    let scope = Scope::existing(&args.scope)?;
    let cassette = scope.cassette().to_owned();
    let action = scope.action()?;
    let recovered = scope.locked(|| cassette::recover_idle(&cassette))??;
    for recovery in &recovered {
        tracing::info!("{recovery}");
    }
    let mut processes = Vec::new();
    for path in reports(scope.dir())? {
        let mut report: Value = match std::fs::read(&path) {
            Ok(bytes) => serde_json::from_slice(&bytes).unwrap_or_else(|e| {
                json!({"finished": true, "exit_code": exit::ERROR, "error": format!("{}: not a report ({e})", path.display())})
            }),
            Err(e) => {
                json!({"finished": true, "exit_code": exit::ERROR, "error": format!("cannot read {}: {e}", path.display())})
            }
        };
        if report["finished"] == json!(false) && !alive(&report) {
            // Killed (a client that stops its server with SIGKILL): a
            // recording was kept by its journal, recovered above; a
            // replay's misses were written as they happened.
            report["finished"] = json!(true);
            report["killed"] = json!(true);
            if action == Some(cassette::ScopeAction::Record) {
                report["recorded"] = json!(true);
            }
            mcpcassette::cli_support::write_atomically(
                &path,
                &serde_json::to_vec_pretty(&report)?,
            )?;
        }
        processes.push(report);
    }
    let outcome = json!({
        "cassette": cassette,
        "action": action,
        "cassette_exists": cassette.exists(),
        "recovered": recovered.iter().map(|r| json!({"journal": r.journal, "interactions": r.interactions})).collect::<Vec<_>>(),
        "processes": processes,
    });
    println!("{}", serde_json::to_string_pretty(&outcome)?);
    Ok(ExitCode::from(exit::OK))
}

/// The scope's process reports, in the order they were started.
fn reports(dir: &Path) -> anyhow::Result<Vec<PathBuf>> {
    let mut found: Vec<(std::time::SystemTime, PathBuf)> = std::fs::read_dir(dir)
        .with_context(|| format!("cannot read {}", dir.display()))?
        .filter_map(Result::ok)
        .filter(|e| e.file_name().to_string_lossy().ends_with(".report.json"))
        .map(|e| {
            let created = e
                .metadata()
                .and_then(|m| m.created().or_else(|_| m.modified()));
            (created.unwrap_or(std::time::UNIX_EPOCH), e.path())
        })
        .collect();
    found.sort();
    Ok(found.into_iter().map(|(_, path)| path).collect())
}

/// Whether the process a report names is still running.
fn alive(report: &Value) -> bool {
    let Some(pid) = report["pid"].as_i64().and_then(|p| i32::try_from(p).ok()) else {
        return false;
    };
    nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), None).is_ok()
}
