//! Loading a cassette: the versioned read, big files parsed on all cores,
//! and errors that name the line, column and JSON pointer of what is
//! wrong.

use std::path::Path;

use serde_json::Value;

use super::error::CassetteError;
use super::format::{Cassette, FORMAT_VERSION};

/// Reads a cassette. Older format versions are upgraded in memory; newer
/// ones are refused with [`CassetteError::TooNew`].
pub fn load(path: &Path) -> Result<Cassette, CassetteError> {
    let bytes = crate::json::read_file(path).map_err(|source| CassetteError::Read {
        path: path.into(),
        source,
    })?;
    let text = file_text(path, &bytes)?;
    // A big cassette as `save` wrote it: its interactions parsed on all
    // cores, for replay's first answer. Anything the split parse can't
    // vouch for goes the usual way. (`check` parses with `parse`, on one
    // core: its other core is busy with the secrets scan already.)
    if let Some(cassette) = super::split::parse(text) {
        return accepted(path, text, cassette);
    }
    parse_text(path, text)
}

/// Parses cassette text; `path` only names the file in errors.
pub fn parse(path: &Path, text: &str) -> Result<Cassette, CassetteError> {
    parse_text(path, text.strip_prefix('\u{feff}').unwrap_or(text))
}

/// Parses a cassette file's bytes: the one loader behind replay, `check`
/// and every other command, so that they accept and refuse the same files.
/// Every refusal names the line, column and JSON pointer.
pub fn parse_bytes(path: &Path, bytes: &[u8]) -> Result<Cassette, CassetteError> {
    parse_text(path, file_text(path, bytes)?)
}

/// A file's bytes as text without its byte-order mark, or the refusal
/// that names where they stop being UTF-8.
fn file_text<'a>(path: &Path, bytes: &'a [u8]) -> Result<&'a str, CassetteError> {
    crate::json::file_text(bytes).map_err(|e| CassetteError::Invalid {
        path: path.into(),
        line: e.line,
        column: e.column,
        pointer: String::new(),
        message: e.to_string(),
    })
}

/// [`parse_bytes`] of text already checked, its byte-order mark removed.
fn parse_text(path: &Path, text: &str) -> Result<Cassette, CassetteError> {
    let invalid =
        |(line, column): (usize, usize), pointer: &str, message: String| CassetteError::Invalid {
            path: path.into(),
            line,
            column,
            pointer: pointer.into(),
            message,
        };
    let bytes = text.as_bytes();
    // The common case first: one typed pass. Only a cassette that fails it
    // pays for the passes that locate the error precisely.
    let fast = crate::json::deserialize_borrowing(|| {
        super::presize::for_text(text.len(), || serde_json::from_str::<Cassette>(text))
    });
    let fast_error = match fast {
        Ok(cassette) => return accepted(path, text, cassette),
        Err(e) => e,
    };
    let limit = crate::json::MAX_DEPTH + crate::json::FILE_WRAPPING;
    let nesting = crate::json::nesting(bytes, limit).map_err(|too_deep| {
        invalid(
            (too_deep.line, too_deep.column),
            &too_deep.pointer,
            too_deep.to_string(),
        )
    })?;
    // Deeper than serde_json goes by default, within our limit.
    let deep = nesting.deepest > crate::json::MAX_DEPTH;
    // Only a cassette that stopped at serde_json's depth limit is worth a
    // second typed pass; any other failure goes to the diagnosis.
    let retry = deep && crate::json::is_recursion_limit(&fast_error);
    let cassette = match retry.then(|| crate::json::unbounded::<Cassette>(bytes)) {
        Some(Ok(cassette)) => cassette,
        _ => diagnose(path, text, deep)?,
    };
    // Messages deeper than a message may be are refused as they are read
    // (`RawMessage`), wherever the file's own structure allowed them.
    accepted(path, text, cassette)
}

/// A parsed cassette, if this build reads its format version and its
/// hand-written rules make sense.
fn accepted(path: &Path, text: &str, cassette: Cassette) -> Result<Cassette, CassetteError> {
    let cassette = versioned(path, cassette)?;
    if let Err(problem) = cassette.rules.validate() {
        // `validate` names the place under the rules.
        let pointer = format!("/rules{}", problem.pointer());
        let line = crate::json::Lines::index(text)
            .line_of(&pointer)
            .unwrap_or(1);
        return Err(CassetteError::Invalid {
            path: path.into(),
            line,
            column: 1,
            pointer,
            message: format!("invalid rules: {}", problem.problem()),
        });
    }
    Ok(cassette)
}

/// A parsed cassette, if this build reads its format version.
fn versioned(path: &Path, cassette: Cassette) -> Result<Cassette, CassetteError> {
    match cassette.format_version {
        0 => Err(CassetteError::Invalid {
            path: path.into(),
            line: 1,
            column: 1,
            pointer: "/format_version".into(),
            message: "`format_version` must be a positive integer, found 0".into(),
        }),
        found if found > FORMAT_VERSION => Err(CassetteError::TooNew {
            path: path.into(),
            found: found.into(),
            supported: FORMAT_VERSION,
        }),
        _ => Ok(cassette),
    }
}

/// Parses a cassette that failed the fast pass, for an error that names the
/// line, column and JSON pointer (or says the format is too new). `deep`:
/// it nests deeper than serde_json's default limit (and within ours).
fn diagnose(path: &Path, text: &str, deep: bool) -> Result<Cassette, CassetteError> {
    let invalid = |line, column, pointer: &str, message: String| CassetteError::Invalid {
        path: path.into(),
        line,
        column,
        pointer: pointer.into(),
        message,
    };
    let value: Result<Value, _> = if deep {
        crate::json::unbounded(text.as_bytes())
    } else {
        serde_json::from_str(text)
    };
    let value = value.map_err(|e| {
        invalid(
            e.line(),
            e.column(),
            "",
            format!("not valid JSON: {}", crate::json::plain_error(&e)),
        )
    })?;
    if !value.is_object() {
        return Err(invalid(1, 1, "", "a cassette is a JSON object".into()));
    }
    match value.get("format_version").map(|v| (v, v.as_u64())) {
        None => {
            return Err(invalid(
                1,
                1,
                "/format_version",
                "not a cassette: `format_version` is missing".into(),
            ));
        }
        Some((_, Some(found))) if found > u64::from(FORMAT_VERSION) => {
            return Err(CassetteError::TooNew {
                path: path.into(),
                found,
                supported: FORMAT_VERSION,
            });
        }
        Some((_, Some(found))) if found > 0 => {}
        Some((other, _)) => {
            return Err(invalid(
                1,
                1,
                "/format_version",
                format!("`format_version` must be a positive integer, found {other}"),
            ));
        }
    }
    let mut de = serde_json::Deserializer::from_str(text);
    if deep {
        de.disable_recursion_limit();
    }
    let cassette = serde_path_to_error::deserialize(&mut de).map_err(|e| {
        let pointer = to_pointer(e.path());
        let inner = e.into_inner();
        invalid(
            inner.line(),
            inner.column(),
            &pointer,
            crate::json::plain_error(&inner),
        )
    })?;
    Ok(cassette)
}

/// A serde path as a JSON pointer (RFC 6901): `interactions[3].request` →
/// `/interactions/3/request`.
pub(crate) fn to_pointer(path: &serde_path_to_error::Path) -> String {
    use serde_path_to_error::Segment;
    let mut pointer = String::new();
    for segment in path.iter() {
        pointer.push('/');
        match segment {
            Segment::Seq { index } => pointer.push_str(&index.to_string()),
            Segment::Map { key } => pointer.push_str(&crate::json::pointer_segment(key)),
            Segment::Enum { variant } => pointer.push_str(variant),
            Segment::Unknown => pointer.push('?'),
        }
    }
    pointer
}
