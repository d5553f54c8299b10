//! `mcpcassette replay`, and replaying for `run`.

use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Context;
use mcpcassette::cassette::{self, Cassette, Faults, RuleOverrides, Rules, Scope, Transport};
use mcpcassette::faults::{FaultOverlay, FaultsSummary};

use mcpcassette::cli_support::process_stdio;
use mcpcassette::replay::{
    Engine, ProcessReplay, ReplayConfig, StdioConfig, Summary, VerdictConfig,
};
use mcpcassette::replay::{HttpReplayConfig, Pace};
use mcpcassette::server::Handler;

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
        None => replay_paced(
            cassette,
            &args.cassette,
            "replay",
            &args.matching,
            pace,
            None,
        ),
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
        on_miss: None,
        process: None,
    };
    let engine = Engine::with_config(cassette, config);
    super::logging::set_redactor(engine.redactor().clone());
    let http_config = HttpReplayConfig {
        listen,
        pace,
        sessions: matching.sessions,
        auth: matching.auth.unwrap_or(engine.rules().auth),
    };
    let overlay = overlay(&engine, matching, true)?;
    let served = match &overlay {
        Some(overlay) => Arc::clone(overlay) as Arc<dyn Handler>,
        None => Arc::clone(&engine) as Arc<dyn Handler>,
    };
    let summary = serve_http_handler(&engine, served, http_config)?;
    let faults = overlay.map(|overlay| FaultsSummary {
        // Over HTTP a hang-up drops a connection, not the replay.
        disconnected: None,
        ..overlay.summary()
    });
    finish(&engine, &summary, matching, faults)
}

/// The faults overlay around `engine`, when the cassette's rules or
/// `--faults` have faults; `http` says whether it replays over HTTP.
fn overlay(
    engine: &Arc<Engine>,
    matching: &MatchArgs,
    http: bool,
) -> anyhow::Result<Option<Arc<FaultOverlay>>> {
    let own = engine.rules().faults()?;
    let faults = faults(own, CASSETTE_FAULTS, matching.faults.as_deref(), http)?;
    if faults.is_empty() {
        return Ok(None);
    }
    let inner = Arc::clone(engine) as Arc<dyn Handler>;
    Ok(Some(FaultOverlay::new(inner, faults)))
}

/// How errors name a cassette's own faults.
const CASSETTE_FAULTS: &str = "the cassette's rules.faults";

/// The faults in force: `own` (a cassette's or fixture's `rules.faults`,
/// which `owner` names), then the `--faults` file's; refused where the
/// transport cannot do them.
pub fn faults(own: Faults, owner: &str, file: Option<&Path>, http: bool) -> anyhow::Result<Faults> {
    let mut faults = own;
    let own = faults.rules.len();
    if let Some(path) = file {
        faults = faults.then(cassette::load_faults(path)?);
    }
    if let Err(error) = faults.check_transport(http) {
        let index: usize = error.pointer[1..]
            .split('/')
            .next()
            .and_then(|i| i.parse().ok())
            .unwrap_or(0);
        let place = match file {
            Some(path) if index >= own => format!("{} rule #{}", path.display(), index - own),
            _ => format!("{owner} #{index}"),
        };
        anyhow::bail!("{place}: {}", error.message);
    }
    Ok(faults)
}

/// Runs `engine` over Streamable HTTP as `config` says (announcing the
/// URL) until SIGINT or SIGTERM.
pub fn serve_http_engine(
    engine: &std::sync::Arc<Engine>,
    config: HttpReplayConfig,
) -> anyhow::Result<Summary> {
    serve_http_handler(engine, Arc::clone(engine) as Arc<dyn Handler>, config)
}

/// Runs `served` (`engine`, or an overlay around it) like
/// [`serve_http_engine`]; the summary is `engine`'s.
fn serve_http_handler(
    engine: &std::sync::Arc<Engine>,
    served: Arc<dyn Handler>,
    config: HttpReplayConfig,
) -> anyhow::Result<Summary> {
    let endpoint = match &engine.cassette().transport {
        Transport::StreamableHttp { endpoint, .. } => endpoint.clone(),
        Transport::HttpSse { sse_endpoint, .. } => sse_endpoint.clone(),
        Transport::Stdio { .. } => "/mcp".to_owned(),
    };
    super::until_signal(|shutdown| {
        mcpcassette::server::http::serve_http(
            served,
            config,
            |addr| super::announce(addr, &endpoint),
            shutdown,
        )
    })??;
    Ok(engine.summary_of_every_session())
}

/// Recovers the journals of interrupted recordings, if any, and loads.
pub fn open(path: &Path) -> anyhow::Result<Cassette> {
    for recovery in cassette::recover(path)? {
        tracing::warn!("{recovery}");
    }
    Ok(cassette::load(path)?)
}

/// Replays `cassette` on stdin/stdout and reports at the end; `scope` is
/// the test's, with this server process's ordinal there.
pub fn replay(
    cassette: Cassette,
    path: &Path,
    mode: &str,
    matching: &MatchArgs,
    scope: Option<(Scope, u32)>,
) -> anyhow::Result<ExitCode> {
    replay_paced(cassette, path, mode, matching, Pace::Fast, scope)
}

/// [`replay`] at the given pace.
fn replay_paced(
    cassette: Cassette,
    path: &Path,
    mode: &str,
    matching: &MatchArgs,
    pace: Pace,
    scope: Option<(Scope, u32)>,
) -> anyhow::Result<ExitCode> {
    let rules = resolve_rules(&cassette.rules, matching)?;
    let on_miss = matching.report.as_ref().map(|report| {
        let redactor = mcpcassette::redact::Redactor::new(&rules.redaction())
            .unwrap_or_else(|_| mcpcassette::redact::Redactor::defaults());
        super::report::as_misses_happen(report, path, mode, redactor)
    });
    let config = ReplayConfig {
        path: path.to_owned(),
        rules: Some(rules),
        mode: mode.to_owned(),
        upstream: None,
        cross_era: matching.cross_era,
        on_miss,
        process: scope
            .as_ref()
            .map(|(_, ordinal)| format!("live server process {ordinal} of the test")),
    };
    if mcpcassette::cli_support::recorded_processes(&cassette).len() > 1 {
        return replay_processes(&cassette, config, matching, pace, scope);
    }
    let engine = Engine::with_config(cassette, config);
    super::logging::set_redactor(engine.redactor().clone());
    let overlay = overlay(&engine, matching, false)?;
    let served = match &overlay {
        Some(overlay) => Arc::clone(overlay) as Arc<dyn Handler>,
        None => Arc::clone(&engine) as Arc<dyn Handler>,
    };
    serve_stdio(served, pace)?;
    let summary = engine.summary();
    finish(&engine, &summary, matching, overlay.map(|o| o.summary()))
}

/// Replays a cassette of several server processes: this live process
/// plays the recorded one that answers what it asks (`ProcessReplay`).
fn replay_processes(
    cassette: &Cassette,
    config: ReplayConfig,
    matching: &MatchArgs,
    pace: Pace,
    scope: Option<(Scope, u32)>,
) -> anyhow::Result<ExitCode> {
    let ordinal = scope.as_ref().map(|(_, ordinal)| *ordinal);
    let replay = Arc::new(ProcessReplay::new(cassette, &config, scope));
    let first = replay.playing().1;
    super::logging::set_redactor(first.redactor().clone());
    let own = first.rules().faults()?;
    let faults = faults(own, CASSETTE_FAULTS, matching.faults.as_deref(), false)?;
    let overlay = (!faults.is_empty())
        .then(|| FaultOverlay::new(Arc::clone(&replay) as Arc<dyn Handler>, faults));
    let served = match &overlay {
        Some(overlay) => Arc::clone(overlay) as Arc<dyn Handler>,
        None => Arc::clone(&replay) as Arc<dyn Handler>,
    };
    serve_stdio(served, pace)?;
    replay.end();
    let (process, engine) = replay.playing();
    let live = ordinal.map_or_else(String::new, |n| format!("live server process {n} "));
    match replay.claimed() {
        Some(_) => tracing::info!(
            "{live}played recorded process {process} of {}",
            replay.recorded_count()
        ),
        None => tracing::info!(
            "{live}played recorded process {process} of {}, shared with another live process",
            replay.recorded_count()
        ),
    }
    let summary = engine.summary();
    finish(&engine, &summary, matching, overlay.map(|o| o.summary()))
}

/// Runs the engine on this process's stdin and stdout; a response that
/// follows notifications waits until the client has read them.
///
/// SIGINT and SIGTERM end the replay as a closed stdin does, with its
/// summary and report: SDK clients stop the servers they started with a
/// signal (the TypeScript SDK's `close()`), and a test must still learn
/// what missed.
pub fn serve_stdio(handler: Arc<dyn Handler>, pace: Pace) -> anyhow::Result<()> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    let shutdown = super::on_signal(&runtime)?;
    let served = runtime.block_on(async {
        let config = StdioConfig::stdout(pace);
        let (stdin, stdout) = process_stdio();
        tokio::select! {
            served = mcpcassette::server::serve_with(Arc::clone(&handler), stdin, stdout, config) => served,
            () = shutdown => {
                tracing::info!("stopped by a signal");
                handler.client_gone();
                Ok(())
            }
        }
    });
    // A stdin that is not a pipe (a socket, as Node spawns children; a
    // terminal) is read on a blocking thread, whose read never returns
    // while the client keeps it open: do not wait for it.
    runtime.shutdown_background();
    served.context("replay I/O failed")
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

/// Lists what went unused and the faults that fired, writes the JSON
/// report, picks the exit code: a `disconnect` fault's status when one
/// hung up, else 1 for a failed replay (unused fault rules count as unused
/// under `--fail-on-unused`).
pub fn finish(
    engine: &Engine,
    summary: &Summary,
    matching: &MatchArgs,
    faults: Option<FaultsSummary>,
) -> anyhow::Result<ExitCode> {
    if let Some(unused) = engine.unused_report(summary) {
        tracing::info!("{unused}");
    }
    if let Some(faults) = &faults {
        eprint!(
            "mcpcassette: {}",
            engine.redactor().redact_text(&faults.to_string())
        );
    }
    let config = VerdictConfig {
        fail_on_unused: matching.fail_on_unused,
    };
    let unused_faults = faults.as_ref().filter(|f| !f.unused.is_empty());
    let mut code = match engine.verdict(summary, &config) {
        Ok(()) if matching.fail_on_unused && unused_faults.is_some() => {
            let unused = unused_faults.map(|f| f.unused.clone()).unwrap_or_default();
            let listed: Vec<String> = unused.iter().map(|i| format!("#{i}")).collect();
            tracing::error!(
                "--fail-on-unused: fault rule(s) {} never fired",
                listed.join(", ")
            );
            exit::UNMATCHED
        }
        Ok(()) => exit::OK,
        Err(failure) => {
            tracing::error!("{failure}");
            exit::UNMATCHED
        }
    };
    if let Some(status) = faults.as_ref().and_then(|f| f.disconnected) {
        code = status;
    }
    if let Some(path) = &matching.report {
        super::report::replayed(path, engine, summary, faults.as_ref(), code)?;
    }
    Ok(ExitCode::from(code))
}
