//! Saving cassettes: the canonical text, written atomically (a temporary
//! file in the same folder, renamed over the target), whole or one
//! interaction at a time.

use std::fs::{self, File};
use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use super::error::CassetteError;
use super::format::Cassette;

/// The canonical text of a cassette: pretty JSON, two-space indent, trailing
/// newline, keys in the order the format defines.
pub fn to_text(cassette: &Cassette) -> String {
    let mut text = serde_json::to_string_pretty(cassette).expect("a cassette always serialises");
    text.push('\n');
    text
}

/// Writes a cassette atomically: a temporary file in the same folder,
/// renamed over the target, so readers see the old file or the new one.
pub fn save(path: &Path, cassette: &Cassette) -> Result<(), CassetteError> {
    write_atomically(path, to_text(cassette).as_bytes())
}

/// Writes a cassette atomically whose interactions come one at a time
/// (from a recording's spill): the same text as [`save`] of the whole
/// cassette, built in the memory of one interaction. `header` is the
/// cassette without interactions.
pub fn save_streamed(
    path: &Path,
    header: &Cassette,
    interactions: impl Iterator<Item = std::io::Result<super::Interaction>>,
) -> Result<(), CassetteError> {
    // The interactions are the last member: the header's text, without
    // its empty list, then each interaction indented two levels in, which
    // is how the pretty printer writes them.
    let text = to_text(header);
    let empty = "[]\n}\n";
    let head = text
        .strip_suffix(empty)
        .expect("a cassette's text ends with its interactions");
    write_atomically_with(path, |out| {
        let mut out = std::io::BufWriter::with_capacity(64 * 1024, out);
        out.write_all(head.as_bytes())?;
        let mut first = true;
        for interaction in interactions {
            let interaction = serde_json::to_string_pretty(&interaction?)
                .expect("an interaction always serialises");
            out.write_all(if first { b"[\n" } else { b",\n" })?;
            first = false;
            for (n, line) in interaction.lines().enumerate() {
                if n > 0 {
                    out.write_all(b"\n")?;
                }
                out.write_all(b"    ")?;
                out.write_all(line.as_bytes())?;
            }
        }
        out.write_all(if first {
            empty.as_bytes()
        } else {
            b"\n  ]\n}\n"
        })?;
        out.flush()
    })
}

/// Writes `bytes` to `path` through a temporary file and a rename.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> Result<(), CassetteError> {
    write_atomically_with(path, |out| out.write_all(bytes))
}

/// The folder `path` is in (`.` for a bare file name).
pub(crate) fn folder_of(path: &Path) -> &Path {
    match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    }
}

/// Writes `path` through a temporary file that `write` fills, and a rename.
fn write_atomically_with(
    path: &Path,
    write: impl FnOnce(&mut File) -> std::io::Result<()>,
) -> Result<(), CassetteError> {
    let write_error = |source| CassetteError::Write {
        path: path.into(),
        source,
    };
    let dir = folder_of(path);
    fs::create_dir_all(dir).map_err(write_error)?;
    let mut tmp = tempfile::NamedTempFile::new_in(dir).map_err(write_error)?;
    // Temporary files are private; a cassette is meant to be shared.
    let permissions = match fs::metadata(path) {
        Ok(existing) => existing.permissions(),
        Err(_) => fs::Permissions::from_mode(0o644),
    };
    tmp.as_file()
        .set_permissions(permissions)
        .map_err(write_error)?;
    write(tmp.as_file_mut()).map_err(write_error)?;
    tmp.as_file().sync_all().map_err(write_error)?;
    tmp.persist(path).map_err(|e| write_error(e.error))?;
    Ok(())
}
