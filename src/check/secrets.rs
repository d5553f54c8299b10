//! Likely secrets anywhere in a cassette: token shapes and the values of
//! secret-looking environment variables (the redactor's detectors, also
//! for a numeric secret stored as a number), and long strings under
//! secret-looking keys (`"api_key": "…"`).

use serde_json::Value;

use super::findings::{Code, Finding};
use crate::redact::{self, Redactor};

/// Walks every string of the document.
pub(super) fn scan(document: &Value, redactor: &Redactor, findings: &mut Vec<Finding>) {
    let mut pointer = String::new();
    walk(document, None, &mut pointer, redactor, findings);
}

/// [`scan`] over a document's text, reading each string and number as it
/// is parsed (no tree of the document is built): what `check` does for a
/// cassette, whose tree it already holds in typed form.
///
/// `check` starts it on a big file while the file is still being parsed,
/// so the text may turn out not to be JSON, or to nest too deep: the scan
/// then stops where it is and says why, for the caller to log only if the
/// file was a cassette after all.
pub(super) fn scan_text(
    text: &str,
    redactor: &Redactor,
    findings: &mut Vec<Finding>,
) -> Result<(), serde_json::Error> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut de = serde_json::Deserializer::from_str(text);
    // Deeper than serde_json's default, as cassettes may nest; the walk
    // keeps its own bound, so the stack does too.
    de.disable_recursion_limit();
    let mut pointer = String::new();
    let seed = Walk {
        key: None,
        depth: 0,
        pointer: &mut pointer,
        redactor,
        findings,
    };
    serde::de::DeserializeSeed::deserialize(seed, &mut de)
}

/// How deep the text scan goes: as deep as a cassette may nest.
const MAX_WALK_DEPTH: usize = crate::json::MAX_DEPTH + crate::json::FILE_WRAPPING;

/// The findings for one string (under `key`, if a member's value).
fn string_findings(
    text: &str,
    key: Option<&str>,
    pointer: &str,
    redactor: &Redactor,
) -> Vec<Finding> {
    let mut names: Vec<String> = redactor.find(text).into_iter().map(|h| h.name).collect();
    names.dedup();
    if names.is_empty()
        && let Some(key) = key.filter(|k| redact::name_looks_secret(k))
        && text.chars().count() >= 8
        && !redact::is_placeholder(text)
    {
        names.push(format!("a value under the key `{key}`"));
    }
    names
        .into_iter()
        .map(|name| {
            Finding::new(
                Code::LikelySecret,
                pointer.to_owned(),
                format!("this string holds what looks like a secret ({name})"),
            )
        })
        .collect()
}

/// The finding for a number that is a numeric secret, if it is one.
fn number_finding(
    number: &serde_json::Number,
    pointer: &str,
    redactor: &Redactor,
) -> Option<Finding> {
    let name = redactor.number_secret(number)?;
    Some(Finding::new(
        Code::LikelySecret,
        pointer.to_owned(),
        format!("this number is what looks like a secret ({name})"),
    ))
}

/// Visits one value of the text at `pointer`.
struct Walk<'a> {
    key: Option<&'a str>,
    /// How many containers hold this value.
    depth: usize,
    pointer: &'a mut String,
    redactor: &'a Redactor,
    findings: &'a mut Vec<Finding>,
}

impl<'de> serde::de::DeserializeSeed<'de> for Walk<'_> {
    type Value = ();

    fn deserialize<D: serde::Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        if self.depth > MAX_WALK_DEPTH {
            return Err(serde::de::Error::custom(format_args!(
                "the text nests more than {MAX_WALK_DEPTH} levels deep"
            )));
        }
        deserializer.deserialize_any(self)
    }
}

impl Walk<'_> {
    fn number(self, number: serde_json::Number) {
        self.findings
            .extend(number_finding(&number, self.pointer, self.redactor));
    }
}

impl<'de> serde::de::Visitor<'de> for Walk<'_> {
    type Value = ();

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_str<E>(self, text: &str) -> Result<(), E> {
        let found = string_findings(text, self.key, self.pointer, self.redactor);
        self.findings.extend(found);
        Ok(())
    }

    fn visit_u64<E>(self, n: u64) -> Result<(), E> {
        self.number(n.into());
        Ok(())
    }

    fn visit_i64<E>(self, n: i64) -> Result<(), E> {
        self.number(n.into());
        Ok(())
    }

    fn visit_f64<E>(self, n: f64) -> Result<(), E> {
        if let Some(number) = serde_json::Number::from_f64(n) {
            self.number(number);
        }
        Ok(())
    }

    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        Ok(())
    }

    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let mut index = 0usize;
        loop {
            let len = self.pointer.len();
            crate::json::push_index(self.pointer, index);
            let item = Walk {
                key: None,
                depth: self.depth + 1,
                pointer: &mut *self.pointer,
                redactor: self.redactor,
                findings: &mut *self.findings,
            };
            let more = seq.next_element_seed(item)?.is_some();
            self.pointer.truncate(len);
            if !more {
                return Ok(());
            }
            index += 1;
        }
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while let Some(name) = map.next_key::<std::borrow::Cow<'de, str>>()? {
            let len = self.pointer.len();
            crate::json::push_key(self.pointer, &name);
            let member = Walk {
                key: Some(&name),
                depth: self.depth + 1,
                pointer: &mut *self.pointer,
                redactor: self.redactor,
                findings: &mut *self.findings,
            };
            map.next_value_seed(member)?;
            self.pointer.truncate(len);
        }
        Ok(())
    }
}

fn walk(
    value: &Value,
    key: Option<&str>,
    pointer: &mut String,
    redactor: &Redactor,
    findings: &mut Vec<Finding>,
) {
    match value {
        Value::String(text) => findings.extend(string_findings(text, key, pointer, redactor)),
        // A numeric environment secret sent unquoted.
        Value::Number(number) => findings.extend(number_finding(number, pointer, redactor)),
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                let len = pointer.len();
                crate::json::push_index(pointer, i);
                walk(item, None, pointer, redactor, findings);
                pointer.truncate(len);
            }
        }
        Value::Object(members) => {
            for (name, member) in members {
                let len = pointer.len();
                crate::json::push_key(pointer, name);
                walk(member, Some(name), pointer, redactor, findings);
                pointer.truncate(len);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::redact::RedactConfig;

    #[test]
    fn the_text_scan_finds_what_the_tree_walk_finds_at_the_same_pointers() {
        let redactor = Redactor::new(&RedactConfig {
            defaults: true,
            env: vec![
                ("MY_TOKEN".into(), "Sup3r-secret-value".into()),
                ("MY_SECRET_PIN".into(), "4815162342".into()),
            ],
            ..RedactConfig::default()
        })
        .unwrap();
        let text = r#"{
  "a~b/c": {"api_key": "long-enough-value", "list": [1, "x", "ghp_0123456789abcdefghijABCDEFGHIJ012345"]},
  "escaped": "Sup3r-secret\u002dvalue",
  "pin": 4815162342,
  "fine": ["short", 2.5, true, null, {"password": "[REDACTED:X]"}]
}"#;
        let document: Value = serde_json::from_str(text).unwrap();
        let mut walked = Vec::new();
        scan(&document, &redactor, &mut walked);
        let mut scanned = Vec::new();
        scan_text(&format!("\u{feff}{text}"), &redactor, &mut scanned).unwrap();
        let found = |findings: &[Finding]| -> Vec<(String, String)> {
            findings
                .iter()
                .map(|f| (f.pointer.clone(), f.message.clone()))
                .collect()
        };
        assert_eq!(found(&scanned), found(&walked));
        let pointers: Vec<&str> = scanned.iter().map(|f| f.pointer.as_str()).collect();
        assert_eq!(
            pointers,
            ["/a~0b~1c/api_key", "/a~0b~1c/list/2", "/escaped", "/pin"]
        );
    }

    #[test]
    fn the_text_scan_stops_at_its_depth_bound_and_at_bad_text_with_what_it_found() {
        let redactor = Redactor::defaults();
        let token = "ghp_0123456789abcdefghijABCDEFGHIJ012345";
        // Within the bound: read to the bottom.
        let within = format!(
            "{}\"{token}\"{}",
            "[".repeat(MAX_WALK_DEPTH),
            "]".repeat(MAX_WALK_DEPTH)
        );
        let mut findings = Vec::new();
        scan_text(&within, &redactor, &mut findings).unwrap();
        assert_eq!(findings.len(), 1, "{findings:?}");
        // A million levels: refused at the bound, not by the stack.
        let deep = format!("[\"{token}\",{}", "[".repeat(1_000_000));
        let mut findings = Vec::new();
        let error = scan_text(&deep, &redactor, &mut findings).unwrap_err();
        assert!(error.to_string().contains("levels deep"), "{error}");
        assert_eq!(findings.len(), 1, "what came before is kept");
        // Not JSON at all: an error, no panic.
        assert!(scan_text("{\"a\": ", &redactor, &mut Vec::new()).is_err());
    }
}
