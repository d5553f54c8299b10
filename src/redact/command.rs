//! The original, context-free helpers: secret-looking names, server command
//! lines and token shapes in values. They print the plain [`MASK`], because
//! their output is read by people (cassette headers, reports) next to
//! commands they may want to run again.

use serde_json::Value;

use super::{MASK, merge, shapes};

/// Words that make a flag or variable name look secret, when one of them is
/// a whole word of the name (`GITHUB_TOKEN`, `--api-key`; not `--max-tokens`).
const SECRET_WORDS: [&str; 12] = [
    "TOKEN",
    "SECRET",
    "KEY",
    "APIKEY",
    "PASSWORD",
    "PASSWD",
    "PASS",
    "CREDENTIAL",
    "CREDENTIALS",
    "AUTH",
    "AUTHORIZATION",
    "BEARER",
];

/// Whether a flag or variable name looks like it holds a secret.
pub fn name_looks_secret(name: &str) -> bool {
    name.trim_start_matches('-')
        .split(['-', '_', '.'])
        .any(|word| {
            SECRET_WORDS
                .iter()
                .any(|secret| word.eq_ignore_ascii_case(secret))
        })
}

/// Masks secrets in a command line: `--token X`, `--api-key=X`,
/// `API_KEY=X`, `https://user:pass@host`, and token-shaped arguments.
pub fn mask_command(args: &[String]) -> Vec<String> {
    let mut masked = Vec::with_capacity(args.len());
    let mut mask_next = false;
    for arg in args {
        if mask_next {
            masked.push(MASK.to_owned());
            mask_next = false;
            continue;
        }
        let is_flag = arg.starts_with('-');
        match arg.split_once('=') {
            Some((name, _)) if name_looks_secret(name) && !name.contains('/') => {
                masked.push(format!("{name}={MASK}"));
            }
            None if is_flag && name_looks_secret(arg) => {
                masked.push(arg.clone());
                mask_next = true;
            }
            _ => masked.push(mask_tokens(&mask_url_password(arg))),
        }
    }
    masked
}

/// `scheme://user:password@host` → `scheme://user:[REDACTED]@host`.
fn mask_url_password(arg: &str) -> String {
    let Some(scheme_end) = arg.find("://") else {
        return arg.to_owned();
    };
    let rest = &arg[scheme_end + 3..];
    let authority_end = rest.find('/').unwrap_or(rest.len());
    let Some(at) = rest[..authority_end].rfind('@') else {
        return arg.to_owned();
    };
    let Some(colon) = rest[..at].find(':') else {
        return arg.to_owned();
    };
    format!(
        "{}{}{MASK}{}",
        &arg[..scheme_end + 3],
        &rest[..=colon],
        &rest[at..]
    )
}

/// Replaces well-known token shapes (the same ones a [`super::Redactor`]
/// knows) wherever they appear in `text`, with the plain [`MASK`].
pub fn mask_tokens(text: &str) -> String {
    let mut raw = Vec::new();
    shapes::find(text, 0, &mut raw);
    let mut out = String::with_capacity(text.len());
    let mut last = 0;
    for hit in merge(raw) {
        out.push_str(&text[last..hit.range.start]);
        out.push_str(MASK);
        last = hit.range.end;
    }
    out.push_str(&text[last..]);
    out
}

/// A copy of `value` with token shapes masked in every string (keys are
/// left alone: they are protocol field names).
pub fn mask_value(value: &Value) -> Value {
    match value {
        Value::String(s) => Value::String(mask_tokens(s)),
        Value::Array(items) => Value::Array(items.iter().map(mask_value).collect()),
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| (k.clone(), mask_value(v)))
                .collect(),
        ),
        other => other.clone(),
    }
}
