//! Throughput and latency of mcpcassette over stdio, measured side by side
//! with a minimal JSON-RPC echo server (the floor) and with the example
//! server run directly.
//!
//! Run it with `cargo bench --bench throughput`; docs/benchmarks.md explains
//! every figure. Everything talks over pipes to real child processes.

mod common;

use std::fs::File;
use std::io::{self, BufRead, BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use mcpcassette::cassette::{
    self, Cassette, ClientMessage, FORMAT_VERSION, Interaction, ProtocolInfo, Transport,
};
use mcpcassette::protocol::Era;
use mcpcassette::replay::Engine;
use serde::Deserialize;
use serde_json::{Value, json};

use common::cpu;

/// The least record ÷ bare relay throughput that passes, 64 in flight.
const RECORD_LEAST: f64 = 0.9;

/// Makes the bench binary act as the floor server.
const FLOOR_FLAG: &str = "--floor-server";
/// Makes the bench binary a bare stdio relay in front of the command after it.
const RELAY_FLAG: &str = "--relay";
/// Makes it a relay that copies through its own memory (`read`, `write`).
const COPY_RELAY_FLAG: &str = "--copy-relay";
/// The protocol version of every session here (legacy era, with handshake).
const VERSION: &str = "2025-11-25";
/// Runs every measurement with tiny counts: a smoke test that the bench
/// still works (CI), whose figures mean nothing.
const QUICK_FLAG: &str = "--quick";
/// Runs only the side-by-side comparison (floor, replay, direct, relay,
/// record) and the targets it decides: a few minutes shorter, for
/// iterating on record or replay.
const COMPARE_FLAG: &str = "--compare";

/// How much is measured: the full run, or `--quick`.
struct Plan {
    /// Each configuration is measured this many times, interleaved.
    rounds: usize,
    /// Requests per session with one in flight: warm-up, then measured.
    serial: Load,
    /// Requests per session with 64 in flight: warm-up, then measured.
    pipelined: Load,
    /// Cassette sizes, in interactions (or distinct keys, for throughput).
    scales: &'static [u64],
    /// Spawn → `initialize` repetitions for the small cassettes.
    startup_runs: usize,
    /// Repetitions of the other load-time measurements.
    load_runs: usize,
    /// Calls recorded in one session, 64 in flight, for record's memory.
    recordings: &'static [u64],
}

const FULL: Plan = Plan {
    rounds: 3,
    serial: Load {
        depth: 1,
        warmup: 500,
        measured: 5_000,
    },
    pipelined: Load {
        depth: 64,
        warmup: 5_000,
        measured: 50_000,
    },
    scales: &[10, 1_000, 100_000],
    startup_runs: 20,
    load_runs: 5,
    recordings: &[10_000, 100_000, 1_000_000],
};

const QUICK: Plan = Plan {
    rounds: 1,
    serial: Load {
        depth: 1,
        warmup: 10,
        measured: 100,
    },
    pipelined: Load {
        depth: 64,
        warmup: 100,
        measured: 1_000,
    },
    scales: &[10, 1_000],
    startup_runs: 2,
    load_runs: 1,
    recordings: &[1_000],
};

static PLAN: std::sync::OnceLock<&'static Plan> = std::sync::OnceLock::new();

fn plan() -> &'static Plan {
    PLAN.get().copied().unwrap_or(&FULL)
}
/// The whole bench gives up after this long.
const DEADLINE: Duration = Duration::from_secs(900);

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Some(at) = args.iter().position(|a| a == common::MEASURE_FLAG) {
        return helper("launcher", common::launch(&args[at + 1..]));
    }
    if args.iter().any(|a| a == FLOOR_FLAG) {
        return helper("floor server", floor::serve());
    }
    if let Some(at) = args.iter().position(|a| a == RELAY_FLAG) {
        return helper("relay", relay::serve(&args[at + 1..]));
    }
    if let Some(at) = args.iter().position(|a| a == COPY_RELAY_FLAG) {
        return helper("copying relay", relay::serve_copying(&args[at + 1..]));
    }
    if !args.iter().any(|a| a == "--bench") {
        // `cargo test --all-targets` runs bench binaries without `--bench`.
        println!("throughput: skipped; run it with `cargo bench --bench throughput`");
        return;
    }
    let _ = PLAN.set(if args.iter().any(|a| a == QUICK_FLAG) {
        &QUICK
    } else {
        &FULL
    });
    watchdog(DEADLINE);
    let outcome = if args.iter().any(|a| a == COMPARE_FLAG) {
        run_comparison()
    } else {
        run()
    };
    if let Err(e) = outcome {
        eprintln!("throughput bench failed: {e}");
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

/// Ends the process if the bench hangs; children exit when their stdin closes.
fn watchdog(limit: Duration) {
    thread::spawn(move || {
        thread::sleep(limit);
        eprintln!("throughput bench: no result after {limit:?}, giving up");
        std::process::exit(2);
    });
}

fn run() -> io::Result<()> {
    let started = Instant::now();
    let env = Env::prepare()?;
    progress("comparing floor, replay, direct and record");
    let comparison = compare(&env)?;
    progress("measuring startup");
    let startup = startup(&env)?;
    progress("measuring cassette scale");
    let scale = scale(&env)?;
    progress("measuring peak memory of replay and check");
    let memory = memory(&env)?;
    progress("measuring record's peak memory over long sessions");
    let recording = recording_memory(&env)?;
    let report = Report {
        comparison,
        startup,
        scale,
        memory,
        recording,
    };
    println!("{}", report.markdown(started.elapsed()));
    Ok(())
}

/// The comparison alone (`--compare`).
fn run_comparison() -> io::Result<()> {
    let env = Env::prepare()?;
    progress("comparing floor, replay, direct and record");
    let comparison = compare(&env)?;
    println!("{}", common::machine());
    println!("{}", comparison.table());
    println!("{}", targets_table(&comparison.targets()));
    Ok(())
}

fn progress(what: &str) {
    eprintln!("[throughput] {what}…");
}

// ---------------------------------------------------------------------------
// Environment: binaries and scratch space
// ---------------------------------------------------------------------------

/// Paths to everything the bench runs, and a scratch folder.
struct Env {
    /// This binary, which is also the floor server and the bare relay.
    this_exe: PathBuf,
    mcpcassette: PathBuf,
    demo_server: PathBuf,
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
        let (mcpcassette, demo_server) = common::build("demo_server")?;
        Ok(Env {
            this_exe: std::env::current_exe()?,
            mcpcassette,
            demo_server,
            scratch: common::Scratch::new()?,
        })
    }

    /// A fresh path in the scratch folder.
    fn scratch_file(&self, stem: &str, ext: &str) -> PathBuf {
        self.scratch.file(stem, ext)
    }

    /// The command that starts `target`.
    fn command(&self, target: &Target) -> Command {
        match target {
            Target::Floor => {
                let mut command = Command::new(&self.this_exe);
                command.arg(FLOOR_FLAG);
                command
            }
            Target::Replay(cassette) => {
                let mut command = Command::new(&self.mcpcassette);
                command.arg("replay").arg(cassette);
                command
            }
            Target::Direct => Command::new(&self.demo_server),
            Target::Relay => {
                let mut command = Command::new(&self.this_exe);
                command.arg(RELAY_FLAG).arg(&self.demo_server);
                command
            }
            Target::CopyRelay => {
                let mut command = Command::new(&self.this_exe);
                command.arg(COPY_RELAY_FLAG).arg(&self.demo_server);
                command
            }
            Target::Record => {
                self.command(&Target::RecordInto(self.scratch_file("recorded", "json")))
            }
            Target::RecordInto(cassette) => {
                let mut command = Command::new(&self.mcpcassette);
                command
                    .arg("record")
                    .arg("--cassette")
                    .arg(cassette)
                    .arg("--")
                    .arg(&self.demo_server);
                command
            }
        }
    }
}

/// What a session talks to.
enum Target {
    /// The bench's own minimal echo server.
    Floor,
    /// `mcpcassette replay` of this cassette.
    Replay(PathBuf),
    /// The example server, directly.
    Direct,
    /// A bare byte relay in front of the example server: what any stdio
    /// proxy costs, before it does any work of its own. Between pipes,
    /// std's `io::copy` moves the bytes with `splice`, inside the kernel:
    /// they never reach the relay's memory.
    Relay,
    /// The same relay copying through a buffer of its own, with `read` and
    /// `write`: the least a proxy that looks at the bytes can cost, as
    /// record must.
    CopyRelay,
    /// `mcpcassette record` in front of the example server.
    Record,
    /// The same, recording into this cassette.
    RecordInto(PathBuf),
}

impl Target {
    fn name(&self) -> &'static str {
        match self {
            Target::Floor => "floor (echo server)",
            Target::Replay(_) => "replay",
            Target::Direct => "demo_server direct",
            Target::Relay => "bare relay → demo_server",
            Target::CopyRelay => "copying relay → demo_server",
            Target::Record | Target::RecordInto(_) => "record → demo_server",
        }
    }
}

// ---------------------------------------------------------------------------
// The floor: a minimal JSON-RPC echo server
// ---------------------------------------------------------------------------

mod floor {
    use super::*;

    /// Answers every request with an echo result; flushes only when no more
    /// input is buffered, so pipelined answers share a write.
    pub fn serve() -> io::Result<()> {
        let mut input = BufReader::with_capacity(64 * 1024, io::stdin().lock());
        let mut output = BufWriter::with_capacity(64 * 1024, io::stdout().lock());
        let mut line = Vec::with_capacity(4096);
        loop {
            line.clear();
            if input.read_until(b'\n', &mut line)? == 0 {
                break;
            }
            if let Some(reply) = reply(&line) {
                serde_json::to_writer(&mut output, &reply)?;
                output.write_all(b"\n")?;
            }
            if input.buffer().is_empty() {
                output.flush()?;
            }
        }
        output.flush()
    }

    /// The answer to one line; notifications and garbage get none.
    fn reply(line: &[u8]) -> Option<Value> {
        let request: Value = serde_json::from_slice(line.trim_ascii()).ok()?;
        let id = request.get("id")?.clone();
        let message = request
            .pointer("/params/arguments/message")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let text = format!("echo: {message}");
        Some(json!({
            "jsonrpc": "2.0",
            "id": id,
            "result": {"content": [{"type": "text", "text": text}]},
        }))
    }
}

// ---------------------------------------------------------------------------
// The bare relay: the cost of any stdio proxy
// ---------------------------------------------------------------------------

mod relay {
    use super::*;

    /// Runs `command` and copies bytes both ways, unparsed, until its stdout
    /// closes; closes its stdin when ours closes.
    pub fn serve(command: &[String]) -> io::Result<()> {
        let (mut child, mut to_child, mut from_child) = spawn(command)?;
        // Concrete types both ways, so that `io::copy` can splice.
        thread::spawn(move || io::copy(&mut io::stdin().lock(), &mut to_child));
        io::copy(&mut from_child, &mut io::stdout().lock())?;
        child.wait()?;
        Ok(())
    }

    /// [`serve`], but each read lands in a buffer of this process and is
    /// written from there, as a proxy that must see the bytes forwards
    /// them (`io::copy` would splice them past it).
    pub fn serve_copying(command: &[String]) -> io::Result<()> {
        let (mut child, mut to_child, mut from_child) = spawn(command)?;
        thread::spawn(move || copy_through_memory(&mut io::stdin().lock(), &mut to_child));
        copy_through_memory(&mut from_child, &mut io::stdout().lock())?;
        child.wait()?;
        Ok(())
    }

    /// Starts `command` with piped stdin and stdout.
    fn spawn(command: &[String]) -> io::Result<(Child, ChildStdin, ChildStdout)> {
        let (program, args) = command
            .split_first()
            .ok_or_else(|| io::Error::other("no command to relay to"))?;
        let mut child = Command::new(program)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()?;
        let to_child = child.stdin.take().expect("piped");
        let from_child = child.stdout.take().expect("piped");
        Ok((child, to_child, from_child))
    }

    /// Copies until end of input, each read written whole before the next.
    fn copy_through_memory(input: &mut impl Read, output: &mut impl Write) -> io::Result<()> {
        let mut buffer = vec![0; 64 * 1024];
        loop {
            match input.read(&mut buffer) {
                Ok(0) => return output.flush(),
                Ok(n) => {
                    output.write_all(&buffer[..n])?;
                    output.flush()?;
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
    }
}

// ---------------------------------------------------------------------------
// Cassettes
// ---------------------------------------------------------------------------

/// Which echo message the n-th `tools/call` of a session sends: a stride
/// coprime with `distinct` walks every key evenly, spread across the cassette.
#[derive(Clone, Copy)]
struct Keys {
    distinct: u64,
}

impl Keys {
    const STRIDE: u64 = 7_919;

    fn new(distinct: u64) -> Self {
        assert!(
            !distinct.is_multiple_of(Self::STRIDE),
            "the stride must be coprime with the key count"
        );
        Keys { distinct }
    }

    fn key(self, n: u64) -> u64 {
        n * Self::STRIDE % self.distinct
    }

    /// How often each key must be recorded to answer `calls` requests.
    fn copies_for(self, calls: u64) -> u64 {
        calls.div_ceil(self.distinct)
    }
}

/// The `initialize` request every session starts with.
fn initialize_request() -> Value {
    json!({
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {
            "protocolVersion": VERSION,
            "capabilities": {},
            "clientInfo": {"name": "throughput-bench", "version": "0.1.0"},
        },
    })
}

/// A cassette of a legacy session: the handshake, then `distinct` echo
/// calls recorded `copies` times over (copy after copy).
fn echo_cassette(distinct: u64, copies: u64) -> Cassette {
    let mut interactions = vec![
        Interaction {
            client: ClientMessage::Request(initialize_request().into()),
            during: vec![],
            response: Some(
                json!({
                    "jsonrpc": "2.0",
                    "id": 0,
                    "result": {
                        "protocolVersion": VERSION,
                        "capabilities": {"tools": {"listChanged": false}},
                        "serverInfo": {"name": "bench", "version": "0.1.0"},
                    },
                })
                .into(),
            ),
            after: vec![],
            delays_ms: vec![],
            http: None,
            process: 0,
        },
        Interaction {
            client: ClientMessage::Notification(
                json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).into(),
            ),
            during: vec![],
            response: None,
            after: vec![],
            delays_ms: vec![],
            http: None,
            process: 0,
        },
    ];
    let mut id = 1;
    for _ in 0..copies {
        for key in 0..distinct {
            interactions.push(echo_interaction(id, key));
            id += 1;
        }
    }
    Cassette {
        format_version: FORMAT_VERSION,
        recorded_at: "2026-01-01T00:00:00Z".into(),
        transport: Transport::Stdio {
            command: vec!["demo_server".into()],
            cwd: None,
        },
        protocol: ProtocolInfo {
            era: Era::Legacy,
            version: Some(VERSION.into()),
        },
        server: None,
        rules: Default::default(),
        opening: vec![],
        interactions,
    }
}

/// One recorded `tools/call echo` with its answer.
fn echo_interaction(id: u64, key: u64) -> Interaction {
    let message = format!("m{key}");
    Interaction {
        client: ClientMessage::Request(
            json!({
                "jsonrpc": "2.0",
                "id": id,
                "method": "tools/call",
                "params": {"name": "echo", "arguments": {"message": message}},
            })
            .into(),
        ),
        during: vec![],
        response: Some(
            json!({
                "jsonrpc": "2.0",
                "id": id,
                "result": {"content": [{"type": "text", "text": format!("echo: {message}")}]},
            })
            .into(),
        ),
        after: vec![],
        delays_ms: vec![],
        http: None,
        process: 0,
    }
}

/// Writes a cassette into the scratch folder.
fn write_cassette(env: &Env, distinct: u64, copies: u64) -> io::Result<PathBuf> {
    let path = env.scratch_file(&format!("cassette-{distinct}x{copies}"), "json");
    cassette::save(&path, &echo_cassette(distinct, copies)).map_err(io::Error::other)?;
    Ok(path)
}

// ---------------------------------------------------------------------------
// The driver: one client session over a child's stdin and stdout
// ---------------------------------------------------------------------------

/// How many requests a session sends, and how many are in flight at once.
#[derive(Clone, Copy)]
struct Load {
    depth: usize,
    warmup: usize,
    measured: usize,
}

impl Load {
    fn calls(self) -> u64 {
        (self.warmup + self.measured) as u64
    }
}

/// What one measured phase saw.
struct Sample {
    rate: f64,
    /// Send → response, in nanoseconds, one per request.
    latencies: Vec<u64>,
    /// CPU spent in the phase (not for targets called side by side).
    cpu: Option<cpu::Spent>,
}

/// Any response: only its id matters (the handshake).
#[derive(Deserialize)]
struct Reply {
    id: Option<u64>,
}

/// An echo answer, read far enough to check it is the right one.
#[derive(Deserialize)]
struct EchoReply {
    id: Option<u64>,
    result: Option<EchoResult>,
}

#[derive(Deserialize)]
struct EchoResult {
    content: Vec<Text>,
}

#[derive(Deserialize)]
struct Text {
    text: String,
}

impl EchoReply {
    /// The key echoed back, if this is a well-formed echo answer.
    fn key(&self) -> Option<u64> {
        let text = &self.result.as_ref()?.content.first()?.text;
        text.strip_prefix("echo: m")?.parse().ok()
    }
}

/// A running server process with a client attached.
struct Session {
    child: Child,
    stdin: BufWriter<ChildStdin>,
    stdout: BufReader<ChildStdout>,
    stderr: PathBuf,
    /// Where its launcher reports what its life cost, when it was started
    /// through one ([`Session::start_measured`]).
    report: Option<PathBuf>,
    next_id: u64,
    calls: u64,
}

impl Session {
    /// Starts `target` and completes the `initialize` handshake; also
    /// returns the time from spawn to the `initialize` answer.
    fn start(env: &Env, target: &Target) -> io::Result<(Self, Duration)> {
        Session::start_with(env, env.command(target), None)
    }

    /// [`start`](Self::start), through a launcher, so that
    /// [`close_measured`](Self::close_measured) reports the target's own
    /// peak memory (see [`common::measured`]).
    fn start_measured(env: &Env, target: &Target) -> io::Result<(Self, Duration)> {
        let report = env.scratch_file("exited", "txt");
        let command = common::measured(&env.command(target), &report)?;
        Session::start_with(env, command, Some(report))
    }

    fn start_with(
        env: &Env,
        mut command: Command,
        report: Option<PathBuf>,
    ) -> io::Result<(Self, Duration)> {
        let stderr = env.scratch_file("stderr", "log");
        command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(File::create(&stderr)?);
        let spawned = Instant::now();
        let mut child = command.spawn()?;
        let mut session = Session {
            stdin: BufWriter::with_capacity(64 * 1024, child.stdin.take().expect("piped")),
            stdout: BufReader::with_capacity(64 * 1024, child.stdout.take().expect("piped")),
            child,
            stderr,
            report,
            next_id: 1,
            calls: 0,
        };
        session.send(&initialize_request())?;
        session.stdin.flush()?;
        session.await_reply(0)?;
        let startup = spawned.elapsed();
        session.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))?;
        session.stdin.flush()?;
        Ok((session, startup))
    }

    fn send(&mut self, message: &Value) -> io::Result<()> {
        serde_json::to_writer(&mut self.stdin, message)?;
        self.stdin.write_all(b"\n")
    }

    /// Reads until the response with `id` arrives.
    fn await_reply(&mut self, id: u64) -> io::Result<()> {
        let mut line = Vec::new();
        loop {
            line.clear();
            if self.stdout.read_until(b'\n', &mut line)? == 0 {
                return Err(failure(&self.stderr, "the server closed its stdout"));
            }
            let reply: Reply = serde_json::from_slice(&line)?;
            if reply.id == Some(id) {
                return Ok(());
            }
        }
    }

    /// One echo call alone in flight: send → its answer, in nanoseconds.
    fn call(&mut self, keys: Keys) -> io::Result<u64> {
        let (id, key) = (self.next_id, keys.key(self.calls));
        self.next_id += 1;
        self.calls += 1;
        let mut line = Vec::with_capacity(4096);
        let clock = Instant::now();
        write_echo(&mut self.stdin, id, key)?;
        self.stdin.flush()?;
        loop {
            line.clear();
            if self.stdout.read_until(b'\n', &mut line)? == 0 {
                return Err(failure(&self.stderr, "the server closed its stdout"));
            }
            let reply: EchoReply = serde_json::from_slice(&line)?;
            if reply.id != Some(id) {
                continue;
            }
            let took = nanos_since(clock);
            if reply.key() != Some(key) {
                let text = String::from_utf8_lossy(&line);
                return Err(io::Error::other(format!("wrong reply: {}", text.trim())));
            }
            return Ok(took);
        }
    }

    /// Warms up, then measures, under `load`.
    fn measure(&mut self, load: Load, keys: Keys) -> io::Result<Sample> {
        self.phase(load.warmup, load.depth, keys)?;
        self.phase(load.measured, load.depth, keys)
    }

    /// Sends `n` echo calls keeping `depth` in flight; waits for every answer.
    fn phase(&mut self, n: usize, depth: usize, keys: Keys) -> io::Result<Sample> {
        let first_id = self.next_id;
        let first_call = self.calls;
        self.next_id += n as u64;
        self.calls += n as u64;
        let sent: Vec<AtomicU64> = (0..n).map(|_| AtomicU64::new(0)).collect();
        let (tokens, slots) = mpsc::channel();
        for _ in 0..depth {
            tokens.send(()).expect("the receiver is alive");
        }
        let clock = Instant::now();
        let requests = Requests {
            first_id,
            first_call,
            keys,
        };
        let stderr = self.stderr.clone();
        let before = self.cpu_now();
        let (stdin, stdout) = (&mut self.stdin, &mut self.stdout);
        let (latencies, writer_cpu) = thread::scope(|scope| {
            let writer = scope.spawn(|| {
                let started = cpu::thread();
                let written = requests.write(stdin, &sent, clock, slots);
                let spent = cpu::thread().zip(started).map(|(now, then)| now - then);
                (written, spent)
            });
            let read = requests.read_replies(stdout, &sent, clock, tokens);
            let (written, spent) = writer.join().expect("the writer does not panic");
            let latencies = read?;
            written.map(|()| (latencies, spent))
        })
        .map_err(|e| failure(&stderr, e))?;
        let elapsed = clock.elapsed();
        let cpu = self
            .cpu_now()
            .zip(before)
            .zip(writer_cpu)
            .map(|((now, before), writer)| {
                let mut spent = now.since(before);
                spent.client += writer;
                spent
            });
        Ok(Sample {
            rate: n as f64 / elapsed.as_secs_f64(),
            latencies,
            cpu,
        })
    }

    /// The CPU used so far by the calling thread, the target and the
    /// server it started, if it is a relay or record.
    fn cpu_now(&self) -> Option<cpu::Spent> {
        let pid = self.child.id();
        Some(cpu::Spent {
            client: cpu::thread()?,
            upstream: cpu::children(pid),
            front: cpu::process(pid)?,
        })
    }

    /// Closes stdin, as a stdio client does, and waits for a clean exit.
    fn close(self) -> io::Result<()> {
        self.close_measured().map(|_| ())
    }

    /// Closes stdin and waits for a clean exit: what the process's whole
    /// life cost (its peak memory is its own if it was started measured).
    fn close_measured(self) -> io::Result<common::Exited> {
        let Session {
            mut child,
            stdin,
            stdout,
            stderr,
            report,
            ..
        } = self;
        drop(stdin.into_inner().map_err(|e| e.into_error())?);
        let exited = match report {
            Some(report) => {
                child.wait()?;
                common::read_report(&report)?
            }
            None => common::wait_measured(child.id())?,
        };
        drop(stdout);
        let status = exited.status;
        if !exited.succeeded() {
            return Err(failure(
                &stderr,
                format!("the server exited with wait status {status}"),
            ));
        }
        Ok(exited)
    }
}

/// An error quoting the end of a child's stderr (the scratch folder that
/// holds it is deleted when the bench stops).
fn failure(stderr: &Path, what: impl std::fmt::Display) -> io::Error {
    let log = std::fs::read_to_string(stderr).unwrap_or_default();
    let start = log.char_indices().rev().nth(2_000).map_or(0, |(i, _)| i);
    let tail = &log[start..];
    io::Error::other(format!("{what}; the server's stderr ends with:\n{tail}"))
}

/// Writes the echo call with `id` asking for `key`, one line.
fn write_echo(out: &mut impl Write, id: u64, key: u64) -> io::Result<()> {
    writeln!(
        out,
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"echo","arguments":{{"message":"m{key}"}}}}}}"#
    )
}

/// The requests of one phase.
struct Requests {
    first_id: u64,
    first_call: u64,
    keys: Keys,
}

impl Requests {
    /// Writes each request once a slot is free; flushes only when it would
    /// otherwise wait, so pipelined requests share a write.
    fn write(
        &self,
        out: &mut BufWriter<ChildStdin>,
        sent: &[AtomicU64],
        clock: Instant,
        slots: mpsc::Receiver<()>,
    ) -> io::Result<()> {
        for (i, sent) in sent.iter().enumerate() {
            if slots.try_recv().is_err() {
                out.flush()?;
                if slots.recv().is_err() {
                    // The reader gave up; it reports why.
                    return Ok(());
                }
            }
            sent.store(nanos_since(clock), Ordering::Release);
            let id = self.first_id + i as u64;
            write_echo(out, id, self.keys.key(self.first_call + i as u64))?;
        }
        out.flush()
    }

    /// Reads one answer per request, checks it echoes the right message,
    /// times it and frees its slot.
    fn read_replies(
        &self,
        input: &mut BufReader<ChildStdout>,
        sent: &[AtomicU64],
        clock: Instant,
        slots: mpsc::Sender<()>,
    ) -> io::Result<Vec<u64>> {
        let mut latencies = Vec::with_capacity(sent.len());
        let mut line = Vec::with_capacity(4096);
        while latencies.len() < sent.len() {
            line.clear();
            if input.read_until(b'\n', &mut line)? == 0 {
                return Err(io::Error::other("the server closed its stdout"));
            }
            let reply: EchoReply = serde_json::from_slice(&line)?;
            let Some(id) = reply.id else { continue };
            let index = id
                .checked_sub(self.first_id)
                .filter(|&i| i < sent.len() as u64)
                .ok_or_else(|| io::Error::other(format!("reply to unexpected id {id}")))?;
            if reply.key() != Some(self.keys.key(self.first_call + index)) {
                let text = String::from_utf8_lossy(&line);
                return Err(io::Error::other(format!("wrong reply: {}", text.trim())));
            }
            let start = sent[index as usize].load(Ordering::Acquire);
            latencies.push(nanos_since(clock).saturating_sub(start));
            let _ = slots.send(());
        }
        Ok(latencies)
    }
}

fn nanos_since(clock: Instant) -> u64 {
    clock.elapsed().as_nanos() as u64
}

/// One request at a time to each of `targets` in turn, all running at
/// once: every target's calls see the same moments of the machine, so
/// the differences between their latencies are theirs, not drift
/// between sessions run minutes apart. One sample per target.
fn paired(env: &Env, targets: &[Target], load: Load, keys: Keys) -> io::Result<Vec<Sample>> {
    let mut sessions = Vec::with_capacity(targets.len());
    for target in targets {
        sessions.push(Session::start(env, target)?.0);
    }
    let mut latencies = vec![Vec::with_capacity(load.measured); targets.len()];
    for i in 0..load.warmup + load.measured {
        // Each target goes first in turn, so none always follows another.
        for step in 0..sessions.len() {
            let t = (i + step) % sessions.len();
            let took = sessions[t].call(keys)?;
            if i >= load.warmup {
                latencies[t].push(took);
            }
        }
    }
    for session in sessions {
        session.close()?;
    }
    Ok(latencies
        .into_iter()
        .map(|latencies| Sample {
            rate: latencies.len() as f64 / (latencies.iter().sum::<u64>() as f64 / 1e9),
            latencies,
            cpu: None,
        })
        .collect())
}

/// One session against `target`: start, warm up, measure, close.
fn session(env: &Env, target: &Target, load: Load, keys: Keys) -> io::Result<Sample> {
    let (mut session, _) = Session::start(env, target)?;
    let sample = session.measure(load, keys)?;
    session.close()?;
    Ok(sample)
}

// ---------------------------------------------------------------------------
// Statistics
// ---------------------------------------------------------------------------

/// Several samples of one configuration, summarised.
#[derive(Clone, Copy)]
struct Stats {
    /// Median over rounds.
    rate: f64,
    /// Over every request of every round, in microseconds.
    p50: f64,
    p99: f64,
    /// CPU per measured call, when every round read it.
    cpu: Option<cpu::PerCall>,
}

impl Stats {
    fn of(samples: &[Sample]) -> Self {
        let mut rates: Vec<f64> = samples.iter().map(|s| s.rate).collect();
        rates.sort_by(f64::total_cmp);
        let mut all: Vec<u64> = samples.iter().flat_map(|s| s.latencies.clone()).collect();
        all.sort_unstable();
        Stats {
            rate: rates[rates.len() / 2],
            p50: common::percentile(&all, 50.0) as f64 / 1e3,
            p99: common::percentile(&all, 99.0) as f64 / 1e3,
            cpu: cpu::PerCall::of(samples.iter().map(|s| (s.cpu.as_ref(), s.latencies.len()))),
        }
    }
}

/// Median and maximum of some durations, in milliseconds.
#[derive(Clone, Copy)]
struct Timing {
    median: f64,
    max: f64,
}

impl Timing {
    fn of(mut runs: Vec<Duration>) -> Self {
        runs.sort_unstable();
        Timing {
            median: runs[runs.len() / 2].as_secs_f64() * 1e3,
            max: runs[runs.len() - 1].as_secs_f64() * 1e3,
        }
    }
}

// ---------------------------------------------------------------------------
// The measurements
// ---------------------------------------------------------------------------

/// Throughput and latency of each target at each depth.
struct Comparison {
    /// (target name, depth, stats), in table order.
    rows: Vec<(&'static str, usize, Stats)>,
}

impl Comparison {
    fn get(&self, name: &str, depth: usize) -> Stats {
        self.rows
            .iter()
            .find(|(n, d, _)| *n == name && *d == depth)
            .map(|(_, _, s)| *s)
            .expect("every configuration was measured")
    }

    fn table(&self) -> String {
        let mut out = String::from(
            "### Throughput and latency (`tools/call echo`)\n\n\
             | server | in flight | requests/s | p50 (µs) | p99 (µs) |\n\
             |---|---:|---:|---:|---:|\n",
        );
        for (name, depth, s) in &self.rows {
            out += &format!(
                "| {name} | {depth} | {:.0} | {:.1} | {:.1} |\n",
                s.rate, s.p50, s.p99
            );
        }
        out + "\n" + &self.against_copying() + &self.cpu_table()
    }

    /// Where each target's calls spent CPU at 64 in flight (one in flight
    /// runs side by side: the phases overlap), and what the record target
    /// leaves record to spend.
    fn cpu_table(&self) -> String {
        let rows: String = (self.rows.iter())
            .filter_map(|(name, depth, s)| Some(cpu::row(name, *depth, s.cpu.as_ref()?, s.rate)))
            .collect();
        if rows.is_empty() {
            return rows;
        }
        let deep = plan().pipelined.depth;
        let relay = self.get(Target::Relay.name(), deep);
        let record = self.get(Target::Record.name(), deep);
        let budget = match (&relay.cpu, &record.cpu) {
            (Some(relay_cpu), Some(record_cpu)) => cpu::record_budget(
                RECORD_LEAST,
                (relay_cpu, relay.rate),
                (record_cpu, record.rate),
            ),
            _ => String::new(),
        };
        cpu::table_head("###", "demo_server") + &rows + &budget + "\n"
    }

    /// Record against the relay that copies through its memory, as record
    /// must: how much of the distance to the bare relay is the copy.
    fn against_copying(&self) -> String {
        let deep = plan().pipelined.depth;
        let serial = plan().serial.depth;
        let record = self.get(Target::Record.name(), deep).rate;
        let copying = self.get(Target::CopyRelay.name(), deep).rate;
        let direct = self.get(Target::Direct.name(), serial).p50;
        let record_added = self.get(Target::Record.name(), serial).p50 - direct;
        let copying_added = self.get(Target::CopyRelay.name(), serial).p50 - direct;
        let relay_added = self.get(Target::Relay.name(), serial).p50 - direct;
        format!(
            "Against the copying relay (`read` and `write`, where the bare relay \
             splices): record {:.2}× its throughput at {deep} in flight; at {serial} in \
             flight record adds {record_added:.1} µs to the direct p50, the copying relay \
             {copying_added:.1} µs, the bare relay {relay_added:.1} µs.\n\n",
            record / copying
        )
    }

    /// The targets the comparison alone decides: record against the bare
    /// relay, replay against the floor.
    fn targets(&self) -> Vec<(String, String, String, bool)> {
        let c = self;
        let deep = plan().pipelined.depth;
        let serial = plan().serial.depth;
        let mut rows = Vec::new();
        let relay = c.get(Target::Relay.name(), deep).rate;
        let record = c.get(Target::Record.name(), deep).rate;
        rows.push((
            format!("record / bare relay throughput, {deep} in flight"),
            format!("{:.2}× ({record:.0} vs {relay:.0} req/s)", record / relay),
            format!("≥ {RECORD_LEAST}×"),
            record / relay >= RECORD_LEAST,
        ));
        let direct = c.get(Target::Direct.name(), serial).p50;
        let record_added = c.get(Target::Record.name(), serial).p50 - direct;
        let relay_added = c.get(Target::Relay.name(), serial).p50 - direct;
        // A relay that seemed to add nothing (noise put its p50 at or
        // under the direct server's) leaves no ratio to quote; the target
        // is then met only by a record that seemed to add less still.
        let ratio = if relay_added > 0.0 {
            format!("{:.2}×", record_added / relay_added)
        } else {
            "no ratio".to_owned()
        };
        rows.push((
            format!("record's added p50 / the bare relay's, {serial} in flight"),
            format!("{ratio} ({record_added:.1} vs {relay_added:.1} µs)"),
            "≤ 1.25×".into(),
            record_added <= 1.25 * relay_added,
        ));
        let floor = c.get(Target::Floor.name(), deep).rate;
        let replay = c.get("replay", deep).rate;
        rows.push((
            format!("replay / floor throughput, {deep} in flight"),
            format!("{:.2}× ({replay:.0} vs {floor:.0} req/s)", replay / floor),
            "≥ 1×".into(),
            replay / floor >= 1.0,
        ));
        rows
    }
}

/// Runs every target at every depth, interleaving rounds so that drift in
/// the machine's speed hits all of them alike.
fn compare(env: &Env) -> io::Result<Comparison> {
    let keys = Keys::new(1_000);
    let replay = write_cassette(
        env,
        keys.distinct,
        keys.copies_for(plan().pipelined.calls()),
    )?;
    let targets = [
        Target::Floor,
        Target::Replay(replay),
        Target::Direct,
        Target::Relay,
        Target::CopyRelay,
        Target::Record,
    ];
    let loads = [plan().serial, plan().pipelined];
    let mut samples: Vec<Vec<Sample>> = (0..targets.len() * loads.len())
        .map(|_| Vec::new())
        .collect();
    let rounds = plan().rounds;
    for round in 1..=rounds {
        progress(&format!("round {round} of {rounds}"));
        for (l, load) in loads.iter().enumerate() {
            // One in flight: the targets side by side (see `paired`).
            if load.depth == 1 {
                let paired = paired(env, &targets, *load, keys)?;
                for (t, sample) in paired.into_iter().enumerate() {
                    samples[l * targets.len() + t].push(sample);
                }
                continue;
            }
            for (t, target) in targets.iter().enumerate() {
                let sample = session(env, target, *load, keys)?;
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

/// Spawn → `initialize` answer, for the floor, the example server and
/// replay of a 1 000-interaction cassette.
struct Startup {
    rows: Vec<(&'static str, Timing)>,
}

fn startup(env: &Env) -> io::Result<Startup> {
    let cassette = write_cassette(env, 1_000, 1)?;
    let targets = [Target::Floor, Target::Direct, Target::Replay(cassette)];
    let mut runs: Vec<Vec<Duration>> = vec![Vec::new(); targets.len()];
    for _ in 0..plan().startup_runs {
        for (target, runs) in targets.iter().zip(&mut runs) {
            runs.push(time_to_initialize(env, target)?);
        }
    }
    let rows = targets
        .iter()
        .zip(runs)
        .map(|(target, runs)| (target.name(), Timing::of(runs)))
        .collect();
    Ok(Startup { rows })
}

/// Spawns `target`, asks `initialize` at once and times the answer.
fn time_to_initialize(env: &Env, target: &Target) -> io::Result<Duration> {
    let (session, startup) = Session::start(env, target)?;
    session.close()?;
    Ok(startup)
}

/// Load time of a cassette of exactly `interactions` echo calls.
struct LoadRow {
    interactions: u64,
    bytes: u64,
    parse: Timing,
    index: Timing,
    startup: Timing,
}

/// Replay throughput with `distinct` keys, each recorded often enough.
struct ScaleRow {
    distinct: u64,
    interactions: u64,
    stats: Stats,
}

struct Scale {
    loads: Vec<LoadRow>,
    rows: Vec<ScaleRow>,
}

fn scale(env: &Env) -> io::Result<Scale> {
    let mut loads = Vec::new();
    for &interactions in plan().scales {
        loads.push(load_row(env, interactions)?);
    }
    let load = plan().pipelined;
    let mut cassettes = Vec::new();
    for &distinct in plan().scales {
        let keys = Keys::new(distinct);
        let copies = keys.copies_for(load.calls());
        cassettes.push((keys, copies, write_cassette(env, distinct, copies)?));
    }
    let mut samples: Vec<Vec<Sample>> = cassettes.iter().map(|_| Vec::new()).collect();
    let rounds = plan().rounds;
    for round in 1..=rounds {
        progress(&format!("scale round {round} of {rounds}"));
        for ((keys, _, path), samples) in cassettes.iter().zip(&mut samples) {
            samples.push(session(env, &Target::Replay(path.clone()), load, *keys)?);
        }
    }
    let rows = cassettes
        .iter()
        .zip(&samples)
        .map(|((keys, copies, _), samples)| ScaleRow {
            distinct: keys.distinct,
            interactions: keys.distinct * copies,
            stats: Stats::of(samples),
        })
        .collect();
    Ok(Scale { loads, rows })
}

/// Loads a cassette of `interactions` echo calls in-process and in a
/// replay process.
fn load_row(env: &Env, interactions: u64) -> io::Result<LoadRow> {
    let path = write_cassette(env, interactions, 1)?;
    let bytes = std::fs::metadata(&path)?.len();
    let (mut parse, mut index, mut startup) = (Vec::new(), Vec::new(), Vec::new());
    let runs = if interactions <= 1_000 {
        plan().startup_runs
    } else {
        plan().load_runs
    };
    for _ in 0..runs {
        let started = Instant::now();
        let loaded = cassette::load(&path).map_err(io::Error::other)?;
        parse.push(started.elapsed());
        let started = Instant::now();
        let engine = Engine::new(loaded, &path);
        index.push(started.elapsed());
        drop(engine);
        startup.push(time_to_initialize(env, &Target::Replay(path.clone()))?);
    }
    Ok(LoadRow {
        interactions,
        bytes,
        parse: Timing::of(parse),
        index: Timing::of(index),
        startup: Timing::of(startup),
    })
}

/// Peak memory (from the child's `getrusage`, via `wait4`) and wall time
/// of replay answering `initialize` and exiting, and of `check`, on the
/// largest cassette.
struct Memory {
    interactions: u64,
    bytes: u64,
    replay_rss: u64,
    replay: Duration,
    check_rss: u64,
    check: Duration,
}

fn memory(env: &Env) -> io::Result<Memory> {
    let interactions = *plan().scales.last().expect("scales");
    let path = write_cassette(env, interactions, 1)?;
    let bytes = std::fs::metadata(&path)?.len();
    let mut request = serde_json::to_vec(&initialize_request())?;
    request.push(b'\n');
    let mut replay = Command::new(&env.mcpcassette);
    replay.arg("replay").arg(&path);
    let (replay, replay_rss) = peak(env, &replay, &request)?;
    let mut check = Command::new(&env.mcpcassette);
    check.arg("check").arg(&path);
    let (check, check_rss) = peak(env, &check, b"")?;
    Ok(Memory {
        interactions,
        bytes,
        replay_rss,
        replay,
        check_rss,
        check,
    })
}

/// Runs `command` to its exit with `input` on its stdin, through a
/// launcher (see [`common::measured`]): its wall time and its own peak
/// resident set size in bytes. A failed run is an error.
fn peak(env: &Env, command: &Command, input: &[u8]) -> io::Result<(Duration, u64)> {
    let report = env.scratch_file("exited", "txt");
    let mut launched = common::measured(command, &report)?;
    launched
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let started = Instant::now();
    let mut child = launched.spawn()?;
    {
        let mut stdin = child.stdin.take().expect("piped");
        stdin.write_all(input)?;
    }
    child.wait()?;
    let took = started.elapsed();
    let exited = common::read_report(&report)?;
    if !exited.succeeded() {
        let status = exited.status;
        return Err(io::Error::other(format!(
            "{command:?} failed (wait status {status})"
        )));
    }
    Ok((took, exited.peak_rss))
}

/// One long recording: how many calls, how fast, the recorder's peak
/// memory (the session and the final write), and the cassette's size.
struct RecordingRow {
    calls: u64,
    rate: f64,
    rss: u64,
    /// CPU time of the recorder over its whole life (with the server it
    /// started, which it reaps).
    cpu: std::time::Duration,
    bytes: u64,
}

/// `record` in front of the example server for each of the plan's session
/// lengths, 64 calls in flight, each call distinct.
fn recording_memory(env: &Env) -> io::Result<Vec<RecordingRow>> {
    let depth = plan().pipelined.depth;
    plan()
        .recordings
        .iter()
        .map(|&calls| {
            let cassette = env.scratch_file("long", "json");
            let target = Target::RecordInto(cassette.clone());
            let (mut session, _) = Session::start_measured(env, &target)?;
            // Distinct calls: a key count coprime with the stride.
            let keys = Keys::new(calls + 1);
            let sample = session.phase(calls as usize, depth, keys)?;
            let exited = session.close_measured()?;
            let bytes = std::fs::metadata(&cassette)?.len();
            std::fs::remove_file(&cassette)?;
            Ok(RecordingRow {
                calls,
                rate: sample.rate,
                rss: exited.peak_rss,
                cpu: exited.cpu,
                bytes,
            })
        })
        .collect()
}

// ---------------------------------------------------------------------------
// The report
// ---------------------------------------------------------------------------

struct Report {
    comparison: Comparison,
    startup: Startup,
    scale: Scale,
    memory: Memory,
    recording: Vec<RecordingRow>,
}

impl Report {
    fn markdown(&self, took: Duration) -> String {
        let mut out = String::new();
        out += &common::machine();
        out += &format!(
            "Rounds: {} (throughput: median round; latency: all requests of all rounds). \
             1 in flight: {} warm-up + {} measured requests per session, the side-by-side \
             targets running at once and called in turn (requests/s = 1 / mean latency); \
             64 in flight: {} + {}. Whole run: {:.0} s.\n\n",
            plan().rounds,
            plan().serial.warmup,
            plan().serial.measured,
            plan().pipelined.warmup,
            plan().pipelined.measured,
            took.as_secs_f64()
        );
        out += &self.comparison.table();
        out += &self.startup_table();
        out += &self.load_table();
        out += &self.scale_table();
        out += &self.memory_table();
        out += &self.recording_table();
        out += &targets_table(&self.targets());
        out
    }

    fn startup_table(&self) -> String {
        let mut out = format!(
            "### Spawn → `initialize` answered ({} runs)\n\n\
             | server | median (ms) | max (ms) |\n|---|---:|---:|\n",
            plan().startup_runs
        );
        for (name, t) in &self.startup.rows {
            let name = if name.starts_with("replay") {
                "replay, 1 000 interactions"
            } else {
                name
            };
            out += &format!("| {name} | {:.2} | {:.2} |\n", t.median, t.max);
        }
        out + "\n"
    }

    fn load_table(&self) -> String {
        let mut out = String::from(
            "### Cassette load time (N echo interactions + handshake)\n\n\
             | N | file size | `cassette::load` median (ms) | `Engine::new` median (ms) \
             | spawn → `initialize` median (ms) | max (ms) |\n\
             |---:|---:|---:|---:|---:|---:|\n",
        );
        for row in &self.scale.loads {
            out += &format!(
                "| {} | {} | {:.2} | {:.2} | {:.2} | {:.2} |\n",
                thousands(row.interactions),
                size(row.bytes),
                row.parse.median,
                row.index.median,
                row.startup.median,
                row.startup.max
            );
        }
        out + "\n"
    }

    fn scale_table(&self) -> String {
        let mut out = format!(
            "### Replay throughput by cassette size ({} in flight)\n\n\
             | N distinct keys | interactions in cassette | requests/s | p50 (µs) | p99 (µs) |\n\
             |---:|---:|---:|---:|---:|\n",
            plan().pipelined.depth
        );
        for row in &self.scale.rows {
            out += &format!(
                "| {} | {} | {:.0} | {:.1} | {:.1} |\n",
                thousands(row.distinct),
                thousands(row.interactions),
                row.stats.rate,
                row.stats.p50,
                row.stats.p99
            );
        }
        out + "\n"
    }

    fn memory_table(&self) -> String {
        let m = &self.memory;
        let ratio = |rss: u64| rss as f64 / m.bytes as f64;
        format!(
            "### Peak memory, {} interactions ({})\n\n\
             | command | wall time (ms) | peak RSS | × file |\n|---|---:|---:|---:|\n\
             | replay: spawn, `initialize`, exit | {:.0} | {} | {:.1} |\n\
             | check | {:.0} | {} | {:.1} |\n\n",
            thousands(m.interactions),
            size(m.bytes),
            m.replay.as_secs_f64() * 1e3,
            size(m.replay_rss),
            ratio(m.replay_rss),
            m.check.as_secs_f64() * 1e3,
            size(m.check_rss),
            ratio(m.check_rss),
        )
    }

    fn recording_table(&self) -> String {
        let mut out = format!(
            "### Recording long sessions ({} in flight)\n\n\
             | calls | requests/s | recorder's CPU per call (µs) | recorder's peak RSS | cassette |\n\
             |---:|---:|---:|---:|---:|\n",
            plan().pipelined.depth
        );
        for row in &self.recording {
            out += &format!(
                "| {} | {:.0} | {:.1} | {} | {} |\n",
                thousands(row.calls),
                row.rate,
                row.cpu.as_secs_f64() * 1e6 / row.calls.max(1) as f64,
                size(row.rss),
                size(row.bytes)
            );
        }
        out + "\n"
    }

    /// (figure, measured, target, met) for each target, against the
    /// baselines of the same run.
    fn targets(&self) -> Vec<(String, String, String, bool)> {
        let c = &self.comparison;
        let mut rows = Vec::new();
        let limits = [(10, 2.0), (1_000, 3.0), (100_000, 150.0)];
        let floor_startup = self
            .startup
            .rows
            .iter()
            .find(|(name, _)| *name == Target::Floor.name())
            .map_or(f64::NAN, |(_, t)| t.median);
        for load in &self.scale.loads {
            let Some((_, limit)) = limits.iter().find(|(n, _)| *n == load.interactions) else {
                continue;
            };
            rows.push((
                format!(
                    "replay spawn → `initialize`, {} interactions, median",
                    thousands(load.interactions)
                ),
                format!(
                    "{:.2} ms ({:.1}× the floor's {floor_startup:.2})",
                    load.startup.median,
                    load.startup.median / floor_startup
                ),
                format!("≤ {limit} ms"),
                load.startup.median <= *limit,
            ));
        }
        let m = &self.memory;
        let times = |rss: u64| rss as f64 / m.bytes as f64;
        rows.push((
            format!("replay peak RSS, {} cassette", size(m.bytes)),
            format!(
                "{} ({:.1}× the file)",
                size(m.replay_rss),
                times(m.replay_rss)
            ),
            "≤ 3× the file".into(),
            times(m.replay_rss) <= 3.0,
        ));
        rows.push((
            format!("`check`, {} cassette, time", size(m.bytes)),
            format!("{:.2} s", m.check.as_secs_f64()),
            "≤ 0.5 s".into(),
            m.check.as_secs_f64() <= 0.5,
        ));
        rows.push((
            format!("`check`, {} cassette, peak RSS", size(m.bytes)),
            format!(
                "{} ({:.1}× the file)",
                size(m.check_rss),
                times(m.check_rss)
            ),
            "≤ 3× the file".into(),
            times(m.check_rss) <= 3.0,
        ));
        rows.extend(c.targets());
        let small = self.scale.rows.first().expect("scales");
        let large = self.scale.rows.last().expect("scales");
        let ratio = large.stats.rate / small.stats.rate;
        rows.push((
            format!(
                "replay throughput, {} vs {} keys",
                thousands(large.distinct),
                thousands(small.distinct)
            ),
            format!(
                "{:.0} % ({:.0} vs {:.0} req/s)",
                ratio * 100.0,
                large.stats.rate,
                small.stats.rate
            ),
            "≥ 85 %".into(),
            ratio >= 0.85,
        ));
        for row in &self.recording {
            rows.push((
                format!("record's peak RSS, {} calls", thousands(row.calls)),
                size(row.rss),
                "≤ 64 MiB".into(),
                row.rss <= 64 << 20,
            ));
        }
        rows
    }
}

/// The targets as a table, each with PASS or MISS.
fn targets_table(targets: &[(String, String, String, bool)]) -> String {
    let mut out = String::from(
        "### Targets\n\n| figure | measured | target | result |\n|---|---:|---:|---|\n",
    );
    for (figure, measured, target, pass) in targets {
        let verdict = if *pass { "PASS" } else { "MISS" };
        out += &format!("| {figure} | {measured} | {target} | {verdict} |\n");
    }
    out
}

fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(' ');
        }
        out.push(c);
    }
    out
}

fn size(bytes: u64) -> String {
    match bytes {
        b if b >= 1 << 20 => format!("{:.1} MiB", b as f64 / (1 << 20) as f64),
        b if b >= 1 << 10 => format!("{:.1} KiB", b as f64 / (1 << 10) as f64),
        b => format!("{b} B"),
    }
}
