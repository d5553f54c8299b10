//! What `mcpcassette run` does, decided from plain inputs: its command line
//! as given ([`RunRequest`]), the project file, the environment, whether
//! the cassette is there, and what a test's scope decided. Apart from
//! [`find_project`], nothing here reads the disk or the environment, and
//! nothing given is changed: the binary gathers the facts, asks, and does
//! what the answer says.
//!
//! It is decided in two steps, because the second needs what the first
//! resolved:
//!
//! 1. [`RunPlan::new`]: where the cassette is (relative to the project
//!    file's `cassette_dir`), how replay matches (the command line over the
//!    project file's `[replay]`), where the report goes, where HTTP
//!    listens. The binary then opens the scope and starts the report.
//! 2. [`RunPlan::decide`], given the mode ([`RunPlan::mode`]), whether the
//!    cassette exists and the scope's member: record, replay, append new
//!    episodes, or refuse, and with which error.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::{Path, PathBuf};

use super::ancestors::Ancestor;
use super::project::{Project, ReplayDefaults};
use super::{Mode, ModeError, Sources};
use crate::cassette::{Member, OnExhausted, ScopeAction, Strategy};
use crate::json::Selector;

/// Where the HTTP proxy or replay listens when `--listen` is not given.
pub(crate) const DEFAULT_LISTEN: SocketAddr = SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), 0);

/// `run`'s command line as given, before anything is resolved.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RunRequest {
    /// `--cassette`.
    pub cassette: PathBuf,
    /// `--mode`.
    pub mode: Option<Mode>,
    /// `--upstream`.
    pub upstream: Option<String>,
    /// `--listen`.
    pub listen: Option<SocketAddr>,
    /// `--scope`.
    pub scope: Option<PathBuf>,
    /// Whether a server command follows `--`.
    pub has_command: bool,
    /// `--faults`.
    pub faults: Option<PathBuf>,
    /// `--report`.
    pub report: Option<PathBuf>,
    /// The matching options the project file has defaults for.
    pub matching: MatchOptions,
}

/// The matching options of `run` that the project file's `[replay]` table
/// has defaults for.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct MatchOptions {
    /// `--strategy`.
    pub strategy: Option<Strategy>,
    /// `--on-exhausted`.
    pub on_exhausted: Option<OnExhausted>,
    /// `--ignore`.
    pub ignore: Vec<Selector>,
    /// `--fail-on-unused`.
    pub fail_on_unused: bool,
}

impl MatchOptions {
    /// These options over the project file's `defaults`: each given one
    /// wins, and `ignore` adds to the file's.
    fn over(&self, defaults: &ReplayDefaults) -> MatchOptions {
        MatchOptions {
            strategy: self.strategy.or(defaults.strategy),
            on_exhausted: self.on_exhausted.or(defaults.on_exhausted),
            ignore: defaults
                .ignore
                .iter()
                .chain(&self.ignore)
                .cloned()
                .collect(),
            fail_on_unused: self.fail_on_unused || defaults.fail_on_unused == Some(true),
        }
    }
}

/// What `run` works with, resolved from its command line and the project
/// file; [`RunPlan::decide`] says what it does.
#[derive(Debug, Clone, PartialEq)]
pub struct RunPlan {
    /// The cassette: `--cassette`, relative to the project file's
    /// `cassette_dir` when it is relative and the file sets one.
    pub cassette: PathBuf,
    /// The matching options, over the project file's defaults.
    pub matching: MatchOptions,
    /// Where the report goes: `--report`, else the scope's
    /// `pid-<pid>.report.json`, else nowhere.
    pub report: Option<PathBuf>,
    /// Whether the server or the replay speaks Streamable HTTP (`--upstream`
    /// or `--listen` given), else stdio.
    pub http: bool,
    /// Where HTTP listens: `--listen`, else 127.0.0.1 on a free port.
    pub listen: SocketAddr,
    /// The Streamable HTTP server to record or forward to.
    pub upstream: Option<String>,
    /// `--mode`, if given.
    flag: Option<Mode>,
    /// Whether a server command follows `--`.
    has_command: bool,
    /// `--faults`.
    faults: Option<PathBuf>,
}

/// What `run` does, for the cassette as it is.
#[derive(Debug, Clone, PartialEq)]
pub struct Decision {
    /// The mode.
    pub mode: Mode,
    /// Where the mode came from.
    pub why: String,
    /// What the mode does with the cassette, as said on stderr.
    pub says: &'static str,
    /// The ordinal of this server process in its test's scope.
    pub ordinal: Option<u32>,
    /// What to do.
    pub action: Action,
}

/// What `run` does.
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    /// Replay the cassette, on the plan's transport.
    Replay,
    /// Replay what matches, forward the rest to the server (over HTTP to
    /// the plan's upstream) and append what it answers to the cassette.
    AppendNewEpisodes,
    /// Record into `cassette`, replacing it; without one, forward without
    /// recording.
    Record {
        /// The cassette to write.
        cassette: Option<PathBuf>,
    },
    /// Refuse, with this error.
    Refuse(Refusal),
}

/// Why `run` refuses to start.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum Refusal {
    /// `--faults` given to a run that records.
    #[error(
        "--faults {}: mode {mode} is {says}, and faults apply only when replaying (a fault must never reach a cassette): record the cassette without --faults first, then replay it with them",
        faults.display()
    )]
    FaultsWhileRecording {
        /// The faults file.
        faults: PathBuf,
        /// The mode.
        mode: Mode,
        /// What the mode does with the cassette.
        says: &'static str,
    },
    /// A stdio run that starts the server, without its command.
    #[error(
        "mode {mode} needs the server command after `--` (or --upstream URL for a Streamable HTTP server)"
    )]
    NoCommand {
        /// The mode.
        mode: Mode,
    },
    /// An HTTP run that reaches the server, without its URL.
    #[error("mode {mode} over HTTP needs the server's URL: pass --upstream URL")]
    NoUpstream {
        /// The mode.
        mode: Mode,
    },
    /// Mode `none` without a cassette.
    #[error(
        "{}: no such cassette, and mode `none` never records ({why}); record it with --mode once or --mode all",
        cassette.display()
    )]
    NoCassette {
        /// The cassette.
        cassette: PathBuf,
        /// Where the mode came from.
        why: String,
    },
}

impl RunPlan {
    /// The cassette's path, matching options, report and listen address of
    /// `request`, under `project` when there is one. `pid` names the report
    /// of a process of a scope.
    pub fn new(request: &RunRequest, project: Option<&Project>, pid: u32) -> RunPlan {
        let cassette = match project.and_then(Project::cassette_dir) {
            Some(dir) if request.cassette.is_relative() => dir.join(&request.cassette),
            _ => request.cassette.clone(),
        };
        let matching = match project {
            Some(project) => request.matching.over(&project.config.replay),
            None => request.matching.clone(),
        };
        // A process of a scope reports where the scope's other processes do.
        let report = request.report.clone().or_else(|| {
            let scope = request.scope.as_ref()?;
            Some(scope.join(format!("pid-{pid}.report.json")))
        });
        RunPlan {
            cassette,
            matching,
            report,
            http: request.upstream.is_some() || request.listen.is_some(),
            listen: request.listen.unwrap_or(DEFAULT_LISTEN),
            upstream: request.upstream.clone(),
            flag: request.mode,
            has_command: request.has_command,
            faults: request.faults.clone(),
        }
    }

    /// The mode as asked on the command line: `auto` unless `--mode` says.
    pub fn asked(&self) -> Mode {
        self.flag.unwrap_or(Mode::Auto)
    }

    /// Whether the mode may come from the ancestors' environment: only when
    /// the command line does not decide it.
    pub fn reads_ancestors(&self) -> bool {
        self.flag.is_none()
    }

    /// The mode, and where it came from, the strongest source first:
    /// `--mode`, this process's `MCPCASSETTE_MODE`, the nearest ancestor's,
    /// the project file's `mode`, then `auto`, which asks whether CI is
    /// detected in `env`, else in the nearest ancestor's environment that
    /// says.
    ///
    /// # Errors
    ///
    /// [`ModeError::BadVar`] for an `MCPCASSETTE_MODE` that names no mode.
    pub fn mode(
        &self,
        env: &dyn Fn(&str) -> Option<String>,
        project: Option<&Project>,
        ancestors: &[Ancestor],
    ) -> Result<(Mode, String), ModeError> {
        Sources {
            flag: self.flag,
            env,
            project,
            ancestors,
        }
        .resolve()
    }

    /// What the first process of a scope decides for all of them, from
    /// `mode` and whether the cassette `exists`: the second process of a
    /// recording test records, though the first one's cassette is there
    /// by then.
    pub fn scope_action(mode: Mode, exists: bool) -> ScopeAction {
        match records(mode, exists) {
            true => ScopeAction::Record,
            false => ScopeAction::Replay,
        }
    }

    /// What `run` does in `mode` (resolved, from `why`), with the cassette
    /// there or not (`exists`), as this process's `member`ship of a scope
    /// says, if it has one.
    ///
    /// # Panics
    ///
    /// On [`Mode::Auto`], which [`RunPlan::mode`] never gives.
    pub fn decide(&self, mode: Mode, why: &str, exists: bool, member: Option<&Member>) -> Decision {
        // The processes of a scope do what its first one decided.
        let exists = match member {
            Some(member) => member.action == ScopeAction::Replay,
            None => exists,
        };
        let says = match mode {
            _ if member.is_some_and(|m| m.ordinal > 0) && !exists => {
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
        let action = match self.refusal(mode, why, says, exists) {
            Some(refusal) => Action::Refuse(refusal),
            None => match mode {
                Mode::Once | Mode::None if exists => Action::Replay,
                Mode::NewEpisodes if exists => Action::AppendNewEpisodes,
                Mode::Once | Mode::NewEpisodes | Mode::All => Action::Record {
                    cassette: Some(self.cassette.clone()),
                },
                Mode::Passthrough => Action::Record { cassette: None },
                Mode::None | Mode::Auto => {
                    unreachable!("none without a cassette is refused; auto is resolved")
                }
            },
        };
        Decision {
            mode,
            why: why.to_owned(),
            says,
            ordinal: member.map(|m| m.ordinal),
            action,
        }
    }

    /// Why `mode` cannot run as asked, if it cannot.
    fn refusal(&self, mode: Mode, why: &str, says: &'static str, exists: bool) -> Option<Refusal> {
        let replays_only = mode == Mode::None || (mode == Mode::Once && exists);
        if let Some(faults) = &self.faults
            && !replays_only
        {
            return Some(Refusal::FaultsWhileRecording {
                faults: faults.clone(),
                mode,
                says,
            });
        }
        if !replays_only && !self.http && !self.has_command {
            return Some(Refusal::NoCommand { mode });
        }
        if !replays_only && self.http && self.upstream.is_none() {
            return Some(Refusal::NoUpstream { mode });
        }
        if mode == Mode::None && !exists {
            return Some(Refusal::NoCassette {
                cassette: self.cassette.clone(),
                why: why.to_owned(),
            });
        }
        None
    }
}

/// Whether `mode` records, with the cassette there or not.
fn records(mode: Mode, exists: bool) -> bool {
    match mode {
        Mode::All | Mode::Passthrough => true,
        Mode::Once | Mode::NewEpisodes => !exists,
        Mode::None | Mode::Auto => false,
    }
}

/// The project file of a run in `cwd` with `cassette`: the nearest one
/// above the working directory, else the nearest one above the cassette.
///
/// # Errors
///
/// As for [`Project::find`].
pub fn find_project(cwd: &Path, cassette: &Path) -> Result<Option<Project>, ModeError> {
    if let Some(project) = Project::find(cwd)? {
        return Ok(Some(project));
    }
    match cwd.join(cassette).parent() {
        Some(dir) => Project::find(dir),
        None => Ok(None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mode::tests::env;

    /// What `run` does, as a row says it.
    #[derive(Debug, PartialEq)]
    enum Does<'a> {
        Replay,
        AppendNewEpisodes,
        Record(&'a str),
        Forward,
        Refuse(&'static str),
    }

    fn does(action: &Action) -> Does<'_> {
        match action {
            Action::Replay => Does::Replay,
            Action::AppendNewEpisodes => Does::AppendNewEpisodes,
            Action::Record { cassette: None } => Does::Forward,
            Action::Record {
                cassette: Some(path),
            } => Does::Record(path.to_str().unwrap()),
            Action::Refuse(refusal) => Does::Refuse(match refusal {
                Refusal::FaultsWhileRecording { .. } => "faults",
                Refusal::NoCommand { .. } => "no command",
                Refusal::NoUpstream { .. } => "no upstream",
                Refusal::NoCassette { .. } => "no cassette",
            }),
        }
    }

    /// One combination of the inputs, and what it resolves to.
    struct Row {
        /// `--cassette`.
        cassette: &'static str,
        /// `--mode`.
        flag: Option<Mode>,
        /// `--upstream`.
        upstream: Option<&'static str>,
        /// `--listen`.
        listen: Option<&'static str>,
        /// Whether a server command follows `--`.
        command: bool,
        /// `--faults`.
        faults: bool,
        /// The project file at /p/mcpcassette.toml.
        project: Option<&'static str>,
        /// This process's environment.
        env: &'static [(&'static str, &'static str)],
        /// An ancestor's environment.
        ancestor: &'static [(&'static str, &'static str)],
        /// Whether the cassette exists.
        exists: bool,
        /// The scope's member: its ordinal and what the first one decided.
        member: Option<(u32, ScopeAction)>,
        /// The resolved mode.
        mode: Mode,
        /// What it says on stderr.
        says: &'static str,
        /// What it does.
        does: Does<'static>,
        /// The resolved cassette.
        path: &'static str,
        /// Over HTTP, and where it listens.
        http: Option<&'static str>,
    }

    /// The defaults of a row: `run --cassette c.json -- server`, no
    /// project file, an empty environment, no cassette yet.
    const ROW: Row = Row {
        cassette: "c.json",
        flag: None,
        upstream: None,
        listen: None,
        command: true,
        faults: false,
        project: None,
        env: &[],
        ancestor: &[],
        exists: false,
        member: None,
        mode: Mode::Once,
        says: "cassette missing: recording",
        does: Does::Record("c.json"),
        path: "c.json",
        http: None,
    };

    fn run(row: &Row) -> (RunPlan, Decision) {
        let request = RunRequest {
            cassette: PathBuf::from(row.cassette),
            mode: row.flag,
            upstream: row.upstream.map(str::to_owned),
            listen: row.listen.map(|addr| addr.parse().unwrap()),
            has_command: row.command,
            faults: row.faults.then(|| PathBuf::from("f.json")),
            ..RunRequest::default()
        };
        let project = row
            .project
            .map(|text| Project::parse(Path::new("/p/mcpcassette.toml"), text).unwrap());
        let plan = RunPlan::new(&request, project.as_ref(), 7);
        let ancestors = [Ancestor {
            pid: 3,
            name: "node".to_owned(),
            vars: row
                .ancestor
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        }];
        let ancestors: &[Ancestor] = if plan.reads_ancestors() {
            &ancestors
        } else {
            &[]
        };
        let (mode, why) = plan
            .mode(&env(row.env), project.as_ref(), ancestors)
            .unwrap();
        let member = row.member.map(|(ordinal, action)| Member {
            ordinal,
            action,
            recorded_at: String::new(),
        });
        let decision = plan.decide(mode, &why, row.exists, member.as_ref());
        (plan, decision)
    }

    #[test]
    fn what_run_does_table() {
        let table = [
            // Auto outside CI: once, which records a missing cassette...
            ROW,
            // ... and replays one that is there.
            Row {
                exists: true,
                says: "replaying",
                does: Does::Replay,
                ..ROW
            },
            // Auto in CI: none, which replays...
            Row {
                env: &[("CI", "true")],
                exists: true,
                mode: Mode::None,
                says: "replaying",
                does: Does::Replay,
                ..ROW
            },
            // ... and refuses a missing cassette.
            Row {
                env: &[("CI", "true")],
                mode: Mode::None,
                says: "cassette missing",
                does: Does::Refuse("no cassette"),
                ..ROW
            },
            // CI seen only in an ancestor's environment.
            Row {
                ancestor: &[("CI", "1")],
                exists: true,
                mode: Mode::None,
                says: "replaying",
                does: Does::Replay,
                ..ROW
            },
            // Mode none needs no server command.
            Row {
                flag: Some(Mode::None),
                command: false,
                exists: true,
                mode: Mode::None,
                says: "replaying",
                does: Does::Replay,
                ..ROW
            },
            // --mode decides over the environment and the ancestors.
            Row {
                flag: Some(Mode::All),
                env: &[("CI", "true"), ("MCPCASSETTE_MODE", "none")],
                ancestor: &[("MCPCASSETTE_MODE", "none")],
                exists: true,
                mode: Mode::All,
                says: "recording afresh",
                ..ROW
            },
            // MCPCASSETTE_MODE decides over CI detection.
            Row {
                env: &[("CI", "true"), ("MCPCASSETTE_MODE", "new-episodes")],
                exists: true,
                mode: Mode::NewEpisodes,
                says: "replaying, recording what is missing",
                does: Does::AppendNewEpisodes,
                ..ROW
            },
            // An ancestor's MCPCASSETTE_MODE, when ours was stripped.
            Row {
                ancestor: &[("MCPCASSETTE_MODE", "passthrough")],
                exists: true,
                mode: Mode::Passthrough,
                says: "forwarding without recording",
                does: Does::Forward,
                ..ROW
            },
            // New episodes without a cassette record it.
            Row {
                flag: Some(Mode::NewEpisodes),
                mode: Mode::NewEpisodes,
                ..ROW
            },
            // New episodes over HTTP forward to the upstream.
            Row {
                flag: Some(Mode::NewEpisodes),
                upstream: Some("http://127.0.0.1:9/mcp"),
                command: false,
                exists: true,
                mode: Mode::NewEpisodes,
                says: "replaying, recording what is missing",
                does: Does::AppendNewEpisodes,
                http: Some("127.0.0.1:0"),
                ..ROW
            },
            // Recording over HTTP listens where --listen says.
            Row {
                upstream: Some("http://127.0.0.1:9/mcp"),
                listen: Some("127.0.0.1:8080"),
                command: false,
                http: Some("127.0.0.1:8080"),
                ..ROW
            },
            // Replaying over HTTP needs only --listen.
            Row {
                listen: Some("0.0.0.0:7000"),
                command: false,
                exists: true,
                says: "replaying",
                does: Does::Replay,
                http: Some("0.0.0.0:7000"),
                ..ROW
            },
            // Recording over HTTP needs the server's URL...
            Row {
                listen: Some("127.0.0.1:7000"),
                command: false,
                does: Does::Refuse("no upstream"),
                http: Some("127.0.0.1:7000"),
                ..ROW
            },
            // ... and over stdio its command.
            Row {
                command: false,
                does: Does::Refuse("no command"),
                ..ROW
            },
            // Faults while replaying, never while recording.
            Row {
                faults: true,
                exists: true,
                says: "replaying",
                does: Does::Replay,
                ..ROW
            },
            Row {
                faults: true,
                does: Does::Refuse("faults"),
                ..ROW
            },
            Row {
                flag: Some(Mode::All),
                faults: true,
                exists: true,
                mode: Mode::All,
                says: "recording afresh",
                does: Does::Refuse("faults"),
                ..ROW
            },
            // The project file's mode, and its cassette_dir for a relative
            // cassette...
            Row {
                project: Some("mode = \"all\"\ncassette_dir = \"tests/cassettes\"\n"),
                mode: Mode::All,
                says: "recording afresh",
                does: Does::Record("/p/tests/cassettes/c.json"),
                path: "/p/tests/cassettes/c.json",
                ..ROW
            },
            // ... but not for an absolute one.
            Row {
                cassette: "/elsewhere/c.json",
                project: Some("cassette_dir = \"tests/cassettes\"\n"),
                does: Does::Record("/elsewhere/c.json"),
                path: "/elsewhere/c.json",
                ..ROW
            },
            // The environment's mode is above the project file's.
            Row {
                project: Some("mode = \"all\"\n"),
                env: &[("MCPCASSETTE_MODE", "none")],
                exists: true,
                mode: Mode::None,
                says: "replaying",
                does: Does::Replay,
                ..ROW
            },
            // A scope's later process records as its first one decided,
            // though the cassette is there by then...
            Row {
                exists: true,
                member: Some((1, ScopeAction::Record)),
                says: "recording, as the test's first server process decided",
                ..ROW
            },
            // ... and replays as it decided, even before the cassette is.
            Row {
                member: Some((2, ScopeAction::Replay)),
                says: "replaying",
                does: Does::Replay,
                ..ROW
            },
            // Mode none in a recording scope refuses.
            Row {
                env: &[("CI", "1")],
                member: Some((1, ScopeAction::Record)),
                mode: Mode::None,
                says: "recording, as the test's first server process decided",
                does: Does::Refuse("no cassette"),
                ..ROW
            },
        ];
        for (n, row) in table.iter().enumerate() {
            let (plan, decision) = run(row);
            let at = format!("row {n}");
            assert_eq!(decision.mode, row.mode, "{at}");
            assert_eq!(decision.says, row.says, "{at}");
            assert_eq!(does(&decision.action), row.does, "{at}");
            assert_eq!(plan.cassette, Path::new(row.path), "{at}");
            assert_eq!(
                decision.ordinal,
                row.member.map(|(ordinal, _)| ordinal),
                "{at}"
            );
            let http = plan.http.then(|| plan.listen.to_string());
            assert_eq!(http.as_deref(), row.http, "{at}");
            if let Some(upstream) = row.upstream {
                assert_eq!(plan.upstream.as_deref(), Some(upstream), "{at}");
            }
        }
    }

    #[test]
    fn a_scope_records_for_all_when_its_first_process_would() {
        let table = [
            (Mode::Once, false, ScopeAction::Record),
            (Mode::Once, true, ScopeAction::Replay),
            (Mode::NewEpisodes, false, ScopeAction::Record),
            (Mode::NewEpisodes, true, ScopeAction::Replay),
            (Mode::All, true, ScopeAction::Record),
            (Mode::Passthrough, true, ScopeAction::Record),
            (Mode::None, false, ScopeAction::Replay),
        ];
        for (mode, exists, action) in table {
            assert_eq!(
                RunPlan::scope_action(mode, exists),
                action,
                "{mode} {exists}"
            );
        }
    }

    #[test]
    fn project_defaults_sit_under_the_command_line_and_reports_go_to_the_scope() {
        let project = Project::parse(
            Path::new("/p/mcpcassette.toml"),
            "[replay]\nstrategy = \"keyed\"\non_exhausted = \"repeat-last\"\n\
             ignore = [\"/params/a\"]\nfail_on_unused = true\n",
        )
        .unwrap();
        let selector = |s: &str| s.parse::<Selector>().unwrap();
        let given = RunRequest {
            cassette: "c.json".into(),
            scope: Some("/tmp/scope".into()),
            matching: MatchOptions {
                strategy: Some(Strategy::Sequential),
                ignore: vec![selector("/params/b")],
                ..MatchOptions::default()
            },
            ..RunRequest::default()
        };
        let plan = RunPlan::new(&given, Some(&project), 41);
        assert_eq!(
            plan.matching,
            MatchOptions {
                strategy: Some(Strategy::Sequential),
                on_exhausted: Some(OnExhausted::RepeatLast),
                ignore: vec![selector("/params/a"), selector("/params/b")],
                fail_on_unused: true,
            }
        );
        assert_eq!(
            plan.report.as_deref(),
            Some(Path::new("/tmp/scope/pid-41.report.json"))
        );
        // Untouched, and --report over the scope's; no project, no defaults.
        assert_eq!(given.cassette, Path::new("c.json"));
        let given = RunRequest {
            report: Some("r.json".into()),
            ..given
        };
        let plan = RunPlan::new(&given, None, 41);
        assert_eq!(plan.matching, given.matching);
        assert_eq!(plan.report.as_deref(), Some(Path::new("r.json")));
        assert_eq!(plan.asked(), Mode::Auto);
    }

    #[test]
    fn refusals_say_what_to_do() {
        let plan = RunPlan::new(
            &RunRequest {
                cassette: "c.json".into(),
                mode: Some(Mode::None),
                ..RunRequest::default()
            },
            None,
            1,
        );
        let decision = plan.decide(Mode::None, "from --mode", false, None);
        let Action::Refuse(refusal) = decision.action else {
            panic!("{decision:?}");
        };
        assert_eq!(
            refusal.to_string(),
            "c.json: no such cassette, and mode `none` never records (from --mode); record it with --mode once or --mode all"
        );
    }
}
