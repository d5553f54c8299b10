//! `mcpcassette run`: one entry point that records or replays as the mode
//! says, VCR-style, over stdio or Streamable HTTP. What it does is the
//! library's `RunPlan`'s decision (src/mode/plan.rs); this file gathers
//! the facts the plan needs and executes what it decides.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use mcpcassette::cassette::{Scope, journals};
use mcpcassette::cli_support::{
    Action, MatchOptions, Project, RunPlan, RunRequest, ancestors, find_project, process_env,
};
use mcpcassette::record::ScopedRecording;

use super::args::{MatchArgs, RunArgs};
use super::{record, replay};

/// Resolves the mode, says it on stderr, and does it.
pub fn run(args: RunArgs) -> anyhow::Result<ExitCode> {
    let redactor = super::redactor(
        args.redaction.redact.clone(),
        args.redaction.redact_env.clone(),
    )?;
    let cwd = std::env::current_dir().context("cannot read the working directory")?;
    let project = find_project(&cwd, &args.cassette)?;
    if let Some(project) = &project {
        tracing::debug!("project file {}", project.path.display());
    }
    let plan = RunPlan::new(&request(&args), project.as_ref(), std::process::id());
    let scope = match &args.scope {
        Some(dir) => Some(Scope::open(dir, &plan.cassette)?),
        None => None,
    };
    let Some(report) = plan.report.clone() else {
        return execute(&args, &plan, project, scope).map(|(code, _)| code);
    };
    let (cassette, flag) = (plan.cassette.clone(), plan.asked());
    super::report::started(&report, &cassette, &flag.to_string(), &redactor)?;
    match execute(&args, &plan, project, scope) {
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

/// What the plan reads of the command line.
fn request(args: &RunArgs) -> RunRequest {
    RunRequest {
        cassette: args.cassette.clone(),
        mode: args.mode,
        upstream: args.upstream.clone(),
        listen: args.listen,
        scope: args.scope.clone(),
        has_command: !args.command.is_empty(),
        faults: args.matching.faults.clone(),
        report: args.matching.report.clone(),
        matching: MatchOptions {
            strategy: args.matching.strategy,
            on_exhausted: args.matching.on_exhausted,
            ignore: args.matching.ignore.clone(),
            fail_on_unused: args.matching.fail_on_unused,
        },
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

/// Resolves the mode, says it, and records or replays as the plan decides.
fn execute(
    args: &RunArgs,
    plan: &RunPlan,
    project: Option<Project>,
    scope: Option<Scope>,
) -> anyhow::Result<(ExitCode, Done)> {
    // The ancestors are only read when the command line does not decide.
    let ancestors = if plan.reads_ancestors() {
        ancestors::ancestors()
    } else {
        Vec::new()
    };
    let (mode, why) = plan.mode(&process_env, project.as_ref(), &ancestors)?;
    let path = &plan.cassette;
    let exists = path.exists() || !journals(path).is_empty();
    let member = match &scope {
        Some(scope) => Some(scope.join(|| RunPlan::scope_action(mode, exists))?),
        None => None,
    };
    let decision = plan.decide(mode, &why, exists, member.as_ref());
    let (why, says) = (&decision.why, decision.says);
    match decision.ordinal {
        Some(ordinal) => tracing::info!(
            "mode {mode} ({why}): {says}; cassette {}, server process {ordinal} of the test",
            path.display(),
        ),
        None => tracing::info!("mode {mode} ({why}): {says}; cassette {}", path.display()),
    }
    // The matching options as resolved, reporting where the plan says.
    let matching = MatchArgs {
        strategy: plan.matching.strategy,
        on_exhausted: plan.matching.on_exhausted,
        ignore: plan.matching.ignore.clone(),
        fail_on_unused: plan.matching.fail_on_unused,
        report: plan.report.clone(),
        ..args.matching.clone()
    };
    let scoped = scope.clone().zip(member);
    let code = match &decision.action {
        Action::Refuse(refusal) => return Err(refusal.clone().into()),
        Action::Replay => {
            let cassette = replay::open(path)?;
            let mode = mode.to_string();
            if plan.http {
                replay::replay_http(
                    cassette,
                    path,
                    &mode,
                    &matching,
                    plan.listen,
                    Default::default(),
                )
            } else {
                let scoped = scoped.map(|(scope, member)| (scope, member.ordinal));
                replay::replay(cassette, path, &mode, &matching, scoped)
            }
        }
        Action::AppendNewEpisodes => match &plan.upstream {
            Some(upstream) => super::new_episodes::run_http(path, upstream, plan.listen, &matching),
            None => super::new_episodes::run(path, &args.command, &matching, scope.as_ref()),
        },
        Action::Record { cassette } => match &plan.upstream {
            Some(upstream) => record::record_http(
                cassette.clone(),
                upstream.clone(),
                plan.listen,
                args.redaction.clone().resolve(),
                Vec::new(),
            ),
            None => record::record(
                cassette.clone(),
                args.command.clone(),
                args.redaction.clone().resolve(),
                scoped.map(|(scope, member)| ScopedRecording { scope, member }),
            ),
        },
    }?;
    let done = match decision.action {
        Action::Record { cassette } => Done::Recorded {
            cassette,
            mode: mode.to_string(),
        },
        _ => Done::Replayed,
    };
    Ok((code, done))
}
