//! `verify`: drive the live server, compare, and leave the live version for
//! review as the update mode says. The accepted cassette is written only in
//! mode `always`.

use std::path::{Path, PathBuf};
use std::time::Duration;

use super::driver::{DriveConfig, drive};
use super::{DriftError, DriftReport, UpdateMode, compare, pending, processes, sessions, streams};
use crate::cassette::{self, Cassette, Interaction, RulesError, Transport};
use crate::client::{HttpLive, StdioLive};
use crate::redact::Redactor;

/// The live server to verify against.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// The server stored in the cassette: its command, or the URL of one
    /// recorded over Streamable HTTP (refused when masked).
    Recorded,
    /// A stdio server command and its arguments.
    Command(Vec<String>),
    /// A Streamable HTTP server's endpoint.
    Url(String),
}

/// What to verify, against what, and what to do with drift.
#[derive(Debug, Clone)]
pub struct VerifyConfig {
    /// The accepted cassette.
    pub cassette: PathBuf,
    /// The live server.
    pub target: Target,
    /// Where pending cassettes go (default: beside the accepted one).
    pub pending_dir: Option<PathBuf>,
    /// What to write when there is drift (already resolved: not `Auto`).
    pub update: UpdateMode,
    /// How long to wait for each response.
    pub timeout: Duration,
}

impl VerifyConfig {
    /// Verify `cassette` against its recorded command; drift goes to a
    /// pending cassette as `MCPCASSETTE_UPDATE` says.
    pub fn new(cassette: impl Into<PathBuf>) -> VerifyConfig {
        let env = crate::mode::process_env;
        let update = UpdateMode::from_env(env)
            .unwrap_or(UpdateMode::Auto)
            .resolve(env)
            .0;
        VerifyConfig {
            cassette: cassette.into(),
            target: Target::Recorded,
            pending_dir: None,
            update,
            timeout: DriveConfig::default().timeout,
        }
    }
}

/// What verifying found and did.
#[derive(Debug, Clone)]
pub struct Verification {
    /// The comparison.
    pub report: DriftReport,
    /// The pending cassette written (mode `new`), if any.
    pub pending: Option<PathBuf>,
    /// Whether the accepted cassette was overwritten (mode `always`).
    pub overwritten: bool,
}

/// Re-runs the cassette against the live server and compares. Without drift
/// nothing is written, and a stale pending cassette is removed.
pub fn verify(config: &VerifyConfig) -> Result<Verification, DriftError> {
    let recorded = cassette::load(&config.cassette)?;
    let drive_config = DriveConfig {
        timeout: config.timeout,
        ..DriveConfig::default()
    };
    let target = match &config.target {
        Target::Recorded => recorded_target(&recorded)?,
        given => given.clone(),
    };
    // Masked as the recording was, so secrets neither differ nor leak.
    let redactor = Redactor::new(&recorded.rules.redaction()).map_err(RulesError::from)?;
    // Each server process of a stdio recording in a live process of its
    // own, one after another; each client session of an HTTP recording in
    // a live session of its own.
    let processes = processes::split(&recorded);
    let parts = if processes.len() > 1 {
        tracing::info!(
            "the recording has {} server processes; each is verified in a live one of its own, one after another",
            processes.len()
        );
        processes
    } else if matches!(target, Target::Url(_)) {
        in_sessions(&recorded)
    } else {
        processes
    };
    let mut observed: Option<Cassette> = None;
    // The live interactions, each where its recorded one is.
    let mut placed: Vec<Option<Interaction>> = vec![None; recorded.interactions.len()];
    let mut unplaced = Vec::new();
    let mut reordered = 0;
    for part in &parts {
        let session = &part.cassette;
        // What came on the server's own stream (GET), over HTTP.
        let mut server_stream = Vec::new();
        let mut live = match &target {
            Target::Url(url) => {
                let mut live = HttpLive::connect(url, recorded.protocol.era)?;
                let observed = drive(session, &mut live, &drive_config)?;
                server_stream = live.server_stream().to_vec();
                observed
            }
            Target::Command(command) => drive(
                session,
                &mut StdioLive::spawn(command, None)?,
                &drive_config,
            )?,
            // A stdio recording's own command.
            Target::Recorded => {
                let (command, dir) = recorded_command(&recorded, &config.cassette)?;
                let mut live = StdioLive::spawn(&command, dir.as_deref())
                    .map_err(|e| relative_hint(e.into(), &recorded, &config.cassette))?;
                drive(session, &mut live, &drive_config)?
            }
        };
        for interaction in &mut live.interactions {
            interaction.process = part.number;
            cassette::mask_interaction(interaction, &redactor);
            if let Some(body) = interaction.http.as_mut().and_then(|h| h.body.as_mut())
                && let std::borrow::Cow::Owned(masked) = redactor.redact_text(body)
            {
                *body = masked;
            }
        }
        for message in &mut server_stream {
            redactor.redact_message(message);
        }
        live.transport = recorded.transport.clone();
        reordered += streams::align(
            session,
            &mut live,
            &server_stream,
            &recorded.rules.normalize,
        );
        let interactions = std::mem::take(&mut live.interactions);
        for (n, interaction) in interactions.into_iter().enumerate() {
            match part.indices.get(n) {
                Some(&index) => placed[index] = Some(interaction),
                None => unplaced.push(interaction),
            }
        }
        observed.get_or_insert(live);
    }
    let mut observed = observed.expect("a recording has at least one session");
    observed.interactions = placed.into_iter().flatten().chain(unplaced).collect();
    if reordered > 0 {
        tracing::debug!(
            "{reordered} interaction(s) interleave the GET stream with their answers \
             otherwise than recorded; compared in the recorded interleaving"
        );
    }
    let report = compare::compare(
        &config.cassette,
        &recorded,
        &observed,
        &recorded.rules.normalize,
    );
    let mut verification = Verification {
        report,
        pending: None,
        overwritten: false,
    };
    let stale = pending::pending_path(&config.cassette, config.pending_dir.as_deref());
    if !verification.report.has_drift() {
        if stale.exists() {
            let _ = std::fs::remove_file(&stale);
        }
        return Ok(verification);
    }
    match config.update {
        UpdateMode::New => {
            let path = pending::write(&config.cassette, &observed, config.pending_dir.as_deref())?;
            verification.pending = Some(path);
        }
        UpdateMode::Always => {
            cassette::save(&config.cassette, &observed)?;
            verification.overwritten = true;
        }
        UpdateMode::No | UpdateMode::Auto => {}
    }
    Ok(verification)
}

/// The client sessions of an HTTP recording, each a part of its own with
/// the recording's indices of its interactions (they follow each other).
fn in_sessions(recorded: &Cassette) -> Vec<processes::Process> {
    let sessions = sessions::split(recorded);
    if sessions.len() > 1 {
        tracing::info!(
            "the recording has {} client sessions; each is verified in a new live session",
            sessions.len()
        );
    }
    let mut start = 0;
    sessions
        .into_iter()
        .map(|cassette| {
            let indices = (start..start + cassette.interactions.len()).collect();
            start += cassette.interactions.len();
            processes::Process {
                number: 0,
                cassette,
                indices,
            }
        })
        .collect()
}

/// The recorded server: the URL of a Streamable HTTP recording, else the
/// recorded command.
fn recorded_target(recorded: &Cassette) -> Result<Target, DriftError> {
    match &recorded.transport {
        Transport::StreamableHttp { url, .. } if url.contains("[REDACTED") => {
            Err(DriftError::NoTarget(format!(
                "the recorded URL {url} has masked secrets; give the server's URL with --url"
            )))
        }
        Transport::StreamableHttp { url, .. } => {
            tracing::info!("verifying against the recorded URL {url} (--url to use another)");
            Ok(Target::Url(url.clone()))
        }
        Transport::HttpSse { .. } => Err(DriftError::NoTarget(
            "this cassette was recorded over the 2024-11-05 HTTP+SSE transport, which verify \
             cannot drive; record it again over Streamable HTTP"
                .into(),
        )),
        // Its command, run where it was recorded: see `recorded_command`.
        Transport::Stdio { .. } => Ok(Target::Recorded),
    }
}

/// The recorded server command, when it is usable, and the directory to
/// run it in: the recorded one, when it exists here (else ours).
fn recorded_command(
    recorded: &Cassette,
    path: &Path,
) -> Result<(Vec<String>, Option<PathBuf>), DriftError> {
    match &recorded.transport {
        Transport::Stdio { command, cwd }
            if !command.iter().any(|arg| arg.contains("[REDACTED")) =>
        {
            // Run where it was recorded, when that directory exists here.
            let place = std::env::current_dir()
                .ok()
                .and_then(|here| cassette::recorded_place(command, cwd.as_deref(), path, &here));
            Ok(match place {
                Some((command, dir)) => (command, Some(dir)),
                None => (command.clone(), None),
            })
        }
        Transport::Stdio { .. } => Err(DriftError::NoTarget(
            "the recorded server command has masked secrets; give the command after `--`".into(),
        )),
        _ => Err(DriftError::NoTarget(
            "this cassette was recorded over HTTP; give the server's URL with --url".into(),
        )),
    }
}

/// A failed start of a relative recorded command says where it ran.
fn relative_hint(error: DriftError, recorded: &Cassette, path: &Path) -> DriftError {
    let Transport::Stdio { command, cwd } = &recorded.transport else {
        return error;
    };
    if !cassette::is_relative(command) {
        return error;
    }
    let here = std::env::current_dir().unwrap_or_default();
    let place = match cwd {
        Some(cwd) => {
            let dir = cassette::resolve_cwd(cwd, path, &here);
            if dir.is_dir() {
                format!("it was run from {}", dir.display())
            } else {
                format!(
                    "it was recorded in {}, which does not exist here, so it was run from {}",
                    dir.display(),
                    here.display()
                )
            }
        }
        None => format!(
            "the cassette does not say where it was recorded, so it was run from {}",
            here.display()
        ),
    };
    let error = crate::error_chain::chain(&error);
    DriftError::NoTarget(format!(
        "{error}\nThe recorded server command is relative and {place}: run verify from the directory the server works from, or give the command after `--`"
    ))
}
