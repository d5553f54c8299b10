//! The cheap pre-scan for token shapes: one Aho-Corasick pass for literals
//! that every match of a shape contains, with a look at what follows each.
//! A line that has none of them cannot hold a shape, so it is neither
//! parsed nor searched with the regex.
//!
//! The literals are kept at most [`MAX_LITERALS`], each at least three
//! bytes: aho-corasick runs its SIMD prefilter (Teddy) only for up to 64
//! patterns, and fingerprints with the shortest pattern's length. So they
//! are the rarest part of each shape (`ntKey=` of `AccountKey=`), not
//! always its start.

use std::sync::LazyLock;

use aho_corasick::{AhoCorasick, Input, MatchKind, packed};

use super::shapes::starts_word;

/// The most literals the SIMD prefilter takes.
pub(super) const MAX_LITERALS: usize = 64;

/// Bytes a tail is counted in.
#[derive(Clone, Copy)]
enum Class {
    /// `[A-Za-z0-9_-]`.
    Token,
    /// `[A-Za-z0-9]`.
    Alnum,
    /// `[0-9A-Fa-f]`.
    Hex,
    /// `[A-Z0-9]`.
    Upper,
    /// Token characters or dots.
    Dotted,
    /// A bearer token's characters.
    Bearer,
    /// `[A-Za-z0-9+/]`.
    Base64,
    /// Base64 with padding or percent escapes: `[A-Za-z0-9+/=%]`.
    Encoded,
}

impl Class {
    fn has(self, b: u8) -> bool {
        let token = b.is_ascii_alphanumeric() || b == b'_' || b == b'-';
        match self {
            Class::Token => token,
            Class::Alnum => b.is_ascii_alphanumeric(),
            Class::Hex => b.is_ascii_hexdigit(),
            Class::Upper => b.is_ascii_uppercase() || b.is_ascii_digit(),
            Class::Dotted => token || b == b'.',
            Class::Bearer => b.is_ascii_alphanumeric() || b"._~+/%-".contains(&b),
            Class::Base64 => b.is_ascii_alphanumeric() || b == b'+' || b == b'/',
            Class::Encoded => b.is_ascii_alphanumeric() || b"+/=%".contains(&b),
        }
    }
}

/// What must follow a literal for a shape to be possible there. Each is
/// no stricter than its shape's regex.
#[derive(Clone, Copy)]
enum Tail {
    /// At least this many bytes of the class.
    Run(Class, usize),
    /// One of these, then at least this many bytes of the class.
    Then(&'static [&'static str], Class, usize),
    /// A scheme's separator (spaces, `%20`, `+`, `:`), then at least this
    /// many bytes of the class.
    Scheme(Class, usize),
    /// The rest of a PEM header: `-----` or ` BLOCK-----`.
    Pem,
    /// An authority with `user:password@`.
    UrlCredentials,
    /// A `\u00XX` escape of printable ASCII: `2`–`7` next.
    AsciiEscape,
    /// Nothing more (the literal is rare enough).
    Any,
}

/// A literal, what must follow it, and whether it starts its shape (then
/// a token character right before it rules the shape out).
type Literal = (&'static str, Tail, bool);

const fn at_start(text: &'static str, tail: Tail) -> Literal {
    (text, tail, true)
}

const fn inside(text: &'static str, tail: Tail) -> Literal {
    (text, tail, false)
}

/// The literals, with [`super::shapes::SHAPES`]'s minimums.
const LITERALS: [Literal; 64] = [
    inside("\\u00", Tail::AsciiEscape),
    at_start("Bearer", Tail::Scheme(Class::Bearer, 16)),
    at_start("bearer", Tail::Scheme(Class::Bearer, 16)),
    at_start("BEARER", Tail::Scheme(Class::Bearer, 16)),
    at_start("Basic", Tail::Scheme(Class::Base64, 8)),
    at_start("basic", Tail::Scheme(Class::Base64, 8)),
    at_start("BASIC", Tail::Scheme(Class::Base64, 8)),
    at_start("sk-", Tail::Run(Class::Token, 20)),
    at_start("sk_", Tail::Then(&["live_", "test_"], Class::Alnum, 10)),
    at_start("rk_", Tail::Then(&["live_", "test_"], Class::Alnum, 10)),
    at_start("whsec_", Tail::Run(Class::Encoded, 24)),
    at_start("ghp_", Tail::Run(Class::Token, 20)),
    at_start("gho_", Tail::Run(Class::Token, 20)),
    at_start("ghu_", Tail::Run(Class::Token, 20)),
    at_start("ghs_", Tail::Run(Class::Token, 20)),
    at_start("ghr_", Tail::Run(Class::Token, 20)),
    inside("ub_pat_", Tail::Run(Class::Token, 22)),
    at_start("glpat-", Tail::Run(Class::Token, 20)),
    at_start("glrt-", Tail::Run(Class::Token, 20)),
    at_start(
        "xox",
        Tail::Then(
            &[
                "a-", "b-", "c-", "p-", "r-", "s-", "e-", "e.xoxb-", "e.xoxp-",
            ],
            Class::Token,
            10,
        ),
    ),
    at_start("xapp-", Tail::Run(Class::Token, 10)),
    inside(".slack.com/services/", Tail::Any),
    at_start("AKIA", Tail::Run(Class::Upper, 16)),
    at_start("ASIA", Tail::Run(Class::Upper, 16)),
    // JWTs, and Mapbox's `sk.eyJ…`.
    inside("eyJ", Tail::Run(Class::Dotted, 11)),
    at_start("AIza", Tail::Run(Class::Token, 35)),
    at_start("GOCSPX-", Tail::Run(Class::Token, 28)),
    at_start("ya29.", Tail::Run(Class::Token, 20)),
    at_start("npm_", Tail::Run(Class::Alnum, 36)),
    at_start("hf_", Tail::Run(Class::Alnum, 30)),
    inside("VATE KEY", Tail::Pem),
    at_start("SG.", Tail::Run(Class::Dotted, 66)),
    at_start(
        "shp",
        Tail::Then(&["at_", "ca_", "pa_", "ss_"], Class::Hex, 32),
    ),
    at_start("SK0", Tail::Run(Class::Hex, 31)),
    at_start("SK1", Tail::Run(Class::Hex, 31)),
    at_start("SK2", Tail::Run(Class::Hex, 31)),
    at_start("SK3", Tail::Run(Class::Hex, 31)),
    at_start("SK4", Tail::Run(Class::Hex, 31)),
    at_start("SK5", Tail::Run(Class::Hex, 31)),
    at_start("SK6", Tail::Run(Class::Hex, 31)),
    at_start("SK7", Tail::Run(Class::Hex, 31)),
    at_start("SK8", Tail::Run(Class::Hex, 31)),
    at_start("SK9", Tail::Run(Class::Hex, 31)),
    at_start("SKa", Tail::Run(Class::Hex, 31)),
    at_start("SKb", Tail::Run(Class::Hex, 31)),
    at_start("SKc", Tail::Run(Class::Hex, 31)),
    at_start("SKd", Tail::Run(Class::Hex, 31)),
    at_start("SKe", Tail::Run(Class::Hex, 31)),
    at_start("SKf", Tail::Run(Class::Hex, 31)),
    inside("_v1_", Tail::Run(Class::Hex, 64)),
    at_start("dapi", Tail::Run(Class::Hex, 32)),
    inside("ntKey=", Tail::Run(Class::Base64, 20)),
    inside("dAccessKey=", Tail::Run(Class::Base64, 20)),
    at_start("pypi-AgEI", Tail::Run(Class::Token, 61)),
    at_start("gsk_", Tail::Run(Class::Alnum, 48)),
    at_start("xai-", Tail::Run(Class::Alnum, 70)),
    at_start("r8_", Tail::Run(Class::Alnum, 37)),
    inside("plx-", Tail::Run(Class::Alnum, 40)),
    at_start("hvs.", Tail::Run(Class::Token, 24)),
    at_start("ntn_", Tail::Run(Class::Alnum, 40)),
    inside("n_api_", Tail::Run(Class::Alnum, 40)),
    inside("://", Tail::UrlCredentials),
    inside(":\\/\\/", Tail::UrlCredentials),
    inside("ig=", Tail::Run(Class::Encoded, 40)),
];

const _: () = assert!(LITERALS.len() <= MAX_LITERALS);

/// The literals, leftmost-first: Teddy's SIMD searcher where the CPU has
/// it, which builds in a fraction of a full Aho-Corasick automaton's time
/// (every process pays it before its first masked message), else the
/// automaton.
enum Literals {
    Packed(packed::Searcher),
    Automaton(AhoCorasick),
}

impl Literals {
    /// The leftmost literal at or after `from`: its index, start and end.
    fn find(&self, bytes: &[u8], from: usize) -> Option<(usize, usize, usize)> {
        let found = match self {
            Literals::Packed(searcher) => {
                searcher.find_in(bytes, aho_corasick::Span::from(from..bytes.len()))?
            }
            Literals::Automaton(automaton) => {
                automaton.find(Input::new(bytes).span(from..bytes.len()))?
            }
        };
        Some((found.pattern().as_usize(), found.start(), found.end()))
    }
}

static MATCHER: LazyLock<Literals> = LazyLock::new(|| {
    let literals = || LITERALS.iter().map(|(text, _, _)| text);
    let packed = packed::Config::new()
        .match_kind(packed::MatchKind::LeftmostFirst)
        .builder()
        .extend(literals())
        .build();
    match packed {
        Some(searcher) => Literals::Packed(searcher),
        None => Literals::Automaton(
            AhoCorasick::builder()
                .match_kind(MatchKind::LeftmostFirst)
                .build(literals())
                .expect("the literals build"),
        ),
    }
});

/// Whether `bytes` may hold a shape: a literal with a plausible tail.
/// After a literal that is not, the search goes on from its next byte, so
/// no literal overlapping it is missed (`_v1_` inside `npm_v1_…`). Choosing
/// literals that cannot overlap instead, to use one non-overlapping pass,
/// was measured slower: those literals start with commoner bytes.
pub(super) fn prescan(bytes: &[u8]) -> bool {
    let mut from = 0;
    while let Some((pattern, start, end)) = MATCHER.find(bytes, from) {
        let (_, tail, starts) = LITERALS[pattern];
        if plausible(bytes, start, end, tail, starts) {
            return true;
        }
        from = start + 1;
    }
    false
}

/// Whether a literal found at `start..end` of raw bytes could be part of a
/// shape. Raw bytes may be JSON text, where `\n` or `\u001f` right before
/// a literal is a separator once decoded, so an escape counts as a
/// boundary.
fn plausible(bytes: &[u8], start: usize, end: usize, tail: Tail, starts: bool) -> bool {
    if starts && !starts_word(bytes, start) {
        let escaped = (start >= 2 && bytes[start - 2] == b'\\')
            || (start >= 6 && bytes[start - 6] == b'\\' && bytes[start - 5] == b'u');
        if !escaped {
            return false;
        }
    }
    let rest = &bytes[end..];
    let run = |class: Class, from: &[u8]| from.iter().take_while(|&&b| class.has(b)).count();
    match tail {
        Tail::Run(class, min) => run(class, rest) >= min,
        Tail::Then(options, class, min) => options.iter().any(|option| {
            rest.strip_prefix(option.as_bytes())
                .is_some_and(|after| run(class, after) >= min)
        }),
        Tail::Scheme(class, min) => {
            let after = match rest.first() {
                Some(b' ' | b'\t') => rest.trim_ascii_start(),
                Some(b'+') => &rest[1..],
                Some(b':') => rest[1..].trim_ascii_start(),
                Some(b'%') if rest.starts_with(b"%20") => &rest[3..],
                _ => return false,
            };
            run(class, after) >= min
        }
        Tail::Pem => rest.starts_with(b"-----") || rest.starts_with(b" BLOCK-----"),
        Tail::UrlCredentials => {
            let authority = rest
                .iter()
                .position(|b| b"/?#\"'<>\\".contains(b) || b.is_ascii_whitespace())
                .map_or(rest, |end| &rest[..end]);
            authority
                .iter()
                .rposition(|&b| b == b'@')
                .is_some_and(|at| {
                    authority[..at]
                        .iter()
                        .position(|&b| b == b':')
                        .is_some_and(|colon| colon + 1 < at)
                })
        }
        Tail::AsciiEscape => rest.first().is_some_and(|b| (b'2'..=b'7').contains(b)),
        Tail::Any => true,
    }
}

#[cfg(test)]
mod tests {
    use super::super::escapes;
    use super::*;

    #[test]
    fn the_literals_stay_within_the_simd_prefilter() {
        for (text, _, _) in LITERALS {
            assert!(text.len() >= 3, "{text}");
        }
        assert_eq!(escapes::TRIGGERS.len(), 6);
        for trigger in escapes::TRIGGERS {
            assert!(prescan(format!("{trigger}0").as_bytes()), "{trigger}");
        }
        assert!(!prescan(b"caf\\u00e9 \\u001b[0m"));
    }
}
