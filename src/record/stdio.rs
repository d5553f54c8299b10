//! Recording a stdio server.
//!
//! Plain threads do the forwarding: one copies client → server, one copies
//! server → client, every byte unchanged. Before forwarding a line each
//! appends it to the [`Tape`], which journals it with one copy and keeps
//! it until the watcher takes it: every 100 ms the watcher checks the new
//! lines against the schema and files them into a [`Builder`] that spills
//! settled interactions to disk. Nothing but the journal's copy sits
//! between the client and the server, no thread is woken per message, and
//! a session of any length is recorded in the memory of what is in flight.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::PathBuf;
use std::process::ExitStatus;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread;
use std::time::Duration;

use nix::sys::signal::{self, SigSet, Signal};
use nix::unistd::Pid;

use super::Observer;
use super::error::RecordError;
use super::tape::Tape;
use super::watch::Watch;
use crate::cassette::{self, Builder, Direction, Journal, Recovery, Transport};

/// What to record and where.
#[derive(Clone)]
pub struct RecordConfig {
    /// The cassette to write; `None` forwards without recording
    /// (`passthrough`).
    pub cassette: Option<PathBuf>,
    /// The server command and its arguments.
    pub command: Vec<String>,
    /// What to mask before anything reaches the disk.
    pub redaction: super::Redaction,
    /// Sees every line after it was forwarded (`mcpcassette inspect`).
    pub observer: Option<Arc<dyn Observer>>,
    /// The scope this is one server process of (`run --scope`); `None`
    /// records one process into the cassette, replacing it.
    pub scope: Option<super::ScopedRecording>,
}

impl std::fmt::Debug for RecordConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RecordConfig")
            .field("cassette", &self.cassette)
            .field("command", &self.command)
            .field("redaction", &self.redaction)
            .field("observer", &self.observer.is_some())
            .field("scope", &self.scope)
            .finish()
    }
}

/// How a recording ended.
#[derive(Debug)]
pub struct RecordOutcome {
    /// The server's exit code (128 + signal number if a signal ended it).
    pub exit_code: i32,
    /// Completed interactions written to the cassette.
    pub interactions: usize,
    /// Journals left by earlier, interrupted recordings, recovered into
    /// the cassette before this recording replaced (or joined) it.
    pub recovered: Vec<Recovery>,
}

/// Runs the server, forwards this process's stdin and stdout to it, and
/// writes the cassette when the server exits. SIGINT and SIGTERM are passed
/// on to the server; the cassette is written after it exits.
pub fn record_stdio(config: &RecordConfig) -> Result<RecordOutcome, RecordError> {
    let scope = config.scope.as_ref();
    let (recovered, kept_rules) = super::previous(config.cassette.as_deref(), scope)?;
    let (kept_rules, redactor) = super::redaction_rules(kept_rules, &config.redaction)?;
    let transport = match std::env::current_dir() {
        Ok(cwd) => {
            cassette::stdio_transport(&config.command, &cwd, config.cassette.as_deref(), &redactor)
        }
        Err(_) => Transport::Stdio {
            command: redactor.mask_command(&config.command),
            cwd: None,
        },
    };
    // Every process of a scope carries the scope's stamp: that is what
    // makes them one recording (`Finished::save_as_process`).
    let (recorded_at, process) = match scope {
        Some(scoped) => (scoped.member.recorded_at.clone(), scoped.member.ordinal),
        None => (crate::cassette::now_rfc3339(), 0),
    };
    let tape = match &config.cassette {
        Some(path) => Some(Arc::new(Mutex::new(Tape::new(
            Journal::create_for_process(path, process, &recorded_at, &transport, &kept_rules)?,
            redactor,
        )))),
        None => None,
    };

    let mut child = crate::client::spawn(&config.command, None)?;
    let server_in = child.stdin.take().expect("stdin is piped");
    let server_out = child.stdout.take().expect("stdout is piped");

    // Block the signals in this thread before starting the others, so that
    // only the forwarding thread receives them (the child started with the
    // normal mask).
    let signals = forwarded_signals();
    signals.thread_block().map_err(RecordError::Signals)?;
    let pid = Pid::from_raw(child.id() as i32);
    thread::spawn(move || forward_signals(signals, pid));

    let watcher = tape
        .clone()
        .zip(config.cassette.as_deref())
        .map(|(tape, path)| {
            let builder = Builder::new(recorded_at.clone(), transport.clone());
            Watcher::start(tape, spilling(builder, path))
        });
    let to_server = tape.clone();
    let observer = config.observer.clone();
    thread::spawn(move || {
        let stdin = std::io::stdin().lock();
        pump(
            stdin,
            server_in,
            Direction::ClientToServer,
            to_server,
            observer,
            OnWriteError::Stop,
        );
    });
    let to_client = tape.clone();
    let observer = config.observer.clone();
    let server_to_client = thread::spawn(move || {
        let stdout = std::io::stdout().lock();
        pump(
            server_out,
            stdout,
            Direction::ServerToClient,
            to_client,
            observer,
            OnWriteError::Drain,
        );
    });

    let status = child.wait().map_err(RecordError::Wait)?;
    let _ = server_to_client.join();
    // Before the tape is finished, which takes its last lines.
    let (breaks, builder) = match watcher {
        Some(watcher) => {
            let (breaks, builder) = watcher.finish();
            (breaks, Some(builder))
        }
        None => (0, None),
    };
    let mut interactions = 0;
    if let (Some(tape), Some(path), Some(builder)) = (tape, &config.cassette, builder) {
        // The client-to-server pump may still be blocked reading stdin;
        // what it taped so far is all there is.
        let (builder, journal) = lock(&tape).finish(builder)?;
        interactions = builder.completed();
        let mut recorded = builder.finish_streamed();
        recorded.header.rules = kept_rules;
        match scope {
            Some(scoped) => {
                scoped.save(path, recorded)?;
            }
            None => {
                super::save_finished(path, recorded)?;
            }
        }
        journal.remove()?;
    }
    if breaks > 0 {
        tracing::warn!(
            "{breaks} message(s) broke the MCP schema of the session's version; `mcpcassette check` on the cassette lists them"
        );
    }
    Ok(RecordOutcome {
        exit_code: exit_code(status),
        interactions,
        recovered,
    })
}

/// `builder`, spilling settled interactions beside `cassette`; as it is
/// (everything in memory) if no spill file can be made there.
fn spilling(mut builder: Builder, cassette: &std::path::Path) -> Builder {
    if let Err(e) = builder.spill_beside(cassette) {
        tracing::warn!(
            "cannot make a spill file beside {} ({e}); the session is kept in memory",
            cassette.display()
        );
    }
    builder
}

fn forwarded_signals() -> SigSet {
    let mut set = SigSet::empty();
    set.add(Signal::SIGINT);
    set.add(Signal::SIGTERM);
    set
}

fn forward_signals(signals: SigSet, server: Pid) {
    while let Ok(sig) = signals.wait() {
        tracing::info!("received {sig}, passing it on to the server");
        let _ = signal::kill(server, sig);
    }
}

fn exit_code(status: ExitStatus) -> i32 {
    use std::os::unix::process::ExitStatusExt;
    status
        .code()
        .or_else(|| status.signal().map(|s| 128 + s))
        .unwrap_or(1)
}

/// What a pump does when writing to its destination fails.
#[derive(Debug, Clone, Copy)]
enum OnWriteError {
    /// Stop: the server is gone, nothing more can reach it.
    Stop,
    /// Keep reading and recording: the client may have gone, but the server
    /// must never block on a full pipe.
    Drain,
}

/// Checks taped lines against the MCP schema on a thread of its own,
/// waking every [`Watcher::PERIOD`] to take what was taped since: in taping
/// order (causal order, so answers meet their requests), and with nothing
/// added to the forwarding path, not even a wake-up per line.
struct Watcher {
    done: Arc<AtomicBool>,
    thread: thread::JoinHandle<(usize, Builder)>,
}

impl Watcher {
    const PERIOD: Duration = Duration::from_millis(100);

    /// Starts watching `tape`, filing what it checks into `builder`. Call
    /// it after the signals are blocked, like every thread but the one
    /// that forwards them.
    fn start(tape: Arc<Mutex<Tape>>, mut builder: Builder) -> Watcher {
        let done = Arc::new(AtomicBool::new(false));
        let stop = done.clone();
        let thread = thread::spawn(move || {
            let mut watch = Watch::default();
            loop {
                let last = stop.load(Ordering::Acquire);
                // Taken under the lock, checked and filed outside it.
                let lines = lock(&tape).take();
                for (direction, line, at) in lines {
                    let Some(message) = super::tape::parse(direction, &line) else {
                        continue;
                    };
                    for warning in watch.parsed(direction, &message) {
                        tracing::warn!("{warning}");
                    }
                    builder.observe_at(direction, message, at);
                }
                if last {
                    return (watch.breaks(), builder);
                }
                thread::park_timeout(Self::PERIOD);
            }
        });
        Watcher { done, thread }
    }

    /// Checks and files what is left (call it before the tape is
    /// finished): how many breaks there were, and the builder.
    fn finish(self) -> (usize, Builder) {
        self.done.store(true, Ordering::Release);
        self.thread.thread().unpark();
        self.thread
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
    }
}

/// Copies lines from `input` to `output` unchanged, taping each one before
/// it is forwarded, so a request always precedes the response it causes,
/// and showing each one forwarded to `observer` right after the write.
/// The lines one read brought in are taped together (one journal append)
/// and forwarded together (one `write`), as a bare relay forwards what it
/// read: with many requests in flight, a line costs no syscall of its own.
/// Ends at end of input; dropping `output` then closes it (for the server's
/// stdin, that is how a stdio client asks it to shut down).
fn pump(
    input: impl Read,
    mut output: impl Write,
    direction: Direction,
    tape: Option<Arc<Mutex<Tape>>>,
    observer: Option<Arc<dyn Observer>>,
    on_write_error: OnWriteError,
) {
    let mut input = BufReader::with_capacity(64 * 1024, input);
    let mut lines = Vec::with_capacity(4096);
    loop {
        lines.clear();
        // One line, waiting for it if need be, then every whole line
        // already read, without waiting.
        match input.read_until(b'\n', &mut lines) {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        let buffered = input.buffer();
        if lines.ends_with(b"\n")
            && let Some(end) = memchr::memrchr(b'\n', buffered)
        {
            lines.extend_from_slice(&buffered[..=end]);
            input.consume(end + 1);
        }
        if let Some(tape) = &tape {
            lock(tape).record(direction, &lines);
        }
        let written = output.write_all(&lines).and_then(|()| output.flush());
        if let Some(observer) = &observer
            && written.is_ok()
        {
            for line in lines.split_inclusive(|&b| b == b'\n') {
                observer.message(direction, line);
            }
        }
        if written.is_err() && matches!(on_write_error, OnWriteError::Stop) {
            break;
        }
    }
}

fn lock<T>(shared: &Mutex<T>) -> MutexGuard<'_, T> {
    shared
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every line an observer was shown.
    #[derive(Default)]
    struct Seen(Mutex<Vec<Vec<u8>>>);

    impl Observer for Seen {
        fn message(&self, _: Direction, line: &[u8]) {
            lock(&self.0).push(line.to_vec());
        }
    }

    #[test]
    fn lines_read_together_are_journalled_before_they_are_forwarded_unchanged() {
        let dir = tempfile::tempdir().unwrap();
        let cassette = dir.path().join("c.json");
        let transport = Transport::Stdio {
            command: vec!["server".into()],
            cwd: None,
        };
        let journal = Journal::create(
            &cassette,
            "2026-01-01T00:00:00Z",
            &transport,
            &Default::default(),
        )
        .unwrap();
        let tape = Arc::new(Mutex::new(Tape::new(
            journal,
            crate::redact::Redactor::defaults(),
        )));
        // One read brings them all: a blank line, a CRLF, no final newline.
        let input: &[u8] = b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n\n\
            {\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\r\n\
            {\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}";
        let seen = Arc::new(Seen::default());
        let mut output = Vec::new();
        pump(
            input,
            &mut output,
            Direction::ClientToServer,
            Some(tape.clone()),
            Some(seen.clone() as Arc<dyn Observer>),
            OnWriteError::Stop,
        );
        assert_eq!(output, input);
        let each: Vec<Vec<u8>> = input
            .split_inclusive(|&b| b == b'\n')
            .map(<[u8]>::to_vec)
            .collect();
        assert_eq!(*lock(&seen.0), each);
        let taped: Vec<Vec<u8>> = lock(&tape)
            .take()
            .into_iter()
            .map(|(_, line, _)| line)
            .collect();
        let messages: Vec<&[u8]> = [&each[0], &each[2], &each[3]]
            .iter()
            .map(|line| line.trim_ascii())
            .collect();
        assert_eq!(taped, messages);
        let journal = std::fs::read_to_string(cassette::journal_path(&cassette)).unwrap();
        // Still open: reserved space follows the lines, as zeros.
        let entries: Vec<&str> = journal.trim_end_matches('\0').lines().skip(1).collect();
        assert_eq!(entries.len(), 3, "{journal}");
        for (entry, message) in entries.iter().zip(&messages) {
            let expected = format!(
                "{{\"dir\":\"c2s\",\"msg\":{}}}",
                std::str::from_utf8(message).unwrap()
            );
            assert_eq!(*entry, expected);
        }
    }
}
