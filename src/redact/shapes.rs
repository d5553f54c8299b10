//! Well-known token shapes: API keys, GitHub and Slack tokens, AWS access
//! key ids, JWTs, and the credentials of `Bearer` and `Basic`
//! authorization. They are recognised without any configuration, so even a
//! redactor built with no environment keeps the common leaks out.

use std::sync::LazyLock;

use aho_corasick::{AhoCorasick, MatchKind};
use base64::Engine as _;
use regex::Regex;

use super::{RawHit, escapes};

/// Priority of a specific shape (`ghp_…`) among overlapping hits.
const SPECIFIC: u8 = 2;
/// Priority of a scheme credential (`Bearer …`): a specific shape inside it
/// names it better.
const SCHEME: u8 = 3;

/// One regex for every shape; which group matched says which shape. Each
/// hit is then checked by [`accept`], since the regex crate has no
/// look-behind for word boundaries.
static SHAPES: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(concat!(
        r"(?P<sk>sk-[A-Za-z0-9_-]{20,})",
        r"|(?P<gh>gh[pousr]_[A-Za-z0-9_-]{20,})",
        r"|(?P<pat>github_pat_[A-Za-z0-9_-]{22,})",
        r"|(?P<slack>xox[abprs]-[A-Za-z0-9_-]{10,})",
        r"|(?P<aws>(?:AKIA|ASIA)[A-Z0-9]{16})",
        r"|(?P<jwt>eyJ[A-Za-z0-9_-]{7,}\.[A-Za-z0-9_-]{2,}\.[A-Za-z0-9_-]*)",
        r"|(?:Bearer|bearer|BEARER) +(?P<bearer>[A-Za-z0-9._~+/-]{16,}=*)",
        r"|(?:Basic|basic|BASIC) +(?P<basic>[A-Za-z0-9+/]{8,}={0,2})",
    ))
    .expect("the token shapes are a valid regex")
});

/// What may follow a shape's prefix, for the cheap pre-scan.
#[derive(Clone, Copy)]
enum Tail {
    /// At least this many token characters (`[A-Za-z0-9_-]`).
    Token(usize),
    /// At least this many of `[A-Z0-9]`.
    Upper(usize),
    /// At least this many token characters or dots.
    Dotted(usize),
    /// Spaces, then at least this many characters of a bearer token.
    Bearer(usize),
    /// Spaces, then at least this many base64 characters.
    Basic(usize),
    /// Anything: a `\u` escape that may hide a shape's character.
    Any,
}

/// Literal prefixes of the shapes, looked for in the pre-scan's single
/// Aho-Corasick pass. Each minimum is no stricter than the regex's, so a
/// line the pre-scan lets through cannot hold a shape.
const PREFIXES: [(&str, Tail); 27] = [
    (escapes::TRIGGERS[0], Tail::Any),
    (escapes::TRIGGERS[1], Tail::Any),
    (escapes::TRIGGERS[2], Tail::Any),
    (escapes::TRIGGERS[3], Tail::Any),
    (escapes::TRIGGERS[4], Tail::Any),
    (escapes::TRIGGERS[5], Tail::Any),
    ("sk-", Tail::Token(20)),
    ("ghp_", Tail::Token(20)),
    ("gho_", Tail::Token(20)),
    ("ghu_", Tail::Token(20)),
    ("ghs_", Tail::Token(20)),
    ("ghr_", Tail::Token(20)),
    ("github_pat_", Tail::Token(22)),
    ("xoxa-", Tail::Token(10)),
    ("xoxb-", Tail::Token(10)),
    ("xoxp-", Tail::Token(10)),
    ("xoxr-", Tail::Token(10)),
    ("xoxs-", Tail::Token(10)),
    ("AKIA", Tail::Upper(16)),
    ("ASIA", Tail::Upper(16)),
    ("eyJ", Tail::Dotted(11)),
    ("Bearer ", Tail::Bearer(16)),
    ("bearer ", Tail::Bearer(16)),
    ("BEARER ", Tail::Bearer(16)),
    ("Basic ", Tail::Basic(8)),
    ("basic ", Tail::Basic(8)),
    ("BASIC ", Tail::Basic(8)),
];

fn is_token_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'-'
}

fn is_bearer_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"._~+/-".contains(&b)
}

fn is_base64_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'+' || b == b'/'
}

/// The prefixes, leftmost-first: few and short, so the search runs on a
/// SIMD prefilter.
static PREFIX_MATCHER: LazyLock<AhoCorasick> = LazyLock::new(|| {
    AhoCorasick::builder()
        .match_kind(MatchKind::LeftmostFirst)
        .build(PREFIXES.iter().map(|(prefix, _)| prefix))
        .expect("the prefixes build")
});

/// Whether `bytes` may hold a shape: a prefix with a plausible tail.
///
/// Non-overlapping matches suffice: the only prefixes that can overlap are
/// `AKIA`/`ASIA` sharing an `A`, and then the first one's tail holds the
/// second one's, and so does its boundary.
pub(super) fn prescan(bytes: &[u8]) -> bool {
    PREFIX_MATCHER.find_iter(bytes).any(|m| {
        let (_, tail) = PREFIXES[m.pattern().as_usize()];
        plausible(bytes, m.start(), m.end(), tail)
    })
}

/// Whether a prefix found at `start..end` of raw bytes could begin a shape.
/// Raw bytes may be JSON text, where `\n` or `\u001f` right before the
/// prefix is a separator once decoded, so an escape counts as a boundary.
fn plausible(bytes: &[u8], start: usize, end: usize, tail: Tail) -> bool {
    if matches!(tail, Tail::Any) {
        return true;
    }
    if start > 0 && is_token_byte(bytes[start - 1]) {
        let escaped = (start >= 2 && bytes[start - 2] == b'\\')
            || (start >= 6 && bytes[start - 6] == b'\\' && bytes[start - 5] == b'u');
        if !escaped {
            return false;
        }
    }
    let rest = &bytes[end..];
    let count = |class: fn(u8) -> bool, from: &[u8]| from.iter().take_while(|&&b| class(b)).count();
    let after_spaces = || &rest[rest.iter().take_while(|&&b| b == b' ').count()..];
    match tail {
        Tail::Token(min) => count(is_token_byte, rest) >= min,
        Tail::Upper(min) => count(|b| b.is_ascii_uppercase() || b.is_ascii_digit(), rest) >= min,
        Tail::Dotted(min) => count(|b| is_token_byte(b) || b == b'.', rest) >= min,
        Tail::Bearer(min) => count(is_bearer_byte, after_spaces()) >= min,
        Tail::Basic(min) => count(is_base64_byte, after_spaces()) >= min,
        Tail::Any => true,
    }
}

/// Adds every token shape in `text` (found at `offset` of the whole) to
/// `out`.
pub(super) fn find(text: &str, offset: usize, out: &mut Vec<RawHit<'static>>) {
    let mut at = 0;
    while at < text.len() {
        let Some(caps) = SHAPES.captures_at(text, at) else {
            break;
        };
        let whole = caps.get(0).expect("group 0 always matches");
        let accepted = accept(text, &caps, whole.start(), whole.end());
        match accepted {
            Some((range, name, priority)) => {
                out.push(RawHit {
                    range: offset + range.start..offset + range.end,
                    priority,
                    name,
                });
                if priority == SCHEME {
                    // `Bearer ghp_…`: the specific shape names it better.
                    find(&text[range.clone()], offset + range.start, out);
                }
                at = whole.end();
            }
            None => {
                // Retry just after this start: a shape may begin inside a
                // rejected candidate (`xBearer sk-…`).
                at = whole.start()
                    + text[whole.start()..]
                        .chars()
                        .next()
                        .map_or(1, char::len_utf8);
            }
        }
    }
}

/// Checks a candidate: word boundary before it, and what the regex cannot
/// say (randomness, decodable credentials). Gives the range to mask, the
/// placeholder name and the priority.
fn accept(
    text: &str,
    caps: &regex::Captures<'_>,
    start: usize,
    end: usize,
) -> Option<(std::ops::Range<usize>, &'static str, u8)> {
    let bytes = text.as_bytes();
    if start > 0 && is_token_byte(bytes[start - 1]) {
        return None;
    }
    let group = |name: &str| caps.name(name);
    if let Some(m) = group("sk") {
        let body = &m.as_str()[3..];
        if !looks_random(body) {
            return None;
        }
        let name = if m.as_str().starts_with("sk-ant-") {
            "ANTHROPIC_KEY"
        } else {
            "OPENAI_KEY"
        };
        return Some((m.range(), name, SPECIFIC));
    }
    if let Some(m) = group("gh") {
        return Some((m.range(), "GITHUB_TOKEN", SPECIFIC));
    }
    if let Some(m) = group("pat") {
        return Some((m.range(), "GITHUB_PAT", SPECIFIC));
    }
    if let Some(m) = group("slack") {
        return Some((m.range(), "SLACK_TOKEN", SPECIFIC));
    }
    if let Some(m) = group("aws") {
        if bytes.get(end).is_some_and(|&b| is_token_byte(b)) {
            return None;
        }
        return Some((m.range(), "AWS_ACCESS_KEY_ID", SPECIFIC));
    }
    if let Some(m) = group("jwt") {
        return Some((m.range(), "JWT", SPECIFIC));
    }
    if let Some(m) = group("bearer") {
        if !looks_random(m.as_str()) {
            return None;
        }
        return Some((m.range(), "BEARER_TOKEN", SCHEME));
    }
    if let Some(m) = group("basic") {
        if !decodes_to_credentials(m.as_str()) {
            return None;
        }
        return Some((m.range(), "BASIC_CREDENTIALS", SCHEME));
    }
    None
}

/// Random tokens have digits or mixed case; words (`sk-learn-compatible`,
/// `Bearer authentication-required`) do not.
fn looks_random(token: &str) -> bool {
    let has = |f: fn(&u8) -> bool| token.as_bytes().iter().any(f);
    has(u8::is_ascii_digit) || (has(u8::is_ascii_uppercase) && has(u8::is_ascii_lowercase))
}

/// `Basic` credentials are base64 of `user:password`; prose such as
/// `Basic authentication` does not decode to that.
fn decodes_to_credentials(b64: &str) -> bool {
    let engine = base64::engine::GeneralPurpose::new(
        &base64::alphabet::STANDARD,
        base64::engine::GeneralPurposeConfig::new()
            .with_decode_padding_mode(base64::engine::DecodePaddingMode::Indifferent)
            .with_decode_allow_trailing_bits(true),
    );
    let Ok(bytes) = engine.decode(b64) else {
        return false;
    };
    let Ok(text) = String::from_utf8(bytes) else {
        return false;
    };
    text.contains(':') && !text.chars().any(char::is_control)
}
