//! `mcpcassette review`, `accept`, `reject` and `pending`: deciding whether
//! pending cassettes (`CASSETTE.new`, written by `verify`) replace the
//! accepted ones, change by change or all at once.

use std::fmt::Write as _;
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use console::{Key, Term, style};
use mcpcassette::cli_support::chain;
use mcpcassette::cli_support::compare_interaction;
use mcpcassette::cli_support::pending::{self, Change, Pending};
use mcpcassette::cli_support::render::{self, RenderOptions};
use serde_json::{Value, json};

use super::args::{PendingArgs, PendingListArgs, ReviewArgs};
use super::exit;

/// `mcpcassette pending`: lists pending cassettes and what they change.
pub fn list(args: PendingListArgs) -> anyhow::Result<ExitCode> {
    let roots = roots(&args.paths);
    let found = pending::find(&roots, args.pending_dir.as_deref())?;
    let mut stdout = std::io::stdout().lock();
    if args.json {
        let list: Vec<Value> = found
            .iter()
            .map(|p| {
                let changes: Vec<Value> = p
                    .changes()
                    .iter()
                    .map(|c| json!({"index": c.index, "label": c.label}))
                    .collect();
                json!({
                    "accepted": p.accepted_path.display().to_string(),
                    "pending": p.pending_path.display().to_string(),
                    "changes": changes,
                })
            })
            .collect();
        writeln!(stdout, "{}", serde_json::to_string_pretty(&list)?)?;
    } else if found.is_empty() {
        writeln!(stdout, "nothing pending under {}", show_roots(&roots))?;
    } else {
        write!(stdout, "{}", listing(&found, |_, _| String::new()))?;
    }
    Ok(ExitCode::from(exit::OK))
}

/// `mcpcassette accept`: every pending cassette replaces its accepted one.
pub fn accept(args: PendingArgs) -> anyhow::Result<ExitCode> {
    decide_all(args, true)
}

/// `mcpcassette reject`: every pending cassette is removed.
pub fn reject(args: PendingArgs) -> anyhow::Result<ExitCode> {
    decide_all(args, false)
}

/// Accepts or rejects everything pending; a file that fails does not stop
/// the others, but the exit status says so.
fn decide_all(args: PendingArgs, accept: bool) -> anyhow::Result<ExitCode> {
    let roots = roots(&args.paths);
    let found = pending::find(&roots, args.pending_dir.as_deref())?;
    let mut stdout = std::io::stdout().lock();
    if found.is_empty() {
        writeln!(stdout, "nothing pending under {}", show_roots(&roots))?;
        return Ok(ExitCode::from(exit::OK));
    }
    let mut failed = false;
    for pending in found {
        let accepted_path = pending.accepted_path.display().to_string();
        let pending_path = pending.pending_path.display().to_string();
        let count = pending.changes().len();
        let outcome = if accept {
            pending.accept_all().map(|n| {
                format!(
                    "{accepted_path}: accepted {n} changed interaction{} from {pending_path}",
                    plural(n)
                )
            })
        } else {
            pending.reject().map(|()| {
                format!(
                    "{accepted_path}: rejected {count} changed interaction{}, removed {pending_path}",
                    plural(count)
                )
            })
        };
        match outcome {
            Ok(line) => writeln!(stdout, "{line}")?,
            Err(error) => {
                failed = true;
                eprintln!("error: {}", super::logging::mask(&chain(&error)));
            }
        }
    }
    Ok(ExitCode::from(if failed { exit::ERROR } else { exit::OK }))
}

/// What was decided about one change.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Decision {
    Accept,
    Reject,
    Skip,
}

/// Decisions over a review.
#[derive(Debug, Default)]
struct Tally {
    accepted: usize,
    rejected: usize,
    skipped: usize,
}

impl Tally {
    fn add(&mut self, decisions: &[Decision]) {
        for decision in decisions {
            match decision {
                Decision::Accept => self.accepted += 1,
                Decision::Reject => self.rejected += 1,
                Decision::Skip => self.skipped += 1,
            }
        }
    }
}

/// `mcpcassette review`: interactive, one change at a time. Without a
/// terminal it changes nothing and says what to run instead, so a script
/// never blocks on a prompt nobody sees.
pub fn review(args: ReviewArgs) -> anyhow::Result<ExitCode> {
    let roots = roots(&args.paths);
    let pending_dir = args.pending_dir.as_deref();
    let found = pending::find(&roots, pending_dir)?;
    let term = Term::stdout();
    if found.is_empty() {
        term.write_line(&format!("nothing pending under {}", show_roots(&roots)))?;
        return Ok(ExitCode::from(exit::OK));
    }
    if !(term.is_term() && std::io::stdin().is_terminal()) {
        term.write_str(&instructions(&found, pending_dir))?;
        return Ok(ExitCode::from(exit::OK));
    }
    let mut session = Session {
        term,
        show_diff: true,
        quit: false,
        tally: Tally::default(),
        failed: false,
    };
    for pending in found {
        session.review(pending)?;
    }
    let Tally {
        accepted,
        rejected,
        skipped,
    } = session.tally;
    session.term.write_line(&format!(
        "{} accepted {accepted}, rejected {rejected}, skipped {skipped}",
        style("done:").bold()
    ))?;
    Ok(ExitCode::from(if session.failed {
        exit::ERROR
    } else {
        exit::OK
    }))
}

/// An interactive review in progress.
struct Session {
    term: Term,
    show_diff: bool,
    /// `q` was pressed: everything left is skipped.
    quit: bool,
    tally: Tally,
    failed: bool,
}

impl Session {
    /// Asks about every change of one pending cassette, then applies the
    /// answers: accepted changes go into the accepted cassette, skipped
    /// ones stay pending, rejected ones are dropped.
    fn review(&mut self, pending: Pending) -> anyhow::Result<()> {
        let changes = pending.changes();
        let accepted_path = pending.accepted_path.display().to_string();
        let pending_path = pending.pending_path.display().to_string();
        if changes.is_empty() {
            // Only the header differs; there is nothing to decide.
            let outcome = pending.reject();
            return self.report(outcome.map(|()| {
                format!("{accepted_path}: no changed interactions, removed {pending_path}")
            }));
        }
        let mut decisions = vec![Decision::Skip; changes.len()];
        let mut next = 0;
        while next < changes.len() && !self.quit {
            self.show(&pending, &changes, next)?;
            if let Some((decision, all)) = self.ask()? {
                let end = if all { changes.len() } else { next + 1 };
                decisions[next..end].fill(decision);
                next = end;
            }
        }
        self.tally.add(&decisions);
        let pick = |wanted: Decision| -> Vec<usize> {
            changes
                .iter()
                .zip(&decisions)
                .filter(|(_, d)| **d == wanted)
                .map(|(c, _)| c.index)
                .collect()
        };
        let (accept, reject, skip) = (
            pick(Decision::Accept),
            pick(Decision::Reject),
            pick(Decision::Skip),
        );
        let counts = format!(
            "accepted {}, rejected {}, skipped {}",
            accept.len(),
            reject.len(),
            skip.len()
        );
        let outcome = if accept.is_empty() && reject.is_empty() {
            Ok(format!(
                "{accepted_path}: {counts}; still pending in {pending_path}"
            ))
        } else if accept.is_empty() && skip.is_empty() {
            pending
                .reject()
                .map(|()| format!("{accepted_path}: {counts}; removed {pending_path}"))
        } else {
            pending.apply_keeping(&accept, &skip).map(|_| {
                if skip.is_empty() {
                    format!("{accepted_path}: {counts}; removed {pending_path}")
                } else {
                    format!(
                        "{accepted_path}: {counts}; the skipped ones are still pending in {pending_path}"
                    )
                }
            })
        };
        self.report(outcome)
    }

    /// Prints what happened to a cassette, or why it failed.
    fn report(
        &mut self,
        outcome: Result<String, mcpcassette::verify::DriftError>,
    ) -> anyhow::Result<()> {
        match outcome {
            Ok(line) => self.term.write_line(&line)?,
            Err(error) => {
                self.failed = true;
                self.term.write_line(&format!(
                    "{} {}",
                    style("error:").red().bold(),
                    super::logging::mask(&chain(&error))
                ))?;
            }
        }
        self.term.write_line("")?;
        Ok(())
    }

    /// The header of change `at`, and its diff unless hidden.
    fn show(&self, pending: &Pending, changes: &[Change], at: usize) -> anyhow::Result<()> {
        let change = &changes[at];
        let header = format!(
            "{} · interaction {}/{} · {}",
            pending.accepted_path.display(),
            at + 1,
            changes.len(),
            change.label
        );
        self.term.write_line(&style(header).bold().to_string())?;
        let mut note = format!("  #{} in the cassette", change.index);
        // In a recording of several server processes, which one it is.
        let process =
            (change.accepted.as_ref().or(change.pending.as_ref())).map_or(0, |i| i.process);
        if process != 0 {
            note.push_str(&format!(", server process {process}"));
        }
        match (&change.accepted, &change.pending) {
            (None, _) => note.push_str("; only in the live run (new)"),
            (_, None) => note.push_str("; not in the live run (gone)"),
            _ => {}
        }
        self.term.write_line(&style(note).dim().to_string())?;
        self.term
            .write_str(&change_notes(pending, change, &RenderOptions::for_stdout()))?;
        if self.show_diff {
            let before = serde_json::to_value(&change.accepted)?;
            let after = serde_json::to_value(&change.pending)?;
            let diff = render::unified_diff(&before, &after, &RenderOptions::for_stdout());
            self.term.write_str(&diff)?;
            if !diff.ends_with('\n') {
                self.term.write_line("")?;
            }
        }
        Ok(())
    }

    /// Reads keys until one decides. `None` means show the change again
    /// (the diff was toggled); `Some((decision, true))` applies to every
    /// remaining change of this cassette.
    fn ask(&mut self) -> anyhow::Result<Option<(Decision, bool)>> {
        let prompt = format!(
            "{} accept  {} reject  {} skip  {} all remaining  {} diff  {} quit ",
            style("[a/⏎]").green().bold(),
            style("[r/esc]").red().bold(),
            style("[s/space]").yellow().bold(),
            style("[A/R/S]").bold(),
            style("[d]").bold(),
            style("[q]").bold(),
        );
        self.term.write_str(&prompt)?;
        loop {
            let key = self.term.read_key()?;
            let answer = match key {
                Key::Char('a') | Key::Enter => (Decision::Accept, false),
                Key::Char('r') | Key::Escape => (Decision::Reject, false),
                Key::Char('s') | Key::Char(' ') => (Decision::Skip, false),
                Key::Char('A') => (Decision::Accept, true),
                Key::Char('R') => (Decision::Reject, true),
                Key::Char('S') => (Decision::Skip, true),
                Key::Char('q') => {
                    self.quit = true;
                    (Decision::Skip, true)
                }
                Key::Char('d') => {
                    self.show_diff = !self.show_diff;
                    self.term.clear_line()?;
                    return Ok(None);
                }
                _ => continue,
            };
            self.term.clear_line()?;
            let (decision, all) = answer;
            let word = match decision {
                Decision::Accept => style("accepted").green(),
                Decision::Reject => style("rejected").red(),
                Decision::Skip => style("skipped").yellow(),
            };
            let scope = if self.quit {
                " (quit: the rest is skipped)"
            } else if all {
                " (and every remaining change in this cassette)"
            } else {
                ""
            };
            self.term.write_line(&format!("  → {word}{scope}"))?;
            self.term.write_line("")?;
            return Ok(Some(answer));
        }
    }
}

/// What review prints without a terminal: the list, and the commands that
/// decide without one.
fn instructions(found: &[Pending], pending_dir: Option<&Path>) -> String {
    let mut out =
        String::from("review needs a terminal (stdin and stdout); nothing was changed.\n\n");
    out.push_str(&listing(found, |pending, change| {
        indented(&change_notes(pending, change, &RenderOptions::plain()))
    }));
    let quote = |p: &Path| mcpcassette::cli_support::shell_quote(&p.display().to_string());
    let dir = pending_dir
        .map(|d| format!(" --pending-dir {}", quote(d)))
        .unwrap_or_default();
    out.push_str("\nTo decide without a terminal, run:\n");
    for pending in found {
        let path = quote(&pending.accepted_path);
        let _ = writeln!(
            out,
            "  mcpcassette accept{dir} {path}    # take every change"
        );
        let _ = writeln!(
            out,
            "  mcpcassette reject{dir} {path}    # keep the cassette as it is"
        );
    }
    out.push_str("or run `mcpcassette review` in a terminal to decide change by change.\n");
    out
}

/// What `verify` said under a changed interaction: tool changes (the
/// breaking ones flagged BREAKING), notification counts, and the
/// `normalize` rules that would absorb volatile values.
fn change_notes(pending: &Pending, change: &Change, options: &RenderOptions) -> String {
    let (Some(accepted), Some(live)) = (&change.accepted, &change.pending) else {
        return String::new();
    };
    let rules = &pending.accepted.rules.normalize;
    let drift = compare_interaction(change.index, accepted, Some(live), rules);
    render::notes(&drift, options)
}

/// Notes indented under a listed change.
fn indented(notes: &str) -> String {
    notes.lines().map(|l| format!("     {l}\n")).collect()
}

/// Pending cassettes and their changed interactions, one per line, each
/// followed by what `notes` says about it.
fn listing(found: &[Pending], notes: impl Fn(&Pending, &Change) -> String) -> String {
    let mut out = String::new();
    for pending in found {
        let changes = pending.changes();
        let _ = writeln!(
            out,
            "{}: {} changed interaction{} pending in {}",
            pending.accepted_path.display(),
            changes.len(),
            plural(changes.len()),
            pending.pending_path.display()
        );
        for change in &changes {
            let _ = writeln!(out, "  #{:<4} {}", change.index, change.label);
            out.push_str(&notes(pending, change));
        }
    }
    out
}

/// The paths to search: as given, or the current directory.
fn roots(paths: &[PathBuf]) -> Vec<PathBuf> {
    if paths.is_empty() {
        vec![PathBuf::from(".")]
    } else {
        paths.to_vec()
    }
}

fn show_roots(roots: &[PathBuf]) -> String {
    roots
        .iter()
        .map(|r| r.display().to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}
