//! What both benchmarks need: the built binaries, a scratch folder, and the
//! same statistics and machine description, so their figures compare.

use std::io;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::thread;
use std::time::Duration;

/// Names an `mcpcassette` binary to measure instead of this tree's.
pub const BINARY_VAR: &str = "MCPCASSETTE_BENCH_BINARY";

/// Builds the binaries and examples with the bench profile (release
/// settings, same output folder, so nothing is built twice); returns the
/// `mcpcassette` binary and the example named `example`.
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
            "bench",
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

/// What a child's life cost, from `wait4`.
pub struct Exited {
    /// The wait status.
    pub status: i32,
    /// Peak resident set size, in bytes.
    pub peak_rss: u64,
    /// User plus system CPU time: what it cost, whatever the machine's
    /// other load did to its wall-clock rate.
    pub cpu: Duration,
}

/// Waits for child `pid` to exit, and reports what its life cost.
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
