//! `mcpcassette check`: findings per file, as text or JSON.

use std::io::Write;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Context;
use mcpcassette::check::{self, CheckConfig, FileReport, Severity};
use mcpcassette::schema::OfficialSchema;

use super::args::CheckArgs;

/// Checks every file; exit 0 clean (warnings allowed), 1 when any finding
/// is an error, 2 when a file cannot be read.
pub fn run(args: CheckArgs) -> anyhow::Result<ExitCode> {
    let official = match &args.schema {
        Some(path) => Some(Arc::new(
            OfficialSchema::load(path).with_context(|| format!("--schema {}", path.display()))?,
        )),
        None => None,
    };
    let config = CheckConfig {
        redactor: super::redactor(Vec::new(), args.redact_env.clone())?,
        official,
    };
    let mut reports = Vec::new();
    let mut unreadable = Vec::new();
    for path in &args.files {
        match check::check_file(path, &config) {
            Ok(report) => reports.push(report),
            Err(error) => unreadable.push(super::logging::mask(&error.to_string())),
        }
    }
    let mut stdout = std::io::stdout().lock();
    if args.json {
        let errors: usize = reports.iter().map(|r| r.count(Severity::Error)).sum();
        let warnings: usize = reports.iter().map(|r| r.count(Severity::Warning)).sum();
        let json = serde_json::json!({
            "files": reports,
            "unreadable": unreadable,
            "errors": errors,
            "warnings": warnings,
        });
        writeln!(stdout, "{}", serde_json::to_string_pretty(&json)?)?;
    } else {
        for report in &reports {
            write!(stdout, "{}", render(report))?;
        }
        for error in &unreadable {
            writeln!(stdout, "error: {error}")?;
        }
    }
    let code = if !unreadable.is_empty() {
        super::exit::ERROR
    } else if reports.iter().any(FileReport::has_errors) {
        super::exit::UNMATCHED
    } else {
        super::exit::OK
    };
    Ok(ExitCode::from(code))
}

/// rustc-style text: one block per finding, then a summary line.
fn render(report: &FileReport) -> String {
    use std::fmt::Write;
    let path = report.path.display();
    let mut out = String::new();
    for f in &report.findings {
        let severity = match f.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
        };
        let _ = writeln!(
            out,
            "{severity}[{}] {}: {}",
            f.code.as_str(),
            f.name,
            f.message
        );
        let line = f.line.map(|l| format!(":{l}")).unwrap_or_default();
        let at = if f.pointer.is_empty() {
            String::new()
        } else {
            format!(" at {}", f.pointer)
        };
        let _ = writeln!(out, "  --> {path}{line}{at}");
        let _ = writeln!(out, "   = hint: {}\n", f.hint);
    }
    let (errors, warnings) = (
        report.count(Severity::Error),
        report.count(Severity::Warning),
    );
    let verdict = if errors + warnings == 0 {
        "ok"
    } else if errors > 0 {
        "FAILED"
    } else {
        "ok"
    };
    let _ = writeln!(
        out,
        "{path}: {verdict} ({errors} error{}, {warnings} warning{})",
        plural(errors),
        plural(warnings)
    );
    out
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}
