//! Checks on the file as text: conflict markers, truncation, JSON syntax,
//! format version and the cassette's structure. Any of these stops the
//! check of a file, since nothing after them can be read reliably.

use std::path::Path;

use serde_json::Value;

use super::findings::{Code, Finding};
use crate::cassette::{self, Cassette, CassetteError, FORMAT_VERSION};

/// What a file that reads as JSON turned out to be.
#[derive(Debug)]
pub(super) enum Read {
    /// A cassette, parsed (once: its text is scanned for secrets as text,
    /// so no second tree of the whole file is built).
    Cassette(Box<Cassette>),
    /// A fixture (it has `fixture_version`), checked on its own terms.
    Fixture(Value),
    /// A faults file (a list of fault rules, or `{"seed", "faults"}`).
    Faults(Value),
}

/// The parsed cassette (or fixture document), or the findings that stop
/// the check.
pub(super) fn read(path: &Path, text: &str) -> Result<Read, Vec<Finding>> {
    let markers = conflict_markers(text);
    if !markers.is_empty() {
        return Err(markers);
    }
    if text.trim().is_empty() {
        return Err(vec![
            Finding::new(Code::Truncated, "", "the file is empty").at_line(1),
        ]);
    }
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    // Most files are cassettes that load: one typed pass says so. Only a
    // file that could be a fixture (any spelling of `fixture_version` has
    // the word, or an escape), or that does not load, is read again for
    // what it is and why it fails.
    let could_be_fixture = ["fixture_version", "\\u"]
        .iter()
        .any(|needle| memchr::memmem::find(text.as_bytes(), needle.as_bytes()).is_some());
    if !could_be_fixture && let Ok(cassette) = cassette::parse(path, text) {
        return Ok(Read::Cassette(Box::new(cassette)));
    }
    let wrapping = crate::json::FILE_WRAPPING;
    // A first pass that keeps nothing but the top-level fields it needs
    // (every value skipped as it is read): the JSON syntax, the kind of
    // document, the format version.
    let top: Top = crate::json::from_slice(text.as_bytes(), wrapping).map_err(|e| {
        let e = match e {
            crate::json::ParseError::TooDeep(deep) => {
                return vec![
                    Finding::new(Code::Structure, deep.pointer.clone(), deep.to_string())
                        .at_line(deep.line),
                ];
            }
            crate::json::ParseError::Json(e) => e,
        };
        let finding = if e.is_eof() {
            Finding::new(
                Code::Truncated,
                "",
                format!(
                    "the JSON ends early, at line {} column {}",
                    e.line(),
                    e.column()
                ),
            )
        } else {
            Finding::new(
                Code::InvalidJson,
                "",
                format!(
                    "not valid JSON: {} (column {})",
                    crate::json::plain_error(&e),
                    e.column()
                ),
            )
        };
        vec![finding.at_line(e.line())]
    })?;
    if top.faults && !top.interactions {
        let document: Value = crate::json::from_slice(text.as_bytes(), wrapping)
            .map_err(|e| vec![Finding::new(Code::InvalidJson, "", e.to_string()).at_line(1)])?;
        return Ok(Read::Faults(document));
    }
    if top.fixture {
        // Fixtures are hand-written and small: their checks read the tree.
        let document: Value = crate::json::from_slice(text.as_bytes(), wrapping)
            .map_err(|e| vec![Finding::new(Code::InvalidJson, "", e.to_string()).at_line(1)])?;
        return Ok(Read::Fixture(document));
    }
    format_version(&top).map_err(|finding| {
        let line = super::Lines::index(text).line_of(&finding.pointer);
        vec![finding.at_line(line.unwrap_or(1))]
    })?;
    let cassette = cassette::parse(path, text).map_err(|e| {
        vec![match e {
            CassetteError::Invalid {
                line,
                pointer,
                message,
                ..
            } => Finding::new(Code::Structure, pointer, message).at_line(line),
            other => Finding::new(Code::Structure, "", other.to_string()),
        }]
    })?;
    // The loader has refused rules that make no sense, at their pointer.
    Ok(Read::Cassette(Box::new(cassette)))
}

/// What the first pass keeps of a document: whether it is an object, a
/// fixture (`fixture_version`), and its `format_version`.
#[derive(Debug, Default)]
struct Top {
    object: bool,
    fixture: bool,
    format_version: Option<Value>,
    /// A list at the top, or a `faults` member: a faults file, unless it
    /// has `interactions` too.
    faults: bool,
    interactions: bool,
}

impl<'de> serde::Deserialize<'de> for Top {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(TopVisitor)
    }
}

struct TopVisitor;

impl<'de> serde::de::Visitor<'de> for TopVisitor {
    type Value = Top;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a JSON document")
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Top, A::Error> {
        let mut top = Top {
            object: true,
            ..Top::default()
        };
        while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
            match key.as_ref() {
                "format_version" => top.format_version = Some(map.next_value()?),
                "fixture_version" => {
                    top.fixture = true;
                    map.next_value::<serde::de::IgnoredAny>()?;
                }
                "faults" | "interactions" => {
                    top.faults |= key == "faults";
                    top.interactions |= key == "interactions";
                    map.next_value::<serde::de::IgnoredAny>()?;
                }
                _ => {
                    map.next_value::<serde::de::IgnoredAny>()?;
                }
            }
        }
        Ok(top)
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Top, A::Error> {
        while seq.next_element::<serde::de::IgnoredAny>()?.is_some() {}
        Ok(Top {
            faults: true,
            ..Top::default()
        })
    }

    fn visit_bool<E>(self, _: bool) -> Result<Top, E> {
        Ok(Top::default())
    }

    fn visit_i64<E>(self, _: i64) -> Result<Top, E> {
        Ok(Top::default())
    }

    fn visit_u64<E>(self, _: u64) -> Result<Top, E> {
        Ok(Top::default())
    }

    fn visit_f64<E>(self, _: f64) -> Result<Top, E> {
        Ok(Top::default())
    }

    fn visit_str<E>(self, _: &str) -> Result<Top, E> {
        Ok(Top::default())
    }

    fn visit_unit<E>(self) -> Result<Top, E> {
        Ok(Top::default())
    }
}

/// One finding per conflict (at its `<<<<<<<` line), or per stray marker.
fn conflict_markers(text: &str) -> Vec<Finding> {
    let mut findings = Vec::new();
    // Almost every file has none: three vectorised searches say so far
    // faster than reading it line by line.
    let bytes = text.as_bytes();
    let markers = ["<<<<<<<", ">>>>>>>", "======="];
    if !markers
        .iter()
        .any(|marker| memchr::memmem::find(bytes, marker.as_bytes()).is_some())
    {
        return findings;
    }
    let mut in_conflict = false;
    for (n, line) in text.lines().enumerate() {
        let marker = if line.starts_with("<<<<<<<") {
            in_conflict = true;
            Some("`<<<<<<<` starts an unresolved git conflict")
        } else if line.starts_with(">>>>>>>") {
            let stray = !in_conflict;
            in_conflict = false;
            stray.then_some("a stray `>>>>>>>` conflict marker")
        } else if line == "=======" && !in_conflict {
            Some("a stray `=======` conflict marker")
        } else {
            None
        };
        if let Some(message) = marker {
            findings.push(Finding::new(Code::ConflictMarkers, "", message).at_line(n + 1));
        }
    }
    findings
}

fn format_version(top: &Top) -> Result<(), Finding> {
    let problem = match &top.format_version {
        _ if !top.object => {
            return Err(
                Finding::new(Code::Structure, "", "a cassette is a JSON object").at_line(1),
            );
        }
        None => "`format_version` is missing: this is not a cassette".to_owned(),
        Some(v) => match v.as_u64() {
            Some(found) if (1..=u64::from(FORMAT_VERSION)).contains(&found) => return Ok(()),
            Some(found) if found > u64::from(FORMAT_VERSION) => format!(
                "format version {found} is newer than this mcpcassette reads (up to {FORMAT_VERSION}); upgrade mcpcassette"
            ),
            _ => format!("`format_version` must be a positive integer, found {v}"),
        },
    };
    Err(Finding::new(
        Code::FormatVersion,
        "/format_version",
        problem,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn codes(text: &str) -> Vec<(Code, Option<usize>)> {
        match read(Path::new("t.json"), text) {
            Ok(_) => vec![],
            Err(findings) => findings.iter().map(|f| (f.code, f.line)).collect(),
        }
    }

    #[test]
    fn conflict_markers_are_found_on_their_lines() {
        let text = "{\n<<<<<<< HEAD\n  \"a\": 1\n=======\n  \"a\": 2\n>>>>>>> branch\n}\n";
        assert_eq!(codes(text), vec![(Code::ConflictMarkers, Some(2))]);
        assert_eq!(
            codes("{}\n=======\n"),
            vec![(Code::ConflictMarkers, Some(2))]
        );
    }

    #[test]
    fn truncation_differs_from_bad_syntax() {
        assert_eq!(
            codes("{\n  \"format_version\": 1,\n  \"a\": ["),
            vec![(Code::Truncated, Some(3))]
        );
        assert_eq!(codes(""), vec![(Code::Truncated, Some(1))]);
        assert_eq!(
            codes("{\n \"a\": tru }"),
            vec![(Code::InvalidJson, Some(2))]
        );
    }

    #[test]
    fn format_version_problems() {
        assert_eq!(codes("{}")[0].0, Code::FormatVersion);
        assert_eq!(codes("{\"format_version\": 99}")[0].0, Code::FormatVersion);
        assert_eq!(
            codes("{\"format_version\": \"1\"}")[0].0,
            Code::FormatVersion
        );
        // A list at the top is a faults file, checked as one.
        assert!(matches!(
            read(Path::new("t.json"), "[]"),
            Ok(Read::Faults(_))
        ));
    }

    #[test]
    fn structure_errors_name_the_pointer() {
        let text = "{\"format_version\": 1, \"recorded_at\": 5}";
        let findings = read(Path::new("t.json"), text).unwrap_err();
        assert_eq!(findings[0].code, Code::Structure);
        assert!(!findings[0].pointer.is_empty() || findings[0].message.contains("recorded_at"));
    }

    #[test]
    fn a_cassette_that_is_also_a_fixture_reads_as_a_fixture_however_the_key_is_spelled() {
        let cassette = r#""format_version": 1, "recorded_at": "2026-01-01T00:00:00Z",
            "transport": {"kind": "stdio", "command": ["s"]},
            "protocol": {"era": "legacy", "version": "2025-11-25"}, "interactions": []"#;
        let kind = |text: &str| match read(Path::new("t.json"), text) {
            Ok(Read::Cassette(_)) => "cassette",
            Ok(Read::Fixture(_)) => "fixture",
            Ok(Read::Faults(_)) => "faults",
            Err(_) => "refused",
        };
        assert_eq!(kind(&format!("{{{cassette}}}")), "cassette");
        for key in [
            "fixture_version",
            "fixture\\u005fversion",
            "\\u0066ixture_version",
        ] {
            let text = format!("{{{cassette}, \"{key}\": 1}}");
            assert_eq!(kind(&text), "fixture", "{text}");
        }
        // The fast path and the slow one agree on what loads: a format
        // version this build does not read is reported as such either way.
        let newer = cassette.replace("\"format_version\": 1", "\"format_version\": 99");
        assert_eq!(codes(&format!("{{{newer}}}"))[0].0, Code::FormatVersion);
        let newer_with_escape = format!("{{{newer}, \"note\": \"\\u0041\"}}");
        assert_eq!(codes(&newer_with_escape)[0].0, Code::FormatVersion);
    }

    #[test]
    fn rules_that_make_no_sense_are_refused_where_they_are_on_either_path() {
        let cassette = r#"{"format_version": 1, "recorded_at": "2026-01-01T00:00:00Z",
            "transport": {"kind": "stdio", "command": ["s"]},
            "protocol": {"era": "legacy", "version": "2025-11-25"}, "interactions": [],
            "rules": {"cases": [{"method": "m", "result": {}, "error": {"code": 1, "message": "x"}}]}"#;
        // As it is (the one typed pass), and with an escape (the slow path).
        for text in [
            format!("{cassette}}}"),
            format!("{cassette}, \"note\": \"\\u0041\"}}"),
        ] {
            let findings = read(Path::new("t.json"), &text).unwrap_err();
            assert_eq!(findings.len(), 1, "{findings:?}");
            assert_eq!(findings[0].code, Code::Structure);
            assert!(
                findings[0].pointer.starts_with("/rules/cases/0"),
                "{findings:?}"
            );
            assert!(
                findings[0].message.contains("invalid rules"),
                "{findings:?}"
            );
            assert_eq!(findings[0].line, Some(4), "{findings:?}");
        }
    }
}
