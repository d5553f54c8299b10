//! Throughput and latency of mcpcassette over Streamable HTTP, measured in
//! one run against every target with the same client: the live example
//! server (`rmcp_http_server`), `mcpcassette record` in front of it, and
//! `mcpcassette replay` of a cassette recorded through that proxy. Two
//! baselines run in the same binary, re-executed: a bare HTTP relay in front
//! of the live server (`--relay`), what any reverse proxy costs, which
//! record is held to; and a minimal HTTP echo server (`--floor-server`), the
//! floor replay is held to. The report ends in a table of targets.
//!
//! Run it with `cargo bench --bench http` (`-- --quick` for a smoke run);
//! docs/benchmarks.md ("Streamable HTTP") explains every figure. Everything
//! listens on 127.0.0.1 and every child process is stopped when the bench
//! ends, fails or panics.

mod common;

use common::cpu;

use std::fs::File;
use std::io::{self, BufRead, BufReader};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdout, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::thread;
use std::time::{Duration, Instant};

use bytes::Bytes;
use http::header::{self, HeaderValue};
use http::{Request, StatusCode, Uri};
use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use nix::sys::prctl::set_pdeathsig;
use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;
use serde::Deserialize;
use serde_json::{Value, json};

/// The protocol version of every session (legacy era: `initialize`, sessions).
const VERSION: &str = "2025-11-25";
/// Makes the bench binary a bare HTTP relay to the URL after it.
const RELAY_FLAG: &str = "--relay";
/// Makes the bench binary the floor: a minimal HTTP echo server.
const FLOOR_FLAG: &str = "--floor-server";
/// Runs every measurement with tiny counts: a smoke test that the bench
/// still works (CI), whose figures mean nothing.
const QUICK_FLAG: &str = "--quick";

/// How much is measured: the full run, or `--quick`.
struct Plan {
    /// Each configuration is measured this many times, interleaved.
    rounds: usize,
    /// One request in flight: warm-up, then measured, per session.
    serial: Load,
    /// 64 requests in flight (64 client tasks): warm-up, then measured.
    concurrent: Load,
    /// Lengths of the long recordings whose peak memory is measured.
    recordings: &'static [usize],
}

const FULL: Plan = Plan {
    rounds: 3,
    serial: Load {
        depth: 1,
        warmup: 200,
        measured: 2_000,
    },
    concurrent: Load {
        depth: 64,
        warmup: 2_000,
        measured: 20_000,
    },
    recordings: &[10_000, 100_000],
};

const QUICK: Plan = Plan {
    rounds: 1,
    serial: Load {
        depth: 1,
        warmup: 10,
        measured: 100,
    },
    concurrent: Load {
        depth: 64,
        warmup: 100,
        measured: 1_000,
    },
    recordings: &[1_000],
};

static PLAN: OnceLock<&'static Plan> = OnceLock::new();

fn plan() -> &'static Plan {
    PLAN.get().copied().unwrap_or(&FULL)
}

fn quick() -> bool {
    std::ptr::eq(plan(), &QUICK)
}

/// A warm-up phase stops sending after this long, whatever its count.
const WARMUP_LIMIT: Duration = Duration::from_millis(1_500);
/// A measured phase stops sending after this long; the report flags it.
/// Counts, not this, end every phase on a healthy target (the slowest,
/// record at 64 in flight, needs about 2 s on 2 cores).
const MEASURE_LIMIT: Duration = Duration::from_secs(6);
/// The recording of the replayed cassette stops after this long; replay
/// sessions then send no more calls than it holds.
const RECORDING_LIMIT: Duration = Duration::from_secs(20);
/// A long recording stops sending after this long; the report flags it.
const LONG_RECORDING_LIMIT: Duration = Duration::from_secs(240);
/// The whole bench gives up after this long.
const DEADLINE: Duration = Duration::from_secs(900);
/// How long a child gets to exit once signalled.
const STOP_TIMEOUT: Duration = Duration::from_secs(60);
/// How much of a failed child's stderr an error quotes, in characters.
const STDERR_TAIL: usize = 2_000;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Some(at) = args.iter().position(|a| a == common::MEASURE_FLAG) {
        return helper("launcher", common::launch(&args[at + 1..]));
    }
    if let Some(at) = args.iter().position(|a| a == RELAY_FLAG) {
        let upstream = args.get(at + 1).map_or("", String::as_str);
        return helper("relay", relay::serve(upstream));
    }
    if args.iter().any(|a| a == FLOOR_FLAG) {
        return helper("floor server", floor::serve());
    }
    if !args.iter().any(|a| a == "--bench") {
        // `cargo test --all-targets` runs bench binaries without `--bench`.
        println!("http: skipped; run it with `cargo bench --bench http`");
        return;
    }
    let _ = PLAN.set(if args.iter().any(|a| a == QUICK_FLAG) {
        &QUICK
    } else {
        &FULL
    });
    watchdog(DEADLINE);
    if let Err(e) = run() {
        eprintln!("http bench failed: {e}");
        std::process::exit(1);
    }
}

/// Ends a helper process, reporting its failure.
fn helper(name: &str, outcome: io::Result<()>) {
    if let Err(e) = outcome {
        eprintln!("{name}: {e}");
        std::process::exit(1);
    }
}

fn run() -> io::Result<()> {
    let env = Env::prepare()?;
    let started = Instant::now();
    progress("recording the cassette replay will serve");
    let cassette = record_cassette(&env)?;
    progress("comparing live, bare relay, record, floor and replay");
    let comparison = compare(&env, &cassette)?;
    progress("recording long sessions for the recorder's peak memory");
    let recordings = recording_memory(&env)?;
    let report = Report {
        cassette,
        comparison,
        recordings,
    };
    println!("{}", report.markdown(started.elapsed()));
    Ok(())
}

fn progress(what: &str) {
    eprintln!("[http] {what}…");
}

// ---------------------------------------------------------------------------
// Children: started with a guard, stopped by signal, killed on any exit
// ---------------------------------------------------------------------------

/// Pids of running children, for the watchdog to kill before it exits.
static CHILDREN: Mutex<Vec<u32>> = Mutex::new(Vec::new());

fn children() -> std::sync::MutexGuard<'static, Vec<u32>> {
    CHILDREN
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Ends the process if the bench hangs, killing its children first.
fn watchdog(limit: Duration) {
    thread::spawn(move || {
        thread::sleep(limit);
        eprintln!("http bench: no result after {limit:?}, giving up");
        for &pid in children().iter() {
            let _ = kill(Pid::from_raw(pid as i32), Signal::SIGKILL);
        }
        std::process::exit(2);
    });
}

/// A child process serving HTTP. Dropping it kills the child unless it has
/// already been stopped, so no early return or panic leaves one behind.
struct Server {
    name: &'static str,
    child: Child,
    /// Its stderr, quoted when it fails.
    stderr: PathBuf,
    /// Kept open: a closed pipe would turn a later print into EPIPE.
    stdout: BufReader<ChildStdout>,
    /// The URL it printed as the first line of stdout.
    url: String,
}

impl Server {
    /// Spawns `command` and reads the URL it prints once it listens.
    fn spawn(name: &'static str, mut command: Command, stderr: PathBuf) -> io::Result<Self> {
        command
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(File::create(&stderr)?)
            .env("MCPCASSETTE_LOG", "warn");
        // SAFETY: only an async-signal-safe system call runs in the child.
        unsafe {
            // Dies with the bench, however the bench ends (even SIGKILL).
            command.pre_exec(|| Ok(set_pdeathsig(Signal::SIGKILL)?));
        }
        let mut child = command.spawn()?;
        children().push(child.id());
        let stdout = BufReader::new(child.stdout.take().expect("piped"));
        let mut server = Server {
            name,
            child,
            stderr,
            stdout,
            url: String::new(),
        };
        let mut line = String::new();
        server.stdout.read_line(&mut line)?;
        let url = line.trim();
        if !url.starts_with("http://127.0.0.1:") {
            return Err(server.failure(format!("printed {url:?} instead of its URL")));
        }
        server.url = url.to_owned();
        Ok(server)
    }

    /// Sends `signal`, waits for the exit and checks it was clean.
    fn stop(mut self, signal: Signal) -> io::Result<()> {
        kill(Pid::from_raw(self.child.id() as i32), signal).map_err(io::Error::other)?;
        let status = self.wait(STOP_TIMEOUT)?;
        if !status.success() {
            return Err(self.failure(format!("exited with {status}")));
        }
        Ok(())
    }

    fn wait(&mut self, limit: Duration) -> io::Result<ExitStatus> {
        let deadline = Instant::now() + limit;
        loop {
            if let Some(status) = self.child.try_wait()? {
                return Ok(status);
            }
            if Instant::now() > deadline {
                return Err(self.failure(format!("still running {limit:?} after the signal")));
            }
            thread::sleep(Duration::from_millis(5));
        }
    }

    /// An error quoting the end of the child's stderr (the scratch folder
    /// that holds it is deleted when the bench stops).
    fn failure(&self, what: impl std::fmt::Display) -> io::Error {
        failure(self.name, &self.stderr, what)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
        let id = self.child.id();
        children().retain(|&pid| pid != id);
    }
}

fn failure(name: &str, stderr: &Path, what: impl std::fmt::Display) -> io::Error {
    let log = std::fs::read_to_string(stderr).unwrap_or_default();
    let start = log
        .char_indices()
        .rev()
        .nth(STDERR_TAIL)
        .map_or(0, |(i, _)| i);
    let tail = &log[start..];
    io::Error::other(format!("{name} {what}; its stderr ends with:\n{tail}"))
}

// ---------------------------------------------------------------------------
// Environment: binaries and scratch space
// ---------------------------------------------------------------------------

/// Paths to everything the bench runs, and a scratch folder.
struct Env {
    /// This binary, which is also the bare relay and the floor server.
    this_exe: PathBuf,
    mcpcassette: PathBuf,
    live_server: PathBuf,
    scratch: common::Scratch,
}

impl Env {
    /// Builds the binaries and examples with this bench's own profile
    /// (same output folder, so nothing is built twice) and finds them.
    fn prepare() -> io::Result<Self> {
        progress(&format!(
            "building binaries and examples (cargo build --profile {} --bins --examples)",
            common::PROFILE
        ));
        let (mcpcassette, live_server) = common::build("rmcp_http_server")?;
        Ok(Env {
            this_exe: std::env::current_exe()?,
            mcpcassette,
            live_server,
            scratch: common::Scratch::new()?,
        })
    }

    /// A fresh path in the scratch folder.
    fn scratch_file(&self, stem: &str, ext: &str) -> PathBuf {
        self.scratch.file(stem, ext)
    }

    /// The live server, on a free port.
    fn live(&self) -> io::Result<Server> {
        let mut command = Command::new(&self.live_server);
        command.arg("0");
        Server::spawn(
            "rmcp_http_server",
            command,
            self.scratch_file("live", "log"),
        )
    }

    /// The bare relay in front of `upstream`.
    fn relay(&self, upstream: &Server) -> io::Result<Server> {
        let mut command = Command::new(&self.this_exe);
        command.arg(RELAY_FLAG).arg(&upstream.url);
        Server::spawn("bare relay", command, self.scratch_file("relay", "log"))
    }

    /// The floor: this binary as a minimal HTTP echo server.
    fn floor(&self) -> io::Result<Server> {
        let mut command = Command::new(&self.this_exe);
        command.arg(FLOOR_FLAG);
        Server::spawn("floor server", command, self.scratch_file("floor", "log"))
    }

    /// `mcpcassette record` in front of `upstream`, writing `cassette`.
    fn record(&self, upstream: &Server, cassette: &Path) -> io::Result<Server> {
        Server::spawn(
            "mcpcassette record",
            self.record_command(upstream, cassette),
            self.scratch_file("record", "log"),
        )
    }

    /// [`record`](Self::record) through a launcher that writes what its
    /// life cost to `report` (see [`common::measured`]).
    fn record_measured(
        &self,
        upstream: &Server,
        cassette: &Path,
        report: &Path,
    ) -> io::Result<Server> {
        Server::spawn(
            "mcpcassette record",
            common::measured(&self.record_command(upstream, cassette), report)?,
            self.scratch_file("record", "log"),
        )
    }

    fn record_command(&self, upstream: &Server, cassette: &Path) -> Command {
        let mut command = Command::new(&self.mcpcassette);
        command.arg("record").arg("--cassette").arg(cassette).args([
            "--upstream",
            &upstream.url,
            "--listen",
            "127.0.0.1:0",
        ]);
        command
    }

    /// `mcpcassette replay` of `cassette`.
    fn replay(&self, cassette: &Path) -> io::Result<Server> {
        let mut command = Command::new(&self.mcpcassette);
        command
            .arg("replay")
            .arg(cassette)
            .args(["--listen", "127.0.0.1:0"]);
        Server::spawn(
            "mcpcassette replay",
            command,
            self.scratch_file("replay", "log"),
        )
    }

    /// Starts `target`: the processes, front last, and the front's URL.
    fn start(&self, target: &Target) -> io::Result<Running> {
        let servers = match target {
            Target::Live => vec![self.live()?],
            Target::Relay => {
                let live = self.live()?;
                let relay = self.relay(&live)?;
                vec![live, relay]
            }
            Target::Record => {
                let live = self.live()?;
                let record = self.record(&live, &self.scratch_file("recorded", "json"))?;
                vec![live, record]
            }
            Target::Floor => vec![self.floor()?],
            Target::Replay(cassette) => vec![self.replay(cassette)?],
        };
        Ok(Running { servers })
    }
}

/// The processes of one target.
struct Running {
    servers: Vec<Server>,
}

impl Running {
    fn url(&self) -> &str {
        &self.servers.last().expect("a target runs something").url
    }

    /// Stops the front first (record writes its cassette), then the rest;
    /// every one must exit cleanly (replay: every request was answered).
    fn stop(mut self) -> io::Result<()> {
        while let Some(server) = self.servers.pop() {
            server.stop(Signal::SIGINT)?;
        }
        Ok(())
    }
}

/// What the client talks to.
enum Target {
    /// `rmcp_http_server`, directly.
    Live,
    /// The bare relay in front of a live server: bytes passed through,
    /// nothing parsed or written down.
    Relay,
    /// `mcpcassette record --upstream <live>` in front of a live server.
    Record,
    /// The floor: the least an HTTP MCP server can do (parse the body,
    /// answer), as replay's baseline.
    Floor,
    /// `mcpcassette replay <cassette> --listen`.
    Replay(PathBuf),
}

/// The name of every replay target.
const REPLAY: &str = "replay";

impl Target {
    fn name(&self) -> &'static str {
        match self {
            Target::Live => "live (rmcp_http_server)",
            Target::Relay => "bare relay → live",
            Target::Record => "record → live",
            Target::Floor => "floor (HTTP echo server)",
            Target::Replay(_) => REPLAY,
        }
    }
}

// ---------------------------------------------------------------------------
// The client: one legacy MCP session over keep-alive connections
// ---------------------------------------------------------------------------

/// A JSON-RPC answer, read far enough to check an echo.
#[derive(Deserialize)]
struct Reply {
    id: Option<u64>,
    result: Option<ReplyResult>,
    error: Option<Value>,
}

#[derive(Deserialize)]
struct ReplyResult {
    #[serde(default)]
    content: Vec<Text>,
}

#[derive(Deserialize)]
struct Text {
    #[serde(default)]
    text: String,
}

/// One MCP session; clones share the connection pool and the session.
#[derive(Clone)]
struct Mcp {
    client: Client<HttpConnector, Full<Bytes>>,
    uri: Uri,
    session: Option<HeaderValue>,
}

impl Mcp {
    fn new(url: &str) -> io::Result<Self> {
        let mut connector = HttpConnector::new();
        connector.set_nodelay(true);
        let client = Client::builder(TokioExecutor::new()).build(connector);
        Ok(Mcp {
            client,
            uri: url.parse().map_err(io::Error::other)?,
            session: None,
        })
    }

    /// POSTs one message; returns the status, and the JSON-RPC messages of
    /// the answer (a JSON body, or the `data` of each SSE event).
    async fn post(
        &self,
        body: String,
    ) -> io::Result<(StatusCode, Option<HeaderValue>, Vec<Reply>)> {
        let mut request = Request::post(self.uri.clone())
            .header(header::CONTENT_TYPE, "application/json")
            .header(header::ACCEPT, "application/json, text/event-stream");
        if let Some(session) = &self.session {
            request = request
                .header("mcp-session-id", session.clone())
                .header("mcp-protocol-version", VERSION);
        }
        let request = request
            .body(Full::new(Bytes::from(body)))
            .map_err(io::Error::other)?;
        let response = self
            .client
            .request(request)
            .await
            .map_err(io::Error::other)?;
        let (parts, body) = response.into_parts();
        let body = body.collect().await.map_err(io::Error::other)?.to_bytes();
        let sse = parts
            .headers
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.starts_with("text/event-stream"));
        let replies = if sse {
            sse_data(&body)
                .iter()
                .map(|data| serde_json::from_slice(data))
                .collect::<Result<_, _>>()?
        } else if body.is_empty() {
            Vec::new()
        } else {
            vec![serde_json::from_slice(&body)?]
        };
        let session = parts.headers.get("mcp-session-id").cloned();
        Ok((parts.status, session, replies))
    }

    /// `initialize` (keeping the session id), then `notifications/initialized`.
    async fn handshake(&mut self) -> io::Result<()> {
        let initialize = json!({
            "jsonrpc": "2.0",
            "id": 0,
            "method": "initialize",
            "params": {
                "protocolVersion": VERSION,
                "capabilities": {},
                "clientInfo": {"name": "http-bench", "version": "0.1.0"},
            },
        });
        let (status, session, replies) = self.post(initialize.to_string()).await?;
        let answered = replies
            .iter()
            .any(|r| r.id == Some(0) && r.result.is_some());
        if status != StatusCode::OK || !answered {
            return Err(io::Error::other(format!(
                "initialize failed: HTTP {status}"
            )));
        }
        self.session =
            Some(session.ok_or_else(|| io::Error::other("initialize issued no session"))?);
        let initialized = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
        let (status, _, _) = self.post(initialized.to_owned()).await?;
        if status != StatusCode::ACCEPTED {
            let what = format!("notifications/initialized got HTTP {status}, not 202");
            return Err(io::Error::other(what));
        }
        Ok(())
    }

    /// `tools/call echo {"message": "m<n>"}` with id `n + 1`; checks the
    /// answer echoes exactly that message.
    async fn echo(&self, n: usize) -> io::Result<()> {
        let id = n as u64 + 1;
        let body = format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"echo","arguments":{{"message":"m{n}"}}}}}}"#
        );
        let (status, _, replies) = self.post(body).await?;
        let Some(reply) = replies.into_iter().find(|r| r.id == Some(id)) else {
            return Err(io::Error::other(format!(
                "HTTP {status}: no answer to request {id} (m{n})"
            )));
        };
        if let Some(error) = reply.error {
            return Err(io::Error::other(format!("m{n}: error answer {error}")));
        }
        let text = reply
            .result
            .and_then(|r| r.content.into_iter().next())
            .map(|t| t.text)
            .unwrap_or_default();
        if status != StatusCode::OK || text != format!("Echo: m{n}") {
            return Err(io::Error::other(format!(
                "m{n}: HTTP {status}, wrong echo {text:?}"
            )));
        }
        Ok(())
    }
}

/// The `data` of each SSE event that has some (priming events have none).
fn sse_data(body: &[u8]) -> Vec<Vec<u8>> {
    let mut events = Vec::new();
    let mut data: Option<Vec<u8>> = None;
    for line in body.split(|&b| b == b'\n') {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if line.is_empty() {
            events.extend(data.take().filter(|d| !d.trim_ascii().is_empty()));
        } else if let Some(value) = line.strip_prefix(b"data:") {
            let value = value.strip_prefix(b" ").unwrap_or(value);
            match &mut data {
                Some(data) => {
                    data.push(b'\n');
                    data.extend_from_slice(value);
                }
                None => data = Some(value.to_vec()),
            }
        }
    }
    events.extend(data.filter(|d| !d.trim_ascii().is_empty()));
    events
}

// ---------------------------------------------------------------------------
// Sessions and phases
// ---------------------------------------------------------------------------

/// How many requests a session sends, and how many are in flight at once.
#[derive(Clone, Copy)]
struct Load {
    depth: usize,
    warmup: usize,
    measured: usize,
}

impl Load {
    fn calls(self) -> usize {
        self.warmup + self.measured
    }
}

/// What one measured phase saw.
struct Sample {
    rate: f64,
    /// Request built → answer read and checked, in nanoseconds.
    latencies: Vec<u64>,
    /// The time limit, not the count, ended the phase.
    cut_short: bool,
    /// CPU spent during the phase, when it could be read.
    cpu: Option<cpu::Spent>,
}

/// The CPU the driver's thread and the processes `pids` (the front last,
/// the server behind it first) have used so far.
fn cpu_now(pids: &[u32]) -> Option<cpu::Spent> {
    let (front, behind) = pids.split_last()?;
    Some(cpu::Spent {
        client: cpu::thread()?,
        upstream: match behind.first() {
            Some(&pid) => Some(cpu::process(pid)?),
            None => None,
        },
        front: cpu::process(*front)?,
    })
}

/// Sends the echo calls `first .. first + n`, `depth` at a time: `depth`
/// tasks, each taking the next call as soon as its last one is answered,
/// until all `n` are answered or `limit` has passed.
async fn phase(
    mcp: &Mcp,
    first: usize,
    n: usize,
    depth: usize,
    limit: Duration,
) -> io::Result<Sample> {
    let next = Arc::new(AtomicUsize::new(0));
    let clock = Instant::now();
    let mut tasks = tokio::task::JoinSet::new();
    for _ in 0..depth {
        let (mcp, next) = (mcp.clone(), Arc::clone(&next));
        tasks.spawn(async move {
            let mut latencies = Vec::with_capacity(n / depth + 1);
            while clock.elapsed() < limit {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= n {
                    break;
                }
                let started = Instant::now();
                mcp.echo(first + i).await?;
                latencies.push(started.elapsed().as_nanos() as u64);
            }
            Ok::<_, io::Error>(latencies)
        });
    }
    let mut latencies = Vec::with_capacity(n);
    while let Some(joined) = tasks.join_next().await {
        latencies.extend(joined.map_err(io::Error::other)??);
    }
    Ok(Sample {
        rate: latencies.len() as f64 / clock.elapsed().as_secs_f64(),
        cut_short: latencies.len() < n,
        latencies,
        cpu: None,
    })
}

/// Handshake, warm-up, then the measured phase, against `url`, using the
/// messages `m0 .. m<budget>` at most (in order, each once). The client
/// runs on its own single-threaded runtime, dropped (closing every
/// connection) before the servers are stopped. The CPU that `pids` and
/// the client spend in the measured phase goes with its sample.
fn drive(
    url: &str,
    load: Load,
    budget: usize,
    limit: Duration,
    pids: &[u32],
) -> io::Result<Sample> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async {
        let mut mcp = Mcp::new(url)?;
        mcp.handshake().await?;
        let warmup = load.warmup.min(budget);
        let warm = phase(&mcp, 0, warmup, load.depth, WARMUP_LIMIT).await?;
        let used = warm.latencies.len();
        let measured = load.measured.min(budget - used);
        let before = cpu_now(pids);
        let mut sample = phase(&mcp, used, measured, load.depth, limit).await?;
        sample.cpu = cpu_now(pids)
            .zip(before)
            .map(|(now, before)| now.since(before));
        sample.cut_short |= measured < load.measured;
        Ok(sample)
    })
}

/// One session against a fresh `target`: start, drive, stop.
fn session(env: &Env, target: &Target, load: Load, budget: usize) -> io::Result<Sample> {
    let running = env.start(target)?;
    let pids: Vec<u32> = running.servers.iter().map(|s| s.child.id()).collect();
    let sample = drive(running.url(), load, budget, MEASURE_LIMIT, &pids).map_err(|e| {
        let front = running.servers.last().expect("a target runs something");
        front.failure(format!("failed a session: {e}"))
    })?;
    running.stop()?;
    Ok(sample)
}

// ---------------------------------------------------------------------------
// The cassette replay serves
// ---------------------------------------------------------------------------

/// The recording made through `mcpcassette record`.
struct Recorded {
    path: PathBuf,
    interactions: usize,
    bytes: u64,
    /// Echo calls recorded: `m0 .. m<calls>`.
    calls: usize,
    rate: f64,
}

/// Records one session through the proxy: the handshake and as many
/// distinct echo calls as the longest replay session sends (each recorded
/// request answers once under keyed matching), as many in flight as the
/// concurrent sessions.
fn record_cassette(env: &Env) -> io::Result<Recorded> {
    let path = env.scratch_file("cassette", "json");
    let live = env.live()?;
    let record = env.record(&live, &path)?;
    let load = Load {
        depth: plan().concurrent.depth,
        warmup: 0,
        measured: plan().serial.calls().max(plan().concurrent.calls()),
    };
    let sample = drive(&record.url, load, load.calls(), RECORDING_LIMIT, &[])
        .map_err(|e| record.failure(format!("failed: {e}")))?;
    record.stop(Signal::SIGINT)?;
    live.stop(Signal::SIGINT)?;
    let cassette = mcpcassette::cassette::load(&path).map_err(io::Error::other)?;
    Ok(Recorded {
        interactions: cassette.interactions.len(),
        bytes: std::fs::metadata(&path)?.len(),
        path,
        calls: sample.latencies.len(),
        rate: sample.rate,
    })
}

/// One long recording through the proxy: how many calls, how fast, the
/// recorder's peak memory over its whole life (the session and the final
/// write), and the cassette's size.
struct RecordingRow {
    calls: usize,
    rate: f64,
    rss: u64,
    /// The recorder's CPU time over its whole life (the final write too).
    cpu: Duration,
    bytes: u64,
    cut_short: bool,
}

/// `record --upstream` in front of the live server for each of the plan's
/// session lengths, 64 calls in flight, each call distinct.
fn recording_memory(env: &Env) -> io::Result<Vec<RecordingRow>> {
    plan()
        .recordings
        .iter()
        .map(|&calls| {
            let path = env.scratch_file("long", "json");
            let live = env.live()?;
            let report = env.scratch_file("exited", "txt");
            let mut record = env.record_measured(&live, &path, &report)?;
            let load = Load {
                depth: plan().concurrent.depth,
                warmup: 0,
                measured: calls,
            };
            let sample = drive(&record.url, load, calls, LONG_RECORDING_LIMIT, &[])
                .map_err(|e| record.failure(format!("failed: {e}")))?;
            kill(Pid::from_raw(record.child.id() as i32), Signal::SIGINT)
                .map_err(io::Error::other)?;
            record.child.wait()?;
            let exited = common::read_report(&report)?;
            if !exited.succeeded() {
                let status = exited.status;
                return Err(record.failure(format!("exited with wait status {status}")));
            }
            live.stop(Signal::SIGINT)?;
            let bytes = std::fs::metadata(&path)?.len();
            std::fs::remove_file(&path)?;
            Ok(RecordingRow {
                calls: sample.latencies.len(),
                rate: sample.rate,
                rss: exited.peak_rss,
                cpu: exited.cpu,
                bytes,
                cut_short: sample.cut_short || sample.latencies.len() < calls,
            })
        })
        .collect()
}

// ---------------------------------------------------------------------------
// Statistics
// ---------------------------------------------------------------------------

/// Several samples of one configuration, summarised.
struct Stats {
    /// Each round's requests/s, in round order.
    rounds: Vec<f64>,
    /// Median over rounds.
    rate: f64,
    /// Over every request of every round, in microseconds.
    p50: f64,
    p99: f64,
    /// Requests measured, over all rounds.
    requests: usize,
    /// Some round was ended by the time limit.
    cut_short: bool,
    /// CPU per measured call, when every round could read it.
    cpu: Option<cpu::PerCall>,
}

impl Stats {
    fn of(samples: &[Sample]) -> Self {
        let rounds: Vec<f64> = samples.iter().map(|s| s.rate).collect();
        let mut sorted = rounds.clone();
        sorted.sort_by(f64::total_cmp);
        let mut all: Vec<u64> = samples.iter().flat_map(|s| s.latencies.clone()).collect();
        all.sort_unstable();
        Stats {
            rate: sorted[sorted.len() / 2],
            rounds,
            p50: common::percentile(&all, 50.0) as f64 / 1e3,
            p99: common::percentile(&all, 99.0) as f64 / 1e3,
            requests: all.len(),
            cut_short: samples.iter().any(|s| s.cut_short),
            cpu: cpu::PerCall::of(samples.iter().map(|s| (s.cpu.as_ref(), s.latencies.len()))),
        }
    }
}

/// Every target at every depth.
struct Comparison {
    /// (target name, depth, stats), in table order.
    rows: Vec<(&'static str, usize, Stats)>,
}

impl Comparison {
    fn get(&self, name: &str, depth: usize) -> &Stats {
        self.rows
            .iter()
            .find(|(n, d, _)| *n == name && *d == depth)
            .map(|(_, _, s)| s)
            .expect("every configuration was measured")
    }
}

/// Runs every target at every depth, interleaving rounds so that drift in
/// the machine's speed hits all of them alike; every session gets fresh
/// processes. Replay sessions use no more calls than the cassette holds.
fn compare(env: &Env, cassette: &Recorded) -> io::Result<Comparison> {
    let targets = [
        Target::Live,
        Target::Relay,
        Target::Record,
        Target::Floor,
        Target::Replay(cassette.path.clone()),
    ];
    let loads = [plan().serial, plan().concurrent];
    let mut samples: Vec<Vec<Sample>> = (0..targets.len() * loads.len())
        .map(|_| Vec::new())
        .collect();
    let rounds = plan().rounds;
    for round in 1..=rounds {
        progress(&format!("round {round} of {rounds}"));
        for (l, load) in loads.iter().enumerate() {
            for (t, target) in targets.iter().enumerate() {
                let budget = match target {
                    Target::Replay(_) => cassette.calls,
                    _ => load.calls(),
                };
                let sample = session(env, target, *load, budget)?;
                progress(&format!(
                    "  {}, {} in flight: {:.0} requests/s",
                    target.name(),
                    load.depth,
                    sample.rate
                ));
                samples[l * targets.len() + t].push(sample);
            }
        }
    }
    let mut rows = Vec::new();
    for (l, load) in loads.iter().enumerate() {
        for (t, target) in targets.iter().enumerate() {
            let stats = Stats::of(&samples[l * targets.len() + t]);
            rows.push((target.name(), load.depth, stats));
        }
    }
    Ok(Comparison { rows })
}

// ---------------------------------------------------------------------------
// The helper servers: the bare relay and the floor
// ---------------------------------------------------------------------------

mod listen {
    use super::*;
    use tokio::net::{TcpListener, TcpStream};
    use tokio::signal::unix::{SignalKind, signal};

    /// Listens on 127.0.0.1 on a port the system picks, prints its URL
    /// (ending in `path`) as mcpcassette does, and hands every accepted
    /// connection (with `TCP_NODELAY`) to `connection`, on a runtime like
    /// mcpcassette's (one thread), until SIGINT or SIGTERM.
    pub fn serve(path: &str, mut connection: impl FnMut(TcpStream)) -> io::Result<()> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        runtime.block_on(async move {
            let mut interrupt = signal(SignalKind::interrupt())?;
            let mut terminate = signal(SignalKind::terminate())?;
            let listener = TcpListener::bind(("127.0.0.1", 0)).await?;
            println!("http://{}{path}", listener.local_addr()?);
            loop {
                let stream = tokio::select! {
                    accepted = listener.accept() => accepted?.0,
                    _ = interrupt.recv() => return Ok(()),
                    _ = terminate.recv() => return Ok(()),
                };
                stream.set_nodelay(true)?;
                connection(stream);
            }
        })
    }
}

/// The bare relay: the cost of any HTTP reverse proxy.
mod relay {
    use super::*;
    use hyper::body::Incoming;
    use hyper::server::conn::http1;
    use hyper::service::service_fn;
    use hyper_util::rt::TokioIo;

    type BoxError = Box<dyn std::error::Error + Send + Sync>;

    /// Forwards every request to `upstream` and every answer back, bodies
    /// streamed through unread.
    pub fn serve(upstream: &str) -> io::Result<()> {
        let upstream: Uri = upstream.parse().map_err(io::Error::other)?;
        let authority = upstream
            .authority()
            .cloned()
            .ok_or_else(|| io::Error::other("the upstream URL has no host"))?;
        let mut connector = HttpConnector::new();
        connector.set_nodelay(true);
        let client: Client<HttpConnector, Incoming> =
            Client::builder(TokioExecutor::new()).build(connector);
        listen::serve(upstream.path(), |stream| {
            let (client, authority) = (client.clone(), authority.clone());
            tokio::spawn(async move {
                let service =
                    service_fn(move |request| forward(client.clone(), authority.clone(), request));
                let _ = http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), service)
                    .await;
            });
        })
    }

    /// Sends `request` on to `authority`, and hands back its answer.
    async fn forward(
        client: Client<HttpConnector, Incoming>,
        authority: http::uri::Authority,
        request: Request<Incoming>,
    ) -> Result<http::Response<Incoming>, BoxError> {
        let (mut parts, body) = request.into_parts();
        let path = parts.uri.path_and_query().map_or("/", |p| p.as_str());
        parts.uri = Uri::builder()
            .scheme("http")
            .authority(authority.as_str())
            .path_and_query(path)
            .build()?;
        parts
            .headers
            .insert(header::HOST, HeaderValue::from_str(authority.as_str())?);
        Ok(client.request(Request::from_parts(parts, body)).await?)
    }
}

/// The floor: the least an MCP server over Streamable HTTP can do.
mod floor {
    use super::*;
    use hyper::body::Incoming;
    use hyper::server::conn::http1;
    use hyper::service::service_fn;
    use hyper_util::rt::TokioIo;

    type BoxError = Box<dyn std::error::Error + Send + Sync>;

    /// The one session id it hands out; it checks none.
    const SESSION: &str = "floor";

    /// Answers every POST, whatever its path or headers, from its body alone.
    pub fn serve() -> io::Result<()> {
        listen::serve("/mcp", |stream| {
            tokio::spawn(async move {
                let _ = http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), service_fn(answer))
                    .await;
            });
        })
    }

    /// Reads the whole body, then answers it.
    async fn answer(request: Request<Incoming>) -> Result<http::Response<Full<Bytes>>, BoxError> {
        let body = request.into_body().collect().await?.to_bytes();
        Ok(reply(&body)?)
    }

    /// Parses the message into a `serde_json::Value` and answers it with
    /// one JSON body: `initialize` with a result and a session id, a
    /// notification with 202 and no body, any other request with
    /// `{"content":[{"type":"text","text":"Echo: <message>"}]}`.
    fn reply(body: &[u8]) -> Result<http::Response<Full<Bytes>>, http::Error> {
        let response = http::Response::builder();
        let Ok(message) = serde_json::from_slice::<Value>(body) else {
            return response
                .status(StatusCode::BAD_REQUEST)
                .body(Full::default());
        };
        let Some(id) = message.get("id") else {
            return response.status(StatusCode::ACCEPTED).body(Full::default());
        };
        let (response, result) = if message["method"] == "initialize" {
            let result = json!({
                "protocolVersion": VERSION,
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "floor", "version": "0.1.0"},
            });
            (response.header("mcp-session-id", SESSION), result)
        } else {
            let text = match message.pointer("/params/arguments/message") {
                Some(Value::String(text)) => format!("Echo: {text}"),
                _ => String::from("Echo: "),
            };
            let result = json!({"content": [{"type": "text", "text": text}]});
            (response, result)
        };
        let answer = json!({"jsonrpc": "2.0", "id": id, "result": result});
        response
            .header(header::CONTENT_TYPE, "application/json")
            .body(Full::new(Bytes::from(answer.to_string())))
    }
}

// ---------------------------------------------------------------------------
// The report
// ---------------------------------------------------------------------------

/// The least record ÷ bare relay throughput that passes.
const RECORD_LEAST: f64 = 0.9;

/// The most a recording may hold at any length, in MiB.
const RECORDING_RSS_MIB: f64 = 64.0;

/// Bytes in MiB.
fn mib(bytes: u64) -> f64 {
    bytes as f64 / (1 << 20) as f64
}

struct Report {
    cassette: Recorded,
    comparison: Comparison,
    recordings: Vec<RecordingRow>,
}

impl Report {
    fn markdown(&self, took: Duration) -> String {
        let plan = plan();
        let mut out = common::machine();
        if quick() {
            out +=
                "Quick run (`--quick`): a smoke test of the bench; its figures mean nothing.\n\n";
        }
        out += &format!(
            "Rounds: {}, interleaved, fresh processes per session (throughput: median \
             round; latency: all requests of all rounds). 1 in flight: {} warm-up + {} measured \
             requests per session; {} in flight: {} + {}. Whole run (build excluded): {:.0} s.\n\n",
            plan.rounds,
            plan.serial.warmup,
            plan.serial.measured,
            plan.concurrent.depth,
            plan.concurrent.warmup,
            plan.concurrent.measured,
            took.as_secs_f64()
        );
        out += &self.summary_table();
        out += &self.comparison_table();
        out += &self.cpu_table();
        out += &self.cassette_line();
        out += &self.recording_table();
        out += &self.warnings();
        out += &self.targets_table();
        out += &self.record_budget();
        out
    }

    fn summary_table(&self) -> String {
        let mut out = String::from(
            "#### Against the live server, same run\n\n\
             | in flight | bare relay / live requests/s | record / live requests/s \
             | record / live p50 | replay / live requests/s | replay / live p50 |\n\
             |---:|---:|---:|---:|---:|---:|\n",
        );
        let c = &self.comparison;
        for depth in [plan().serial.depth, plan().concurrent.depth] {
            let live = c.get(Target::Live.name(), depth);
            let relay = c.get(Target::Relay.name(), depth);
            let record = c.get(Target::Record.name(), depth);
            let replay = c.get(REPLAY, depth);
            out += &format!(
                "| {depth} | {:.2} | {:.2} | {:.2} | {:.2} | {:.2} |\n",
                relay.rate / live.rate,
                record.rate / live.rate,
                record.p50 / live.p50,
                replay.rate / live.rate,
                replay.p50 / live.p50,
            );
        }
        out + "\n"
    }

    fn comparison_table(&self) -> String {
        let mut out = String::from(
            "#### Throughput and latency (`tools/call echo` over Streamable HTTP)\n\n\
             | target | in flight | requests/s | p50 (µs) | p99 (µs) | requests/s by round \
             | requests measured |\n\
             |---|---:|---:|---:|---:|---|---:|\n",
        );
        for (name, depth, s) in &self.comparison.rows {
            let rounds: Vec<String> = s.rounds.iter().map(|r| format!("{r:.0}")).collect();
            let mark = if s.cut_short { " ‡" } else { "" };
            out += &format!(
                "| {name} | {depth} | {:.0} | {:.1} | {:.1} | {} | {}{mark} |\n",
                s.rate,
                s.p50,
                s.p99,
                rounds.join(" / "),
                s.requests
            );
        }
        out + "\n"
    }

    /// Where each target's calls spent CPU; empty where it was not read.
    fn cpu_table(&self) -> String {
        let rows: String = (self.comparison.rows.iter())
            .filter_map(|(name, depth, s)| Some(cpu::row(name, *depth, s.cpu.as_ref()?, s.rate)))
            .collect();
        if rows.is_empty() {
            return rows;
        }
        cpu::table_head("####", "live server") + &rows + "\n"
    }

    fn cassette_line(&self) -> String {
        let c = &self.cassette;
        format!(
            "Replayed cassette: recorded through `mcpcassette record` in this run \
             (handshake + {} distinct echo calls, {} in flight, {:.0} requests/s), \
             {} interactions, {:.1} MiB.\n",
            c.calls,
            plan().concurrent.depth,
            c.rate,
            c.interactions,
            c.bytes as f64 / (1 << 20) as f64
        )
    }

    fn recording_table(&self) -> String {
        let mut out = format!(
            "\n#### Recording long sessions over HTTP ({} in flight)\n\n\
             | calls | requests/s | record's CPU per call (µs) | record's peak RSS (MiB) | cassette (MiB) |\n\
             |---:|---:|---:|---:|---:|\n",
            plan().concurrent.depth
        );
        for row in &self.recordings {
            let mark = if row.cut_short { " ‡" } else { "" };
            out += &format!(
                "| {}{mark} | {:.0} | {:.1} | {:.1} | {:.1} |\n",
                row.calls,
                row.rate,
                row.cpu.as_secs_f64() * 1e6 / row.calls.max(1) as f64,
                mib(row.rss),
                mib(row.bytes)
            );
        }
        out
    }

    /// Notes on figures that are not what they seem.
    fn warnings(&self) -> String {
        let mut out = String::new();
        if self.comparison.rows.iter().any(|(_, _, s)| s.cut_short)
            || self.recordings.iter().any(|r| r.cut_short)
        {
            out += &format!(
                "\n‡ Cut short: a measured phase stops after {} s (a warm-up after {} s, \
                 a long recording after {} s), or when the recorded cassette has no more \
                 distinct calls.\n",
                MEASURE_LIMIT.as_secs_f64(),
                WARMUP_LIMIT.as_secs_f64(),
                LONG_RECORDING_LIMIT.as_secs_f64()
            );
        }
        let stalled: Vec<String> = self
            .comparison
            .rows
            .iter()
            .filter(|(_, _, s)| s.p50 >= 20_000.0)
            .map(|(name, depth, _)| format!("{name} ({depth} in flight)"))
            .collect();
        if !stalled.is_empty() {
            out += &format!(
                "\nWarning: a p50 of 20 ms or more ({}) is the signature of Nagle's \
                 algorithm meeting delayed ACKs: a server that writes its SSE answer in \
                 several small writes on a socket without TCP_NODELAY waits for the \
                 client's ACK (up to 40 ms) between them.\n",
                stalled.join(", ")
            );
        }
        out
    }

    /// What record ÷ bare relay ≥ 0.9× leaves record to spend per call.
    fn record_budget(&self) -> String {
        let deep = plan().concurrent.depth;
        let relay = self.comparison.get(Target::Relay.name(), deep);
        let record = self.comparison.get(Target::Record.name(), deep);
        match (&relay.cpu, &record.cpu) {
            (Some(relay_cpu), Some(record_cpu)) => cpu::record_budget(
                RECORD_LEAST,
                (relay_cpu, relay.rate),
                (record_cpu, record.rate),
            ),
            _ => String::new(),
        }
    }

    /// Throughput ratios at 64 in flight against baselines of the same
    /// run, with PASS/MISS where there is a target.
    fn targets_table(&self) -> String {
        let c = &self.comparison;
        let deep = plan().concurrent.depth;
        let mut out = String::from(
            "\n#### Targets\n\n| figure | measured | target | result |\n|---|---:|---:|---|\n",
        );
        // (figure, target, baseline, the least ratio that passes; none: context)
        let (live, relay, record, floor) = (
            Target::Live.name(),
            Target::Relay.name(),
            Target::Record.name(),
            Target::Floor.name(),
        );
        let rows = [
            ("record / bare relay", record, relay, Some(RECORD_LEAST)),
            ("replay / floor", REPLAY, floor, Some(1.0)),
            ("record / live", record, live, None),
            ("bare relay / live", relay, live, None),
        ];
        for (figure, target, baseline, least) in rows {
            let rate = c.get(target, deep).rate;
            let base = c.get(baseline, deep).rate;
            let ratio = rate / base;
            let (target, verdict) = match least {
                Some(least) => {
                    let met = if ratio >= least { "PASS" } else { "MISS" };
                    (format!("≥ {least}×"), met)
                }
                None => ("—".to_owned(), "—"),
            };
            out += &format!(
                "| {figure} throughput, {deep} in flight | {ratio:.2}× ({rate:.0} vs {base:.0} \
                 req/s) | {target} | {verdict} |\n"
            );
        }
        for row in &self.recordings {
            let rss = mib(row.rss);
            let verdict = if rss <= RECORDING_RSS_MIB {
                "PASS"
            } else {
                "MISS"
            };
            out += &format!(
                "| record's peak RSS, {} calls | {rss:.1} MiB | ≤ {RECORDING_RSS_MIB} MiB | {verdict} |\n",
                row.calls
            );
        }
        out
    }
}
