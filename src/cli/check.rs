//! `mcpcassette check`: findings per file, as text, JSON, SARIF or JUnit
//! XML.

use std::io::Write;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Context;
use mcpcassette::cassette;
use mcpcassette::check::{self, CheckConfig, FileReport, Severity, Unreadable};
use mcpcassette::cli_support::chain;
use mcpcassette::schema::OfficialSchema;

use super::args::{CheckArgs, CheckFormat};

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
            Err(error) => unreadable.push(Unreadable {
                path: path.clone(),
                message: super::logging::mask(&chain(&error)),
            }),
        }
    }
    let dry_runs = match &args.faults {
        Some(path) => dry_runs(path, &args.files)?,
        None => Vec::new(),
    };
    let format = if args.json {
        CheckFormat::Json
    } else {
        args.format
    };
    let mut stdout = std::io::stdout().lock();
    match format {
        CheckFormat::Json => {
            let errors: usize = reports.iter().map(|r| r.count(Severity::Error)).sum();
            let warnings: usize = reports.iter().map(|r| r.count(Severity::Warning)).sum();
            let unreadable: Vec<&str> = unreadable.iter().map(|u| u.message.as_str()).collect();
            let mut json = serde_json::json!({
                "files": reports,
                "unreadable": unreadable,
                "errors": errors,
                "warnings": warnings,
            });
            if args.faults.is_some() {
                json["faults"] = serde_json::to_value(&dry_runs)?;
            }
            writeln!(stdout, "{}", serde_json::to_string_pretty(&json)?)?;
        }
        CheckFormat::Sarif => {
            let cwd = std::env::current_dir().ok();
            let log = check::to_sarif(&reports, &unreadable, cwd.as_deref());
            writeln!(stdout, "{}", serde_json::to_string_pretty(&log)?)?;
        }
        CheckFormat::Junit => write!(stdout, "{}", check::to_junit(&reports, &unreadable))?,
        CheckFormat::Text => {
            for report in &reports {
                write!(stdout, "{}", report.to_text())?;
            }
            for error in &unreadable {
                writeln!(stdout, "error: {}", error.message)?;
            }
            for dry_run in &dry_runs {
                write!(stdout, "{dry_run}")?;
            }
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

/// What the rules of one faults file would hit in one cassette.
#[derive(Debug, serde::Serialize)]
struct DryRun {
    faults: std::path::PathBuf,
    cassette: std::path::PathBuf,
    rules: Vec<DryRule>,
}

#[derive(Debug, serde::Serialize)]
struct DryRule {
    fault: usize,
    rule: String,
    /// Each interaction it would hit: position and label.
    hits: Vec<(usize, String)>,
}

impl std::fmt::Display for DryRun {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(
            f,
            "{} on {} (a client asking what was recorded, in order):",
            self.faults.display(),
            self.cassette.display()
        )?;
        for rule in &self.rules {
            writeln!(f, "  {}", rule.rule)?;
            if rule.hits.is_empty() {
                writeln!(f, "    would hit nothing")?;
            }
            for (position, label) in &rule.hits {
                writeln!(f, "    would hit #{position} {label}")?;
            }
        }
        Ok(())
    }
}

/// The dry run of the faults file at `path` on each cassette of `files`
/// (fixtures and unreadable files are left to the check itself).
fn dry_runs(path: &std::path::Path, files: &[std::path::PathBuf]) -> anyhow::Result<Vec<DryRun>> {
    let faults = cassette::load_faults(path)?;
    let described = mcpcassette::faults::describe_rules(&faults);
    let mut runs = Vec::new();
    for file in files {
        let Ok(cassette) = cassette::load(file) else {
            continue;
        };
        let hits = mcpcassette::faults::would_hit(&faults, &cassette);
        let rules = hits
            .into_iter()
            .map(|hit| DryRule {
                fault: hit.fault,
                rule: described[hit.fault].clone(),
                hits: (hit.interactions.iter())
                    .map(|&p| (p, cassette.interactions[p].label()))
                    .collect(),
            })
            .collect();
        runs.push(DryRun {
            faults: path.to_owned(),
            cassette: file.clone(),
            rules,
        });
    }
    Ok(runs)
}
