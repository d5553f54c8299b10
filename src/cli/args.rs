//! Command-line arguments, as clap parses them. Turning them into library
//! configuration happens in the subcommands' modules.

use std::path::PathBuf;

use clap::{ArgMatches, Args, FromArgMatches, Parser, Subcommand};
use mcpcassette::Mode;
use mcpcassette::Selector;
use mcpcassette::cassette::Auth;
use mcpcassette::cassette::{KeyRule, OnExhausted, Strategy};
use mcpcassette::protocol::Era;
use mcpcassette::replay::SessionMode;
use mcpcassette::replay::{CrossEra, Pace};

/// Record and replay Model Context Protocol (MCP) sessions.
#[derive(Debug, Parser)]
#[command(name = "mcpcassette", version, about, long_about = None)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Record or replay as the mode says: the one entry point for tests.
    Run(Deferred<RunArgs>),
    /// Run a stdio MCP server, forward a client's traffic to it unchanged,
    /// and write what passed into a cassette.
    Record(Deferred<RecordArgs>),
    /// Forward a client's traffic to a server unchanged and print each
    /// message as it passes (direction, method, id, size, latency, schema
    /// violations), then a summary.
    Inspect(Deferred<InspectArgs>),
    /// Serve a cassette over stdio as a deterministic MCP server.
    Replay(Deferred<ReplayArgs>),
    /// Serve a fixture (a hand-written MCP server) over stdio, or
    /// Streamable HTTP with --listen.
    Serve(Deferred<ServeArgs>),
    /// Validate cassettes: JSON-RPC envelopes, MCP shapes of the recorded
    /// protocol version, tool arguments, structure and secrets.
    Check(Deferred<CheckArgs>),
    /// Re-run a cassette against the live server and report drift; the
    /// live version is left as CASSETTE.new for `review`.
    Verify(Deferred<VerifyArgs>),
    /// Inventory a live server (tools, resources, templates, prompts) into
    /// a fixture, without calling anything.
    Stub(Deferred<StubArgs>),
    /// Go through pending cassettes (CASSETTE.new) change by change:
    /// accept, reject or skip each.
    Review(Deferred<ReviewArgs>),
    /// Accept every pending change: the pending cassettes replace the
    /// accepted ones.
    Accept(Deferred<PendingArgs>),
    /// Reject every pending change: remove the pending cassettes.
    Reject(Deferred<PendingArgs>),
    /// List pending cassettes and the interactions they change.
    Pending(Deferred<PendingListArgs>),
    /// End a test's scope (`run --scope`): rebuild the cassette from the
    /// journals of killed recorders and print every server process's
    /// report as one JSON document.
    Finish(Deferred<FinishArgs>),
}

/// `mcpcassette finish`.
#[derive(Debug, Args)]
#[command(
    after_help = "Exit status: 0 the scope is finished (read its processes' outcomes in the JSON), 2 it cannot be.

Test-runner integrations call it when a test ends, after its clients closed
their servers: a client that killed its server (SIGKILL) left a journal,
which becomes part of the cassette here, and a process that never wrote
its final report is marked `\"killed\": true`."
)]
pub struct FinishArgs {
    /// The scope folder the test's `run --scope` processes shared.
    #[arg(long, value_name = "DIR")]
    pub scope: PathBuf,
}

/// A subcommand's arguments, built only if that subcommand is the one
/// run (or its help is asked for): clap's derive otherwise builds every
/// subcommand's arguments, help texts and all, on every start, which was
/// 0.23 ms of replay's 1.6 (docs/benchmarks.md).
#[derive(Debug)]
pub struct Deferred<T>(pub T);

impl<T: Args> Deferred<T> {
    /// `augment` on a subcommand that already has its about text (the
    /// variant's doc comment, set after this was deferred), keeping it over
    /// the arguments struct's own, as without deferring.
    fn keeping_about(
        cmd: clap::Command,
        augment: fn(clap::Command) -> clap::Command,
    ) -> clap::Command {
        let about = cmd.get_about().cloned();
        let long_about = cmd.get_long_about().cloned();
        let cmd = augment(cmd);
        let Some(about) = about else { return cmd };
        let cmd = cmd.about(about);
        match long_about {
            Some(long_about) => cmd.long_about(long_about),
            None => cmd.long_about(None::<&str>),
        }
    }
}

impl<T: Args> Args for Deferred<T> {
    fn augment_args(cmd: clap::Command) -> clap::Command {
        cmd.defer(|cmd| Self::keeping_about(cmd, T::augment_args))
    }

    fn augment_args_for_update(cmd: clap::Command) -> clap::Command {
        cmd.defer(|cmd| Self::keeping_about(cmd, T::augment_args_for_update))
    }

    fn group_id() -> Option<clap::Id> {
        T::group_id()
    }
}

impl<T: FromArgMatches> FromArgMatches for Deferred<T> {
    fn from_arg_matches(matches: &ArgMatches) -> Result<Self, clap::Error> {
        T::from_arg_matches(matches).map(Deferred)
    }

    fn from_arg_matches_mut(matches: &mut ArgMatches) -> Result<Self, clap::Error> {
        T::from_arg_matches_mut(matches).map(Deferred)
    }

    fn update_from_arg_matches(&mut self, matches: &ArgMatches) -> Result<(), clap::Error> {
        self.0.update_from_arg_matches(matches)
    }

    fn update_from_arg_matches_mut(&mut self, matches: &mut ArgMatches) -> Result<(), clap::Error> {
        self.0.update_from_arg_matches_mut(matches)
    }
}

/// `mcpcassette check`.
#[derive(Debug, Args)]
#[command(
    after_help = "Exit status: 0 no errors (warnings allowed), 1 some finding is an error, 2 a file cannot be read.
Finding codes are listed in the README (\"Checking cassettes\").

Examples:
  mcpcassette check cassettes/*.json
  mcpcassette check --json --schema ../spec/schema/2025-11-25/schema.json cassettes/demo-legacy.json
  mcpcassette check --format sarif cassettes/*.json > check.sarif
  mcpcassette check --format junit cassettes/*.json > check.xml"
)]
pub struct CheckArgs {
    /// The cassettes (or fixtures) to check.
    #[arg(value_name = "CASSETTE", required = true)]
    pub files: Vec<PathBuf>,
    /// How to print the findings: text, json, sarif (SARIF 2.1.0, for code
    /// scanning) or junit (JUnit XML, a test case per file).
    #[arg(long, value_enum, value_name = "FORMAT", default_value_t = CheckFormat::Text)]
    pub format: CheckFormat,
    /// The same as `--format json`.
    #[arg(long, conflicts_with = "format")]
    pub json: bool,
    /// Also validate every message against this official MCP schema.json.
    #[arg(long, value_name = "FILE")]
    pub schema: Option<PathBuf>,
    /// Also treat the value of this environment variable as a secret;
    /// repeatable.
    #[arg(long, value_name = "NAME")]
    pub redact_env: Vec<String>,
    /// Check this faults file, and list the recorded interactions each of
    /// its rules would hit in each cassette (a dry run: a client asking
    /// what was recorded, in the recorded order).
    #[arg(long, value_name = "FILE")]
    pub faults: Option<PathBuf>,
}

/// `check --format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum CheckFormat {
    /// rustc-style text.
    Text,
    /// One JSON document.
    Json,
    /// SARIF 2.1.0.
    Sarif,
    /// JUnit XML.
    Junit,
}

/// What to keep out of the cassette, beyond what is always masked
/// (credential headers, token shapes, values of secret-looking
/// environment variables). Rules are stored in the cassette, so replay
/// masks live requests the same way before matching.
#[derive(Debug, Clone, Args)]
pub struct RedactArgs {
    /// Mask matches of a regex (`acct-[0-9]+`, or `NAME=regex` for a named
    /// placeholder), or the value at a selector (`/params/arguments/token`,
    /// or `NAME=/selector`); repeatable.
    #[arg(long, value_name = "RULE")]
    pub redact: Vec<mcpcassette::redact::RedactRule>,
    /// Mask the value of this environment variable wherever it appears
    /// (also URL-encoded, JSON-escaped or base64-encoded); repeatable.
    #[arg(long, value_name = "NAME")]
    pub redact_env: Vec<String>,
    /// Do not mask token shapes and secret-looking environment variables
    /// by default (credential headers are still never stored).
    #[arg(long)]
    pub no_default_redaction: bool,
}

/// `mcpcassette record`.
#[derive(Debug, Args)]
#[command(after_help = "Examples:
  mcpcassette record --cassette cassettes/demo.json -- node server.js
  mcpcassette record --cassette cassettes/remote.json --upstream http://127.0.0.1:3001/mcp --listen 127.0.0.1:0")]
pub struct RecordArgs {
    /// The cassette to write (replaced if it exists; its rules are kept).
    #[arg(long, value_name = "PATH")]
    pub cassette: PathBuf,
    /// Refused: faults apply only when replaying (a fault must never
    /// reach a cassette).
    #[arg(long, value_name = "FILE", hide = true)]
    pub faults: Option<PathBuf>,
    /// Record a Streamable HTTP server at this URL, as a reverse proxy.
    /// `https://` needs a build with the `tls` feature, which trusts the
    /// system's root certificates and those in the PEM file named by
    /// MCPCASSETTE_CA_FILE.
    #[arg(long, value_name = "URL", conflicts_with = "command")]
    pub upstream: Option<String>,
    /// Where the HTTP proxy listens; the URL is printed on stdout.
    #[arg(
        value_parser = listen_addr,
        long,
        value_name = "ADDR",
        default_value = "127.0.0.1:0",
        requires = "upstream"
    )]
    pub listen: std::net::SocketAddr,
    /// What to mask before anything reaches the disk.
    #[command(flatten)]
    pub redaction: RedactArgs,
    /// Credentials for the upstream.
    #[command(flatten)]
    pub credentials: UpstreamCredentialArgs,
    /// The stdio server command and its arguments.
    #[arg(
        last = true,
        value_name = "SERVER CMD",
        required_unless_present = "upstream"
    )]
    pub command: Vec<String>,
}

/// Credentials the recorder sends the upstream itself: the client never
/// sees them, and their values are masked everywhere.
#[derive(Debug, Clone, Args)]
pub struct UpstreamCredentialArgs {
    /// Add `NAME: VALUE` to every request to the upstream (repeatable),
    /// replacing a header of that name from the client.
    #[arg(long = "header", value_name = "NAME: VALUE", requires = "upstream")]
    pub headers: Vec<String>,
    /// Send `Authorization: Bearer $VAR` to the upstream.
    #[arg(long, value_name = "VAR", requires = "upstream")]
    pub bearer_env: Option<String>,
}

/// `mcpcassette inspect`.
#[derive(Debug, Args)]
#[command(
    after_help = "Each message is one line on stderr: → client to server, ← server to client; the method (or \"response to METHOD\"), the id, the size in bytes and, for a response, the time since its request. Messages that break the MCP schema of the session's protocol version are flagged with `mcpcassette check`'s codes. The summary (per method: count, errors, latency mean/p50/p99 in ms; totals; schema violations) is printed on stderr when the server exits (stdio) or on SIGINT/SIGTERM (HTTP).
Traffic is forwarded byte for byte; over HTTP, Accept-Encoding is dropped so that answers can be read. Everything printed or logged is masked like cassettes.
A stdio inspection exits with the server's status.

Examples:
  mcpcassette inspect -- node server.js
  mcpcassette inspect --log target/mcp.jsonl -- npx -y @modelcontextprotocol/server-everything
  mcpcassette inspect --upstream http://127.0.0.1:3001/mcp --listen 127.0.0.1:0"
)]
pub struct InspectArgs {
    /// Write each message to FILE as one JSON object per line instead of
    /// printing it: {"t_ms", "dir": "c2s"|"s2c", "kind":
    /// "request"|"notification"|"response"|"error"|"invalid", "method",
    /// "id", "bytes", "latency_ms"?, "violations"?: [{code, pointer,
    /// message}]}. Metadata only: never params or results (a violation's
    /// message may quote the offending value, shortened and masked).
    /// Violations and the summary still go to stderr.
    #[arg(long, value_name = "FILE")]
    pub log: Option<PathBuf>,
    /// Inspect a Streamable HTTP server at this URL, as a reverse proxy.
    /// `https://` needs a build with the `tls` feature.
    #[arg(long, value_name = "URL", conflicts_with = "command")]
    pub upstream: Option<String>,
    /// Where the HTTP proxy listens; the URL is printed on stdout.
    #[arg(
        value_parser = listen_addr,
        long,
        value_name = "ADDR",
        default_value = "127.0.0.1:0",
        requires = "upstream"
    )]
    pub listen: std::net::SocketAddr,
    /// The stdio server command and its arguments.
    #[arg(
        last = true,
        value_name = "SERVER CMD",
        required_unless_present = "upstream"
    )]
    pub command: Vec<String>,
}

/// `mcpcassette replay`.
#[derive(Debug, Args)]
#[command(
    after_help = "Exit status: 0 all requests answered, 1 some request unmatched (or, with --fail-on-unused, some interaction unused), 2 error."
)]
pub struct ReplayArgs {
    /// The cassette to serve.
    #[arg(value_name = "CASSETTE")]
    pub cassette: PathBuf,
    /// Serve Streamable HTTP on this address instead of stdio; the URL is
    /// printed on stdout.
    #[arg(value_parser = listen_addr, long, value_name = "ADDR")]
    pub listen: Option<std::net::SocketAddr>,
    /// Timing of server messages: as fast as possible, or as recorded (the
    /// delays between SSE events over HTTP; between notifications, server
    /// requests and the response over stdio).
    #[arg(long, value_enum, default_value_t = Pace::Fast)]
    pub pace: Pace,
    /// How requests are matched.
    #[command(flatten)]
    pub matching: MatchArgs,
}

/// `mcpcassette run`.
#[derive(Debug, Args)]
#[command(after_help = "Modes:
  auto          none when CI is detected (CI set and not empty/0/false, or TF_BUILD set), else once
  once          record when the cassette is missing, else replay
  new-episodes  replay what matches; forward misses to the server and append them
  all           record afresh
  none          replay only, never start the server (a missing cassette is an error)
  passthrough   proxy to the server without recording

Where the mode comes from, first found wins (stderr says which):
  --mode; MCPCASSETTE_MODE; MCPCASSETTE_MODE of the nearest ancestor process that has it (Linux);
  `mode` in mcpcassette.toml (searched from the working directory up, then from the cassette's directory up);
  auto, with CI detected from this process's environment, or else from the nearest ancestor that sets CI or TF_BUILD.
MCP clients (the TypeScript and Python SDKs, fastmcp, the Inspector) start servers with a reduced
environment: pass --mode in the server's arguments, or put `mode` in mcpcassette.toml.

Over Streamable HTTP (--upstream or --listen), recording runs the proxy of `record --upstream` and
replaying the server of `replay --listen`; either prints its URL on stdout and stops on SIGINT/SIGTERM.

Examples:
  mcpcassette run --mode none --cassette tests/github.json -- npx server-github
  MCPCASSETTE_MODE=all mcpcassette run --cassette tests/github.json -- npx server-github
  mcpcassette run --cassette tests/remote.json --upstream http://127.0.0.1:3001/mcp --listen 127.0.0.1:0")]
pub struct RunArgs {
    /// The cassette to replay or record (relative to `cassette_dir` when
    /// mcpcassette.toml sets one).
    #[arg(long, value_name = "PATH")]
    pub cassette: PathBuf,
    /// The record mode (default: MCPCASSETTE_MODE, an ancestor process's
    /// MCPCASSETTE_MODE, mcpcassette.toml's `mode`, then auto).
    #[arg(long, value_enum)]
    pub mode: Option<Mode>,
    /// Record (pass through to, or forward new episodes to) the Streamable
    /// HTTP server at this URL.
    #[arg(long, value_name = "URL", conflicts_with = "command")]
    pub upstream: Option<String>,
    /// Serve Streamable HTTP on this address (the recording proxy, or the
    /// replay); the URL is printed on stdout. Default with --upstream:
    /// 127.0.0.1:0.
    #[arg(value_parser = listen_addr, long, value_name = "ADDR")]
    pub listen: Option<std::net::SocketAddr>,
    /// How requests are matched when replaying.
    #[command(flatten)]
    pub matching: MatchArgs,
    /// What to mask when recording.
    #[command(flatten)]
    pub redaction: RedactArgs,
    /// A folder shared by every server process one test starts (a test
    /// runner integration makes one per test and cassette): the processes
    /// record into one cassette, each as a process of its own, or replay
    /// it, each playing the recorded process that answers what it asks.
    /// Each writes its report there; `mcpcassette finish` ends it.
    #[arg(long, value_name = "DIR", conflicts_with = "upstream")]
    pub scope: Option<PathBuf>,
    /// The stdio server command and its arguments (not needed in mode
    /// `none`, nor over HTTP).
    #[arg(last = true, value_name = "SERVER CMD")]
    pub command: Vec<String>,
}

/// Matching and reporting options shared by `replay` and `run`. They
/// override the rules stored in the cassette.
#[derive(Debug, Clone, Args)]
pub struct MatchArgs {
    /// Rules from a JSON file, replacing the cassette's own.
    #[arg(long, value_name = "FILE")]
    pub rules: Option<PathBuf>,
    /// Pairing strategy.
    #[arg(long, value_enum)]
    pub strategy: Option<Strategy>,
    /// What to do when a request's recorded answers run out.
    #[arg(long, value_enum)]
    pub on_exhausted: Option<OnExhausted>,
    /// Leave a part of requests out of matching (a JSON pointer with `*`
    /// and `**` wildcards, e.g. /params/arguments/timestamp); repeatable.
    #[arg(long, value_name = "SELECTOR")]
    pub ignore: Vec<Selector>,
    /// Match a method on these parts only, e.g.
    /// tools/call=/params/name,/params/arguments; repeatable.
    #[arg(long, value_name = "METHOD=SELECTOR,...", value_parser = key_rule)]
    pub key: Vec<KeyRule>,
    /// Write a JSON report of unmatched requests and unused interactions.
    #[arg(long, value_name = "PATH")]
    pub report: Option<PathBuf>,
    /// Exit with status 1 when recorded interactions were never used.
    #[arg(long)]
    pub fail_on_unused: bool,
    /// Over HTTP: each client session (legacy: `initialize`; modern:
    /// `server/discover`) replays the cassette from the top (isolated), or
    /// all sessions draw from one set of answers (shared).
    #[arg(long, value_enum, default_value_t = SessionMode::Isolated)]
    pub sessions: SessionMode,
    /// Over HTTP: answer any request (none), only those with some
    /// `Authorization: Bearer` token (bearer), or only those with a token
    /// from replay's own OAuth authorization server (oauth). Default: the
    /// cassette's `rules.auth`, else none.
    #[arg(long, value_enum, value_name = "none|bearer|oauth")]
    pub auth: Option<Auth>,
    /// Answer clients of the other protocol era too (auto: a legacy
    /// cassette answers 2026-07-28 clients and the other way round), or
    /// only as the recorded server would have (off).
    #[arg(long, value_enum, default_value_t = CrossEra::Auto)]
    pub cross_era: CrossEra,
    /// Make the replayed server misbehave as this faults file says
    /// (errors, delays, hangs, hang-ups, HTTP statuses, changed lists;
    /// docs/faults.md), after the cassette's own `rules.faults`. Only when
    /// replaying: a recording refuses it.
    #[arg(long, value_name = "FILE")]
    pub faults: Option<PathBuf>,
}

/// `mcpcassette serve`.
#[derive(Debug, Args)]
#[command(
    after_help = "Exit status: 0 served until the client left (or SIGINT/SIGTERM with --listen), 2 error (e.g. an invalid fixture).

Examples:
  mcpcassette serve tests/weather.fixture.json
  mcpcassette serve tests/weather.fixture.json --listen 127.0.0.1:8080 --log calls.jsonl"
)]
pub struct ServeArgs {
    /// The fixture to serve (docs/fixture-format.md).
    #[arg(value_name = "FIXTURE")]
    pub fixture: PathBuf,
    /// Serve Streamable HTTP on this address instead of stdio; the URL is
    /// printed on stdout.
    #[arg(long, value_name = "ADDR", value_parser = listen_addr)]
    pub listen: Option<std::net::SocketAddr>,
    /// Append one JSON line per call (seq, method, params, outcome,
    /// duration_ms) to this file. Off by default: the log holds whatever
    /// clients send, secrets included, unmasked.
    #[arg(long, value_name = "FILE")]
    pub log: Option<PathBuf>,
    /// Make the server misbehave as this faults file says
    /// (docs/faults.md), after the fixture's own `rules.faults`.
    #[arg(long, value_name = "FILE")]
    pub faults: Option<PathBuf>,
}

/// `mcpcassette verify`.
#[derive(Debug, Args)]
#[command(after_help = "Exit status: 0 no drift, 1 drift, 2 error.
MCPCASSETTE_UPDATE=auto|new|always|no says what to write on drift (insta's semantics): new writes CASSETTE.new for review, always overwrites the cassette, no writes nothing; auto is no in CI, new elsewhere.

Examples:
  mcpcassette verify cassettes/demo-legacy.json
  mcpcassette verify cassettes/github.json -- npx -y @modelcontextprotocol/server-github
  mcpcassette verify cassettes/remote.json --url http://127.0.0.1:3001/mcp")]
pub struct VerifyArgs {
    /// The accepted cassette.
    #[arg(value_name = "CASSETTE")]
    pub cassette: PathBuf,
    /// Verify against the Streamable HTTP server at this URL (default for
    /// a cassette recorded over Streamable HTTP: its recorded URL).
    #[arg(long, value_name = "URL", conflicts_with = "command")]
    pub url: Option<String>,
    /// Write pending cassettes under this directory instead of beside the
    /// accepted one.
    #[arg(long, value_name = "DIR")]
    pub pending_dir: Option<PathBuf>,
    /// Print the drift report as JSON.
    #[arg(long)]
    pub json: bool,
    /// Seconds to wait for each response.
    #[arg(long, value_name = "SECS", default_value_t = 30)]
    pub timeout: u64,
    /// The stdio server command (default: the one recorded in the cassette).
    #[arg(last = true, value_name = "SERVER CMD")]
    pub command: Vec<String>,
}

/// `mcpcassette review`.
#[derive(Debug, Args)]
#[command(
    after_help = "Keys: a or Enter accept, r or Esc reject, s or Space skip, A/R/S accept/reject/skip all remaining in this cassette, d show or hide the diff, q quit (skip the rest).
Skipped changes stay in CASSETTE.new. Without a terminal nothing is changed; use `accept` or `reject` instead.

Examples:
  mcpcassette review
  mcpcassette review cassettes/ --pending-dir target/pending"
)]
pub struct ReviewArgs {
    /// Cassettes, pending cassettes or directories to look in (default:
    /// the current directory).
    #[arg(value_name = "PATH")]
    pub paths: Vec<PathBuf>,
    /// Look for pending cassettes under this directory instead of beside
    /// the accepted ones.
    #[arg(long, value_name = "DIR")]
    pub pending_dir: Option<PathBuf>,
}

/// `mcpcassette accept` and `mcpcassette reject`.
#[derive(Debug, Args)]
pub struct PendingArgs {
    /// Cassettes, pending cassettes or directories to look in (default:
    /// the current directory).
    #[arg(value_name = "PATH")]
    pub paths: Vec<PathBuf>,
    /// Look for pending cassettes under this directory instead of beside
    /// the accepted ones.
    #[arg(long, value_name = "DIR")]
    pub pending_dir: Option<PathBuf>,
}

/// `mcpcassette pending`.
#[derive(Debug, Args)]
pub struct PendingListArgs {
    /// Cassettes, pending cassettes or directories to look in (default:
    /// the current directory).
    #[arg(value_name = "PATH")]
    pub paths: Vec<PathBuf>,
    /// Look for pending cassettes under this directory instead of beside
    /// the accepted ones.
    #[arg(long, value_name = "DIR")]
    pub pending_dir: Option<PathBuf>,
    /// Print the list as JSON: `[{accepted, pending, changes: [{index, label}]}]`.
    #[arg(long)]
    pub json: bool,
}

/// `mcpcassette stub`.
#[derive(Debug, Args)]
#[command(
    after_help = "No tool is ever called: the stub lists definitions only, and every call to the fixture gets a generated result until you write `cases` or a `result` (docs/fixture-format.md).
Exit status: 0 written, 2 error.

Examples:
  mcpcassette stub -o fixtures/github.json -- npx -y @modelcontextprotocol/server-github
  mcpcassette stub --url http://127.0.0.1:3001/mcp --era modern > fixture.json"
)]
pub struct StubArgs {
    /// Write the fixture to this file (default: stdout).
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Inventory the Streamable HTTP server at this URL.
    #[arg(long, value_name = "URL", conflicts_with = "command")]
    pub url: Option<String>,
    /// The handshake: legacy (`initialize`, 2025-11-25) or modern
    /// (`server/discover` and per-request `_meta`, 2026-07-28).
    #[arg(long, value_enum, default_value_t = Era::Legacy)]
    pub era: Era,
    /// Seconds to wait for each response.
    #[arg(long, value_name = "SECS", default_value_t = 30)]
    pub timeout: u64,
    /// The stdio server command and its arguments.
    #[arg(last = true, value_name = "SERVER CMD")]
    pub command: Vec<String>,
}

/// A `--key` rule. clap shows a parser's error by its message alone, so
/// the error is said here with its cause (the selector's problem).
pub fn key_rule(text: &str) -> Result<KeyRule, String> {
    text.parse::<KeyRule>()
        .map_err(|e| mcpcassette::cli_support::chain(&e))
}

/// A `--listen` address: `IP:PORT`, or `localhost:PORT`, which is the
/// IPv4 loopback (no name is looked up: replay opens nothing outward).
pub fn listen_addr(text: &str) -> Result<std::net::SocketAddr, String> {
    if let Ok(addr) = text.parse() {
        return Ok(addr);
    }
    if let Some(port) = text.strip_prefix("localhost:") {
        let port: u16 = port
            .parse()
            .map_err(|_| format!("`{port}` is not a port number (0 picks a free one)"))?;
        return Ok(std::net::SocketAddr::from(([127, 0, 0, 1], port)));
    }
    Err(format!(
        "expected IP:PORT or localhost:PORT (like 127.0.0.1:0, [::1]:8080), found `{text}`"
    ))
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    use super::*;

    /// Deferring a subcommand's arguments changes when they are built, not
    /// what its help says: the about line of the listing, then every
    /// argument.
    #[test]
    fn deferred_subcommands_keep_their_about_and_arguments() {
        let listed: Vec<(String, String)> = Cli::command()
            .get_subcommands()
            .map(|sub| {
                let about = sub.get_about().expect("every subcommand has one");
                (sub.get_name().to_owned(), about.to_string())
            })
            .collect();
        assert!(listed.len() >= 12, "{listed:?}");
        let mut built = Cli::command();
        built.build();
        for (name, about) in &listed {
            let sub = built.find_subcommand(name).unwrap();
            assert_eq!(
                sub.get_about().map(ToString::to_string).as_ref(),
                Some(about)
            );
            // More than the `--help` clap adds to every subcommand.
            assert!(sub.get_arguments().count() > 1, "{name} has no arguments");
            let help = Cli::try_parse_from(["mcpcassette", name.as_str(), "--help"])
                .unwrap_err()
                .to_string();
            // Wrapped to the terminal's width.
            let words = |text: &str| text.split_whitespace().collect::<Vec<_>>().join(" ");
            assert!(words(&help).starts_with(&words(about)), "{name}:\n{help}");
        }
    }

    #[test]
    fn a_deferred_subcommand_parses_its_arguments() {
        let cli = Cli::try_parse_from(["mcpcassette", "replay", "--fail-on-unused", "c.json"]);
        match cli.unwrap().command {
            Command::Replay(args) => {
                assert_eq!(args.0.cassette, PathBuf::from("c.json"));
                assert!(args.0.matching.fail_on_unused);
            }
            other => panic!("{other:?}"),
        }
        let error = Cli::try_parse_from(["mcpcassette", "replay", "--nope", "c.json"]).unwrap_err();
        assert_eq!(error.kind(), clap::error::ErrorKind::UnknownArgument);
    }
}
