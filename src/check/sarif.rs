//! `check --format sarif`: the findings as one SARIF 2.1.0 run, for code
//! scanning dashboards.
//!
//! The report is bounded whatever the input: every code is one rule (a
//! fixed table), at most [`REPORT_FINDINGS`] results are written (the
//! run's `properties` say how many were left out) and each message is cut
//! to [`REPORT_MESSAGE_CHARS`](super::findings::REPORT_MESSAGE_CHARS)
//! characters. Messages are the findings' own, which `check` has already
//! masked, the same text the text and JSON outputs print.

use std::path::Path;

use serde_json::{Value, json};

use super::findings::{Code, REPORT_FINDINGS, bounded};
use super::{FileReport, Unreadable};

/// The SARIF version written.
pub const SARIF_VERSION: &str = "2.1.0";

/// Where the tool is described (the driver's `informationUri`).
pub const INFORMATION_URI: &str = "https://crates.io/crates/mcpcassette";

/// The SARIF log of `reports` (and of the files that could not be read);
/// paths are written relative to `cwd` when they lie under it.
pub fn to_sarif(reports: &[FileReport], unreadable: &[Unreadable], cwd: Option<&Path>) -> Value {
    let rules: Vec<Value> = Code::ALL.iter().map(|&code| rule(code)).collect();
    let total: usize = reports.iter().map(|r| r.findings.len()).sum();
    let mut results = Vec::new();
    'files: for report in reports {
        let uri = artifact_uri(&report.path, cwd);
        for finding in &report.findings {
            if results.len() == REPORT_FINDINGS {
                break 'files;
            }
            let mut physical = json!({ "artifactLocation": { "uri": uri } });
            if let Some(line) = finding.line {
                physical["region"] = json!({ "startLine": line });
            }
            let mut location = json!({ "physicalLocation": physical });
            if !finding.pointer.is_empty() {
                location["logicalLocations"] = json!([{
                    "fullyQualifiedName": bounded(&finding.pointer),
                    "kind": "element",
                }]);
            }
            results.push(json!({
                "ruleId": finding.code.as_str(),
                "ruleIndex": rule_index(finding.code),
                "level": finding.severity.as_str(),
                "message": { "text": bounded(&finding.message) },
                "locations": [location],
                "properties": {
                    "name": finding.name,
                    "pointer": bounded(&finding.pointer),
                },
            }));
        }
    }
    let notifications: Vec<Value> = unreadable
        .iter()
        .take(REPORT_FINDINGS)
        .map(|u| {
            json!({
                "level": "error",
                "message": { "text": bounded(&u.message) },
                "locations": [{
                    "physicalLocation": {
                        "artifactLocation": { "uri": artifact_uri(&u.path, cwd) }
                    }
                }],
            })
        })
        .collect();
    json!({
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": SARIF_VERSION,
        "runs": [{
            "tool": {
                "driver": {
                    "name": "mcpcassette",
                    "version": env!("CARGO_PKG_VERSION"),
                    "informationUri": INFORMATION_URI,
                    "rules": rules,
                }
            },
            "invocations": [{
                "executionSuccessful": unreadable.is_empty(),
                "toolExecutionNotifications": notifications,
            }],
            "results": results,
            "properties": {
                "findings": total,
                "resultsLimit": REPORT_FINDINGS,
                "resultsOmitted": total - results.len(),
                "unreadableFiles": unreadable.len(),
            },
        }],
    })
}

/// The rule of one code: its id, name, summary, hint and default level.
fn rule(code: Code) -> Value {
    json!({
        "id": code.as_str(),
        "name": code.name(),
        "shortDescription": { "text": code.summary() },
        "help": { "text": code.hint() },
        "defaultConfiguration": { "level": code.severity().as_str() },
    })
}

/// Where `code`'s rule is in the driver's rules.
fn rule_index(code: Code) -> usize {
    Code::ALL
        .iter()
        .position(|&c| c == code)
        .expect("every code is in Code::ALL")
}

/// A path as a SARIF artifact URI: relative to `cwd` when it lies under
/// it, as named or resolved (or is relative already), with forward
/// slashes; otherwise a
/// `file://` URI. Characters outside a URI's path alphabet are
/// percent-encoded.
pub(super) fn artifact_uri(path: &Path, cwd: Option<&Path>) -> String {
    // The same folder may be named two ways (a symlinked temporary
    // folder): compared as named, then as resolved.
    let resolved = |p: &Path| std::fs::canonicalize(p).ok();
    let under = |cwd: &Path| match path.strip_prefix(cwd) {
        Ok(rest) => Some(rest.to_path_buf()),
        Err(_) => resolved(path)?
            .strip_prefix(resolved(cwd)?)
            .ok()
            .map(Path::to_path_buf),
    };
    let relative = if path.is_relative() {
        Some(path.to_path_buf())
    } else {
        cwd.and_then(under)
    };
    match relative.as_deref() {
        Some(relative) => {
            let parts: Vec<String> = relative
                .components()
                .filter(|c| !matches!(c, std::path::Component::CurDir))
                .map(|c| percent_encode(&c.as_os_str().to_string_lossy()))
                .collect();
            parts.join("/")
        }
        None => {
            let text = path.to_string_lossy().replace('\\', "/");
            let text = if text.starts_with('/') {
                text
            } else {
                format!("/{text}")
            };
            format!("file://{}", percent_encode_path(&text))
        }
    }
}

/// `segment` with every byte outside RFC 3986's unreserved characters
/// and sub-delimiters percent-encoded (so also `/`, `?`, `#` and `%`).
fn percent_encode(segment: &str) -> String {
    let mut out = String::with_capacity(segment.len());
    for byte in segment.bytes() {
        if byte.is_ascii_alphanumeric() || b"-._~!$&'()*+,;=:@".contains(&byte) {
            out.push(byte as char);
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

/// An absolute path, encoded segment by segment.
fn percent_encode_path(path: &str) -> String {
    path.split('/')
        .map(percent_encode)
        .collect::<Vec<_>>()
        .join("/")
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;
    use crate::check::{Finding, Severity};
    use crate::schema::ViolationKind;

    fn report(path: &str, findings: Vec<Finding>) -> FileReport {
        FileReport {
            path: PathBuf::from(path),
            findings,
        }
    }

    #[test]
    fn a_finding_becomes_a_result_with_its_rule_line_and_pointer() {
        let finding = Finding::new(
            Code::Schema(ViolationKind::Content),
            "/interactions/3/response/result/content/0/type",
            "unknown content type \"txt\"",
        )
        .at_line(42);
        let log = to_sarif(&[report("cassettes/a b.json", vec![finding])], &[], None);
        assert_eq!(log["version"], "2.1.0");
        let run = &log["runs"][0];
        let rules = run["tool"]["driver"]["rules"].as_array().unwrap();
        assert_eq!(rules.len(), Code::ALL.len());
        let result = &run["results"][0];
        assert_eq!(result["ruleId"], "MC207");
        assert_eq!(
            rules[result["ruleIndex"].as_u64().unwrap() as usize]["id"],
            "MC207"
        );
        assert_eq!(result["level"], "error");
        let location = &result["locations"][0];
        let physical = &location["physicalLocation"];
        assert_eq!(physical["artifactLocation"]["uri"], "cassettes/a%20b.json");
        assert_eq!(physical["region"]["startLine"], 42);
        assert_eq!(
            location["logicalLocations"][0]["fullyQualifiedName"],
            "/interactions/3/response/result/content/0/type"
        );
        assert_eq!(run["properties"]["resultsOmitted"], 0);
        for rule in rules {
            assert!(
                !rule["shortDescription"]["text"]
                    .as_str()
                    .unwrap()
                    .is_empty()
            );
            assert!(!rule["help"]["text"].as_str().unwrap().is_empty());
        }
    }

    #[test]
    fn a_warning_is_a_warning_and_a_finding_without_line_has_no_region() {
        let finding = Finding::new(Code::Duplicate, "", "repeats interaction 0");
        assert_eq!(finding.severity, Severity::Warning);
        let log = to_sarif(&[report("c.json", vec![finding])], &[], None);
        let result = &log["runs"][0]["results"][0];
        assert_eq!(result["level"], "warning");
        assert!(
            result["locations"][0]["physicalLocation"]
                .get("region")
                .is_none()
        );
        assert!(result["locations"][0].get("logicalLocations").is_none());
    }

    #[test]
    fn results_and_messages_are_capped_and_the_rest_counted() {
        let long = "x".repeat(10 * super::super::findings::REPORT_MESSAGE_CHARS);
        let findings: Vec<Finding> = (0..REPORT_FINDINGS + 7)
            .map(|i| {
                Finding::new(Code::Unpaired, format!("/interactions/{i}"), &long).at_line(i + 1)
            })
            .collect();
        let log = to_sarif(&[report("big.json", findings)], &[], None);
        let run = &log["runs"][0];
        assert_eq!(run["results"].as_array().unwrap().len(), REPORT_FINDINGS);
        assert_eq!(run["properties"]["resultsOmitted"], 7);
        let text = run["results"][0]["message"]["text"].as_str().unwrap();
        assert!(text.len() < long.len() / 2 && text.ends_with("(cut)"));
    }

    #[test]
    fn paths_under_the_current_directory_are_relative_with_forward_slashes() {
        let cwd = Path::new("/work/repo");
        assert_eq!(
            artifact_uri(Path::new("/work/repo/cassettes/x.json"), Some(cwd)),
            "cassettes/x.json"
        );
        assert_eq!(artifact_uri(Path::new("./x.json"), Some(cwd)), "x.json");
        assert_eq!(
            artifact_uri(Path::new("/elsewhere/50%.json"), Some(cwd)),
            "file:///elsewhere/50%25.json"
        );
    }

    #[test]
    fn an_unreadable_file_is_a_failed_invocation() {
        let unreadable = Unreadable {
            path: PathBuf::from("missing.json"),
            message: "cannot read missing.json".into(),
        };
        let log = to_sarif(&[], &[unreadable], None);
        let invocation = &log["runs"][0]["invocations"][0];
        assert_eq!(invocation["executionSuccessful"], false);
        assert_eq!(
            invocation["toolExecutionNotifications"][0]["message"]["text"],
            "cannot read missing.json"
        );
    }
}
