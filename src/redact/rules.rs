//! User redaction rules, kept in a cassette's rules so that re-recording
//! masks the same things: a selector (a field of the message, whatever it
//! holds) or a regex (a pattern in any string value).

use std::borrow::Cow;
use std::fmt;
use std::str::FromStr;

use regex::Regex;
use serde::{Deserialize, Serialize};

use super::RedactError;
use crate::json::Selector;

/// One redaction rule: what to mask and the placeholder name to mask it
/// with. JSON: `{"selector": "/params/arguments/api_key"}` or
/// `{"regex": "acct-[0-9]{6}", "name": "ACCOUNT"}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "RuleRepr", into = "RuleRepr")]
pub struct RedactRule {
    /// Where the secret is.
    pub target: RedactTarget,
    /// The placeholder name; see [`RedactRule::effective_name`] for the
    /// default.
    pub name: Option<String>,
}

/// What a [`RedactRule`] masks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RedactTarget {
    /// The value at these pointers: a scalar becomes the placeholder, every
    /// string inside an object or array does.
    Selector(Selector),
    /// Every match in every string value; only the group named `secret` if
    /// the regex has one.
    Regex(RegexText),
}

/// A regex with the text it was written as (kept for serialization and
/// equality).
#[derive(Clone)]
pub struct RegexText {
    text: String,
    regex: Regex,
}

/// The serialized shape of a rule: `flatten` and `deny_unknown_fields` do
/// not combine in serde, so the rule converts through this.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct RuleRepr {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    selector: Option<Selector>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    regex: Option<RegexText>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    name: Option<String>,
}

impl RegexText {
    /// Compiles `text`; the error names the pattern and what is wrong.
    pub fn new(text: &str) -> Result<RegexText, RedactError> {
        let regex = Regex::new(text).map_err(|err| RedactError::InvalidRegex {
            pattern: text.to_owned(),
            reason: err.to_string(),
        })?;
        Ok(RegexText {
            text: text.to_owned(),
            regex,
        })
    }

    /// The pattern as written.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// The compiled regex.
    pub fn regex(&self) -> &Regex {
        &self.regex
    }
}

impl PartialEq for RegexText {
    fn eq(&self, other: &RegexText) -> bool {
        self.text == other.text
    }
}

impl Eq for RegexText {}

impl fmt::Debug for RegexText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("RegexText").field(&self.text).finish()
    }
}

impl fmt::Display for RegexText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl FromStr for RegexText {
    type Err = RedactError;

    fn from_str(text: &str) -> Result<RegexText, RedactError> {
        RegexText::new(text)
    }
}

impl Serialize for RegexText {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.text)
    }
}

impl<'de> Deserialize<'de> for RegexText {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<RegexText, D::Error> {
        let text = String::deserialize(deserializer)?;
        RegexText::new(&text).map_err(serde::de::Error::custom)
    }
}

impl TryFrom<RuleRepr> for RedactRule {
    type Error = RedactError;

    fn try_from(repr: RuleRepr) -> Result<RedactRule, RedactError> {
        let target = match (repr.selector, repr.regex) {
            (Some(selector), None) => RedactTarget::Selector(selector),
            (None, Some(regex)) => RedactTarget::Regex(regex),
            (Some(_), Some(_)) => {
                return Err(RedactError::RuleTarget(
                    "a redaction rule has either `selector` or `regex`, not both",
                ));
            }
            (None, None) => {
                return Err(RedactError::RuleTarget(
                    "a redaction rule needs `selector` or `regex`",
                ));
            }
        };
        if let Some(name) = &repr.name {
            validate_name(name)?;
        }
        Ok(RedactRule {
            target,
            name: repr.name,
        })
    }
}

impl From<RedactRule> for RuleRepr {
    fn from(rule: RedactRule) -> RuleRepr {
        let (selector, regex) = match rule.target {
            RedactTarget::Selector(selector) => (Some(selector), None),
            RedactTarget::Regex(regex) => (None, Some(regex)),
        };
        RuleRepr {
            selector,
            regex,
            name: rule.name,
        }
    }
}

impl RedactRule {
    /// A rule masking what `selector` selects.
    pub fn selector(selector: Selector) -> RedactRule {
        RedactRule {
            target: RedactTarget::Selector(selector),
            name: None,
        }
    }

    /// A rule masking what `regex` matches.
    pub fn regex(regex: RegexText) -> RedactRule {
        RedactRule {
            target: RedactTarget::Regex(regex),
            name: None,
        }
    }

    /// The same rule with a placeholder name.
    pub fn named(self, name: impl Into<String>) -> RedactRule {
        RedactRule {
            name: Some(name.into()),
            ..self
        }
    }

    /// The placeholder name: the given one, else the selector's last
    /// literal segment in upper snake case (`/params/arguments/apiKey` →
    /// `API_KEY`; `SELECTOR` when it ends in a wildcard or index), else
    /// `PATTERN` for a regex.
    pub fn effective_name(&self) -> Cow<'_, str> {
        if let Some(name) = &self.name {
            return Cow::Borrowed(name);
        }
        match &self.target {
            RedactTarget::Selector(selector) => Cow::Owned(
                selector_name(selector.as_str()).unwrap_or_else(|| "SELECTOR".to_owned()),
            ),
            RedactTarget::Regex(_) => Cow::Borrowed("PATTERN"),
        }
    }
}

/// The default name of a selector rule, when its last segment makes one.
fn selector_name(selector: &str) -> Option<String> {
    let last = selector.rsplit('/').next()?;
    if last == "*" || last == "**" {
        return None;
    }
    let name = upper_snake(&last.replace("~1", "/").replace("~0", "~"));
    is_valid_name(&name).then_some(name)
}

/// `apiKey`, `api-key`, `APIKey` → `API_KEY`.
fn upper_snake(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len() + 4);
    for (i, &c) in chars.iter().enumerate() {
        if !c.is_ascii_alphanumeric() {
            if !out.is_empty() && !out.ends_with('_') {
                out.push('_');
            }
            continue;
        }
        if c.is_ascii_uppercase() && i > 0 && !out.ends_with('_') && !out.is_empty() {
            let prev = chars[i - 1];
            let next_lower = chars.get(i + 1).is_some_and(char::is_ascii_lowercase);
            if prev.is_ascii_lowercase()
                || prev.is_ascii_digit()
                || (prev.is_ascii_uppercase() && next_lower)
            {
                out.push('_');
            }
        }
        out.push(c.to_ascii_uppercase());
    }
    while out.ends_with('_') {
        out.pop();
    }
    out
}

fn is_valid_name(name: &str) -> bool {
    let mut bytes = name.bytes();
    bytes.next().is_some_and(|b| b.is_ascii_uppercase())
        && bytes.all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_')
}

/// Placeholder names are `[A-Z][A-Z0-9_]*`, so that a placeholder is
/// recognisable and never itself looks like a secret.
pub(super) fn validate_name(name: &str) -> Result<(), RedactError> {
    if is_valid_name(name) {
        Ok(())
    } else {
        Err(RedactError::InvalidName {
            name: name.to_owned(),
        })
    }
}

/// The command-line form: `[NAME=]REGEX` or `[NAME=]/SELECTOR`.
impl FromStr for RedactRule {
    type Err = RedactError;

    fn from_str(text: &str) -> Result<RedactRule, RedactError> {
        let (name, body) = match text.split_once('=') {
            Some((name, body)) if is_valid_name(name) => (Some(name.to_owned()), body),
            _ => (None, text),
        };
        if body.is_empty() {
            return Err(RedactError::InvalidRule {
                rule: text.to_owned(),
                reason: "give a regex, or a selector starting with `/`".to_owned(),
            });
        }
        let target = if body.starts_with('/') {
            RedactTarget::Selector(Selector::parse(body)?)
        } else {
            RedactTarget::Regex(RegexText::new(body)?)
        };
        Ok(RedactRule { target, name })
    }
}

/// The command-line form, which [`FromStr`] reads back.
impl fmt::Display for RedactRule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(name) = &self.name {
            write!(f, "{name}=")?;
        }
        match &self.target {
            RedactTarget::Selector(selector) => write!(f, "{selector}"),
            RedactTarget::Regex(regex) => write!(f, "{regex}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn upper_snake_cases_names() {
        assert_eq!(upper_snake("apiKey"), "API_KEY");
        assert_eq!(upper_snake("api_key"), "API_KEY");
        assert_eq!(upper_snake("api-key"), "API_KEY");
        assert_eq!(upper_snake("APIKey"), "API_KEY");
        assert_eq!(upper_snake("token2"), "TOKEN2");
        assert_eq!(upper_snake("x.y"), "X_Y");
        assert_eq!(upper_snake("__a__"), "A");
        assert_eq!(selector_name("/a/0"), None);
        assert_eq!(selector_name("/a/**"), None);
        assert_eq!(selector_name("/a/x~1y"), Some("X_Y".to_owned()));
    }
}
