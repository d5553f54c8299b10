//! A string a `pattern` matches: the regular expression walked once,
//! taking the fewest repetitions and the first alternative, and letters or
//! digits from character classes where they have them.

use regex_syntax::hir::{Class, Hir, HirKind};

/// Repetitions beyond this are not written out (`a{1000}` gives up).
const MAX_REPEAT: u32 = 64;

/// A string that `pattern` matches, or `None` when the pattern cannot be
/// read, needs what the regex crate does not support (look-around), or the
/// walk produced something it does not match (word boundaries, anchors in
/// the middle).
pub(super) fn example(pattern: &str) -> Option<String> {
    let hir = regex_syntax::ParserBuilder::new()
        .build()
        .parse(pattern)
        .ok()?;
    let mut out = String::new();
    emit(&hir, &mut out)?;
    let regex = regex::Regex::new(pattern).ok()?;
    regex.is_match(&out).then_some(out)
}

/// Whether `text` matches `pattern` (unanchored, as JSON Schema reads it);
/// `None` when the regex crate cannot read it.
pub(super) fn matches(pattern: &str, text: &str) -> Option<bool> {
    regex::Regex::new(pattern).ok().map(|r| r.is_match(text))
}

fn emit(hir: &Hir, out: &mut String) -> Option<()> {
    match hir.kind() {
        HirKind::Empty | HirKind::Look(_) => {}
        HirKind::Literal(literal) => out.push_str(std::str::from_utf8(&literal.0).ok()?),
        HirKind::Class(Class::Unicode(class)) => {
            let ranges: Vec<(char, char)> = class
                .ranges()
                .iter()
                .map(|r| (r.start(), r.end()))
                .collect();
            out.push(pick(&ranges)?);
        }
        HirKind::Class(Class::Bytes(class)) => {
            let ranges: Vec<(char, char)> = class
                .ranges()
                .iter()
                .filter(|r| r.start().is_ascii())
                .map(|r| (char::from(r.start()), char::from(r.end().min(0x7f))))
                .collect();
            out.push(pick(&ranges)?);
        }
        HirKind::Repetition(repetition) => {
            if repetition.min > MAX_REPEAT {
                return None;
            }
            for _ in 0..repetition.min {
                emit(&repetition.sub, out)?;
            }
        }
        HirKind::Capture(capture) => emit(&capture.sub, out)?,
        HirKind::Concat(parts) => {
            for part in parts {
                emit(part, out)?;
            }
        }
        HirKind::Alternation(branches) => emit(branches.first()?, out)?,
    }
    Some(())
}

/// A readable character from a class: `a`, `A` or `0` when it has one,
/// else its first printable character.
fn pick(ranges: &[(char, char)]) -> Option<char> {
    let has = |c: char| ranges.iter().any(|&(start, end)| start <= c && c <= end);
    if let Some(c) = ['a', 'A', '0', 'x', '-', '_'].into_iter().find(|&c| has(c)) {
        return Some(c);
    }
    ranges.iter().find_map(|&(start, end)| {
        let start = if start < ' ' { ' ' } else { start };
        (start <= end).then_some(start)
    })
}
