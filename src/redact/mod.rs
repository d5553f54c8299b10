//! Keeping secrets out of cassettes, journals, logs and error messages.
//!
//! A [`Redactor`] masks, in every string value of a message and in free
//! text:
//!
//! - the values of secret-looking environment variables (`GITHUB_TOKEN`)
//!   and of variables named with `--redact-env`, verbatim and URL-encoded,
//!   JSON-escaped (`\u` escapes in any mix), base64- and hex-encoded,
//!   upper- or lower-cased, and numeric ones sent as JSON numbers;
//! - well-known token shapes such as `ghp_…`, `sk-…`, `AIza…`, JWTs, PEM
//!   private keys and passwords in URLs;
//! - whatever the user's [`RedactRule`]s select or match.
//!
//! A secret becomes a named placeholder, `[REDACTED:GITHUB_TOKEN]`, so a
//! reader knows what was there. Protocol fields (`jsonrpc`, `id`, `method`,
//! progress tokens, object keys, …) are never rewritten: replay matches on
//! them.
//!
//! Redaction is on by default at record time; it is cheap when there is
//! nothing to mask, since a line is only parsed when an Aho-Corasick pass
//! over its bytes (one for the environment's needles, one for the shapes'
//! literals, see `prescan.rs`) finds a candidate.

mod command;
mod env;

pub(crate) use env::placeholder_name;
mod escapes;
mod message;
mod names;
mod prescan;
mod rules;
mod shapes;
#[cfg(test)]
mod tests;
mod url;

use std::borrow::Cow;
use std::ops::Range;
use std::sync::{Arc, LazyLock, OnceLock};

use aho_corasick::{AhoCorasick, AhoCorasickKind, MatchKind};
use regex::{Regex, RegexSet};

pub use command::{mask_command, mask_tokens, mask_value};
pub use names::{name_looks_secret, query_param_looks_secret};
pub use rules::{RedactRule, RedactTarget, RegexText};
pub use url::mask_url;

use crate::json::{Selector, SelectorError};

/// The placeholder for a masked value whose kind is not named.
pub const MASK: &str = "[REDACTED]";

/// What every placeholder starts with.
const PLACEHOLDER_START: &str = "[REDACTED";

/// Masking is repeated until nothing is left to mask (a shape may only
/// stand alone once a secret next to it is masked); this bounds it.
const MAX_PASSES: usize = 8;

/// The placeholder for a secret of kind `name`: `[REDACTED:NAME]`.
pub fn placeholder(name: &str) -> String {
    format!("[REDACTED:{name}]")
}

/// Whether `text` contains a placeholder (`[REDACTED]` or
/// `[REDACTED:NAME]`).
pub fn is_placeholder(text: &str) -> bool {
    placeholder_ranges(text).next().is_some()
}

/// Byte ranges of the placeholders in `text`, in order.
fn placeholder_ranges(text: &str) -> impl Iterator<Item = Range<usize>> + '_ {
    let mut from = 0;
    std::iter::from_fn(move || {
        while let Some(found) = text[from..].find(PLACEHOLDER_START) {
            let start = from + found;
            let rest = &text.as_bytes()[start + PLACEHOLDER_START.len()..];
            let len = match rest.first() {
                Some(b']') => Some(1),
                Some(b':') => {
                    let name = rest[1..]
                        .iter()
                        .take_while(|&&b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_')
                        .count();
                    (name > 0 && rest.get(1 + name) == Some(&b']')).then_some(name + 2)
                }
                _ => None,
            };
            match len {
                Some(len) => {
                    let end = start + PLACEHOLDER_START.len() + len;
                    from = end;
                    return Some(start..end);
                }
                // `[` is one byte, so the next search starts on a char.
                None => from = start + 1,
            }
        }
        None
    })
}

/// The parts of `text` outside placeholders, with their offsets: what is
/// already masked is never searched again.
fn segments(text: &str) -> Vec<(usize, &str)> {
    let mut out = Vec::new();
    let mut last = 0;
    for range in placeholder_ranges(text) {
        if range.start > last {
            out.push((last, &text[last..range.start]));
        }
        last = range.end;
    }
    if last < text.len() {
        out.push((last, &text[last..]));
    }
    out
}

/// What to redact.
#[derive(Debug, Clone, Default)]
pub struct RedactConfig {
    /// Token shapes and secret-looking environment variables (on unless
    /// `--no-default-redaction`).
    pub defaults: bool,
    /// The environment whose values are looked for (normally the process's).
    pub env: Vec<(String, String)>,
    /// Variables masked whatever their names (`--redact-env`).
    pub extra_env: Vec<String>,
    /// The user's rules (`--redact`, and those stored in a cassette).
    pub rules: Vec<RedactRule>,
}

impl RedactConfig {
    /// Defaults on, with the process's environment (variables whose name or
    /// value is not UTF-8 are skipped: they cannot appear in JSON text).
    pub fn from_process_env(rules: Vec<RedactRule>, extra_env: Vec<String>) -> RedactConfig {
        let env = std::env::vars_os()
            .filter_map(|(name, value)| Some((name.into_string().ok()?, value.into_string().ok()?)))
            .collect();
        RedactConfig {
            defaults: true,
            env,
            extra_env,
            rules,
        }
    }
}

/// Why a redactor or a rule could not be built.
#[derive(Debug, thiserror::Error)]
pub enum RedactError {
    /// A placeholder name that would not read back as one.
    #[error(
        "invalid redaction name `{name}`: use upper-case letters, digits and `_`, starting with a letter (like `API_KEY`)"
    )]
    InvalidName {
        /// The name given.
        name: String,
    },
    /// A regex rule that does not compile.
    #[error("invalid redaction regex `{pattern}`: {reason}")]
    InvalidRegex {
        /// The pattern given.
        pattern: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A selector rule that does not parse.
    #[error(transparent)]
    InvalidSelector(#[from] SelectorError),
    /// A command-line rule that is neither a regex nor a selector.
    #[error("invalid redaction rule `{rule}`: {reason}")]
    InvalidRule {
        /// The text given.
        rule: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A stored rule with no target, or two.
    #[error("{0}")]
    RuleTarget(&'static str),
    /// The needles' anchors do not fit in an automaton (far beyond any real
    /// environment).
    #[error("cannot build the secret matcher")]
    Matcher(#[from] aho_corasick::BuildError),
    /// The regex rules together are too big to pre-scan with.
    #[error("cannot combine the redaction regexes")]
    RegexSet(#[from] regex::Error),
}

/// Masks secrets; see the module docs. Cheap to clone.
#[derive(Debug, Clone)]
pub struct Redactor {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    /// Token shapes on.
    shapes: bool,
    /// Environment values in all their forms, leftmost-longest: built
    /// the first time an anchor is seen, not before replay's first answer
    /// (four secrets in the environment took 1.2 ms to build as a DFA).
    needles: OnceLock<Option<AhoCorasick>>,
    /// The text of each needle, for building them.
    needle_texts: Vec<String>,
    /// The placeholder name of each needle.
    needle_names: Vec<String>,
    /// Whether a secret value reads as a JSON number, so numbers are
    /// looked at too.
    numeric: bool,
    /// The pre-scan for needles: short anchors (a needle's alphanumeric
    /// start), few enough for a SIMD prefilter; see [`env::anchors`].
    anchors: Option<AhoCorasick>,
    rules: Vec<RedactRule>,
    selectors: Vec<(Selector, String)>,
    regexes: Vec<RegexRule>,
    /// All regex rules at once, for the pre-scan.
    regex_set: Option<RegexSet>,
    /// What it was built from, to build it again with more secrets.
    config: RedactConfig,
}

impl Inner {
    /// The needles' automaton, built on first use. A contiguous NFA
    /// rather than a DFA: a tenth of the build, and it only runs where
    /// the anchors already matched.
    fn needles(&self) -> Option<&AhoCorasick> {
        self.needles
            .get_or_init(|| {
                (!self.needle_texts.is_empty()).then(|| {
                    AhoCorasick::builder()
                        .match_kind(MatchKind::LeftmostLongest)
                        .kind(Some(AhoCorasickKind::ContiguousNFA))
                        .build(&self.needle_texts)
                        // State ids are 32 bits wide; the needles come
                        // from an environment of a few megabytes at most.
                        .expect("the environment's needles fit an automaton")
                })
            })
            .as_ref()
    }
}

#[derive(Debug)]
struct RegexRule {
    regex: Regex,
    /// The capture group named `secret`, when only it is masked.
    secret: Option<usize>,
    name: String,
}

/// A masked secret in a message: where, and what kind (never the value).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Masked {
    /// The JSON pointer of the string (or scalar) that was rewritten.
    pub pointer: String,
    /// The placeholder name used.
    pub name: String,
}

/// A secret found in text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hit {
    /// Its byte range.
    pub range: Range<usize>,
    /// Its placeholder name.
    pub name: String,
}

/// A hit before overlapping ones are merged; lower priority wins the name.
#[derive(Debug)]
struct RawHit<'a> {
    range: Range<usize>,
    priority: u8,
    name: &'a str,
}

/// Priority of an environment value: the most specific name there is.
const ENV: u8 = 0;
/// Priority of a user regex.
const RULE: u8 = 1;

/// Overlapping hits become one, named by the highest-priority one among
/// them: masking the union never leaves part of a secret behind.
fn merge(mut raw: Vec<RawHit<'_>>) -> Vec<Hit> {
    raw.sort_by_key(|hit| {
        (
            hit.range.start,
            std::cmp::Reverse(hit.range.end),
            hit.priority,
        )
    });
    let mut merged: Vec<RawHit<'_>> = Vec::with_capacity(raw.len());
    for hit in raw {
        match merged.last_mut() {
            Some(last) if hit.range.start < last.range.end => {
                last.range.end = last.range.end.max(hit.range.end);
                if hit.priority < last.priority {
                    last.priority = hit.priority;
                    last.name = hit.name;
                }
            }
            _ => merged.push(hit),
        }
    }
    merged
        .into_iter()
        .map(|hit| Hit {
            range: hit.range,
            name: hit.name.to_owned(),
        })
        .collect()
}

static DEFAULTS: LazyLock<Redactor> = LazyLock::new(|| {
    Redactor::new(&RedactConfig {
        defaults: true,
        ..RedactConfig::default()
    })
    .expect("the defaults alone always build")
});

impl Redactor {
    /// Builds the needles and checks the rules.
    pub fn new(config: &RedactConfig) -> Result<Redactor, RedactError> {
        let mut selectors = Vec::new();
        let mut regexes = Vec::new();
        for rule in &config.rules {
            let name = rule.effective_name().into_owned();
            rules::validate_name(&name)?;
            match &rule.target {
                RedactTarget::Selector(selector) => selectors.push((selector.clone(), name)),
                RedactTarget::Regex(regex) => {
                    let regex = regex.regex().clone();
                    let secret = regex
                        .capture_names()
                        .position(|group| group == Some("secret"));
                    regexes.push(RegexRule {
                        regex,
                        secret,
                        name,
                    });
                }
            }
        }
        let regex_set = if regexes.is_empty() {
            None
        } else {
            Some(RegexSet::new(regexes.iter().map(|r| r.regex.as_str()))?)
        };

        let needles = env::needles(config);
        let needle_names = needles.iter().map(|n| n.name.clone()).collect();
        let numeric = needles.iter().any(|n| env::is_numeric(&n.text));
        let needle_texts: Vec<String> = needles.into_iter().map(|n| n.text).collect();
        let texts: Vec<&str> = needle_texts.iter().map(String::as_str).collect();
        let anchors = env::anchors(&texts);
        let anchors = if anchors.is_empty() {
            None
        } else {
            Some(
                AhoCorasick::builder()
                    .match_kind(MatchKind::LeftmostFirst)
                    .kind(Some(AhoCorasickKind::ContiguousNFA))
                    .build(&anchors)?,
            )
        };
        Ok(Redactor {
            inner: Arc::new(Inner {
                shapes: config.defaults,
                needles: OnceLock::new(),
                needle_texts,
                needle_names,
                numeric,
                anchors,
                rules: config.rules.clone(),
                selectors,
                regexes,
                regex_set,
                config: config.clone(),
            }),
        })
    }

    /// This redactor, also masking each of `secrets` (a placeholder name
    /// and a value) in every encoding, as a variable named with
    /// `--redact-env` is: credentials a recorder sends upstream or sees a
    /// client send, which are secrets for the rest of the session.
    pub fn with_secrets(&self, secrets: &[(String, String)]) -> Result<Redactor, RedactError> {
        let mut config = self.inner.config.clone();
        for (name, value) in secrets {
            rules::validate_name(name)?;
            config.env.push((name.clone(), value.clone()));
            if !config.extra_env.contains(name) {
                config.extra_env.push(name.clone());
            }
        }
        Redactor::new(&config)
    }

    /// Token shapes only (no environment, no rules): for places with no
    /// config at hand.
    pub fn defaults() -> Redactor {
        DEFAULTS.clone()
    }

    /// The user's rules.
    pub fn rules(&self) -> &[RedactRule] {
        &self.inner.rules
    }

    /// Whether `bytes` may hold something to mask: an Aho-Corasick pass for
    /// the needles' anchors, one for the shapes' prefixes (with a look at
    /// what follows each), and the regex rules. Both passes also look for
    /// the `\u` escapes that could hide a secret ([`escapes::TRIGGERS`]).
    /// Never a false "no"; no allocation. With regex rules, any backslash
    /// counts: an escape may hide what a rule matches once decoded.
    fn might_contain(&self, bytes: &[u8]) -> bool {
        let inner = &*self.inner;
        if inner.anchors.as_ref().is_some_and(|a| a.is_match(bytes)) {
            return true;
        }
        if inner.shapes && prescan::prescan(bytes) {
            return true;
        }
        if let Some(set) = &inner.regex_set {
            if bytes.contains(&b'\\') {
                return true;
            }
            match std::str::from_utf8(bytes) {
                Ok(text) => return set.is_match(text),
                Err(_) => return true,
            }
        }
        false
    }

    /// Where secrets are in `text` (byte ranges and names), for `check`'s
    /// likely-secret findings; placeholders are not hits.
    pub fn find(&self, text: &str) -> Vec<Hit> {
        if !self.might_contain(text.as_bytes()) {
            return Vec::new();
        }
        self.find_all(text)
    }

    /// [`Redactor::find`] without the pre-scan. Text with JSON escapes is
    /// searched decoded too ([`escapes`]), hits mapped back to the escapes.
    fn find_all(&self, text: &str) -> Vec<Hit> {
        let mut raw = Vec::new();
        for (offset, segment) in segments(text) {
            self.find_in(segment, offset, &mut raw);
            for level in escapes::levels(segment) {
                let mut found = Vec::new();
                self.find_in(&level.text, 0, &mut found);
                raw.extend(found.into_iter().map(|hit| {
                    let range = level.original(hit.range);
                    RawHit {
                        range: offset + range.start..offset + range.end,
                        ..hit
                    }
                }));
            }
        }
        merge(raw)
    }

    /// Adds the hits in `segment` (found at `offset` of the whole) to `raw`.
    fn find_in<'s>(&'s self, segment: &str, offset: usize, raw: &mut Vec<RawHit<'s>>) {
        let inner = &*self.inner;
        if let Some(needles) = inner.needles() {
            for m in needles.find_iter(segment) {
                raw.push(RawHit {
                    range: offset + m.start()..offset + m.end(),
                    priority: ENV,
                    name: &inner.needle_names[m.pattern().as_usize()],
                });
            }
        }
        for rule in &inner.regexes {
            let mut push = |m: regex::Match<'_>| {
                if !m.is_empty() {
                    raw.push(RawHit {
                        range: offset + m.start()..offset + m.end(),
                        priority: RULE,
                        name: &rule.name,
                    });
                }
            };
            match rule.secret {
                Some(group) => rule
                    .regex
                    .captures_iter(segment)
                    .filter_map(|caps| caps.get(group))
                    .for_each(&mut push),
                None => rule.regex.find_iter(segment).for_each(&mut push),
            }
        }
        if inner.shapes {
            let mut found = Vec::new();
            shapes::find(segment, offset, &mut found);
            raw.extend(found);
        }
    }

    /// The name of the environment secret that the JSON number `number` is
    /// (`PIN_SECRET=8675309123` sent as `"pin": 8675309123`), if it is one.
    /// Only whole numbers count: `142` is not the secret `42`.
    pub fn number_secret(&self, number: &serde_json::Number) -> Option<&str> {
        let inner = &*self.inner;
        if !inner.numeric {
            return None;
        }
        let needles = inner.needles()?;
        let text = number.to_string();
        let text = text.strip_suffix(".0").unwrap_or(&text);
        let found = needles.find(text)?;
        (found.start() == 0 && found.end() == text.len())
            .then(|| inner.needle_names[found.pattern().as_usize()].as_str())
    }

    /// `text` with every hit masked, repeatedly until none is left; `None`
    /// when there was nothing to mask. The names masked are added to
    /// `names`.
    fn mask_str(&self, text: &str, names: &mut Vec<String>) -> Option<String> {
        if !self.might_contain(text.as_bytes()) {
            return None;
        }
        let mut current: Option<String> = None;
        for _ in 0..MAX_PASSES {
            let source = current.as_deref().unwrap_or(text);
            let hits = self.find_all(source);
            if hits.is_empty() {
                break;
            }
            let mut out = String::with_capacity(source.len());
            let mut last = 0;
            for hit in hits {
                out.push_str(&source[last..hit.range.start]);
                out.push_str(&placeholder(&hit.name));
                last = hit.range.end;
                if !names.contains(&hit.name) {
                    names.push(hit.name);
                }
            }
            out.push_str(&source[last..]);
            current = Some(out);
        }
        current
    }

    /// Free text (log lines, error messages, commands): every literal needle
    /// in every encoding, token shapes, and regex rules.
    pub fn redact_text<'a>(&self, text: &'a str) -> Cow<'a, str> {
        match self.mask_str(text, &mut Vec::new()) {
            Some(masked) => Cow::Owned(masked),
            None => Cow::Borrowed(text),
        }
    }

    /// `message` masked, borrowed when nothing in it needs masking: the
    /// common case costs a walk over its strings, not a copy (replay masks
    /// every live request before matching it).
    pub fn masked<'a>(&self, message: &'a serde_json::Value) -> Cow<'a, serde_json::Value> {
        if self.inner.selectors.is_empty()
            && !any_scalar(message, &|scalar| match scalar {
                serde_json::Value::String(s) => self.might_contain(s.as_bytes()),
                serde_json::Value::Number(n) => self.number_secret(n).is_some(),
                _ => false,
            })
        {
            return Cow::Borrowed(message);
        }
        let mut copy = message.clone();
        if self.redact_message(&mut copy).is_empty() {
            Cow::Borrowed(message)
        } else {
            Cow::Owned(copy)
        }
    }

    /// Whether [`Redactor::masked`] might change the message whose whole
    /// text is `line`, told without parsing it: never a false "no" (replay
    /// reads plain requests from their text when it is "no").
    pub fn might_mask_text(&self, line: &[u8]) -> bool {
        let inner = &*self.inner;
        !inner.selectors.is_empty() || inner.numeric || self.might_contain(line)
    }

    /// A raw line as forwarded (normally one JSON message): borrowed and
    /// byte-identical when nothing needs masking, else the redacted message
    /// re-serialized compactly (surrounding whitespace, such as the line's
    /// newline, is kept); a line that is not JSON is masked as text.
    pub fn redact_line<'a>(&self, line: &'a [u8]) -> Cow<'a, [u8]> {
        if self.inner.selectors.is_empty() && !self.might_contain(line) {
            return Cow::Borrowed(line);
        }
        let start = line
            .iter()
            .position(|b| !b.is_ascii_whitespace())
            .unwrap_or(line.len());
        let end = line
            .iter()
            .rposition(|b| !b.is_ascii_whitespace())
            .map_or(start, |i| i + 1);
        match serde_json::from_slice::<serde_json::Value>(&line[start..end]) {
            Ok(mut message) => {
                if self.redact_message(&mut message).is_empty() {
                    return Cow::Borrowed(line);
                }
                let mut out = Vec::with_capacity(line.len());
                out.extend_from_slice(&line[..start]);
                serde_json::to_writer(&mut out, &message).expect("a Value serializes");
                out.extend_from_slice(&line[end..]);
                Cow::Owned(out)
            }
            Err(_) => {
                let text = String::from_utf8_lossy(line);
                match self.mask_str(&text, &mut Vec::new()) {
                    Some(masked) => Cow::Owned(masked.into_bytes()),
                    None => Cow::Borrowed(line),
                }
            }
        }
    }
}

/// Whether any string or other scalar in `value` satisfies `test`.
fn any_scalar(value: &serde_json::Value, test: &dyn Fn(&serde_json::Value) -> bool) -> bool {
    match value {
        serde_json::Value::Array(items) => items.iter().any(|v| any_scalar(v, test)),
        serde_json::Value::Object(map) => map.values().any(|v| any_scalar(v, test)),
        scalar => test(scalar),
    }
}
