//! `check --format junit`: the findings as JUnit XML, for CI test
//! reports. One test case per checked file: a file with errors fails
//! (its errors listed as the text output prints them), its warnings go to
//! `<system-out>`, a file that cannot be read is an `<error>`.
//!
//! The XML is written by hand: five entities and the characters XML 1.0
//! cannot hold are all there is to escape ([`escape`]). Like the SARIF
//! report it is bounded: at most [`REPORT_FINDINGS`] findings are listed
//! in all, each message cut to
//! [`REPORT_MESSAGE_CHARS`](super::findings::REPORT_MESSAGE_CHARS)
//! characters.

use std::fmt::Write;

use super::findings::{Finding, REPORT_FINDINGS, Severity, bounded};
use super::{FileReport, Unreadable};

/// The test suite's name.
pub(super) const SUITE: &str = "mcpcassette check";

/// The JUnit XML document of `reports` (and of the files that could not
/// be read), one test case each.
pub fn to_junit(reports: &[FileReport], unreadable: &[Unreadable]) -> String {
    let tests = reports.len() + unreadable.len();
    let failures = reports.iter().filter(|r| r.has_errors()).count();
    let errors = unreadable.len();
    let counts = format!(r#"tests="{tests}" failures="{failures}" errors="{errors}""#);
    let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let _ = writeln!(out, r#"<testsuites name="{SUITE}" {counts}>"#);
    let _ = writeln!(out, r#"  <testsuite name="{SUITE}" {counts} skipped="0">"#);
    let mut budget = REPORT_FINDINGS;
    for report in reports {
        let name = escape(&report.path.display().to_string());
        let _ = write!(out, r#"    <testcase classname="check" name="{name}">"#);
        let (errors, warnings): (Vec<&Finding>, Vec<&Finding>) =
            (report.findings.iter()).partition(|f| f.severity == Severity::Error);
        if let Some(first) = errors.first() {
            let n = errors.len();
            let _ = write!(
                out,
                "\n      <failure message=\"{n} problem{}\" type=\"{}\">{}</failure>",
                if n == 1 { "" } else { "s" },
                first.code.as_str(),
                escape_text(&listing(report, &errors, &mut budget))
            );
        }
        if !warnings.is_empty() {
            let _ = write!(
                out,
                "\n      <system-out>{}</system-out>",
                escape_text(&listing(report, &warnings, &mut budget))
            );
        }
        if !report.findings.is_empty() {
            out.push_str("\n    ");
        }
        out.push_str("</testcase>\n");
    }
    for file in unreadable {
        let _ = writeln!(
            out,
            "    <testcase classname=\"check\" name=\"{}\">\n      <error message=\"{}\" type=\"unreadable\"/>\n    </testcase>",
            escape(&file.path.display().to_string()),
            escape(&bounded(&file.message))
        );
    }
    out.push_str("  </testsuite>\n</testsuites>\n");
    out
}

/// `findings` as the text output prints them, while `budget` lasts; the
/// rest counted in a last line.
fn listing(report: &FileReport, findings: &[&Finding], budget: &mut usize) -> String {
    let shown = findings.len().min(*budget);
    *budget -= shown;
    let mut text = String::new();
    for finding in &findings[..shown] {
        let mut finding = (*finding).clone();
        if let std::borrow::Cow::Owned(cut) = bounded(&finding.message) {
            finding.message = cut;
        }
        text.push_str(&finding.to_text(&report.path));
    }
    if shown < findings.len() {
        let _ = writeln!(
            text,
            "… and {} more (the report lists at most {REPORT_FINDINGS} findings)",
            findings.len() - shown
        );
    }
    text
}

/// `text` as an attribute value: the five special characters as
/// entities, line breaks and tabs as character references (an attribute
/// keeps them only so), and characters XML 1.0 cannot hold (other control
/// characters, U+FFFE, U+FFFF) as U+FFFD.
pub(super) fn escape(text: &str) -> String {
    escape_as(text, false)
}

/// `text` as character data: as [`escape`], but line feeds and tabs stay
/// as they are, so that the listing reads as the text output does.
pub(super) fn escape_text(text: &str) -> String {
    escape_as(text, true)
}

fn escape_as(text: &str, content: bool) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\n' | '\t' if content => out.push(c),
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\n' => out.push_str("&#10;"),
            '\r' => out.push_str("&#13;"),
            '\t' => out.push_str("&#9;"),
            '\u{0}'..='\u{1f}' | '\u{fffe}' | '\u{ffff}' => out.push('\u{fffd}'),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;
    use crate::check::Code;

    fn report(path: &str, findings: Vec<Finding>) -> FileReport {
        FileReport {
            path: PathBuf::from(path),
            findings,
        }
    }

    #[test]
    fn escaping_covers_markup_quotes_breaks_and_forbidden_characters() {
        assert_eq!(
            escape("a<b>&\"c\" 'd'\n\t\r]]>"),
            "a&lt;b&gt;&amp;&quot;c&quot; &apos;d&apos;&#10;&#9;&#13;]]&gt;"
        );
        assert_eq!(
            escape("x\u{0}y\u{1b}z\u{ffff}"),
            "x\u{fffd}y\u{fffd}z\u{fffd}"
        );
        assert_eq!(escape("é ✓ 🦀"), "é ✓ 🦀");
        assert_eq!(escape_text("a\n\tb\r<c>"), "a\n\tb&#13;&lt;c&gt;");
    }

    #[test]
    fn one_case_per_file_failing_on_errors_with_warnings_in_system_out() {
        let error =
            Finding::new(Code::Unpaired, "/interactions/2", "no request <has> id 7").at_line(9);
        let warning =
            Finding::new(Code::Duplicate, "/interactions/3", "repeats interaction 1").at_line(12);
        let reports = [
            report("bad.json", vec![error.clone(), error, warning.clone()]),
            report("warned.json", vec![warning]),
            report("clean.json", vec![]),
        ];
        let unreadable = [Unreadable {
            path: PathBuf::from("gone & lost.json"),
            message: "cannot read gone & lost.json".into(),
        }];
        let xml = to_junit(&reports, &unreadable);
        assert!(xml.starts_with("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites"));
        assert!(xml.contains(
            r#"<testsuite name="mcpcassette check" tests="4" failures="1" errors="1" skipped="0">"#
        ));
        assert_eq!(xml.matches("<testcase ").count(), 4);
        assert_eq!(xml.matches("<failure ").count(), 1);
        assert!(xml.contains(r#"<failure message="2 problems" type="MC301">error[MC301] unpaired: no request &lt;has&gt; id 7
  --&gt; bad.json:9 at /interactions/2"#));
        assert_eq!(xml.matches("<system-out>warning[MC302]").count(), 2);
        assert!(xml.contains(r#"<testcase classname="check" name="clean.json"></testcase>"#));
        assert!(xml.contains(r#"name="gone &amp; lost.json""#));
        assert!(
            xml.contains(
                r#"<error message="cannot read gone &amp; lost.json" type="unreadable"/>"#
            )
        );
        assert!(xml.ends_with("  </testsuite>\n</testsuites>\n"));
    }

    #[test]
    fn the_listing_is_bounded() {
        let findings: Vec<Finding> = (0..REPORT_FINDINGS + 3)
            .map(|i| {
                Finding::new(
                    Code::Unpaired,
                    format!("/interactions/{i}"),
                    "x".repeat(3 * super::super::findings::REPORT_MESSAGE_CHARS),
                )
            })
            .collect();
        let xml = to_junit(&[report("big.json", findings)], &[]);
        assert!(xml.contains("… and 3 more"));
        assert!(
            xml.len() < REPORT_FINDINGS * 2 * super::super::findings::REPORT_MESSAGE_CHARS + 10_000
        );
    }
}
