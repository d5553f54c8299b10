//! The unmatched-request report: what was asked, what was recorded that
//! came closest and why it was turned down, and numbered ways to fix it.

use std::fmt;
use std::path::Path;

use serde::Serialize;
use serde_json::{Value, json};

use super::era::EraMismatch;
use crate::cassette::Cassette;
use crate::cassette::{Rules, Strategy};
use crate::json::pointer_segment;
use crate::matching::{self, Refusal};

mod bound;
#[cfg(test)]
mod tests;

pub use bound::{MISS_JSON_BYTES, MISS_REPLY_BYTES, MISS_REPORT_BYTES};

/// JSON-RPC error code: no recorded interaction has this request's method
/// and params. In the range MCP leaves to implementations (-32000..-32019).
pub const NO_MATCH: i64 = -32000;

/// JSON-RPC error code: the request was recorded, but every recorded answer
/// to it has been given already.
pub const EXHAUSTED: i64 = -32001;

/// JSON-RPC error code: `sequential` or `strict` expected another request.
/// Not -32002, which the legacy eras use for "resource not found" and
/// 2026-07-28 forbids.
pub const OUT_OF_ORDER: i64 = -32007;

/// How many recorded requests a report shows.
const CANDIDATES: usize = 3;

/// The most of a request's (or a recorded request's) params a report
/// keeps, as canonical JSON: larger params are shortened to their start,
/// so that a miss costs the same whatever was sent.
const PARAMS_BUDGET: usize = 16 * 1024;

/// The deepest params a report keeps as they are: an error reply nests
/// them four levels down (`/error/data/closest/params`).
const PARAMS_DEPTH: usize = 32;

/// How much of shortened params is kept.
const SHORTENED_TO: usize = 1024;

/// The most of params a report keeps as `--report` prints them: pretty,
/// nested [`REPORT_NESTING`] levels down. Thousands of tiny values (`[0,0,
/// …]`) each take a line and its indentation there, dozens of times their
/// compact size; ordinary params take two or three times it.
const PRETTY_BUDGET: usize = 48 * 1024;

/// How deep `--report` nests params (`/misses/N/closest/M/params`), each
/// level indenting every line by two more spaces.
const REPORT_NESTING: usize = 5;

/// The most lines of each side a diff compares and shows.
const DIFF_LINES: usize = 60;

/// How long one diff may take before it settles for a coarser answer.
const DIFF_DEADLINE: std::time::Duration = std::time::Duration::from_millis(50);

/// How many bytes of each side similarity compares.
const SIMILARITY_BYTES: usize = 4096;

/// How many recorded requests get a similarity score (the most alike by
/// method and target first); the rest rank below them.
const SCORED: usize = 64;

/// Where the report is made: names in the text and the fixes.
#[derive(Debug, Clone, Copy)]
pub struct Context<'a> {
    /// The cassette file.
    pub path: &'a Path,
    /// The mode replay runs in (`replay`, `none`, `once`, ...).
    pub mode: &'a str,
    /// The rules in force.
    pub rules: &'a Rules,
}

/// A live request replay could not answer.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Miss {
    /// The request's method (a huge one cut, saying how much was left out).
    pub method: String,
    /// Its params, as sent; shortened to a string when larger than a
    /// report keeps (see `shortened`).
    pub params: Option<Value>,
    /// Whether `params` was shortened.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub shortened: bool,
    /// `no-match`, `exhausted` or `out-of-order`.
    pub reason: &'static str,
    /// For `exhausted`: how many times it was answered already.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub answered: Option<usize>,
    /// The closest recorded requests, best first.
    pub closest: Vec<Candidate>,
    /// A recorded tool, prompt or resource name close to the one asked for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub did_you_mean: Option<String>,
    /// The client speaks the other protocol era than the cassette.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub era_mismatch: Option<EraMismatch>,
    /// Numbered fixes: commands or rule snippets.
    pub fixes: Vec<String>,
    /// The cassette, mode and rules it was looked up under.
    pub cassette: String,
    /// The mode in force.
    pub mode: String,
    /// The rules in force, described.
    pub rules: String,
    /// Which server process of the test missed, and which recorded one it
    /// played, when the cassette holds several (docs/processes.md).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub process: Option<String>,
}

/// A recorded request shown in a report.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Candidate {
    /// Its position in the cassette (0-based).
    pub interaction: usize,
    /// Its method.
    pub method: String,
    /// What matching compared, under the rules (shortened to a string when
    /// large).
    pub params: Value,
    /// Similarity to the live request, 0..=1.
    pub similarity: f32,
    /// Why it did not answer the request.
    pub rejected_by: String,
    /// The first place where it differs from the live request (a pointer
    /// through a huge key cut, saying how much was left out).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub differs_at: Option<String>,
    /// Unified diff, recorded → live, its lines and its length cut to
    /// their budgets.
    pub diff: String,
}

impl Miss {
    /// Builds the report for `request`, refused for `refusal`.
    pub fn new(
        cassette: &Cassette,
        request: &Value,
        refusal: Refusal,
        context: Context<'_>,
    ) -> Self {
        Self::build(cassette, request, refusal, context, true)
    }

    /// [`Miss::new`], telling an era mismatch only when `tell_eras` (not
    /// when replay translates between the eras, where a miss is a miss).
    pub(crate) fn build(
        cassette: &Cassette,
        request: &Value,
        refusal: Refusal,
        context: Context<'_>,
        tell_eras: bool,
    ) -> Self {
        let method = crate::jsonrpc::method(request).unwrap_or_default();
        // Reports end up in logs and CI artifacts: token shapes are masked.
        let params = crate::jsonrpc::params(request).map(crate::redact::mask_value);
        let live = context
            .rules
            .normalize(method, params.as_ref())
            .into_owned();
        let closest = closest(cassette, method, &live, refusal, context.rules);
        let did_you_mean = did_you_mean(cassette, method, params.as_ref());
        let (params, shortened) = match params.as_ref().and_then(shortened) {
            Some(short) => (Some(short), true),
            None => (params, false),
        };
        let (reason, answered) = match refusal {
            Refusal::Missing => ("no-match", None),
            Refusal::Exhausted { answered } => ("exhausted", Some(answered)),
            Refusal::OutOfOrder { .. } => ("out-of-order", None),
        };
        let mut miss = Miss {
            method: bound::cut(method, bound::NAME_BYTES).into_owned(),
            params,
            shortened,
            reason,
            answered,
            closest,
            did_you_mean,
            era_mismatch: EraMismatch::detect(cassette, request)
                .filter(|_| tell_eras)
                .map(bounded_versions),
            fixes: Vec::new(),
            cassette: context.path.display().to_string(),
            mode: context.mode.to_owned(),
            rules: context.rules.describe(),
            process: None,
        };
        miss.fixes = fixes(cassette, &miss, refusal, context);
        if let Some(mismatch) = &miss.era_mismatch {
            // Recording the missing requests, or a hand-written case, cannot
            // bridge two eras: re-recording can.
            miss.fixes
                .retain(|fix| fix.contains("Re-record") || fix.contains("masked secrets"));
            miss.fixes.splice(0..0, mismatch.fixes());
        }
        miss
    }

    /// The request as matching sees it, for one-line messages.
    fn request_text(&self) -> String {
        match (&self.params, self.shortened) {
            (Some(Value::String(short)), true) => format!("{} {short}", self.method),
            _ => matching::canonical(&self.method, self.params.as_ref()),
        }
    }

    /// The JSON-RPC error code.
    pub fn code(&self) -> i64 {
        match self.reason {
            "exhausted" => EXHAUSTED,
            "out-of-order" => OUT_OF_ORDER,
            _ => NO_MATCH,
        }
    }

    /// The one-line message the client sees.
    pub fn message(&self) -> String {
        if let Some(mismatch) = &self.era_mismatch {
            return mismatch.message();
        }
        let live = shorten(&self.request_text());
        let closest = self.closest.first().map(|c| {
            format!(
                "closest recorded: {}",
                shorten(&format!(
                    "{} {}",
                    c.method,
                    crate::json::canonical_json(&c.params)
                ))
            )
        });
        match (self.reason, self.answered) {
            ("exhausted", Some(n)) => format!(
                "mcpcassette: {live} was recorded {n} time(s) and has been answered {n} time(s) already"
            ),
            ("out-of-order", _) => format!(
                "mcpcassette: {live} is not the request the recording expects next; {}",
                closest.unwrap_or_default()
            ),
            _ => match closest {
                Some(closest) => {
                    format!("mcpcassette: no recorded interaction matches {live}; {closest}")
                }
                None => format!(
                    "mcpcassette: no recorded interaction matches {live}; the cassette has no requests"
                ),
            },
        }
    }

    /// Structured details for the JSON-RPC error's `data`.
    pub fn data(&self) -> Value {
        json!({
            "method": self.method,
            "params": self.params,
            "reason": self.reason,
            "answered": self.answered,
            "closest": self.closest.first().map(|c| json!({"interaction": c.interaction, "method": c.method, "params": c.params})),
            "cassette": self.cassette,
            "process": self.process,
            "era_mismatch": self.era_mismatch,
        })
    }
}

impl fmt::Display for Miss {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let headline = match self.reason {
            _ if self.era_mismatch.is_some() => {
                "the client speaks another protocol era than the cassette"
            }
            "exhausted" => "a recorded request has no answers left",
            "out-of-order" => "the recording expects another request next",
            _ => "no recorded interaction matches this request",
        };
        writeln!(f, "mcpcassette: {headline}")?;
        writeln!(f, "  request:  {}", shorten(&self.request_text()))?;
        writeln!(f, "  cassette: {}", self.cassette)?;
        if let Some(process) = &self.process {
            writeln!(f, "  process:  {process}")?;
        }
        writeln!(f, "  mode:     {}", self.mode)?;
        writeln!(f, "  rules:    {}", self.rules)?;
        if let Some(n) = self.answered {
            writeln!(f, "  already answered {n} time(s)")?;
        }
        if let Some(mismatch) = &self.era_mismatch {
            // The closest requests of another era are noise.
            writeln!(f, "\n{}\n{}", mismatch.lines(), mismatch.advice())?;
        } else if self.closest.is_empty() {
            writeln!(f, "\nThe cassette records no requests.")?;
        } else {
            writeln!(f, "\nClosest recorded requests:")?;
        }
        let shown = if self.era_mismatch.is_some() {
            &[][..]
        } else {
            &self.closest[..]
        };
        for (n, candidate) in shown.iter().enumerate() {
            writeln!(
                f,
                "  {}. interaction #{} {} ({:.0}% similar): {}",
                n + 1,
                candidate.interaction,
                candidate.method,
                candidate.similarity * 100.0,
                candidate.rejected_by
            )?;
            for line in candidate.diff.lines() {
                writeln!(f, "       {line}")?;
            }
        }
        if let Some(name) = &self.did_you_mean {
            writeln!(f, "\nDid you mean {name}?")?;
        }
        writeln!(f, "\nHow to fix it:")?;
        for (n, fix) in self.fixes.iter().enumerate() {
            let mut lines = fix.lines();
            writeln!(f, "  {}. {}", n + 1, lines.next().unwrap_or_default())?;
            for line in lines {
                writeln!(f, "       {line}")?;
            }
        }
        Ok(())
    }
}

/// The recorded requests most like the live one, with why each was turned
/// down. Only runs on a miss, so a scan is fine.
fn closest(
    cassette: &Cassette,
    method: &str,
    live: &Value,
    refusal: Refusal,
    rules: &Rules,
) -> Vec<Candidate> {
    let live_text = crate::json::canonical_json(live);
    // Ranked by what differs: the method, then the target (tool, prompt,
    // resource), then how similar the params are. Similarity costs the
    // most, so only the most alike by method and target are scored.
    let mut scored: Vec<((u8, u8, f32), usize, Value)> = cassette
        .interactions
        .iter()
        .enumerate()
        .filter_map(|(position, interaction)| {
            let request = interaction.request()?;
            let recorded = rules.normalize(interaction.method(), crate::jsonrpc::params(request));
            let recorded = crate::redact::mask_value(&recorded);
            let same_method = interaction.method() == method;
            let same_target =
                same_method && matching::same_target(method, Some(&recorded), Some(live));
            Some((
                (u8::from(same_method), u8::from(same_target), 0.0),
                position,
                recorded,
            ))
        })
        .collect();
    // Stable: equally alike requests stay in recorded order.
    scored.sort_by_key(|s| std::cmp::Reverse((s.0.0, s.0.1)));
    for (score, _, recorded) in scored.iter_mut().take(SCORED) {
        score.2 = similarity(&live_text, &crate::json::canonical_json(recorded));
    }
    scored.sort_by(|a, b| b.0.partial_cmp(&a.0).unwrap_or(std::cmp::Ordering::Equal));
    let live_shown = shown(method, live);
    scored
        .into_iter()
        .take(CANDIDATES)
        .map(|((same_method, _, similarity), position, recorded)| {
            let recorded_method = cassette.interactions[position].method().to_owned();
            let difference =
                (same_method == 1).then(|| Difference::between(method, &recorded, live));
            let differs_at = difference
                .as_ref()
                .and_then(Difference::pointer)
                .map(|p| bound::cut(&p, bound::POINTER_BYTES).into_owned());
            let rejected_by = rejection(
                &recorded_method,
                method,
                difference.as_ref(),
                position,
                refusal,
                rules,
            );
            Candidate {
                interaction: position,
                diff: diff(&shown(&recorded_method, &recorded), &live_shown),
                method: bound::cut(&recorded_method, bound::NAME_BYTES).into_owned(),
                params: shortened(&recorded).unwrap_or(recorded),
                similarity,
                rejected_by,
                differs_at,
            }
        })
        .collect()
}

/// Where a recorded request of the live request's method differs from it:
/// the target it names (tool, prompt, resource) before anything else.
enum Difference {
    /// Another tool, prompt or resource.
    Target {
        target: matching::Target,
        recorded: Value,
    },
    /// The same target; params differ at this pointer.
    Params(String),
    /// Nothing that matching compares.
    None,
}

impl Difference {
    fn between(method: &str, recorded: &Value, live: &Value) -> Difference {
        if let Some(target) = matching::Target::of(method)
            && !matching::same_target(method, Some(recorded), Some(live))
        {
            let recorded = target
                .named_in(Some(recorded))
                .cloned()
                .unwrap_or(Value::Null);
            return Difference::Target { target, recorded };
        }
        match first_difference(recorded, live, String::new()) {
            Some(pointer) => Difference::Params(pointer),
            None => Difference::None,
        }
    }

    fn pointer(&self) -> Option<String> {
        match self {
            Difference::Target { target, .. } => Some(target.pointer()),
            Difference::Params(pointer) => Some(pointer.clone()),
            Difference::None => None,
        }
    }
}

/// Which rule turned a recorded request down.
fn rejection(
    recorded: &str,
    live: &str,
    difference: Option<&Difference>,
    position: usize,
    refusal: Refusal,
    rules: &Rules,
) -> String {
    match refusal {
        Refusal::OutOfOrder { expected } if expected == position => format!(
            "due next, but strategy `{}` needs {}",
            strategy_name(rules.strategy),
            if rules.strategy == Strategy::Sequential {
                "the same method"
            } else {
                "the same method and params"
            }
        ),
        Refusal::OutOfOrder { expected } => format!(
            "strategy `{}` answers in recorded order and interaction #{expected} is due first",
            strategy_name(rules.strategy)
        ),
        Refusal::Exhausted { answered }
            if recorded == live && matches!(difference, None | Some(Difference::None)) =>
        {
            format!("same request, already answered {answered} time(s) (on_exhausted: error)")
        }
        _ if recorded != live => format!(
            "method differs (recorded `{}`)",
            bound::cut(recorded, bound::NAME_BYTES)
        ),
        _ => match difference {
            Some(Difference::Target { target, recorded }) => format!(
                "{} {} differs (recorded {})",
                target.kind,
                target.field,
                bound::cut(&crate::json::canonical_json(recorded), bound::NAME_BYTES)
            ),
            Some(Difference::Params(pointer)) => format!(
                "params differ at {}",
                bound::cut(pointer, bound::POINTER_BYTES)
            ),
            _ => "same request, already answered".to_owned(),
        },
    }
}

fn strategy_name(strategy: Strategy) -> String {
    serde_json::to_value(strategy)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default()
}

/// The JSON pointer (under `/params`) of the first difference, if any.
fn first_difference(recorded: &Value, live: &Value, at: String) -> Option<String> {
    match (recorded, live) {
        (Value::Object(a), Value::Object(b)) => {
            let mut keys: Vec<&String> = a
                .keys()
                .chain(b.keys().filter(|k| !a.contains_key(*k)))
                .collect();
            keys.sort();
            keys.into_iter().find_map(|k| match (a.get(k), b.get(k)) {
                (Some(x), Some(y)) => {
                    first_difference(x, y, format!("{at}/{}", pointer_segment(k)))
                }
                _ => Some(format!("/params{at}/{}", pointer_segment(k))),
            })
        }
        (Value::Array(a), Value::Array(b)) if a.len() == b.len() => a
            .iter()
            .zip(b)
            .enumerate()
            .find_map(|(i, (x, y))| first_difference(x, y, format!("{at}/{i}"))),
        _ if recorded == live => None,
        _ => Some(format!("/params{at}")),
    }
}

/// What matching compared, pretty-printed with sorted keys, as a diff
/// shows it.
fn shown(method: &str, params: &Value) -> String {
    let sorted: Value =
        serde_json::from_str(&crate::json::canonical_json(params)).unwrap_or(Value::Null);
    format!(
        "method: {method}\nparams: {}\n",
        serde_json::to_string_pretty(&sorted).unwrap_or_default()
    )
}

/// A unified diff of two [`shown`] requests, recorded → live, within the
/// diff budgets ([`bound::diff`]).
fn diff(recorded: &str, live: &str) -> String {
    let (recorded, recorded_cut) = first_lines(recorded, DIFF_LINES);
    let (live, live_cut) = first_lines(live, DIFF_LINES);
    let full = similar::TextDiff::configure()
        .timeout(DIFF_DEADLINE)
        .diff_lines(recorded, live)
        .unified_diff()
        .context_radius(3)
        .header("recorded", "live")
        .to_string();
    let mut text = bound::diff(&full);
    if recorded_cut + live_cut > 0 {
        text.push_str(&format!(
            "(compared the first {DIFF_LINES} lines of each side; {recorded_cut} more recorded and {live_cut} more live lines not shown)\n"
        ));
    }
    text
}

/// The first `n` lines of `text` (each with its newline), and how many
/// lines were left out.
fn first_lines(text: &str, n: usize) -> (&str, usize) {
    match text.match_indices('\n').nth(n.saturating_sub(1)) {
        Some((end, _)) if end + 1 < text.len() => {
            let rest = &text[end + 1..];
            let left = rest.lines().count();
            (&text[..=end], left)
        }
        _ => (text, 0),
    }
}

/// `params` shortened to a string naming its start and size, when its
/// canonical JSON is larger than a report keeps (or its pretty JSON, as
/// `--report` prints it), or nests so deep that the error reply carrying
/// it would be deeper than a client reads.
fn shortened(params: &Value) -> Option<Value> {
    let text = crate::json::canonical_json(params);
    if text.len() <= PARAMS_BUDGET
        && crate::json::depth_of(params) <= PARAMS_DEPTH
        && pretty_size(params) <= PRETTY_BUDGET
    {
        return None;
    }
    let cut = (0..=SHORTENED_TO)
        .rev()
        .find(|&i| text.is_char_boundary(i))
        .unwrap_or(0);
    Some(Value::String(format!(
        "{}… (shortened: {} bytes in all)",
        &text[..cut],
        text.len()
    )))
}

/// How many bytes `params` takes in `--report`: pretty-printed, every line
/// indented [`REPORT_NESTING`] levels more.
fn pretty_size(params: &Value) -> usize {
    let text = serde_json::to_string_pretty(params).unwrap_or_default();
    text.len() + 2 * REPORT_NESTING * text.lines().count()
}

/// Similarity of two canonical texts, 0..=1: the Dice coefficient of their
/// byte pairs, so it costs time in proportion to the texts (long ones are
/// compared by their first few kilobytes), however different they are.
fn similarity(a: &str, b: &str) -> f32 {
    let (a, b) = (prefix(a), prefix(b));
    if a == b {
        return 1.0;
    }
    if a.len() < 2 || b.len() < 2 {
        return 0.0;
    }
    let pairs = |text: &[u8]| {
        let mut pairs: Vec<u16> = text
            .windows(2)
            .map(|p| u16::from_be_bytes([p[0], p[1]]))
            .collect();
        pairs.sort_unstable();
        pairs
    };
    let (a_pairs, b_pairs) = (pairs(a), pairs(b));
    // Both sorted: walk them together, counting pairs they share.
    let (mut i, mut j, mut shared) = (0, 0, 0);
    while i < a_pairs.len() && j < b_pairs.len() {
        match a_pairs[i].cmp(&b_pairs[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                shared += 1;
                i += 1;
                j += 1;
            }
        }
    }
    (2 * shared) as f32 / (a.len() + b.len() - 2) as f32
}

/// The first [`SIMILARITY_BYTES`] of `text`.
fn prefix(text: &str) -> &[u8] {
    &text.as_bytes()[..text.len().min(SIMILARITY_BYTES)]
}

/// A recorded tool, prompt or resource close to a name the cassette lacks.
fn did_you_mean(cassette: &Cassette, method: &str, params: Option<&Value>) -> Option<String> {
    let (field, kind, list_method, list_field) = match method {
        "tools/call" => ("name", "tool", "tools/list", "tools"),
        "prompts/get" => ("name", "prompt", "prompts/list", "prompts"),
        "resources/read" => ("uri", "resource", "resources/list", "resources"),
        _ => return None,
    };
    let asked = params?.get(field)?.as_str()?;
    let mut known: Vec<&str> = Vec::new();
    for interaction in &cassette.interactions {
        if interaction.method() == method
            && let Some(name) = interaction
                .request()
                .and_then(|r| r.pointer(&format!("/params/{field}")))
                .and_then(Value::as_str)
        {
            known.push(name);
        }
        if interaction.method() == list_method
            && let Some(items) = interaction
                .response
                .as_ref()
                .and_then(|r| r.pointer(&format!("/result/{list_field}")))
                .and_then(Value::as_array)
        {
            known.extend(
                items
                    .iter()
                    .filter_map(|item| item.get(field).and_then(Value::as_str)),
            );
        }
    }
    if known.contains(&asked) {
        return None;
    }
    // Names whose lengths alone keep them below the ratio are not compared:
    // comparing a huge name char by char takes minutes.
    let asked_chars = asked.chars().count();
    let comparable = |name: &&str| {
        let chars = name.chars().count();
        2 * asked_chars.min(chars) >= (asked_chars + chars) * 3 / 5
    };
    known
        .into_iter()
        .filter(comparable)
        .map(|name| {
            let ratio = similar::TextDiff::configure()
                .timeout(DIFF_DEADLINE)
                .diff_chars(asked, name)
                .ratio();
            (ratio, name)
        })
        .filter(|(ratio, _)| *ratio >= 0.6)
        .max_by(|a, b| a.0.partial_cmp(&b.0).unwrap_or(std::cmp::Ordering::Equal))
        .map(|(_, name)| {
            format!(
                "{kind} \"{}\" (the request asked for \"{}\")",
                bound::cut(name, bound::NAME_BYTES),
                bound::cut(asked, bound::NAME_BYTES)
            )
        })
}

/// Numbered fixes, most likely first.
fn fixes(cassette: &Cassette, miss: &Miss, refusal: Refusal, context: Context<'_>) -> Vec<String> {
    let (command, commands) = rerun_commands(cassette, context.path);
    let mut fixes = Vec::new();
    match refusal {
        Refusal::Exhausted { .. } => {
            fixes.push(
                "If the server's answer does not change, let the last answer repeat: add to the cassette's \"rules\":\n\"on_exhausted\": \"repeat-last\"\n(or pass --on-exhausted repeat-last)".to_owned(),
            );
        }
        Refusal::OutOfOrder { .. } => {
            fixes.push("If the order of requests does not matter, match by content: pass --strategy keyed\n(or set \"strategy\": \"keyed\" in the cassette's \"rules\")".to_owned());
        }
        Refusal::Missing => {
            // Ignoring what names the tool, prompt or resource would answer
            // one with another's recording: never suggest that.
            let names_the_target = |p: &&str| matches!(*p, "/params/name" | "/params/uri");
            // A pointer cut to its budget is longer than it: no rule.
            let whole = |p: &&str| p.len() <= bound::POINTER_BYTES;
            let pointer = miss.closest.first().and_then(|c| c.differs_at.as_deref());
            if let Some(pointer) = pointer.filter(|p| !names_the_target(p) && whole(p)) {
                fixes.push(format!(
                    "If {pointer} changes from run to run, leave it out of matching: add to the cassette's \"rules\":\n\"ignore\": [\"{pointer}\"]\n(or pass --ignore {pointer})"
                ));
            }
        }
    }
    fixes.extend(commands);
    // A method cut to its budget names no method a case could answer.
    if miss.method.len() <= bound::NAME_BYTES {
        fixes.push(case_fix(cassette, miss));
    }
    if command.iter().any(|a| a.contains(crate::redact::MASK)) {
        fixes.push("The recorded server command has masked secrets: put them back before running the commands above.".to_owned());
    }
    fixes
}

/// The fix that answers the request with a hand-written case.
fn case_fix(cassette: &Cassette, miss: &Miss) -> String {
    let mut case = format!(
        "Answer it by hand: add a case to the cassette's \"rules\":\n\"cases\": [{}]",
        serde_json::to_string(&suggested_case(cassette, miss)).unwrap_or_default()
    );
    if miss.shortened {
        case.push_str(&format!(
            "\n(the request's params are too large to repeat: this case answers every {}; narrow it with \"when\")",
            miss.method
        ));
    }
    case
}

/// A hand-written case answering the missed request: `when` its params
/// (without `_meta`), and a result valid for its method with a placeholder
/// to fill in; for `tools/call` one that satisfies the tool's
/// `outputSchema` when the recorded `tools/list` declares one, so `check`
/// passes it and SDK clients accept it ([`crate::example::method_result`]).
/// In a 2026-07-28 cassette the result carries its `resultType`.
fn suggested_case(cassette: &Cassette, miss: &Miss) -> Value {
    let when = miss.params.as_ref().map(|params| {
        let mut params = params.clone();
        if let Some(object) = params.as_object_mut() {
            object.remove("_meta");
        }
        params
    });
    // Params too large to repeat: match on what names the target alone.
    let when = match when {
        Some(_) if miss.shortened => None,
        when => when,
    };
    let tools: Vec<Value> = cassette.listed_tools().cloned().collect();
    let mut result = crate::example::method_result(&miss.method, when.as_ref(), &tools);
    if cassette.protocol.era == crate::protocol::Era::Modern {
        result = crate::fixture::modern_result(&miss.method, result);
    }
    let mut case = json!({"method": miss.method});
    if let Some(when) = when {
        case["when"] = when;
    }
    case["result"] = result;
    case
}

/// The fixes that run the server again (new episodes, re-recording), as
/// commands that work from this process's working directory; and the
/// recorded command.
fn rerun_commands<'a>(cassette: &'a Cassette, path: &Path) -> (&'a [String], Vec<String>) {
    use crate::cassette::Transport;
    let here = std::env::current_dir().unwrap_or_default();
    let quoted = |p: &Path| shell_quote(&p.display().to_string());
    match &cassette.transport {
        Transport::Stdio { command, cwd } if !command.is_empty() => {
            let server: Vec<String> = command.iter().map(|a| shell_quote(a)).collect();
            let server = server.join(" ");
            // A relative command runs from where it was recorded.
            let dir = cwd
                .as_deref()
                .filter(|_| crate::cassette::is_relative(command))
                .map(|cwd| crate::cassette::resolve_cwd(cwd, path, &here))
                .filter(|dir| *dir != here && dir.is_dir());
            let (cd, cassette_arg) = match &dir {
                Some(dir) => (format!("cd {} && ", quoted(dir)), quoted(&here.join(path))),
                None => (String::new(), quoted(path)),
            };
            let commands = vec![
                format!(
                    "Record the requests that are missing, keeping the rest:\n{cd}mcpcassette run --mode new-episodes --cassette {cassette_arg} -- {server}"
                ),
                format!(
                    "Re-record the whole cassette:\n{cd}mcpcassette run --mode all --cassette {cassette_arg} -- {server}"
                ),
            ];
            (command, commands)
        }
        Transport::StreamableHttp { url, .. } | Transport::HttpSse { url, .. } => {
            let path = quoted(path);
            let url = shell_quote(url);
            let mut commands = vec![
                format!(
                    "Record the requests that are missing, keeping the rest (point the client at the URL it prints; Ctrl-C appends them):\nmcpcassette run --mode new-episodes --cassette {path} --upstream {url}"
                ),
                format!(
                    "Re-record the whole cassette through the recording proxy (point the client at the URL it prints; Ctrl-C writes the cassette):\nmcpcassette run --mode all --cassette {path} --upstream {url}"
                ),
            ];
            if url.contains(crate::redact::MASK) {
                commands.push(
                    "The recorded URL has masked secrets: put them back before running the commands above.".to_owned(),
                );
            }
            (&[], commands)
        }
        Transport::Stdio { .. } => {
            let path = quoted(path);
            (
                &[],
                vec![format!(
                    "Record the requests that are missing, keeping the rest: the cassette does not record the server command, so give it after `--` to `mcpcassette run --mode new-episodes --cassette {path}`"
                )],
            )
        }
    }
}

/// Quotes a shell word when it needs it, so that printed commands can be
/// pasted into `sh`.
pub fn shell_quote(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./:=,@%+".contains(c));
    if plain {
        word.to_owned()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

/// Keeps one-line messages readable: the start and the end of `text`,
/// with how much was left out between them.
fn shorten(text: &str) -> String {
    bound::one_line(text).into_owned()
}

/// `mismatch` with the protocol versions it names (the client's is
/// whatever it sent) cut to a name's budget.
fn bounded_versions(mismatch: EraMismatch) -> EraMismatch {
    let cut =
        |version: Option<String>| version.map(|v| bound::cut(&v, bound::NAME_BYTES).into_owned());
    EraMismatch {
        cassette_version: cut(mismatch.cassette_version),
        client_version: cut(mismatch.client_version),
        ..mismatch
    }
}
