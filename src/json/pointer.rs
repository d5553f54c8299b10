//! Escaping object keys for JSON pointers (RFC 6901): every pointer the
//! crate builds (findings, errors, selectors, hints) escapes the same way.

use std::borrow::Cow;

/// `key` as one JSON-pointer segment: `~` as `~0`, `/` as `~1` (in that
/// order, so a `~1` in a key stays distinct from a `/`). Borrowed when
/// there is nothing to escape, the common case.
pub(crate) fn pointer_segment(key: &str) -> Cow<'_, str> {
    if !key.contains(['~', '/']) {
        return Cow::Borrowed(key);
    }
    let mut segment = String::with_capacity(key.len() + 2);
    for c in key.chars() {
        match c {
            '~' => segment.push_str("~0"),
            '/' => segment.push_str("~1"),
            c => segment.push(c),
        }
    }
    Cow::Owned(segment)
}

/// Appends `/key` to a JSON pointer, `key` escaped by [`pointer_segment`].
pub(crate) fn push_key(pointer: &mut String, key: &str) {
    pointer.push('/');
    pointer.push_str(&pointer_segment(key));
}

/// Appends `/index` to a JSON pointer, without a `String` of its own.
pub(crate) fn push_index(pointer: &mut String, index: usize) {
    use std::fmt::Write;
    write!(pointer, "/{index}").expect("writing to a String succeeds");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_tilde_before_slash() {
        assert!(matches!(pointer_segment("plain"), Cow::Borrowed("plain")));
        assert_eq!(pointer_segment("a/b~c"), "a~1b~0c");
        assert_eq!(pointer_segment("~1"), "~01");
        let mut pointer = "/x".to_owned();
        push_key(&mut pointer, "io.modelcontextprotocol/protocolVersion");
        assert_eq!(pointer, "/x/io.modelcontextprotocol~1protocolVersion");
        push_index(&mut pointer, 12);
        assert_eq!(pointer, "/x/io.modelcontextprotocol~1protocolVersion/12");
    }
}
