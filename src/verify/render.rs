//! Drift reports as text: what drifted, tool changes, and unified diffs of
//! the recorded side against the live one, the way insta shows snapshot
//! changes. Colour on terminals (with the changed words emphasised inside
//! changed lines, so a one-character change in a long line is visible),
//! plain text everywhere else.

use std::fmt::Write as _;

use console::Style;
use serde_json::Value;
use similar::{Algorithm, DiffOp, DiffTag, TextDiff};

use super::{DriftReport, InteractionDrift, Normalized, NotificationCounts, Status};

/// How to render: colour (ANSI, with word-level emphasis inside changed
/// lines) or plain text.
#[derive(Debug, Clone, Copy)]
pub struct RenderOptions {
    /// Whether to emit ANSI escape codes.
    pub color: bool,
    /// Lines of context around changes in diffs.
    pub context: usize,
}

/// Lines of context around changes unless said otherwise (what `diff -u`
/// and insta show).
const CONTEXT: usize = 3;

impl RenderOptions {
    /// Colour when stdout is a terminal and `NO_COLOR` is unset
    /// (`console::colors_enabled()` follows `NO_COLOR`, `CLICOLOR` and
    /// `CLICOLOR_FORCE`); context 3.
    pub fn for_stdout() -> RenderOptions {
        RenderOptions {
            color: console::colors_enabled(),
            context: CONTEXT,
        }
    }

    /// No colour: for files, tests, and messages of panicking `#[test]`s.
    pub fn plain() -> RenderOptions {
        RenderOptions {
            color: false,
            context: CONTEXT,
        }
    }
}

/// The styles of each part of the output. Styling is forced on or off by
/// the options, so output depends on them only, not on whether the process
/// happens to run on a terminal.
struct Palette {
    removed: Style,
    added: Style,
    removed_word: Style,
    added_word: Style,
    hunk: Style,
    title: Style,
    breaking: Style,
    verdict_drift: Style,
    verdict_clean: Style,
}

impl Palette {
    fn new(color: bool) -> Palette {
        let base = Style::new().force_styling(color);
        Palette {
            removed: base.clone().red(),
            added: base.clone().green(),
            removed_word: base.clone().red().bold().underlined(),
            added_word: base.clone().green().bold().underlined(),
            hunk: base.clone().cyan(),
            title: base.clone().bold(),
            breaking: base.clone().red().bold(),
            verdict_drift: base.clone().red().bold(),
            verdict_clean: base.green().bold(),
        }
    }
}

/// Below this similarity (0..=1) two blocks of lines are shown as wholly
/// replaced: emphasising most words would only add noise. The value
/// `similar` uses for the same purpose.
const MIN_INLINE_RATIO: f32 = 0.5;

/// A unified diff of the pretty JSON of two values, with `--- recorded` /
/// `+++ live` headers and `@@` hunk headers. In colour, removed lines are
/// red, added lines green, and within replaced lines the changed words are
/// emphasised. Plain mode has no escape codes at all. Empty when the values
/// are equal (even if their keys are in another order).
pub fn unified_diff(recorded: &Value, live: &Value, options: &RenderOptions) -> String {
    let (old, new) = (pretty(recorded), pretty(live));
    if recorded == live || old == new {
        return String::new();
    }
    let palette = Palette::new(options.color);
    let diff = TextDiff::configure()
        .algorithm(Algorithm::Patience)
        .diff_lines(&old, &new);
    let mut out = String::new();
    line(&mut out, &palette.removed, "--- recorded");
    line(&mut out, &palette.added, "+++ live");
    for hunk in diff
        .unified_diff()
        .context_radius(options.context)
        .iter_hunks()
    {
        line(&mut out, &palette.hunk, &hunk.header().to_string());
        for op in hunk.ops() {
            render_op(&mut out, &diff, op, &palette, options.color);
        }
    }
    out
}

/// Pretty JSON ending in a newline, so the last line diffs like the others.
fn pretty(value: &Value) -> String {
    let mut text = serde_json::to_string_pretty(value).unwrap_or_else(|_| value.to_string());
    text.push('\n');
    text
}

/// Appends `text` in `style`, then a newline (outside the style, so
/// terminals do not carry colour to the next line).
fn line(out: &mut String, style: &Style, text: &str) {
    let _ = writeln!(out, "{}", style.apply_to(text));
}

/// One diff operation's lines, prefixed ` `, `-` or `+`.
fn render_op(
    out: &mut String,
    diff: &TextDiff<'_, '_, '_, str>,
    op: &DiffOp,
    palette: &Palette,
    color: bool,
) {
    let old = &diff.old_slices()[op.old_range()];
    let new = &diff.new_slices()[op.new_range()];
    match op.tag() {
        DiffTag::Equal => old
            .iter()
            .for_each(|l| line(out, &Style::new(), &prefixed(' ', l))),
        DiffTag::Delete => old
            .iter()
            .for_each(|l| line(out, &palette.removed, &prefixed('-', l))),
        DiffTag::Insert => new
            .iter()
            .for_each(|l| line(out, &palette.added, &prefixed('+', l))),
        DiffTag::Replace => {
            if !(color && inline(out, old, new, palette)) {
                old.iter()
                    .for_each(|l| line(out, &palette.removed, &prefixed('-', l)));
                new.iter()
                    .for_each(|l| line(out, &palette.added, &prefixed('+', l)));
            }
        }
    }
}

/// A diff line: its sign, then the line without its newline.
fn prefixed(sign: char, text: &str) -> String {
    format!("{sign}{}", text.strip_suffix('\n').unwrap_or(text))
}

/// Replaced lines with the changed words emphasised: the old block and the
/// new block are diffed word by word (across lines, so a reflowed value
/// still lines up). Returns false, writing nothing, when the blocks have
/// too little in common for emphasis to help.
fn inline(out: &mut String, old: &[&str], new: &[&str], palette: &Palette) -> bool {
    let (old, new) = (old.concat(), new.concat());
    let (old_words, new_words) = (words(&old), words(&new));
    let ops = similar::capture_diff_slices(Algorithm::Patience, &old_words, &new_words);
    if similar::get_diff_ratio(&ops, old_words.len(), new_words.len()) < MIN_INLINE_RATIO {
        return false;
    }
    let (mut removed, mut added) = (Vec::new(), Vec::new());
    for op in &ops {
        let changed = op.tag() != DiffTag::Equal;
        removed.extend(old_words[op.old_range()].iter().map(|w| (changed, *w)));
        added.extend(new_words[op.new_range()].iter().map(|w| (changed, *w)));
    }
    emphasised_lines(out, '-', &removed, &palette.removed, &palette.removed_word);
    emphasised_lines(out, '+', &added, &palette.added, &palette.added_word);
    true
}

/// Writes words as diff lines (a line per `\n`), the changed ones in
/// `emphasis`, the others in `base`.
fn emphasised_lines(
    out: &mut String,
    sign: char,
    words: &[(bool, &str)],
    base: &Style,
    emphasis: &Style,
) {
    for line_words in words.split_inclusive(|(_, w)| *w == "\n") {
        let mut marked: Vec<(bool, &str)> = line_words
            .iter()
            .copied()
            .filter(|(_, w)| *w != "\n")
            .collect();
        // Indentation is layout, not content: never emphasised.
        if let Some(first) = marked.first_mut()
            && first.1.trim().is_empty()
        {
            first.0 = false;
        }
        let _ = write!(out, "{}", base.apply_to(sign));
        // Runs of words with the same emphasis, styled once each.
        for run in marked.chunk_by(|a, b| a.0 == b.0) {
            let text: String = run.iter().map(|(_, w)| *w).collect();
            let style = if run[0].0 { emphasis } else { base };
            let _ = write!(out, "{}", style.apply_to(text));
        }
        out.push('\n');
    }
}

/// What a character is, for splitting text into words.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Class {
    Word,
    Space,
    /// Punctuation and newlines: a word of its own each, so a changed
    /// quote or comma does not emphasise its neighbours.
    Single,
}

fn class(c: char) -> Class {
    if c.is_alphanumeric() || c == '_' {
        Class::Word
    } else if c.is_whitespace() && c != '\n' {
        Class::Space
    } else {
        Class::Single
    }
}

/// Splits text into runs of word characters, runs of spaces, and single
/// other characters (finer than whitespace splitting: in `"hello world",`
/// only `world` differs from `"hello earth",`).
fn words(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let (mut start, mut previous) = (0, None);
    for (i, c) in text.char_indices() {
        let current = class(c);
        if i > start && (current == Class::Single || previous != Some(current)) {
            out.push(&text[start..i]);
            start = i;
        }
        previous = Some(current);
    }
    if start < text.len() {
        out.push(&text[start..]);
    }
    out
}

/// The whole drift report as text, insta-style: each drifted interaction
/// (header, tool changes, notification counts, diff), what normalisation
/// replaced, then the summary line and the verdict.
pub fn report(report: &DriftReport, options: &RenderOptions) -> String {
    let palette = Palette::new(options.color);
    let mut out = String::new();
    let processes = report.has_processes();
    for interaction in report.drifted() {
        render_interaction(&mut out, interaction, processes, options, &palette);
        out.push('\n');
    }
    render_normalized(&mut out, &report.normalized);
    render_summary(&mut out, report, &palette);
    out
}

/// One drifted interaction, named with its server process when the
/// recording has several (`processes`).
fn render_interaction(
    out: &mut String,
    interaction: &InteractionDrift,
    processes: bool,
    options: &RenderOptions,
    palette: &Palette,
) {
    let status = match interaction.status {
        Status::Same => "same",
        Status::Changed => "changed",
        Status::Missing => "missing: the live server did not answer",
    };
    let process = match processes {
        true => format!("process {}, ", interaction.process),
        false => String::new(),
    };
    let header = format!(
        "{process}interaction {} · {} · {status}",
        interaction.index, interaction.label
    );
    line(out, &palette.title, &header);
    out.push_str(&render_notes(interaction, palette));
    out.push_str(&unified_diff(
        &interaction.recorded,
        &interaction.live,
        options,
    ));
}

/// What a drifted interaction's diff does not say at a glance: tool
/// changes (breaking ones flagged), notification counts, and `normalize`
/// rules that would absorb volatile values. Indented lines, for under the
/// interaction's header (`verify`, `review`).
pub fn notes(interaction: &InteractionDrift, options: &RenderOptions) -> String {
    render_notes(interaction, &Palette::new(options.color))
}

fn render_notes(interaction: &InteractionDrift, palette: &Palette) -> String {
    let mut out = String::new();
    for change in &interaction.tool_changes {
        let flag = if change.is_breaking() {
            format!("{} ", palette.breaking.apply_to("BREAKING"))
        } else {
            String::new()
        };
        let _ = writeln!(out, "  - {flag}{}", change.describe());
    }
    if let Some(counts) = notification_changes(&interaction.notifications) {
        let _ = writeln!(out, "  notifications: {counts}");
    }
    for hint in &interaction.normalize_hints {
        let rule = serde_json::to_string(&hint.rule).unwrap_or_default();
        let _ = writeln!(
            out,
            "  hint: {} looks like a {} that changes every run; to ignore it, add to \"normalize\" in the cassette's \"rules\": {rule}",
            hint.rule.selector.as_str(),
            hint.kind,
        );
    }
    out
}

/// "1 changed, 2 new": the notification counts that are not `same`, or
/// `None` when all are.
fn notification_changes(counts: &NotificationCounts) -> Option<String> {
    let parts: Vec<String> = [
        (counts.changed, "changed"),
        (counts.missing, "missing"),
        (counts.new, "new"),
    ]
    .into_iter()
    .filter(|(n, _)| *n > 0)
    .map(|(n, what)| format!("{n} {what}"))
    .collect();
    (!parts.is_empty()).then(|| parts.join(", "))
}

/// What normalisation replaced, rule by rule, so nothing is hidden
/// silently.
fn render_normalized(out: &mut String, normalized: &[Normalized]) {
    if normalized.is_empty() {
        return;
    }
    out.push_str("normalized:\n");
    for rule in normalized {
        let _ = writeln!(
            out,
            "  {}: {} recorded, {} live values",
            rule.rule, rule.recorded, rule.live
        );
    }
}

/// The totals and the verdict.
fn render_summary(out: &mut String, report: &DriftReport, palette: &Palette) {
    let (c, n) = (&report.counts, &report.counts.notifications);
    let _ = writeln!(
        out,
        "{}: {} same, {} changed, {} missing; notifications: {} same, {} changed, {} missing, {} new",
        report.cassette.display(),
        c.same,
        c.changed,
        c.missing,
        n.same,
        n.changed,
        n.missing,
        n.new
    );
    if report.has_drift() {
        line(out, &palette.verdict_drift, "drift");
    } else {
        line(out, &palette.verdict_clean, "no drift");
    }
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use serde_json::json;

    use super::super::tools::ToolChange;
    use super::super::{Counts, Normalized};
    use super::*;

    fn colour() -> RenderOptions {
        RenderOptions {
            color: true,
            context: 3,
        }
    }

    #[test]
    fn equal_values_have_no_diff() {
        let a = json!({"a": 1, "b": [1, 2]});
        let b = json!({"b": [1, 2], "a": 1});
        assert_eq!(unified_diff(&a, &a, &RenderOptions::plain()), "");
        assert_eq!(unified_diff(&a, &b, &colour()), "");
    }

    #[test]
    fn plain_diff_has_headers_and_signs_and_no_escapes() {
        let old = json!({"text": "hello world", "n": 1});
        let new = json!({"text": "hello earth", "n": 1});
        let diff = unified_diff(&old, &new, &RenderOptions::plain());
        assert!(!diff.contains('\x1b'), "{diff}");
        assert_eq!(
            diff,
            "--- recorded\n+++ live\n@@ -1,4 +1,4 @@\n {\n-  \"text\": \"hello world\",\n+  \"text\": \"hello earth\",\n   \"n\": 1\n }\n"
        );
    }

    #[test]
    fn plain_diff_keeps_context_to_the_option() {
        let old: Value = (0..20).map(|i| json!(i)).collect();
        let mut new = old.clone();
        new[10] = json!("ten");
        let options = RenderOptions {
            color: false,
            context: 1,
        };
        let diff = unified_diff(&old, &new, &options);
        assert_eq!(
            diff,
            "--- recorded\n+++ live\n@@ -11,3 +11,3 @@\n   9,\n-  10,\n+  \"ten\",\n   11,\n"
        );
    }

    #[test]
    fn colour_diff_emphasises_only_the_changed_word() {
        let old = json!({"text": "hello world"});
        let new = json!({"text": "hello earth"});
        let diff = unified_diff(&old, &new, &colour());
        assert!(diff.contains('\x1b'));
        let palette = Palette::new(true);
        let removed = format!(
            "{}{}{}{}\n",
            palette.removed.apply_to('-'),
            palette.removed.apply_to("  \"text\": \"hello "),
            palette.removed_word.apply_to("world"),
            palette.removed.apply_to("\""),
        );
        let added = format!(
            "{}{}{}{}\n",
            palette.added.apply_to('+'),
            palette.added.apply_to("  \"text\": \"hello "),
            palette.added_word.apply_to("earth"),
            palette.added.apply_to("\""),
        );
        assert!(diff.contains(&removed), "{diff:?}");
        assert!(diff.contains(&added), "{diff:?}");
        // Emphasis is an underline, used twice: once per side.
        assert_eq!(diff.matches("\x1b[4m").count(), 2, "{diff:?}");
        // Without escapes, it is the plain diff.
        assert_eq!(
            console::strip_ansi_codes(&diff),
            unified_diff(&old, &new, &RenderOptions::plain())
        );
    }

    #[test]
    fn colour_diff_of_unrelated_lines_has_no_emphasis() {
        let diff = unified_diff(&json!("abc def"), &json!(42), &colour());
        assert!(diff.contains('\x1b'));
        assert!(!diff.contains("\x1b[4m"), "{diff:?}");
        assert_eq!(
            console::strip_ansi_codes(&diff),
            "--- recorded\n+++ live\n@@ -1 +1 @@\n-\"abc def\"\n+42\n"
        );
    }

    #[test]
    fn colour_diff_across_reflowed_lines_matches_plain_text() {
        let old = json!({"a": [1, 2], "b": "x"});
        let new = json!({"a": [1, 2, 3], "b": "y"});
        let diff = unified_diff(&old, &new, &colour());
        assert_eq!(
            console::strip_ansi_codes(&diff),
            unified_diff(&old, &new, &RenderOptions::plain())
        );
        // The new element is emphasised, its indentation is not.
        let palette = Palette::new(true);
        let three = format!(
            "{}{}{}\n",
            palette.added.apply_to('+'),
            palette.added.apply_to("    "),
            palette.added_word.apply_to("3"),
        );
        assert!(diff.contains(&three), "{diff:?}");
    }

    #[test]
    fn words_split_punctuation_and_spaces() {
        assert_eq!(
            words("  \"hello world\",\n"),
            ["  ", "\"", "hello", " ", "world", "\"", ",", "\n"]
        );
        assert_eq!(words(""), Vec::<&str>::new());
        assert_eq!(words("été_1 ü"), ["été_1", " ", "ü"]);
    }

    fn interaction(index: usize, status: Status, recorded: Value, live: Value) -> InteractionDrift {
        InteractionDrift {
            index,
            process: 0,
            label: "tools/call echo".to_string(),
            status,
            recorded,
            live,
            notifications: NotificationCounts::default(),
            tool_changes: Vec::new(),
            normalize_hints: Vec::new(),
        }
    }

    fn sample() -> DriftReport {
        let same = interaction(0, Status::Same, json!({"a": 1}), json!({"a": 1}));
        let mut list = interaction(
            1,
            Status::Changed,
            json!({"response": {"tools": []}}),
            json!({"response": {"tools": [{"name": "new"}]}}),
        );
        list.label = "tools/list".to_string();
        list.tool_changes = vec![
            ToolChange::Removed { tool: "old".into() },
            ToolChange::Added { tool: "new".into() },
        ];
        list.notifications = NotificationCounts {
            same: 2,
            changed: 1,
            missing: 0,
            new: 2,
        };
        let missing = interaction(
            4,
            Status::Missing,
            json!({"response": {"ok": true}}),
            json!(null),
        );
        DriftReport {
            cassette: PathBuf::from("cassettes/echo.json"),
            interactions: vec![same, list, missing],
            normalized: vec![Normalized {
                rule: "/result/**/timestamp → [timestamp]".to_string(),
                recorded: 3,
                live: 3,
            }],
            counts: Counts {
                same: 1,
                changed: 1,
                missing: 1,
                notifications: NotificationCounts {
                    same: 2,
                    changed: 1,
                    missing: 0,
                    new: 2,
                },
            },
        }
    }

    #[test]
    fn report_lists_drifted_interactions_rules_and_summary() {
        let text = report(&sample(), &RenderOptions::plain());
        let expected = "\
interaction 1 · tools/list · changed
  - BREAKING tool `old` removed
  - tool `new` added
  notifications: 1 changed, 2 new
--- recorded
+++ live
@@ -1,5 +1,9 @@
 {
   \"response\": {
-    \"tools\": []
+    \"tools\": [
+      {
+        \"name\": \"new\"
+      }
+    ]
   }
 }

interaction 4 · tools/call echo · missing: the live server did not answer
--- recorded
+++ live
@@ -1,5 +1 @@
-{
-  \"response\": {
-    \"ok\": true
-  }
-}
+null

normalized:
  /result/**/timestamp → [timestamp]: 3 recorded, 3 live values
cassettes/echo.json: 1 same, 1 changed, 1 missing; notifications: 2 same, 1 changed, 0 missing, 2 new
drift
";
        assert_eq!(text, expected);
    }

    #[test]
    fn a_report_of_several_processes_names_the_process_of_each_interaction() {
        let mut several = sample();
        several.interactions[2].process = 1;
        let text = report(&several, &RenderOptions::plain());
        assert!(
            text.contains("process 0, interaction 1 · tools/list · changed\n"),
            "{text}"
        );
        assert!(
            text.contains("process 1, interaction 4 · tools/call echo · missing"),
            "{text}"
        );
        // One process: named as before, and left out of the JSON.
        let one = report(&sample(), &RenderOptions::plain());
        assert!(!one.contains("process"), "{one}");
        let json = serde_json::to_value(sample()).unwrap();
        assert!(json["interactions"][0].get("process").is_none());
        assert_eq!(
            serde_json::to_value(&several).unwrap()["interactions"][2]["process"],
            1
        );
    }

    #[test]
    fn report_without_drift() {
        let mut clean = sample();
        clean.interactions.retain(|i| i.status == Status::Same);
        clean.normalized.clear();
        clean.counts = Counts {
            same: 1,
            ..Counts::default()
        };
        assert_eq!(
            report(&clean, &RenderOptions::plain()),
            "cassettes/echo.json: 1 same, 0 changed, 0 missing; notifications: 0 same, 0 changed, 0 missing, 0 new\nno drift\n"
        );
    }

    #[test]
    fn report_in_colour_flags_breaking_changes() {
        let text = report(&sample(), &colour());
        let breaking = Palette::new(true).breaking.apply_to("BREAKING").to_string();
        assert!(
            text.contains(&format!("  - {breaking} tool `old` removed")),
            "{text:?}"
        );
        assert_eq!(
            console::strip_ansi_codes(&text),
            report(&sample(), &RenderOptions::plain())
        );
    }

    #[test]
    fn for_stdout_has_default_context() {
        assert_eq!(RenderOptions::for_stdout().context, 3);
        assert!(!RenderOptions::plain().color);
    }

    #[test]
    fn volatile_values_get_the_rule_that_absorbs_them() {
        let recorded =
            json!({"response": {"result": {"at": "2026-11-30T10:00:00Z"}}, "traffic": []});
        let live = json!({"response": {"result": {"at": "2026-12-01T07:00:00Z"}}, "traffic": []});
        let mut drift = interaction(2, Status::Changed, recorded.clone(), live.clone());
        drift.normalize_hints = super::super::hints::suggest(&recorded, &live);
        let notes = notes(&drift, &RenderOptions::plain());
        assert_eq!(
            notes,
            "  hint: /result/at looks like a timestamp that changes every run; to ignore it, add to \"normalize\" in the cassette's \"rules\": {\"selector\":\"/result/at\",\"replacement\":\"[timestamp]\"}\n"
        );
    }
}
