//! `mcpcassette replay`, and replaying for `run`.

use std::path::Path;
use std::process::ExitCode;

use anyhow::{Context, bail};
use mcpcassette::cassette::{self, Cassette, RuleOverrides, Rules, Transport};
use mcpcassette::redact;
use mcpcassette::replay::http::{HttpReplayConfig, Pace, serve_http};
use mcpcassette::replay::{Engine, ReplayConfig, StdioConfig, Summary, serve_with};
use mcpcassette::transport::stdio::process_stdio;

use super::args::{MatchArgs, ReplayArgs};
use super::exit;

/// Serves the cassette on stdin/stdout until the client disconnects.
pub fn run(args: ReplayArgs) -> anyhow::Result<ExitCode> {
    let cassette = open(&args.cassette)?;
    let pace = args.pace;
    match args.listen {
        Some(listen) => replay_http(
            cassette,
            &args.cassette,
            "replay",
            &args.matching,
            listen,
            pace,
        ),
        None => replay_paced(cassette, &args.cassette, "replay", &args.matching, pace),
    }
}

/// Serves the cassette over Streamable HTTP until SIGINT or SIGTERM.
pub fn replay_http(
    cassette: Cassette,
    path: &Path,
    mode: &str,
    matching: &MatchArgs,
    listen: std::net::SocketAddr,
    pace: Pace,
) -> anyhow::Result<ExitCode> {
    let rules = resolve_rules(&cassette.rules, matching)?;
    let config = ReplayConfig {
        path: path.to_owned(),
        rules: Some(rules),
        mode: mode.to_owned(),
        upstream: None,
    };
    let engine = Engine::with_config(cassette, config);
    super::logging::set_redactor(engine.redactor().clone());
    let http_config = HttpReplayConfig {
        listen,
        pace,
        sessions: matching.sessions,
    };
    let summary = serve_http_engine(&engine, http_config)?;
    finish(&engine, &summary, matching)
}

/// Runs `engine` over Streamable HTTP as `config` says (announcing the
/// URL) until SIGINT or SIGTERM.
pub fn serve_http_engine(
    engine: &std::sync::Arc<Engine>,
    config: HttpReplayConfig,
) -> anyhow::Result<Summary> {
    let endpoint = match &engine.cassette().transport {
        Transport::StreamableHttp { endpoint, .. } => endpoint.clone(),
        Transport::HttpSse { sse_endpoint, .. } => sse_endpoint.clone(),
        Transport::Stdio { .. } => "/mcp".to_owned(),
    };
    let summary = super::until_signal(|shutdown| {
        serve_http(
            engine.clone(),
            config,
            |addr| super::announce(addr, &endpoint),
            shutdown,
        )
    })??;
    Ok(summary)
}

/// Recovers an interrupted recording's journal, if any, and loads.
pub fn open(path: &Path) -> anyhow::Result<Cassette> {
    if let Some(recovery) = cassette::recover(path)? {
        tracing::warn!("{recovery}");
    }
    Ok(cassette::load(path)?)
}

/// Replays `cassette` on stdin/stdout and reports at the end.
pub fn replay(
    cassette: Cassette,
    path: &Path,
    mode: &str,
    matching: &MatchArgs,
) -> anyhow::Result<ExitCode> {
    replay_paced(cassette, path, mode, matching, Pace::Fast)
}

/// [`replay`] at the given pace.
fn replay_paced(
    cassette: Cassette,
    path: &Path,
    mode: &str,
    matching: &MatchArgs,
    pace: Pace,
) -> anyhow::Result<ExitCode> {
    let rules = resolve_rules(&cassette.rules, matching)?;
    let config = ReplayConfig {
        path: path.to_owned(),
        rules: Some(rules),
        mode: mode.to_owned(),
        upstream: None,
    };
    let engine = Engine::with_config(cassette, config);
    super::logging::set_redactor(engine.redactor().clone());
    let summary = serve_stdio(&engine, pace)?;
    finish(&engine, &summary, matching)
}

/// Runs the engine on this process's stdin and stdout; a response that
/// follows notifications waits until the client has read them.
///
/// SIGINT and SIGTERM end the replay as a closed stdin does, with its
/// summary and report: SDK clients stop the servers they started with a
/// signal (the TypeScript SDK's `close()`), and a test must still learn
/// what missed.
pub fn serve_stdio(engine: &std::sync::Arc<Engine>, pace: Pace) -> anyhow::Result<Summary> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    let shutdown = super::on_signal(&runtime)?;
    let served = runtime.block_on(async {
        let config = StdioConfig::stdout(pace);
        let (stdin, stdout) = process_stdio();
        tokio::select! {
            served = serve_with(engine.clone(), stdin, stdout, config) => served,
            () = shutdown => Ok(stopped(engine)),
        }
    });
    // A stdin that is not a pipe (a socket, as Node spawns children; a
    // terminal) is read on a blocking thread, whose read never returns
    // while the client keeps it open: do not wait for it.
    runtime.shutdown_background();
    served.context("replay I/O failed")
}

/// The summary of a replay stopped by a signal.
fn stopped(engine: &Engine) -> Summary {
    tracing::info!("stopped by a signal");
    engine.client_gone();
    engine.summary()
}

/// The cassette's rules with the command line's overrides: `--rules`
/// replaces them, then each flag overrides its part.
pub fn resolve_rules(stored: &Rules, args: &MatchArgs) -> anyhow::Result<Rules> {
    let rules = match &args.rules {
        Some(file) => {
            let text = std::fs::read_to_string(file)
                .with_context(|| format!("cannot read {}", file.display()))?;
            serde_json::from_str(&text)
                .with_context(|| format!("{}: not valid rules", file.display()))?
        }
        None => stored.clone(),
    };
    let rules = rules.with_overrides(&overrides(args));
    if let Err(problem) = rules.validate() {
        match &args.rules {
            Some(file) => bail!("{}: invalid rules: {problem}", file.display()),
            None => bail!("invalid rules: {problem}"),
        }
    }
    Ok(rules)
}

/// What `--strategy`, `--on-exhausted`, `--ignore` and `--key` change.
pub fn overrides(args: &MatchArgs) -> RuleOverrides {
    RuleOverrides {
        strategy: args.strategy,
        on_exhausted: args.on_exhausted,
        ignore: args.ignore.clone(),
        keys: args.key.clone(),
    }
}

/// Lists what went unused, writes the JSON report, picks the exit code.
pub fn finish(
    engine: &Engine,
    summary: &Summary,
    matching: &MatchArgs,
) -> anyhow::Result<ExitCode> {
    let interactions = &engine.cassette().interactions;
    let rules = engine.rules();
    if !summary.unused.is_empty() {
        let mut text = format!(
            "{} recorded interaction(s) were never used:",
            summary.unused.len()
        );
        for &position in &summary.unused {
            let interaction = &interactions[position];
            let params = interaction
                .client
                .message()
                .get("params")
                .map(redact::mask_value);
            let canonical = mcpcassette::matching::canonical(interaction.method(), params.as_ref());
            text.push_str(&format!("\n  #{position} {}", shorten(&canonical)));
        }
        tracing::info!("{text}");
    }
    for &case in &summary.unused_cases {
        tracing::info!(
            "hand-written case #{case} ({}) answered nothing",
            rules.cases[case].method
        );
    }
    let code = verdict(engine, summary, matching);
    if let Some(path) = &matching.report {
        super::report::replayed(path, engine, summary, code)?;
    }
    Ok(ExitCode::from(code))
}

/// The exit code the summary earns, each reason said on stderr.
fn verdict(engine: &Engine, summary: &Summary, matching: &MatchArgs) -> u8 {
    let rules = engine.rules();
    if !summary.misses.is_empty() {
        tracing::error!(
            "{} request(s) had no recorded answer in {}",
            summary.misses.len() + summary.misses_not_kept,
            engine.config().path.display()
        );
        return exit::UNMATCHED;
    }
    if !summary.unanswered.is_empty() {
        let listed: Vec<String> = summary
            .unanswered
            .iter()
            .map(|u| format!("id {} (#{} {})", u.id, u.interaction, u.label))
            .collect();
        tracing::error!(
            "{} request(s) were never answered: the interaction that matched each was recorded without a response (cancelled, or still open when recording stopped); re-record it: {}",
            summary.unanswered.len(),
            listed.join(", ")
        );
        return exit::UNMATCHED;
    }
    if rules.strategy == mcpcassette::matching::Strategy::Strict
        && !summary.answer_mismatches.is_empty()
    {
        tracing::error!(
            "strategy strict: the client answered {} replayed sampling or elicitation request(s) differently from the recording",
            summary.answer_mismatches.len()
        );
        return exit::UNMATCHED;
    }
    if matching.fail_on_unused && !(summary.unused.is_empty() && summary.unused_cases.is_empty()) {
        tracing::error!("--fail-on-unused: recorded interactions were never used");
        return exit::UNMATCHED;
    }
    exit::OK
}

fn shorten(text: &str) -> String {
    match text.char_indices().nth(100) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_owned(),
    }
}
