//! The command line: parse, resolve, run, map the outcome to an exit code.

mod args;
mod check;
mod finish;
mod inspect;
mod logging;
mod new_episodes;
mod record;
mod replay;
mod report;
mod review;
mod run;
mod serve;
mod stub;
mod verify;

use std::process::ExitCode;

use clap::Parser;

pub use args::{Cli, Command};

/// Documented exit codes (see README, "Exit codes").
pub mod exit {
    /// Everything went as expected.
    pub const OK: u8 = 0;
    /// Replay: at least one request had no recorded answer (or, with
    /// `--fail-on-unused`, a recorded interaction was never used).
    pub const UNMATCHED: u8 = 1;
    /// Bad usage, an unreadable or invalid cassette, or an I/O error.
    pub const ERROR: u8 = 2;
    /// `record --upstream`: the upstream never answered; the cassette holds
    /// nothing but failures.
    pub const UPSTREAM_DOWN: u8 = 3;
}

/// Runs the command line and returns the process's exit code.
pub fn main() -> ExitCode {
    let cli = Cli::parse();
    logging::init();
    let result = match cli.command {
        Command::Run(args) => run::run(args.0),
        Command::Record(args) => record::run(args.0),
        Command::Inspect(args) => inspect::run(args.0),
        Command::Replay(args) => replay::run(args.0),
        Command::Serve(args) => serve::run(args.0),
        Command::Check(args) => check::run(args.0),
        Command::Verify(args) => verify::run(args.0),
        Command::Stub(args) => stub::run(args.0),
        Command::Review(args) => review::review(args.0),
        Command::Accept(args) => review::accept(args.0),
        Command::Reject(args) => review::reject(args.0),
        Command::Pending(args) => review::list(args.0),
        Command::Finish(args) => finish::run(args.0),
    };
    match result {
        Ok(code) => code,
        Err(error) => {
            // Masked by the log writer, like every log line.
            tracing::error!("{}", describe(&error));
            ExitCode::from(exit::ERROR)
        }
    }
}

/// The error and its causes, `outer: cause: root`: no error's message
/// repeats its source, which the chain says after it.
fn describe(error: &anyhow::Error) -> String {
    mcpcassette::cli_support::chain(error.as_ref())
}

/// A redactor over this process's environment with `rules` and `env`
/// added; log lines are masked with it from now on.
fn redactor(
    rules: Vec<mcpcassette::redact::RedactRule>,
    env: Vec<String>,
) -> anyhow::Result<mcpcassette::redact::Redactor> {
    let config = mcpcassette::redact::RedactConfig::from_process_env(rules, env);
    let redactor = mcpcassette::redact::Redactor::new(&config)?;
    logging::set_redactor(redactor.clone());
    Ok(redactor)
}

/// The runtime the HTTP servers run on: one thread. A request's work is a
/// few microseconds, so a second worker buys wake-ups and a contended
/// recording lock rather than throughput (docs/benchmarks.md, "One
/// thread"); work that blocks goes to `spawn_blocking`.
fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    Ok(tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?)
}

/// Prints the URL an HTTP server listens on as the first line of stdout,
/// for scripts and tests to read.
fn announce(addr: std::net::SocketAddr, endpoint: &str) {
    use std::io::Write;
    let mut stdout = std::io::stdout().lock();
    let _ = writeln!(stdout, "http://{addr}{endpoint}").and_then(|()| stdout.flush());
    tracing::info!("listening on http://{addr}{endpoint}");
}

/// Runs an HTTP server to completion on [`runtime`]; the
/// future `serve` gets resolves on SIGINT or SIGTERM. The handlers are
/// installed before `serve` starts, so a signal sent as soon as the URL is
/// announced stops the server gracefully instead of killing it.
fn until_signal<F: Future>(serve: impl FnOnce(Shutdown) -> F) -> anyhow::Result<F::Output> {
    let runtime = runtime()?;
    let shutdown = on_signal(&runtime)?;
    Ok(runtime.block_on(serve(shutdown)))
}

/// Resolves on SIGINT or SIGTERM; the handlers are installed on `runtime`
/// now, before anything is served.
fn on_signal(runtime: &tokio::runtime::Runtime) -> std::io::Result<Shutdown> {
    use tokio::signal::unix::{SignalKind, signal};
    let (mut interrupt, mut terminate) = {
        let _context = runtime.enter();
        (
            signal(SignalKind::interrupt())?,
            signal(SignalKind::terminate())?,
        )
    };
    Ok(Box::pin(async move {
        tokio::select! {
            _ = interrupt.recv() => {}
            _ = terminate.recv() => {}
        }
    }))
}

/// Resolves when the server should stop.
type Shutdown = std::pin::Pin<Box<dyn Future<Output = ()> + Send>>;

#[cfg(test)]
mod tests {
    use super::describe;

    #[derive(Debug, thiserror::Error)]
    #[error("cannot read y.json")]
    struct Defers {
        source: std::io::Error,
    }

    fn missing() -> std::io::Error {
        std::io::Error::from(std::io::ErrorKind::NotFound)
    }

    #[test]
    fn each_cause_follows_its_error() {
        let wrapped = anyhow::Error::new(Defers { source: missing() }).context("recording failed");
        assert_eq!(
            describe(&wrapped),
            format!("recording failed: cannot read y.json: {}", missing())
        );
        let defers = anyhow::Error::new(Defers { source: missing() });
        assert_eq!(
            describe(&defers),
            format!("cannot read y.json: {}", missing())
        );
        let plain = anyhow::anyhow!("plain").context("outer");
        assert_eq!(describe(&plain), "outer: plain");
    }
}
