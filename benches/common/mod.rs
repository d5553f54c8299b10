//! What both benchmarks need: the built binaries, a scratch folder, and the
//! same statistics and machine description, so their figures compare.

use std::io;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::thread;
use std::time::Duration;

pub mod cpu;

/// Names an `mcpcassette` binary to measure instead of this tree's.
pub const BINARY_VAR: &str = "MCPCASSETTE_BENCH_BINARY";

/// The profile this bench was built with, and builds what it measures
/// with: `bench` for figures; `dev` only for CI's smoke run, whose figures
/// mean nothing.
pub const PROFILE: &str = if cfg!(debug_assertions) {
    "dev"
} else {
    "bench"
};

/// Builds the binaries and examples with the profile this bench was built
/// with (same output folder, so nothing is built twice): `bench` for
/// figures, `dev` for CI's smoke (`cargo bench --profile dev -- --quick`),
/// which reuses what `cargo test` built. Returns the `mcpcassette` binary
/// and the example named `example`.
pub fn build(example: &str) -> io::Result<(PathBuf, PathBuf)> {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.toml");
    let mut cargo = Command::new(env!("CARGO"));
    // Cargo sets these for the bench it runs, not for a build it is asked
    // for; passed on, they would differ from `cargo bench`'s own build and
    // rerun the build scripts that track them (ring's reads
    // CARGO_MANIFEST_DIR and CARGO_PKG_*), so every run rebuilt ring,
    // rustls and mcpcassette twice.
    for (name, _) in std::env::vars_os() {
        let Some(name) = name.to_str() else { continue };
        let set_for_the_bench = ["CARGO_PKG_", "CARGO_MANIFEST_", "CARGO_BIN_EXE_"]
            .iter()
            .any(|prefix| name.starts_with(prefix))
            || [
                "CARGO_CRATE_NAME",
                "CARGO_PRIMARY_PACKAGE",
                "CARGO_TARGET_TMPDIR",
            ]
            .contains(&name);
        if set_for_the_bench {
            cargo.env_remove(name);
        }
    }
    let status = cargo
        .args([
            "build",
            "--profile",
            PROFILE,
            "--bins",
            "--examples",
            "--manifest-path",
        ])
        .arg(&manifest)
        .status()?;
    if !status.success() {
        return Err(io::Error::other(format!("cargo build failed: {status}")));
    }
    // Cargo builds the binary before running a bench and names it here.
    let built = PathBuf::from(env!("CARGO_BIN_EXE_mcpcassette"));
    let profile_dir = built.parent().expect("a binary lives in a folder");
    // Another build to measure instead (an earlier commit's, for a
    // before/after in one run); the examples and baselines stay these.
    let mcpcassette = match std::env::var_os(BINARY_VAR) {
        Some(other) => {
            let other = PathBuf::from(other);
            eprintln!("measuring {} ({BINARY_VAR})", other.display());
            other
        }
        None => built.clone(),
    };
    let example = profile_dir.join("examples").join(example);
    if !example.exists() {
        let missing = example.display();
        return Err(io::Error::other(format!("{missing} was not built")));
    }
    Ok((mcpcassette, example))
}

/// A temporary folder handing out fresh file names.
pub struct Scratch {
    dir: tempfile::TempDir,
    files: AtomicUsize,
}

impl Scratch {
    pub fn new() -> io::Result<Scratch> {
        Ok(Scratch {
            dir: tempfile::tempdir()?,
            files: AtomicUsize::new(0),
        })
    }

    /// A fresh path in the folder.
    pub fn file(&self, stem: &str, ext: &str) -> PathBuf {
        let n = self.files.fetch_add(1, Ordering::Relaxed);
        self.dir.path().join(format!("{stem}-{n}.{ext}"))
    }
}

/// The value at percentile `p` of `sorted` (nearest rank).
pub fn percentile<T: Copy>(sorted: &[T], p: f64) -> T {
    let rank = (p / 100.0 * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

/// One line naming the CPU, the cores available and the kernel.
pub fn machine() -> String {
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let cpu = cpuinfo
        .lines()
        .find_map(|l| l.strip_prefix("model name"))
        .and_then(|l| l.split_once(':'))
        .map_or("unknown CPU", |(_, name)| name.trim());
    let cores = thread::available_parallelism().map_or(0, |n| n.get());
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
    format!(
        "Machine: {cpu}, {cores} cores available, Linux {}.\n\n",
        kernel.trim()
    )
}

/// Makes a bench binary the launcher of a measured child:
/// `BENCH --measure REPORT -- PROGRAM ARGS...` (see [`measured`]).
pub const MEASURE_FLAG: &str = "--measure";

/// What a child's life cost, from `wait4`.
#[derive(Debug, Clone, Copy)]
pub struct Exited {
    /// The wait status.
    pub status: i32,
    /// Peak resident set size, in bytes.
    pub peak_rss: u64,
    /// User plus system CPU time: what it cost, whatever the machine's
    /// other load did to its wall-clock rate.
    pub cpu: Duration,
}

impl Exited {
    /// Whether it exited with status 0.
    pub fn succeeded(&self) -> bool {
        nix::libc::WIFEXITED(self.status) && nix::libc::WEXITSTATUS(self.status) == 0
    }
}

/// `command`, started through a fresh launcher process (this bench
/// binary with [`MEASURE_FLAG`]) that writes the command's [`Exited`] to
/// `report` once it exits; read it with [`read_report`].
///
/// Why: on Linux, `exec` carries the old address space's peak into the
/// new program's `ru_maxrss`, and a spawned child's old address space is
/// its parent's. A child of the bench, once the bench has built a 46 MB
/// cassette, reports at least the bench's own peak. The launcher is a
/// fresh, small process, so the command's figure is its own, give or take
/// the launcher's few MiB. Stdio passes through; SIGINT, SIGTERM and
/// SIGHUP are forwarded to the command.
pub fn measured(command: &Command, report: &Path) -> io::Result<Command> {
    let mut launcher = Command::new(std::env::current_exe()?);
    launcher
        .arg(MEASURE_FLAG)
        .arg(report)
        .arg("--")
        .arg(command.get_program())
        .args(command.get_args());
    for (name, value) in command.get_envs() {
        match value {
            Some(value) => launcher.env(name, value),
            None => launcher.env_remove(name),
        };
    }
    if let Some(dir) = command.get_current_dir() {
        launcher.current_dir(dir);
    }
    Ok(launcher)
}

/// The report a launcher wrote (see [`measured`]), once it has exited.
pub fn read_report(report: &Path) -> io::Result<Exited> {
    let text = std::fs::read_to_string(report)?;
    let fields: Vec<u64> = text
        .split_whitespace()
        .map(str::parse)
        .collect::<Result<_, _>>()
        .map_err(io::Error::other)?;
    let [status, peak_rss, cpu_ns] = fields[..] else {
        return Err(io::Error::other(format!(
            "{}: not a launcher's report: {text:?}",
            report.display()
        )));
    };
    Ok(Exited {
        status: status as i32,
        peak_rss,
        cpu: Duration::from_nanos(cpu_ns),
    })
}

/// The launcher: `args` are what follows [`MEASURE_FLAG`]. Runs the
/// command, forwards the signals that stop it, writes its report and
/// exits as it did.
pub fn launch(args: &[String]) -> io::Result<()> {
    use nix::sys::signal::{SigSet, Signal, kill};
    use std::os::unix::process::CommandExt;
    const USAGE: &str = "usage: --measure REPORT -- PROGRAM ARGS...";
    let [report, dashes, program, rest @ ..] = args else {
        return Err(io::Error::other(USAGE));
    };
    if dashes != "--" {
        return Err(io::Error::other(USAGE));
    }
    let mut forwarded = SigSet::empty();
    for signal in [Signal::SIGINT, Signal::SIGTERM, Signal::SIGHUP] {
        forwarded.add(signal);
    }
    // Blocked here, so that the thread below takes them; unblocked in the
    // command before it runs.
    forwarded.thread_block().map_err(io::Error::other)?;
    let mut command = Command::new(program);
    command.args(rest);
    // SAFETY: only async-signal-safe system calls run in the child.
    unsafe {
        command.pre_exec(move || {
            forwarded.thread_unblock()?;
            // Dies with the launcher, however it ends.
            nix::sys::prctl::set_pdeathsig(Signal::SIGKILL)?;
            Ok(())
        });
    }
    let child = command.spawn()?;
    let pid = nix::unistd::Pid::from_raw(child.id() as i32);
    thread::spawn(move || {
        while let Ok(signal) = forwarded.wait() {
            let _ = kill(pid, signal);
        }
    });
    let exited = wait_measured(child.id())?;
    let cpu = exited.cpu.as_nanos();
    std::fs::write(
        report,
        format!("{} {} {cpu}\n", exited.status, exited.peak_rss),
    )?;
    let status = exited.status;
    let code = if nix::libc::WIFEXITED(status) {
        nix::libc::WEXITSTATUS(status)
    } else {
        128 + nix::libc::WTERMSIG(status)
    };
    std::process::exit(code)
}

/// Waits for child `pid` to exit, and reports what its life cost. Its
/// peak RSS is at least its parent's at the spawn: see [`measured`].
pub fn wait_measured(pid: u32) -> io::Result<Exited> {
    let pid = pid as nix::libc::pid_t;
    let mut status = 0;
    // SAFETY: `rusage` is plain data that wait4 fills in; the child is
    // ours and not waited for elsewhere.
    let mut usage: nix::libc::rusage = unsafe { std::mem::zeroed() };
    let waited = unsafe { nix::libc::wait4(pid, &mut status, 0, &mut usage) };
    if waited != pid {
        return Err(io::Error::last_os_error());
    }
    let time = |t: nix::libc::timeval| {
        Duration::from_secs(t.tv_sec as u64) + Duration::from_micros(t.tv_usec as u64)
    };
    Ok(Exited {
        status,
        // ru_maxrss is in KiB on Linux.
        peak_rss: usage.ru_maxrss as u64 * 1024,
        cpu: time(usage.ru_utime) + time(usage.ru_stime),
    })
}
