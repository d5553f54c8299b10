//! An append-only file that the recorder writes through a memory map.
//!
//! The journal is written before each message is forwarded, so its writes
//! sit on the forwarding path: a `write` system call per message. Copying
//! into a shared mapping of the file keeps the same guarantee at the cost
//! of a `memcpy`: the pages belong to the kernel's page cache, so a killed
//! recorder loses nothing it copied, exactly as with `write` (neither
//! survives a power cut; neither calls `fsync`).
//!
//! The file is mapped a window at a time, each reserved on disk first with
//! `fallocate`: a full disk then fails the reservation with an error,
//! where writing to a page without a block behind it would kill the
//! process with `SIGBUS`. Until the file is closed its tail past the last
//! byte appended is zeros; closing cuts it off, and recovery reads a zero
//! byte where a line should start as the end. Where a file system cannot
//! reserve space (or outside Linux), appends fall back to `write`.

use std::fs::File;
use std::io::{self, Seek, Write};

/// How much of the file is mapped and reserved at a time. Pages leave the
/// recorder's memory with their window (they stay in the page cache), so
/// this bounds what the journal adds to its resident size.
const WINDOW: usize = 1 << 20;

/// The size mmap offsets are aligned to (a multiple of every page size
/// Linux runs with on the architectures we ship).
const ALIGN: u64 = 64 * 1024;

/// An append-only file: through a memory-mapped window when it can be,
/// else with `write`.
#[derive(Debug)]
pub(crate) struct Appender {
    file: File,
    /// The window appends go to; `None` before the first one, and always
    /// when appending with `write`.
    window: Option<Window>,
    /// Bytes appended so far: where the next append starts.
    len: u64,
    /// Whether appends go through a map (else with `write`).
    mapped: bool,
}

/// A mapped stretch of the file, starting at an aligned offset.
#[derive(Debug)]
struct Window {
    map: memmap2::MmapMut,
    /// Where the map starts in the file.
    start: u64,
}

impl Appender {
    /// Appends to `file`, empty and opened for reading and writing (as a
    /// shared writable map needs), from its start.
    pub(crate) fn new(file: File) -> Self {
        Appender {
            file,
            window: None,
            len: 0,
            mapped: cfg!(target_os = "linux"),
        }
    }

    /// Appends `bytes`: with one copy when they fit the current window.
    pub(crate) fn append(&mut self, bytes: &[u8]) -> io::Result<()> {
        if !self.mapped {
            self.file.write_all(bytes)?;
            self.len += bytes.len() as u64;
            return Ok(());
        }
        let end = self.len + bytes.len() as u64;
        let fits = self
            .window
            .as_ref()
            .is_some_and(|w| end <= w.start + w.map.len() as u64);
        if !fits && !self.next_window(end)? {
            // Space cannot be reserved here: `write` from now on.
            return self.append(bytes);
        }
        let window = self.window.as_mut().expect("a window was mapped");
        let at = (self.len - window.start) as usize;
        window.map[at..at + bytes.len()].copy_from_slice(bytes);
        self.len = end;
        Ok(())
    }

    /// Maps the window that holds the file from the last append's end to
    /// `end`, reserving it first. `Ok(false)` when this file system cannot
    /// reserve space: appends then go through `write`, after the file is
    /// cut to what was appended.
    fn next_window(&mut self, end: u64) -> io::Result<bool> {
        let start = self.len - self.len % ALIGN;
        let len = usize::try_from(end - start)
            .map_err(io::Error::other)?
            .max(WINDOW)
            .next_multiple_of(ALIGN as usize);
        // The old window goes first: its pages stay in the page cache.
        self.window = None;
        if let Err(e) = reserve(&self.file, start, len as u64) {
            if e.kind() == io::ErrorKind::Unsupported {
                tracing::debug!("cannot reserve journal space ({e}); writing it instead");
                self.write_from_now_on()?;
                return Ok(false);
            }
            return Err(e);
        }
        // SAFETY: the map is of a file this recorder created and alone
        // writes. Its blocks are reserved, so writing to it cannot fault
        // for want of space; only another process cutting the file short
        // while recording could, which nothing in mcpcassette does.
        let map = unsafe {
            memmap2::MmapOptions::new()
                .offset(start)
                .len(len)
                .populate()
                .map_mut(&self.file)
        };
        match map {
            Ok(map) => {
                self.window = Some(Window { map, start });
                Ok(true)
            }
            Err(e) => {
                tracing::debug!("cannot map the journal ({e}); writing it instead");
                self.write_from_now_on()?;
                Ok(false)
            }
        }
    }

    /// Leaves the map for `write`, cutting the reserved tail first.
    fn write_from_now_on(&mut self) -> io::Result<()> {
        self.window = None;
        self.mapped = false;
        self.file.set_len(self.len)?;
        self.file.seek(io::SeekFrom::Start(self.len))?;
        Ok(())
    }
}

impl Drop for Appender {
    /// Cuts the zeros past the last append, so that a journal left behind
    /// (a recording that failed) ends with its last line.
    fn drop(&mut self) {
        if self.mapped {
            self.window = None;
            let _ = self.file.set_len(self.len);
        }
    }
}

/// Reserves `len` bytes of `file` from `start` on disk, growing it if need
/// be. `Unsupported` where the file system cannot.
#[cfg(target_os = "linux")]
fn reserve(file: &File, start: u64, len: u64) -> io::Result<()> {
    use nix::errno::Errno;
    use nix::fcntl::{FallocateFlags, fallocate};
    let offset = i64::try_from(start).map_err(io::Error::other)?;
    let len = i64::try_from(len).map_err(io::Error::other)?;
    match fallocate(file, FallocateFlags::empty(), offset, len) {
        Ok(()) => Ok(()),
        Err(Errno::EOPNOTSUPP | Errno::ENOSYS) => Err(io::ErrorKind::Unsupported.into()),
        Err(errno) => Err(io::Error::from(errno)),
    }
}

#[cfg(not(target_os = "linux"))]
fn reserve(_: &File, _: u64, _: u64) -> io::Result<()> {
    Err(io::ErrorKind::Unsupported.into())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn appender(dir: &tempfile::TempDir) -> (Appender, std::path::PathBuf) {
        let path = dir.path().join("journal");
        let file = std::fs::OpenOptions::new()
            .create_new(true)
            .read(true)
            .write(true)
            .open(&path)
            .unwrap();
        (Appender::new(file), path)
    }

    #[test]
    fn appends_across_windows_read_back_in_order_and_the_tail_is_cut_on_close() {
        let dir = tempfile::tempdir().unwrap();
        let (mut appender, path) = appender(&dir);
        let mut expected = Vec::new();
        // Lines of growing size cross several window edges, one of them
        // longer than a window.
        for n in 0..400usize {
            let line = format!("{n}:{}\n", "x".repeat(n * n * 13 % 9000));
            appender.append(line.as_bytes()).unwrap();
            expected.extend_from_slice(line.as_bytes());
        }
        let big = vec![b'y'; WINDOW * 2 + 17];
        appender.append(&big).unwrap();
        expected.extend_from_slice(&big);
        appender.append(b"last\n").unwrap();
        expected.extend_from_slice(b"last\n");

        // While open, a reader (recovery after a kill) sees every byte
        // appended, then zeros.
        let open = std::fs::read(&path).unwrap();
        assert!(open.len() >= expected.len());
        assert_eq!(&open[..expected.len()], &expected[..]);
        assert!(open[expected.len()..].iter().all(|&b| b == 0));
        if cfg!(target_os = "linux") {
            assert!(appender.mapped, "appended through the map");
            assert!(open.len() > expected.len(), "space is reserved ahead");
        }

        drop(appender);
        assert_eq!(std::fs::read(&path).unwrap(), expected);
    }

    #[test]
    fn falling_back_to_write_keeps_what_was_appended() {
        let dir = tempfile::tempdir().unwrap();
        let (mut appender, path) = appender(&dir);
        appender.append(b"mapped\n").unwrap();
        appender.write_from_now_on().unwrap();
        appender.append(b"written\n").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"mapped\nwritten\n");
        drop(appender);
        assert_eq!(std::fs::read(&path).unwrap(), b"mapped\nwritten\n");
    }
}
