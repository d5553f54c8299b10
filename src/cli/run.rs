//! `mcpcassette run`: one entry point that records or replays as the mode
//! says, VCR-style, over stdio or Streamable HTTP.

use std::net::{Ipv4Addr, SocketAddr};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, bail};
use mcpcassette::Mode;
use mcpcassette::cassette::{Member, Scope, ScopeAction};
use mcpcassette::cli_support::{Project, Sources, ancestors, process_env};
use mcpcassette::record::ScopedRecording;

use super::args::{MatchArgs, RunArgs};
use super::{record, replay};

/// Where the HTTP proxy or replay listens when `--listen` is not given.
const DEFAULT_LISTEN: SocketAddr = SocketAddr::new(std::net::IpAddr::V4(Ipv4Addr::LOCALHOST), 0);

/// Resolves the mode, says it on stderr, and does it.
pub fn run(mut args: RunArgs) -> anyhow::Result<ExitCode> {
    let redactor = super::redactor(
        args.redaction.redact.clone(),
        args.redaction.redact_env.clone(),
    )?;
    let cwd = std::env::current_dir().context("cannot read the working directory")?;
    let project = find_project(&cwd, &args.cassette)?;
    if let Some(project) = &project {
        tracing::debug!("project file {}", project.path.display());
        if let Some(dir) = project.cassette_dir()
            && args.cassette.is_relative()
        {
            args.cassette = dir.join(&args.cassette);
        }
        apply_defaults(project, &mut args.matching);
    }
    // A process of a scope reports where the scope's other processes do.
    let scope = match &args.scope {
        Some(dir) => Some(Scope::open(dir, &args.cassette)?),
        None => None,
    };
    let Some(report) = args.matching.report.clone().or_else(|| {
        let scope = scope.as_ref()?;
        Some(
            scope
                .dir()
                .join(format!("pid-{}.report.json", std::process::id())),
        )
    }) else {
        return resolve_and_run(args, project, scope).map(|(code, _)| code);
    };
    args.matching.report = Some(report.clone());
    let (cassette, flag) = (args.cassette.clone(), args.mode.unwrap_or(Mode::Auto));
    super::report::started(&report, &cassette, &flag.to_string(), &redactor)?;
    match resolve_and_run(args, project, scope) {
        Ok((code, Done::Recorded { cassette, mode })) => {
            super::report::recorded(&report, cassette.as_deref(), &mode, &redactor)?;
            Ok(code)
        }
        // The replay wrote its own report.
        Ok((code, Done::Replayed)) => Ok(code),
        Err(error) => {
            let text = super::describe(&error);
            super::report::failed(&report, &cassette, &flag.to_string(), &text, &redactor)?;
            Err(error)
        }
    }
}

/// What a `run` did, for its report.
enum Done {
    /// Replayed (the replay wrote the report).
    Replayed,
    /// Recorded (or forwarded, without a cassette) in `mode`.
    Recorded {
        cassette: Option<PathBuf>,
        mode: String,
    },
}

/// Resolves the mode, says it, and records or replays.
fn resolve_and_run(
    args: RunArgs,
    project: Option<Project>,
    scope: Option<Scope>,
) -> anyhow::Result<(ExitCode, Done)> {
    let flag = args.mode;
    // The ancestors are only read when the command line does not decide.
    let ancestors = if flag.is_none() {
        ancestors::ancestors()
    } else {
        Vec::new()
    };
    let (mode, why) = Sources {
        flag,
        env: &process_env,
        project: project.as_ref(),
        ancestors: &ancestors,
    }
    .resolve()?;
    let path = &args.cassette;
    let exists = path.exists() || !mcpcassette::cassette::journals(path).is_empty();
    // The processes of a scope do what its first one decided: the second
    // process of a recording test records, though the first one's
    // cassette is there by then.
    let member = match &scope {
        Some(scope) => Some(join(scope, mode, exists)?),
        None => None,
    };
    let exists = match &member {
        Some(member) => member.action == ScopeAction::Replay,
        None => exists,
    };
    let action = match mode {
        _ if member.as_ref().is_some_and(|m| m.ordinal > 0) && !exists => {
            "recording, as the test's first server process decided"
        }
        Mode::Once | Mode::NewEpisodes if !exists => "cassette missing: recording",
        Mode::None if !exists => "cassette missing",
        Mode::Once | Mode::None => "replaying",
        Mode::NewEpisodes => "replaying, recording what is missing",
        Mode::All => "recording afresh",
        Mode::Passthrough => "forwarding without recording",
        Mode::Auto => unreachable!("auto is resolved"),
    };
    match &member {
        Some(member) => tracing::info!(
            "mode {mode} ({why}): {action}; cassette {}, server process {} of the test",
            path.display(),
            member.ordinal
        ),
        None => tracing::info!("mode {mode} ({why}): {action}; cassette {}", path.display()),
    }
    let http = args.upstream.is_some() || args.listen.is_some();
    let replays_only = mode == Mode::None || (mode == Mode::Once && exists);
    if let Some(faults) = &args.matching.faults
        && !replays_only
    {
        bail!(
            "--faults {}: mode {mode} is {action}, and faults apply only when replaying (a fault must never reach a cassette): record the cassette without --faults first, then replay it with them",
            faults.display()
        );
    }
    if !replays_only && !http && args.command.is_empty() {
        bail!(
            "mode {mode} needs the server command after `--` (or --upstream URL for a Streamable HTTP server)"
        );
    }
    if !replays_only && http && args.upstream.is_none() {
        bail!("mode {mode} over HTTP needs the server's URL: pass --upstream URL");
    }
    let listen = args.listen.unwrap_or(DEFAULT_LISTEN);
    let scoped = scope.clone().zip(member.clone());
    let replaying = |path: &PathBuf| -> anyhow::Result<ExitCode> {
        let cassette = replay::open(path)?;
        let mode = mode.to_string();
        if http {
            replay::replay_http(
                cassette,
                path,
                &mode,
                &args.matching,
                listen,
                Default::default(),
            )
        } else {
            let scoped = scoped
                .clone()
                .map(|(scope, member)| (scope, member.ordinal));
            replay::replay(cassette, path, &mode, &args.matching, scoped)
        }
    };
    let recording = |cassette: Option<PathBuf>| match &args.upstream {
        Some(upstream) => record::record_http(
            cassette,
            upstream.clone(),
            listen,
            args.redaction.clone().resolve(),
            Vec::new(),
        ),
        None => record::record(
            cassette,
            args.command.clone(),
            args.redaction.clone().resolve(),
            scoped
                .clone()
                .map(|(scope, member)| ScopedRecording { scope, member }),
        ),
    };
    let records = match mode {
        Mode::All | Mode::Passthrough => true,
        Mode::Once | Mode::NewEpisodes => !exists,
        Mode::None | Mode::Auto => false,
    };
    let code = match mode {
        Mode::None if !exists => bail!(
            "{}: no such cassette, and mode `none` never records ({why}); record it with --mode once or --mode all",
            path.display()
        ),
        Mode::Once | Mode::None if exists => replaying(path),
        Mode::NewEpisodes if exists && http => {
            let upstream = args.upstream.as_deref().expect("checked above");
            super::new_episodes::run_http(path, upstream, listen, &args.matching)
        }
        Mode::NewEpisodes if exists => {
            super::new_episodes::run(path, &args.command, &args.matching, scope.as_ref())
        }
        Mode::Once | Mode::NewEpisodes | Mode::All => recording(Some(path.clone())),
        Mode::Passthrough => recording(None),
        Mode::None | Mode::Auto => unreachable!("none without a cassette failed; auto is resolved"),
    }?;
    let done = if records {
        Done::Recorded {
            cassette: (mode != Mode::Passthrough).then(|| path.clone()),
            mode: mode.to_string(),
        }
    } else {
        Done::Replayed
    };
    Ok((code, done))
}

/// Joins `scope`: the first process decides, from `mode` and whether the
/// cassette `exists`, whether the test records or replays.
fn join(scope: &Scope, mode: Mode, exists: bool) -> anyhow::Result<Member> {
    let records = match mode {
        Mode::All | Mode::Passthrough => true,
        Mode::Once | Mode::NewEpisodes => !exists,
        Mode::None | Mode::Auto => false,
    };
    let member = scope.join(|| match records {
        true => ScopeAction::Record,
        false => ScopeAction::Replay,
    })?;
    Ok(member)
}

/// The project file: the nearest one above the working directory, else
/// the nearest one above the cassette.
fn find_project(cwd: &Path, cassette: &Path) -> anyhow::Result<Option<Project>> {
    if let Some(project) = Project::find(cwd)? {
        return Ok(Some(project));
    }
    let cassette = cwd.join(cassette);
    match cassette.parent() {
        Some(dir) => Ok(Project::find(dir)?),
        None => Ok(None),
    }
}

/// The project file's replay defaults, under what the command line says.
fn apply_defaults(project: &Project, matching: &mut MatchArgs) {
    let defaults = &project.config.replay;
    matching.strategy = matching.strategy.or(defaults.strategy);
    matching.on_exhausted = matching.on_exhausted.or(defaults.on_exhausted);
    let mut ignore = defaults.ignore.clone();
    ignore.append(&mut matching.ignore);
    matching.ignore = ignore;
    if defaults.fail_on_unused == Some(true) {
        matching.fail_on_unused = true;
    }
}
