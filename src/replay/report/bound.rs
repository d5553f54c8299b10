//! The budgets that keep a miss report small whatever was sent: one huge
//! string, a huge key, a deep object, thousands of keys. Each part of a
//! report has its own budget, cuts fall on character boundaries, and every
//! cut says what it left out (`… (104857590 more bytes)`), so a report
//! still shows the start of a long value and where it differs.

use std::borrow::Cow;

/// The longest diff line shown, in bytes: room for the indentation, the
/// key and the start of a long value (or, for a changed line, the place
/// where it first differs).
pub(super) const DIFF_LINE_BYTES: usize = 200;

/// The most one diff takes, in bytes: the lines past it are counted, not
/// shown. Sixty lines of a side can each be a long one.
pub(super) const DIFF_BYTES: usize = 8 * 1024;

/// The longest JSON pointer shown (`differs_at`, labels): a huge key makes
/// a huge pointer. A pointer cut short is no rule, so no `ignore` fix is
/// offered for it.
pub(super) const POINTER_BYTES: usize = 256;

/// The longest name shown: a method, a tool, prompt or resource name, a
/// protocol version. MCP's own names are far shorter.
pub(super) const NAME_BYTES: usize = 256;

/// How many characters a one-line message keeps of the request (and of
/// the closest recorded one): the start, and the end, which names the tool
/// in canonical JSON.
const ONE_LINE_HEAD: usize = 120;

/// How many characters of the end a one-line message keeps.
const ONE_LINE_TAIL: usize = 40;

/// How much of a changed line is kept before the place where it first
/// differs from its counterpart, so the difference reads in context.
const BEFORE_DIFFERENCE: usize = 40;

/// The most one miss report's text takes (stderr, and `text` in
/// `--report`) whatever was sent, not counting the cassette's path, rules
/// and server command, which come from the user: three diffs within their
/// budget, labels and names within theirs, and a hand-written case that
/// may repeat the request's params (16 KiB at most) twice.
pub const MISS_REPORT_BYTES: usize = 96 * 1024;

/// The most a miss's JSON-RPC error reply takes whatever was sent (the id
/// aside, which comes back as sent): its one-line message, and its data
/// with the request's params and the closest recorded request's (16 KiB
/// at most each, as canonical JSON).
pub const MISS_REPLY_BYTES: usize = 48 * 1024;

/// The most one miss takes in `--report`: its fields and its text, pretty
/// JSON in which escaping can double a string (a quote in a value is `\"`
/// in canonical JSON and `\\\"` once more inside a string), and params
/// of up to 48 KiB as printed there, the request's and the closest
/// recorded ones'.
pub const MISS_JSON_BYTES: usize = 512 * 1024;

/// `text` cut to its first `limit` bytes (on a character boundary), with
/// how many bytes were left out; `text` itself when it fits.
pub(super) fn cut(text: &str, limit: usize) -> Cow<'_, str> {
    if text.len() <= limit {
        return Cow::Borrowed(text);
    }
    let end = floor_boundary(text, limit);
    Cow::Owned(format!(
        "{}… ({} more bytes)",
        &text[..end],
        text.len() - end
    ))
}

/// `text` for a one-line message: its start and its end, with how many
/// bytes were left out between them.
pub(super) fn one_line(text: &str) -> Cow<'_, str> {
    let chars = text.chars().count();
    if chars <= ONE_LINE_HEAD + ONE_LINE_TAIL {
        return Cow::Borrowed(text);
    }
    let head = text.char_indices().nth(ONE_LINE_HEAD).map_or(0, |(i, _)| i);
    let tail = text
        .char_indices()
        .nth(chars - ONE_LINE_TAIL)
        .map_or(text.len(), |(i, _)| i);
    Cow::Owned(format!(
        "{}… ({} bytes left out) …{}",
        &text[..head],
        tail - head,
        &text[tail..]
    ))
}

/// A unified diff with each line cut to [`DIFF_LINE_BYTES`] and the whole
/// to [`DIFF_BYTES`]. A changed line is cut with its counterpart (the
/// first removed line of a run with the first added one, and so on), so
/// that when two long lines differ far in, the cut shows where.
pub(super) fn diff(text: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let mut shown: Vec<Cow<'_, str>> = Vec::with_capacity(lines.len());
    let mut at = 0;
    while at < lines.len() {
        let run = |from: usize, sign: char| {
            lines[from..]
                .iter()
                .take_while(|line| line.starts_with(sign))
                .count()
        };
        let removed = run(at, '-');
        let added = run(at + removed, '+');
        if removed + added == 0 {
            shown.push(cut(lines[at], DIFF_LINE_BYTES));
            at += 1;
            continue;
        }
        let old = &lines[at..at + removed];
        let new = &lines[at + removed..at + removed + added];
        let mut old_cut: Vec<Cow<'_, str>> = old.iter().map(|l| cut(l, DIFF_LINE_BYTES)).collect();
        let mut new_cut: Vec<Cow<'_, str>> = new.iter().map(|l| cut(l, DIFF_LINE_BYTES)).collect();
        for (n, (a, b)) in old.iter().zip(new).enumerate() {
            (old_cut[n], new_cut[n]) = cut_changed(a, b, DIFF_LINE_BYTES);
        }
        shown.extend(old_cut);
        shown.extend(new_cut);
        at += removed + added;
    }
    let mut out = String::new();
    for (n, line) in shown.iter().enumerate() {
        if out.len() + line.len() + 1 > DIFF_BYTES {
            out.push_str(&format!(
                "({} more diff lines not shown: a diff shows at most {DIFF_BYTES} bytes)\n",
                shown.len() - n
            ));
            break;
        }
        out.push_str(line);
        out.push('\n');
    }
    out
}

/// Two changed lines (a diff's `-` and `+`), each cut to `limit` bytes.
/// When they share more than a cut would show, each keeps its start, then
/// the stretch from just before the first difference, saying how many
/// bytes of what they share were left out between.
fn cut_changed<'a>(a: &'a str, b: &'a str, limit: usize) -> (Cow<'a, str>, Cow<'a, str>) {
    // The diff's sign differs: compare what follows it.
    let same = 1 + a[1..]
        .bytes()
        .zip(b[1..].bytes())
        .take_while(|(x, y)| x == y)
        .count();
    // Equal bytes up to `same`: both texts have their boundaries there.
    let from = floor_boundary(a, same.saturating_sub(BEFORE_DIFFERENCE));
    let head = floor_boundary(a, limit / 4);
    if same + BEFORE_DIFFERENCE <= limit || from <= head {
        return (cut(a, limit), cut(b, limit));
    }
    let window = |text: &'a str| -> Cow<'a, str> {
        if text.len() <= limit {
            return Cow::Borrowed(text);
        }
        Cow::Owned(format!(
            "{}… ({} bytes left out) …{}",
            &text[..head],
            from - head,
            cut(&text[from..], limit - head)
        ))
    };
    (window(a), window(b))
}

/// The largest character boundary of `text` at or before `at`.
fn floor_boundary(text: &str, at: usize) -> usize {
    (0..=at.min(text.len()))
        .rev()
        .find(|&i| text.is_char_boundary(i))
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cut_keeps_the_start_and_counts_the_rest() {
        let long = "C".repeat(1000);
        assert_eq!(
            cut(&long, 10),
            format!("{}… (990 more bytes)", "C".repeat(10))
        );
        assert_eq!(cut("short", 10), "short");
    }

    #[test]
    fn cuts_fall_on_character_boundaries() {
        // Three bytes each: a limit of 10 falls inside the fourth.
        let text = "☃".repeat(100);
        assert_eq!(
            cut(&text, 10),
            format!("{}… (291 more bytes)", "☃".repeat(3))
        );
        let line = format!("-{}", "é".repeat(500));
        let other = format!("+{}x", "é".repeat(300));
        let (a, b) = cut_changed(&line, &other, 201);
        assert!(a.len() < 300 && b.len() < 300, "{a}\n{b}");
        let snowmen = "☃".repeat(300);
        let message = one_line(&snowmen);
        assert!(message.contains("bytes left out"), "{message}");
    }

    #[test]
    fn changed_lines_that_differ_far_in_show_where() {
        let recorded = format!(
            "-  \"n\": \"{}A{}\"",
            "C".repeat(50_000),
            "C".repeat(50_000)
        );
        let live = format!(
            "+  \"n\": \"{}B{}\"",
            "C".repeat(50_000),
            "C".repeat(50_000)
        );
        let (a, b) = cut_changed(&recorded, &live, DIFF_LINE_BYTES);
        assert!(a.contains("CA") && b.contains("CB"), "{a}\n{b}");
        assert!(a.starts_with("-  \"n\": \"CCC") && b.starts_with("+  \"n\": \"CCC"));
        assert!(
            a.contains("bytes left out") && a.contains("more bytes)"),
            "{a}"
        );
        assert!(a.len() < DIFF_LINE_BYTES + 80, "{} bytes", a.len());
        // Differing early: the start shows it.
        let long = format!("+\"{}", "B".repeat(1000));
        let (a, b) = cut_changed("-\"A", &long, 50);
        assert_eq!(a, "-\"A");
        assert!(
            b.starts_with("+\"BBB") && b.ends_with("(952 more bytes)"),
            "{b}"
        );
    }

    #[test]
    fn a_diff_stays_within_its_budget_and_says_what_it_left_out() {
        let mut text = String::from("--- recorded\n+++ live\n@@ -1,60 +1,60 @@\n");
        for n in 0..60 {
            text.push_str(&format!("-  \"k{n}\": \"{}\"\n", "a".repeat(10_000)));
        }
        for n in 0..60 {
            text.push_str(&format!("+  \"k{n}\": \"{}\"\n", "b".repeat(10_000)));
        }
        let shown = diff(&text);
        assert!(shown.len() <= DIFF_BYTES + 100, "{} bytes", shown.len());
        assert!(shown.contains("more bytes)"), "{shown}");
        assert!(shown.contains("more diff lines not shown"), "{shown}");
        assert!(shown.starts_with("--- recorded\n+++ live\n@@"), "{shown}");
    }

    #[test]
    fn one_line_keeps_the_start_and_the_end() {
        let text = format!(
            "tools/call {{\"a\":\"{}\",\"name\":\"echo\"}}",
            "x".repeat(5000)
        );
        let line = one_line(&text);
        assert!(line.starts_with("tools/call {\"a\":\"xxx"), "{line}");
        assert!(line.ends_with("\"name\":\"echo\"}"), "{line}");
        assert!(line.contains("bytes left out"), "{line}");
        assert!(line.chars().count() < 200, "{line}");
        assert_eq!(one_line("tools/call {}"), "tools/call {}");
    }
}
