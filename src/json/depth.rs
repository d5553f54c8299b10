//! Measuring how deep JSON text nests, without parsing it and without
//! recursion, so that a document can be refused before a recursive parser
//! meets it.

/// How deep a document nests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Nesting {
    /// The greatest number of open objects and arrays at any point.
    pub deepest: usize,
}

/// A document that nests deeper than its limit, and where.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "nested {depth} levels deep (line {line}, column {column}, at JSON pointer \"{pointer}\"); mcpcassette reads at most {limit} levels here ({} for a message{})",
    super::MAX_DEPTH,
    if *.limit > super::MAX_DEPTH { ", plus the file's own structure" } else { "" }
)]
pub(crate) struct TooDeep {
    /// How deep it goes.
    pub depth: usize,
    /// The limit it broke.
    pub limit: usize,
    /// 1-based line of the first object or array past the limit.
    pub line: usize,
    /// 1-based column (in bytes) of it.
    pub column: usize,
    /// Its JSON pointer (RFC 6901).
    pub pointer: String,
}

/// One open object or array, for the pointer of a place in it.
#[derive(Debug, Clone, Copy)]
enum Frame {
    /// An object; the byte range of the key whose value is being read.
    Object { key: Option<(usize, usize)> },
    /// An array; the index of the element being read.
    Array { index: usize },
}

/// Measures `bytes` (JSON text, valid or not: only brackets outside
/// strings count), refusing it if it nests deeper than `limit`.
pub(crate) fn nesting(bytes: &[u8], limit: usize) -> Result<Nesting, TooDeep> {
    let mut frames: Vec<Frame> = Vec::new();
    let mut deepest = 0;
    // Where the limit was first broken, with the pointer there.
    let mut broken: Option<(usize, String)> = None;
    // Whether the next string in an object is a key.
    let mut want_key = false;
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'"' => {
                let end = string_end(bytes, i);
                if want_key && let Some(Frame::Object { key }) = frames.last_mut() {
                    *key = Some((i, end));
                    want_key = false;
                }
                i = end;
                continue;
            }
            open @ (b'{' | b'[') => {
                if frames.len() >= limit && broken.is_none() {
                    broken = Some((i, pointer(bytes, &frames)));
                }
                // Past the limit only the depth is counted, not the path.
                frames.push(if open == b'{' {
                    Frame::Object { key: None }
                } else {
                    Frame::Array { index: 0 }
                });
                want_key = open == b'{';
                deepest = deepest.max(frames.len());
            }
            b'}' | b']' => {
                frames.pop();
                want_key = false;
            }
            b',' => match frames.last_mut() {
                Some(Frame::Array { index }) => *index += 1,
                Some(Frame::Object { key }) => {
                    *key = None;
                    want_key = true;
                }
                None => {}
            },
            _ => {}
        }
        i += 1;
    }
    match broken {
        None => Ok(Nesting { deepest }),
        Some((offset, pointer)) => {
            let (line, column) = position(bytes, offset);
            Err(TooDeep {
                depth: deepest,
                limit,
                line,
                column,
                pointer,
            })
        }
    }
}

/// The index just past the string that starts at `start` (or the end of
/// the text, for a string never closed).
fn string_end(bytes: &[u8], start: usize) -> usize {
    string_close(bytes, start).unwrap_or(bytes.len())
}

fn string_close(bytes: &[u8], start: usize) -> Option<usize> {
    let mut i = start + 1;
    while let Some(offset) = memchr::memchr2(b'"', b'\\', bytes.get(i..)?) {
        i += offset;
        if bytes[i] == b'\\' {
            i += 2;
            continue;
        }
        return Some(i + 1);
    }
    None
}

/// The JSON pointer of the value about to open inside `frames`.
fn pointer(bytes: &[u8], frames: &[Frame]) -> String {
    let mut pointer = String::new();
    for frame in frames {
        pointer.push('/');
        match frame {
            Frame::Array { index } => pointer.push_str(&index.to_string()),
            Frame::Object {
                key: Some((start, end)),
            } => {
                let key = bytes.get(*start..*end).unwrap_or_default();
                let key: String = serde_json::from_slice(key)
                    .unwrap_or_else(|_| String::from_utf8_lossy(key).into_owned());
                pointer.push_str(&super::pointer_segment(&key));
            }
            Frame::Object { key: None } => pointer.push('?'),
        }
    }
    pointer
}

/// 1-based line and byte column of `offset` in `bytes`.
pub(crate) fn position(bytes: &[u8], offset: usize) -> (usize, usize) {
    let before = &bytes[..offset];
    let line = memchr::memchr_iter(b'\n', before).count() + 1;
    let line_start = memchr::memrchr(b'\n', before).map_or(0, |n| n + 1);
    (line, offset - line_start + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_brackets_outside_strings_only() {
        let text = br#"{"a": ["[[[", {"b": "\"{{"}]}"#;
        assert_eq!(nesting(text, 10), Ok(Nesting { deepest: 3 }));
    }

    #[test]
    fn names_where_the_limit_was_broken() {
        let text = b"{\n  \"x\": [1, {\"y/z\": [[[]]]}]\n}";
        let err = nesting(text, 4).unwrap_err();
        assert_eq!(err.depth, 6);
        assert_eq!(err.pointer, "/x/1/y~1z/0");
        assert_eq!((err.line, err.column), (2, 21));
        assert!(err.to_string().contains("nested 6 levels"), "{err}");
    }

    #[test]
    fn unclosed_strings_and_brackets_end_the_scan() {
        assert_eq!(nesting(b"[[\"abc", 5), Ok(Nesting { deepest: 2 }));
        assert_eq!(nesting(b"\"\\", 5), Ok(Nesting { deepest: 0 }));
    }
}
