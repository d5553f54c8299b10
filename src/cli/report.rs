//! `--report PATH`: the JSON report of a replay (or of a `run`), for test
//! runners to read.
//!
//! A test-runner integration hands `run --report PATH` to an SDK client
//! that starts and stops the process itself, so the runner cannot see the
//! exit status. The report says it instead: written with `"finished":
//! false` as soon as the run starts (the runner then knows to wait for it),
//! and again when it ends, with `"finished": true`, the exit code and, for
//! a replay, the misses as stderr shows them. Every write is atomic, and
//! everything written goes through the redactor.

use std::path::Path;

use mcpcassette::faults::FaultsSummary;
use mcpcassette::redact::{self, Redactor};
use mcpcassette::replay::{Engine, Miss, Summary};
use serde_json::{Value, json};

/// Says that a run has started (and so that a final report will follow),
/// and which process to stop when its client never closes it.
pub fn started(
    path: &Path,
    cassette: &Path,
    mode: &str,
    redactor: &Redactor,
) -> anyhow::Result<()> {
    write(
        path,
        json!({"cassette": cassette, "mode": mode, "finished": false, "pid": std::process::id()}),
        redactor,
    )
}

/// A run that failed before it could replay or record: exit code 2 and
/// the error, as stderr says it.
pub fn failed(
    path: &Path,
    cassette: &Path,
    mode: &str,
    error: &str,
    redactor: &Redactor,
) -> anyhow::Result<()> {
    write(
        path,
        json!({
            "cassette": cassette,
            "mode": mode,
            "finished": true,
            "exit_code": super::exit::ERROR,
            "error": error,
        }),
        redactor,
    )
}

/// A recording that ended (the cassette is written).
pub fn recorded(
    path: &Path,
    cassette: Option<&Path>,
    mode: &str,
    redactor: &Redactor,
) -> anyhow::Result<()> {
    write(
        path,
        json!({"cassette": cassette, "mode": mode, "finished": true, "recorded": true}),
        redactor,
    )
}

/// A hook that rewrites the report at `path` with every miss so far (still
/// `"finished": false`, exit code 1), so that a replay its client kills
/// with SIGKILL, which leaves no time for a final report, still fails its
/// test with what it missed (`mcpcassette finish` marks it finished).
pub fn as_misses_happen(
    path: &Path,
    cassette: &Path,
    mode: &str,
    redactor: Redactor,
) -> mcpcassette::replay::MissHook {
    let (path, cassette, mode) = (path.to_owned(), cassette.to_owned(), mode.to_owned());
    // The misses kept, and how many more there were.
    let misses = std::sync::Mutex::new((Vec::<Value>::new(), 0_usize));
    std::sync::Arc::new(move |miss: &Miss| {
        let mut guard = misses.lock().unwrap_or_else(|p| p.into_inner());
        let (kept, not_kept) = &mut *guard;
        // Bounded as the final report is: the first ones, then a count.
        match kept.len() < MISSES_AS_THEY_HAPPEN {
            true => kept.push(miss_json(miss)),
            false => *not_kept += 1,
        }
        let report = json!({
            "cassette": cassette,
            "mode": mode,
            "finished": false,
            "pid": std::process::id(),
            "exit_code": super::exit::UNMATCHED,
            "misses": kept,
            "misses_not_kept": not_kept,
        });
        if let Err(e) = write(&path, report, &redactor) {
            tracing::warn!("cannot write the report as misses happen: {e:#}");
        }
    })
}

/// How many misses the report written as they happen keeps.
const MISSES_AS_THEY_HAPPEN: usize = 256;

/// A replay that ended: misses (each also as the text stderr showed),
/// unused interactions and cases, answer mismatches, unanswered requests.
pub fn replayed(
    path: &Path,
    engine: &Engine,
    summary: &Summary,
    faults: Option<&FaultsSummary>,
    code: u8,
) -> anyhow::Result<()> {
    let interactions = &engine.cassette().interactions;
    let unused: Vec<_> = summary
        .unused
        .iter()
        .map(|&p| json!({"interaction": p, "message": redact::mask_value(interactions[p].client.message())}))
        .collect();
    let misses: Vec<Value> = summary.misses.iter().map(miss_json).collect();
    let mut report = json!({
        "cassette": engine.config().path,
        "mode": engine.config().mode,
        "finished": true,
        "exit_code": code,
        "rules": engine.rules(),
        "misses": misses,
        "misses_not_kept": summary.misses_not_kept,
        "unused": unused,
        "unused_cases": summary.unused_cases,
        "answer_mismatches": summary.answer_mismatches,
        "unanswered": summary.unanswered,
    });
    if let (Some(faults), Value::Object(fields)) = (faults, &mut report) {
        fields.insert("faults".to_owned(), serde_json::to_value(faults)?);
    }
    write(path, report, engine.redactor())
}

/// A miss as the report keeps it: its fields, and `text`, the report as
/// stderr showed it.
fn miss_json(miss: &Miss) -> Value {
    let mut value = serde_json::to_value(miss).unwrap_or(Value::Null);
    if let Value::Object(fields) = &mut value {
        fields.insert("text".to_owned(), Value::String(miss.to_string()));
    }
    value
}

/// Writes `report` atomically, masked by `redactor` (what the cassette or
/// the client held in clear is not written out).
fn write(path: &Path, mut report: Value, redactor: &Redactor) -> anyhow::Result<()> {
    redactor.redact_document(&mut report);
    let text = serde_json::to_string_pretty(&report)? + "\n";
    mcpcassette::cli_support::write_atomically(path, text.as_bytes())?;
    Ok(())
}
