//! Where a target's calls spend CPU: the client, the server behind a
//! proxy, and the target itself, read from Linux's `/proc` around a
//! measured phase. On two cores that all of them share, throughput is set
//! by what they spend per call together, so this says where a ratio
//! comes from.

use std::path::Path;
use std::time::Duration;

/// How long the calling thread has run on a CPU so far; `None` where
/// Linux's `/proc` is not there.
pub fn thread() -> Option<Duration> {
    task(Path::new("/proc/thread-self"))
}

/// The user and system time of process `pid` so far, threads that have
/// ended included (the example stdio server runs each request on a
/// thread of its own). Linux counts it in ticks of 10 ms (`USER_HZ` is
/// 100 on every architecture); a measured phase runs for seconds.
pub fn process(pid: u32) -> Option<Duration> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // After the command name, which may hold spaces and parentheses;
    // `state`, field 3, comes first, so `utime` and `stime` (fields 14
    // and 15) are at 11 and 12.
    let fields: Vec<&str> = text
        .get(text.rfind(')')? + 1..)?
        .split_whitespace()
        .collect();
    let ticks = |at: usize| fields.get(at)?.parse::<u64>().ok();
    Some(Duration::from_millis((ticks(11)? + ticks(12)?) * 10))
}

/// [`process`] of every process `pid` started that still runs; `None`
/// if it started none. (The stdio targets start the servers they relay;
/// the HTTP bench starts every process itself.)
#[allow(dead_code)]
pub fn children(pid: u32) -> Option<Duration> {
    let listed = std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/children")).ok()?;
    let mut children = listed.split_whitespace().peekable();
    children.peek()?;
    children.map(|child| process(child.parse().ok()?)).sum()
}

/// The first field of a task's `schedstat`: nanoseconds on a CPU.
fn task(task: &Path) -> Option<Duration> {
    let text = std::fs::read_to_string(task.join("schedstat")).ok()?;
    let nanos = text.split_whitespace().next()?.parse().ok()?;
    Some(Duration::from_nanos(nanos))
}

/// CPU time so far, or spent over a phase.
#[derive(Debug, Clone, Copy, Default)]
pub struct Spent {
    /// The driver's threads.
    pub client: Duration,
    /// The server behind the target, when the target is a proxy.
    pub upstream: Option<Duration>,
    /// The process the client talks to.
    pub front: Duration,
}

impl Spent {
    /// What was spent from `before` to `self`.
    pub fn since(self, before: Spent) -> Spent {
        Spent {
            client: self.client.saturating_sub(before.client),
            upstream: self
                .upstream
                .zip(before.upstream)
                .map(|(after, before)| after.saturating_sub(before)),
            front: self.front.saturating_sub(before.front),
        }
    }
}

/// CPU per measured call, in microseconds.
#[derive(Debug, Clone, Copy)]
pub struct PerCall {
    pub client: f64,
    pub upstream: Option<f64>,
    pub front: f64,
}

impl PerCall {
    /// Over phases of (CPU spent, calls measured); `None` unless every
    /// phase has its CPU.
    pub fn of<'a>(phases: impl IntoIterator<Item = (Option<&'a Spent>, usize)>) -> Option<Self> {
        let mut total = Spent::default();
        let mut calls = 0;
        for (spent, n) in phases {
            let spent = spent?;
            total.client += spent.client;
            total.front += spent.front;
            total.upstream = match (total.upstream, spent.upstream) {
                (Some(sum), Some(more)) => Some(sum + more),
                (None, more) if calls == 0 => more,
                _ => None,
            };
            calls += n;
        }
        let per_call = |d: Duration| d.as_secs_f64() * 1e6 / calls.max(1) as f64;
        Some(PerCall {
            client: per_call(total.client),
            upstream: total.upstream.map(per_call),
            front: per_call(total.front),
        })
    }

    /// What every process spent per call together.
    pub fn total(&self) -> f64 {
        self.client + self.upstream.unwrap_or(0.0) + self.front
    }
}

/// The head of a table of [`row`]s; `upstream` names the server behind
/// the proxies.
pub fn table_head(level: &str, upstream: &str) -> String {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    format!(
        "{level} CPU per measured call\n\n\
         Each process's user and system time over the measured phase (`/proc/PID/stat`, \
         in 10 ms ticks), the client's threads' from their `schedstat`, divided by the calls \
         measured. Cores busy: all of it × requests/s (this machine has {cores}); \
         when that is near {cores}, throughput is set by CPU per call.\n\n\
         | target | in flight | client (µs) | {upstream} behind it (µs) \
         | the target (µs) | all (µs) | cores busy |\n\
         |---|---:|---:|---:|---:|---:|---:|\n"
    )
}

/// One target's row: its CPU per call at `rate` requests/s.
pub fn row(name: &str, depth: usize, cpu: &PerCall, rate: f64) -> String {
    let upstream = cpu.upstream.map_or("—".to_owned(), |u| format!("{u:.1}"));
    format!(
        "| {name} | {depth} | {:.1} | {upstream} | {:.1} | {:.1} | {:.2} |\n",
        cpu.client,
        cpu.front,
        cpu.total(),
        cpu.total() * rate / 1e6
    )
}

/// What a throughput `least` × the bare relay's leaves record to spend per
/// call. On cores kept as busy in both runs, throughput is the inverse of
/// what every process spends per call together, so `least` × the relay's
/// throughput allows at most 1/`least` of the relay run's CPU per call;
/// minus what the client and the server spent with record in front, that
/// is record's share. Both runs' cores busy are quoted: the reckoning
/// holds as far as they agree.
pub fn record_budget(least: f64, relay: (&PerCall, f64), record: (&PerCall, f64)) -> String {
    let ((relay, relay_rate), (record, record_rate)) = (relay, record);
    let allowed = relay.total() / least;
    let others = record.client + record.upstream.unwrap_or(0.0);
    format!(
        "\nRecord ÷ bare relay ≥ {least}× in CPU: the relay's run spent {:.1} µs of CPU per \
         call (client, server and relay together) and kept {:.2} cores busy, record's run \
         {:.2}. On cores as busy, {least}× the relay's throughput allows {allowed:.1} µs a \
         call. With record in front the client and the server spent {others:.1} µs, which \
         leaves record {:.1} µs; it spent {:.1} µs (the bare relay {:.1}).\n",
        relay.total(),
        relay.total() * relay_rate / 1e6,
        record.total() * record_rate / 1e6,
        allowed - others,
        record.front,
        relay.front,
    )
}
