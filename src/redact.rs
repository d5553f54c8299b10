//! Keeping secrets out of cassettes.
//!
//! For now this covers the server command stored in a cassette's header:
//! values of secret-looking flags and `NAME=value` pairs, credentials in
//! URLs, and well-known token shapes are replaced by a named placeholder.

/// The placeholder for a masked value.
pub const MASK: &str = "[REDACTED]";

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

/// Replaces well-known token shapes wherever they appear in `text`.
pub fn mask_tokens(text: &str) -> String {
    const PREFIXES: [&str; 9] = [
        "sk-",
        "ghp_",
        "gho_",
        "ghs_",
        "github_pat_",
        "xoxb-",
        "xoxp-",
        "xoxa-",
        "AKIA",
    ];
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    'scan: while !rest.is_empty() {
        for prefix in PREFIXES {
            if let Some(tail) = rest.strip_prefix(prefix) {
                let len = tail
                    .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '-'))
                    .unwrap_or(tail.len());
                if len >= 12 && at_word_start(text, rest) {
                    out.push_str(MASK);
                    rest = &tail[len..];
                    continue 'scan;
                }
            }
        }
        if let Some(len) = jwt_len(rest).filter(|_| at_word_start(text, rest)) {
            out.push_str(MASK);
            rest = &rest[len..];
            continue;
        }
        let mut chars = rest.chars();
        out.push(chars.next().expect("rest is not empty"));
        rest = chars.as_str();
    }
    out
}

fn at_word_start(whole: &str, rest: &str) -> bool {
    let offset = whole.len() - rest.len();
    whole[..offset]
        .chars()
        .next_back()
        .is_none_or(|c| !c.is_ascii_alphanumeric())
}

/// Length of a JWT (`eyJ….….…`) at the start of `text`.
fn jwt_len(text: &str) -> Option<usize> {
    if !text.starts_with("eyJ") {
        return None;
    }
    let len = text
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '-' || c == '.'))
        .unwrap_or(text.len());
    (text[..len]
        .split('.')
        .filter(|part| !part.is_empty())
        .count()
        == 3)
        .then_some(len)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(args: &[&str]) -> Vec<String> {
        args.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn masks_flag_values_and_assignments() {
        let args = strings(&[
            "server",
            "--token",
            "abc",
            "--api-key=xyz",
            "GITHUB_TOKEN=ghp",
            "--port",
            "80",
        ]);
        assert_eq!(
            mask_command(&args),
            strings(&[
                "server",
                "--token",
                MASK,
                "--api-key=[REDACTED]",
                "GITHUB_TOKEN=[REDACTED]",
                "--port",
                "80"
            ])
        );
    }

    #[test]
    fn masks_url_passwords_and_token_shapes() {
        let args = strings(&[
            "https://me:hunter2@example.com/x",
            "ghp_0123456789abcdefghij",
            "x-sk-notatoken",
        ]);
        assert_eq!(
            mask_command(&args),
            strings(&[
                "https://me:[REDACTED]@example.com/x",
                MASK,
                "x-sk-notatoken"
            ])
        );
        assert_eq!(
            mask_tokens("Bearer eyJhbGciOi.eyJzdWIiOi.sig_nature"),
            "Bearer [REDACTED]"
        );
    }

    #[test]
    fn leaves_ordinary_arguments_alone() {
        let args = strings(&["node", "dist/index.js", "stdio", "--max-tokens", "5"]);
        assert_eq!(mask_command(&args), args);
    }
}

/// A copy of `value` with token shapes masked in every string (keys are
/// left alone: they are protocol field names).
pub fn mask_value(value: &serde_json::Value) -> serde_json::Value {
    use serde_json::Value;
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

#[cfg(test)]
mod value_tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn masks_strings_not_keys() {
        let value =
            json!({"sk-0123456789abcdefgh": ["ghp_0123456789abcdefghij", 3], "maxTokens": "fine"});
        assert_eq!(
            mask_value(&value),
            json!({"sk-0123456789abcdefgh": ["[REDACTED]", 3], "maxTokens": "fine"})
        );
    }
}
