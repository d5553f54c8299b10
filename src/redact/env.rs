//! Secret environment variables: which values to look for, and the forms
//! they take on the wire. A value leaks not only verbatim but URL-encoded
//! in a query, escaped inside JSON text (or JSON nested in a string),
//! base64-encoded inside `Basic` credentials or blobs, hex-encoded, and
//! upper- or lower-cased (a hex key printed as `A3F9…`); each form becomes
//! a literal needle for one Aho-Corasick pass. A value escaped with `\u`
//! in any mix is found by decoding (see [`super::escapes`]), and a numeric
//! value sent as a JSON number by [`super::Redactor::number_secret`].

use base64::Engine as _;
use base64::engine::general_purpose::{STANDARD_NO_PAD, URL_SAFE_NO_PAD};
use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};

use super::{RedactConfig, escapes, name_looks_secret};

/// Shortest value of a variable picked by its name alone: shorter ones
/// (`true`, `8080`, `dev`) are too likely to be ordinary text.
const MIN_AUTO_LEN: usize = 8;

/// Shortest base64 needle: fewer characters would match unrelated base64.
const MIN_BASE64_NEEDLE: usize = 6;

/// Values of secret-named variables that are settings, not secrets.
const TRIVIAL: [&str; 7] = [
    "disabled",
    "enabled",
    "required",
    "optional",
    "default",
    "localhost",
    "undefined",
];

/// RFC 3986 unreserved characters stay; everything else is encoded.
const UNRESERVED: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');
/// JavaScript's `encodeURIComponent`.
const URI_COMPONENT: &AsciiSet = &UNRESERVED
    .remove(b'!')
    .remove(b'*')
    .remove(b'\'')
    .remove(b'(')
    .remove(b')');
/// Python's `urllib.parse.quote` (keeps `/`).
const PATH: &AsciiSet = &UNRESERVED.remove(b'/');
/// HTML forms (`application/x-www-form-urlencoded`, space then becomes `+`).
const FORM: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'*')
    .remove(b'-')
    .remove(b'.')
    .remove(b'_');

/// One literal to look for, with the placeholder name it is masked with.
#[derive(Debug)]
pub(super) struct Needle {
    pub text: String,
    pub name: String,
}

/// The needles for `config`: explicitly named variables first (any
/// non-empty value), then secret-looking names (values that look like
/// more than a setting). A literal wanted by two variables keeps the
/// first name.
pub(super) fn needles(config: &RedactConfig) -> Vec<Needle> {
    let mut secrets: Vec<(&str, &str)> = Vec::new();
    for wanted in &config.extra_env {
        for (name, value) in &config.env {
            if name == wanted && !value.trim().is_empty() {
                secrets.push((name, value));
            }
        }
    }
    if config.defaults {
        for (name, value) in &config.env {
            if name_looks_secret(name)
                && !config.extra_env.contains(name)
                && value_looks_secret(value)
            {
                secrets.push((name, value));
            }
        }
    }
    let mut seen = std::collections::HashSet::new();
    let mut out = Vec::new();
    for (var, value) in secrets {
        let name = placeholder_name(var);
        let mut forms = encodings(value);
        let trimmed = value.trim();
        if trimmed != value {
            forms.extend(encodings(trimmed));
        }
        for text in forms {
            if !text.is_empty() && seen.insert(text.clone()) {
                out.push(Needle {
                    text,
                    name: name.clone(),
                });
            }
        }
    }
    out
}

/// Longest anchor: enough to be rare, short enough to be shared by most
/// forms of a value (they differ from the first special character on).
const ANCHOR_LEN: usize = 12;
/// Shortest anchor taken from a needle's alphanumeric start.
const MIN_ANCHOR_LEN: usize = 4;

/// The pre-scan's literals: for each needle its alphanumeric start (the
/// same verbatim, URL-encoded, JSON-escaped, and in raw JSON text), or,
/// when that is too short, its start and that start JSON-escaped (a string
/// holding a needle holds, in JSON text, its escape, which begins with the
/// escape of its start). Every text holding a needle, or the JSON text of a
/// string holding one, holds an anchor, unless `\u` escapes were chosen
/// for some of its characters: so the escapes that could stand for one of
/// them are anchors too (those of printable ASCII, or any `\u` once a
/// value has other characters).
pub(super) fn anchors(needles: &[&str]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut add = |anchor: &str| {
        if !anchor.is_empty() && !out.iter().any(|a| a == anchor) {
            out.push(anchor.to_owned());
        }
    };
    if needles.is_empty() {
        return out;
    }
    if needles
        .iter()
        .any(|n| n.bytes().any(|b| !(0x20..0x7f).contains(&b)))
    {
        add(escapes::ANY_ESCAPE);
    } else {
        escapes::TRIGGERS.iter().for_each(|trigger| add(trigger));
    }
    for needle in needles {
        let alnum = needle
            .bytes()
            .take_while(u8::is_ascii_alphanumeric)
            .count()
            .min(ANCHOR_LEN);
        if alnum >= MIN_ANCHOR_LEN {
            add(&needle[..alnum]);
        } else {
            let mut end = needle.len().min(ANCHOR_LEN);
            while !needle.is_char_boundary(end) {
                end -= 1;
            }
            add(&needle[..end]);
            add(&json_escape(&needle[..end]));
        }
    }
    out
}

/// Whether `text` reads as a JSON number (`8675309123`, `-12`, `3.5`):
/// a value a server may send unquoted.
pub(super) fn is_numeric(text: &str) -> bool {
    let digits = text.strip_prefix('-').unwrap_or(text);
    let mut parts = digits.splitn(2, '.');
    let whole = parts.next().unwrap_or_default();
    let fraction = parts.next();
    !whole.is_empty()
        && whole.bytes().all(|b| b.is_ascii_digit())
        && (whole == "0" || !whole.starts_with('0'))
        && fraction.is_none_or(|f| !f.is_empty() && f.bytes().all(|b| b.is_ascii_digit()))
}

/// Whether the value of a secret-named variable is worth masking.
fn value_looks_secret(value: &str) -> bool {
    let value = value.trim();
    value.chars().count() >= MIN_AUTO_LEN && !TRIVIAL.iter().any(|t| value.eq_ignore_ascii_case(t))
}

/// A variable name as a placeholder name: `[A-Z0-9_]` only.
pub(crate) fn placeholder_name(var: &str) -> String {
    let name: String = var
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_uppercase()
            } else {
                '_'
            }
        })
        .collect();
    if name.is_empty() {
        "ENV".to_owned()
    } else {
        name
    }
}

/// Every form of `value` worth looking for, verbatim first, deduplicated.
pub(super) fn encodings(value: &str) -> Vec<String> {
    let mut out = vec![
        value.to_owned(),
        value.to_ascii_uppercase(),
        value.to_ascii_lowercase(),
        hex::encode(value),
        hex::encode_upper(value),
    ];
    for set in [UNRESERVED, URI_COMPONENT, PATH, NON_ALPHANUMERIC, FORM] {
        let encoded = utf8_percent_encode(value, set).to_string();
        let form = encoded.replace("%20", "+");
        out.push(lower_hex(&encoded));
        out.push(lower_hex(&form));
        out.push(encoded);
        out.push(form);
    }
    let once = [
        json_escape(value),
        json_escape_ascii(value),
        json_escape(value).replace('/', "\\/"),
    ];
    for escaped in once {
        out.push(json_escape(&escaped));
        out.push(escaped);
    }
    for engine in [&STANDARD_NO_PAD, &URL_SAFE_NO_PAD] {
        for offset in 0..3 {
            if let Some(middle) = base64_middle(engine, value.as_bytes(), offset) {
                out.push(middle);
            }
        }
    }
    let mut seen = std::collections::HashSet::new();
    out.retain(|form| seen.insert(form.clone()));
    out
}

/// The base64 characters fixed by `value` alone when it starts `offset`
/// bytes into a 3-byte group: whatever surrounds it, a longer base64 string
/// holding `value` at that alignment contains exactly these characters.
pub(super) fn base64_middle(
    engine: &base64::engine::GeneralPurpose,
    value: &[u8],
    offset: usize,
) -> Option<String> {
    let mut input = vec![0u8; offset];
    input.extend_from_slice(value);
    let encoded = engine.encode(&input);
    // Character i holds bits 6i..6i+6; keep those inside the value's bits.
    let start = (8 * offset).div_ceil(6);
    let end = 8 * (offset + value.len()) / 6;
    (end >= start + MIN_BASE64_NEEDLE).then(|| encoded[start..end].to_owned())
}

/// `value` as it appears between the quotes of a JSON string.
pub(super) fn json_escape(value: &str) -> String {
    let quoted = serde_json::to_string(value).expect("a string serializes");
    quoted[1..quoted.len() - 1].to_owned()
}

/// Like [`json_escape`] with non-ASCII as `\uXXXX` (Python's default).
fn json_escape_ascii(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for c in value.chars() {
        if c.is_ascii() {
            out.push_str(&json_escape(c.encode_utf8(&mut [0; 4])));
        } else {
            let mut units = [0u16; 2];
            for unit in c.encode_utf16(&mut units) {
                out.push_str(&format!("\\u{unit:04x}"));
            }
        }
    }
    out
}

/// `%2F` → `%2f`: both are valid and both are sent.
fn lower_hex(encoded: &str) -> String {
    let mut out = String::with_capacity(encoded.len());
    let mut rest = encoded;
    while let Some(at) = rest.find('%') {
        out.push_str(&rest[..=at]);
        let hex = rest.get(at + 1..at + 3).unwrap_or("");
        out.push_str(&hex.to_ascii_lowercase());
        rest = &rest[(at + 1 + hex.len()).min(rest.len())..];
    }
    out.push_str(rest);
    out
}
