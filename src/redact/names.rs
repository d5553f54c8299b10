//! Whether a name (an environment variable, a flag, an object key, a URL
//! query parameter, a header) says that its value is a secret.
//!
//! A name is split into words at `-`, `_`, `.` and camelCase humps
//! (`--accessToken`: `access`, `Token`); it looks secret when a word is one
//! of [`WORDS`], ends in `TOKEN` (`GHTOKEN`), or contains one of
//! [`INFIXES`] (`PGPASSWORD`). Plurals and qualifiers that make a count or a
//! cursor of it (`maxTokens`, `progressToken`, `nextToken`, `publicKey`)
//! do not.

/// Whole words that make a name secret.
const WORDS: [&str; 8] = [
    "TOKEN",
    "KEY",
    "PASS",
    "PWD",
    "AUTH",
    "AUTHORIZATION",
    "BEARER",
    "PAT",
];

/// Parts of a word that make a name secret wherever they are in it.
const INFIXES: [&str; 8] = [
    "PASSWORD",
    "PASSWD",
    "SECRET",
    "CREDENTIAL",
    "APIKEY",
    "PASSPHRASE",
    "PRIVATEKEY",
    "ACCESSKEY",
];

/// Words before `TOKEN` that make it a protocol value, not a secret:
/// progress tokens, pagination cursors, counts.
const NOT_SECRET_TOKENS: [&str; 12] = [
    "PROGRESS",
    "PAGE",
    "NEXT",
    "PREV",
    "PREVIOUS",
    "CONTINUATION",
    "CURSOR",
    "PAGINATION",
    "SYNC",
    "RESUME",
    "MAX",
    "MIN",
];

/// Words before `KEY` that make it a name of a public or structural key.
const NOT_SECRET_KEYS: [&str; 11] = [
    "PUBLIC",
    "PRIMARY",
    "FOREIGN",
    "SORT",
    "PARTITION",
    "CACHE",
    "IDEMPOTENCY",
    "ROW",
    "HOT",
    "SHORTCUT",
    "HASH",
];

/// Query parameters that carry credentials whatever their other words:
/// signed-URL signatures (`sig`, `X-Amz-Signature`), OAuth codes and
/// tickets.
const QUERY_WORDS: [&str; 8] = [
    "SIG",
    "SIGNATURE",
    "CODE",
    "JWT",
    "OTP",
    "TICKET",
    "HMAC",
    "SESSION",
];

/// Whether a flag or variable name looks like it holds a secret.
pub fn name_looks_secret(name: &str) -> bool {
    let words = words(name.trim_start_matches('-'));
    // `PWD` alone is the shell's working directory.
    if words.len() == 1 && words[0].eq_ignore_ascii_case("PWD") {
        return false;
    }
    words.iter().enumerate().any(|(i, word)| {
        let word = word.to_ascii_uppercase();
        let previous = i
            .checked_sub(1)
            .map(|p| words[p].to_ascii_uppercase())
            .unwrap_or_default();
        if INFIXES.iter().any(|infix| word.contains(infix)) {
            return true;
        }
        if word == "TOKEN" {
            return !NOT_SECRET_TOKENS.contains(&previous.as_str());
        }
        if word.ends_with("TOKEN") {
            let qualifier = &word[..word.len() - "TOKEN".len()];
            return !NOT_SECRET_TOKENS.contains(&qualifier);
        }
        if word == "KEY" {
            return !NOT_SECRET_KEYS.contains(&previous.as_str());
        }
        WORDS.contains(&word.as_str())
    })
}

/// Whether a URL query (or fragment) parameter looks like a credential:
/// a secret-looking name, or one of the words signed URLs and OAuth
/// redirects use (`sig`, `code`, …).
pub fn query_param_looks_secret(name: &str) -> bool {
    name_looks_secret(name)
        || words(name)
            .iter()
            .any(|word| QUERY_WORDS.iter().any(|w| word.eq_ignore_ascii_case(w)))
}

/// `name` split at `-`, `_`, `.` and camelCase humps: `XApiKey` → `X`,
/// `Api`, `Key`; `GITHUB_TOKEN` → `GITHUB`, `TOKEN`.
fn words(name: &str) -> Vec<&str> {
    let mut out = Vec::new();
    for part in name.split(['-', '_', '.']) {
        let bytes = part.as_bytes();
        let mut start = 0;
        for i in 1..bytes.len() {
            let hump = bytes[i].is_ascii_uppercase()
                && (bytes[i - 1].is_ascii_lowercase()
                    || bytes[i - 1].is_ascii_digit()
                    || (bytes[i - 1].is_ascii_uppercase()
                        && bytes.get(i + 1).is_some_and(u8::is_ascii_lowercase)));
            if hump {
                out.push(&part[start..i]);
                start = i;
            }
        }
        if start < part.len() {
            out.push(&part[start..]);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_split_into_words() {
        assert_eq!(words("XApiKey"), ["X", "Api", "Key"]);
        assert_eq!(words("accessToken"), ["access", "Token"]);
        assert_eq!(words("GITHUB_TOKEN"), ["GITHUB", "TOKEN"]);
        assert_eq!(words("x-api.key_2"), ["x", "api", "key", "2"]);
        assert_eq!(words("token2Value"), ["token2", "Value"]);
    }
}
