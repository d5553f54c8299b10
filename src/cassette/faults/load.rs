//! Reading a faults file (`--faults`), whose errors name the file, the
//! line and the JSON pointer.

use std::path::Path;

use serde_json::Value;

use super::Faults;
use crate::cassette::CassetteError;

/// Reads a faults file (`--faults`, docs/faults.md). Every error names
/// the file, the line and the JSON pointer of the problem.
pub fn load_faults(path: &Path) -> Result<Faults, CassetteError> {
    let bytes = std::fs::read(path).map_err(|source| CassetteError::Read {
        path: path.into(),
        source,
    })?;
    let invalid = |line, column, pointer: String, message: String| CassetteError::Invalid {
        path: path.into(),
        line,
        column,
        pointer,
        message,
    };
    let text = crate::json::file_text(&bytes)
        .map_err(|e| invalid(e.line, e.column, String::new(), e.to_string()))?;
    let document: Value = crate::json::from_slice(text.as_bytes(), 2).map_err(|e| {
        let (line, column) = e.position();
        invalid(line, column, String::new(), e.to_string())
    })?;
    Faults::from_document(&document).map_err(|e| {
        let line = crate::json::Lines::index(text)
            .line_of(&e.pointer)
            .unwrap_or(1);
        invalid(line, 1, e.pointer, e.message)
    })
}
