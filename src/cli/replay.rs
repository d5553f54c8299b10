//! `mcpcassette replay`, and replaying for `run`.

use std::path::Path;
use std::process::ExitCode;

use anyhow::Context;
use mcpcassette::cassette::{self, Cassette, RuleOverrides, Rules, Transport};

use mcpcassette::cli_support::process_stdio;
use mcpcassette::replay::http::{HttpReplayConfig, Pace, serve_http};
use mcpcassette::replay::{Engine, ReplayConfig, StdioConfig, Summary, VerdictConfig, serve_with};

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
        cross_era: matching.cross_era,
    };
    let engine = Engine::with_config(cassette, config);
    super::logging::set_redactor(engine.redactor().clone());
    let http_config = HttpReplayConfig {
        listen,
        pace,
        sessions: matching.sessions,
        auth: matching.auth.unwrap_or(engine.rules().auth),
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
        cross_era: matching.cross_era,
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
    Ok(Rules::resolve(
        stored,
        args.rules.as_deref(),
        &overrides(args),
    )?)
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
    if let Some(unused) = engine.unused_report(summary) {
        tracing::info!("{unused}");
    }
    let config = VerdictConfig {
        fail_on_unused: matching.fail_on_unused,
    };
    let code = match engine.verdict(summary, &config) {
        Ok(()) => exit::OK,
        Err(failure) => {
            tracing::error!("{failure}");
            exit::UNMATCHED
        }
    };
    if let Some(path) = &matching.report {
        super::report::replayed(path, engine, summary, code)?;
    }
    Ok(ExitCode::from(code))
}
