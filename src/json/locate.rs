//! Which line of a JSON file a JSON pointer lands on.
//!
//! serde_json forgets positions once a document is parsed, so findings
//! (which name a pointer) get their line from one extra scan of the text,
//! made only when a file has findings.

use std::collections::HashMap;

/// The line on which every value of a document starts, by JSON pointer.
#[derive(Debug, Default)]
pub struct Lines {
    by_pointer: HashMap<String, usize>,
}

impl Lines {
    /// Scans `text`, which must be valid JSON (anything after an error is
    /// simply not indexed).
    pub fn index(text: &str) -> Lines {
        let mut scanner = Scanner {
            bytes: text.as_bytes(),
            at: 0,
            line: 1,
            lines: HashMap::new(),
        };
        let mut pointer = String::new();
        scanner.value(&mut pointer);
        Lines {
            by_pointer: scanner.lines,
        }
    }

    /// The line of the value at `pointer`, or of its nearest indexed parent.
    pub fn line_of(&self, pointer: &str) -> Option<usize> {
        let mut pointer = pointer;
        loop {
            if let Some(&line) = self.by_pointer.get(pointer) {
                return Some(line);
            }
            pointer = &pointer[..pointer.rfind('/')?];
        }
    }
}

struct Scanner<'a> {
    bytes: &'a [u8],
    at: usize,
    line: usize,
    lines: HashMap<String, usize>,
}

impl Scanner<'_> {
    fn skip_space(&mut self) {
        while let Some(&b) = self.bytes.get(self.at) {
            match b {
                b'\n' => self.line += 1,
                b' ' | b'\t' | b'\r' => {}
                _ => return,
            }
            self.at += 1;
        }
    }

    /// One value; records its line under `pointer`. Returns false at an
    /// error or the end of input.
    fn value(&mut self, pointer: &mut String) -> bool {
        self.skip_space();
        let Some(&first) = self.bytes.get(self.at) else {
            return false;
        };
        self.lines.insert(pointer.clone(), self.line);
        match first {
            b'{' => self.object(pointer),
            b'[' => self.array(pointer),
            b'"' => self.string().is_some(),
            _ => {
                while let Some(&b) = self.bytes.get(self.at) {
                    if matches!(b, b',' | b'}' | b']') || b.is_ascii_whitespace() {
                        break;
                    }
                    self.at += 1;
                }
                true
            }
        }
    }

    fn object(&mut self, pointer: &mut String) -> bool {
        self.at += 1;
        loop {
            self.skip_space();
            match self.bytes.get(self.at) {
                Some(b'}') => {
                    self.at += 1;
                    return true;
                }
                Some(b',') => self.at += 1,
                Some(b'"') => {
                    let Some(key) = self.string() else {
                        return false;
                    };
                    self.skip_space();
                    if self.bytes.get(self.at) != Some(&b':') {
                        return false;
                    }
                    self.at += 1;
                    let len = pointer.len();
                    super::push_key(pointer, &key);
                    let ok = self.value(pointer);
                    pointer.truncate(len);
                    if !ok {
                        return false;
                    }
                }
                _ => return false,
            }
        }
    }

    fn array(&mut self, pointer: &mut String) -> bool {
        self.at += 1;
        let mut index = 0usize;
        loop {
            self.skip_space();
            match self.bytes.get(self.at) {
                Some(b']') => {
                    self.at += 1;
                    return true;
                }
                Some(b',') => self.at += 1,
                Some(_) => {
                    let len = pointer.len();
                    pointer.push('/');
                    pointer.push_str(&index.to_string());
                    let ok = self.value(pointer);
                    pointer.truncate(len);
                    if !ok {
                        return false;
                    }
                    index += 1;
                }
                None => return false,
            }
        }
    }

    /// A string starting at the opening quote, unescaped.
    fn string(&mut self) -> Option<String> {
        let start = self.at;
        self.at += 1;
        let mut escaped = false;
        while let Some(&b) = self.bytes.get(self.at) {
            self.at += 1;
            match b {
                b'\\' if !escaped => escaped = true,
                b'"' if !escaped => {
                    let raw = std::str::from_utf8(&self.bytes[start..self.at]).ok()?;
                    return serde_json::from_str(raw).ok();
                }
                b'\n' => {
                    self.line += 1;
                    escaped = false;
                }
                _ => escaped = false,
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_lines_of_nested_values_and_parents() {
        let text = "{\n  \"a\": [\n    1,\n    {\"b/c\": \"x\"}\n  ],\n  \"d\": {\n    \"e\": true\n  }\n}\n";
        let lines = Lines::index(text);
        assert_eq!(lines.line_of(""), Some(1));
        assert_eq!(lines.line_of("/a"), Some(2));
        assert_eq!(lines.line_of("/a/0"), Some(3));
        assert_eq!(lines.line_of("/a/1/b~1c"), Some(4));
        assert_eq!(lines.line_of("/d/e"), Some(7));
        // A pointer below what the file holds lands on its nearest parent.
        assert_eq!(lines.line_of("/d/e/f/g"), Some(7));
        assert_eq!(lines.line_of("/missing"), Some(1));
    }

    #[test]
    fn escaped_quotes_do_not_end_strings() {
        let text = "{\"a\": \"say \\\"hi\\\"\",\n\"b\": 2}";
        let lines = Lines::index(text);
        assert_eq!(lines.line_of("/b"), Some(2));
    }
}
