//! The one pass over a message's text that every recorded message takes
//! at load: it drops the whitespace between tokens (cassettes are
//! pretty-printed; the wire wants compact text), measures how deep the
//! text nests, and notes what replay reads of the top level on every
//! decision (`method`, `id`, `params`, `jsonrpc`).
//!
//! It is the hottest loop of a cassette's load, so the top level, where
//! the members are told apart, and everything below it, where only
//! strings, brackets and whitespace matter, are read by separate loops.
//! The input is always text serde_json has accepted (or serialised):
//! nothing here checks the grammar, but nothing indexes out of bounds
//! either.

use std::borrow::Cow;

/// What the pass finds out about a message's top level.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Shape {
    /// Where its top-level `method` is.
    pub(super) method: Method,
    /// Whether it has a top-level `id` (only when no top-level key is
    /// spelled with escapes).
    pub(super) has_id: bool,
    /// Where the value of its (last) top-level `id` is, `text[start..end]`,
    /// when it has one within the first 4 GiB: replay splices the live id
    /// in there for every answer it writes.
    pub(super) id_value: Option<(u32, u32)>,
    /// Whether a top-level key is spelled with escapes: then only the tree
    /// can say what the keys are.
    pub(super) escaped_keys: bool,
    /// Whether the text holds a backslash anywhere.
    pub(super) escapes: bool,
}

/// Where a message's top-level `method` string is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Method {
    /// It has none.
    Absent,
    /// It has one, but not a string.
    NotString,
    /// `text[start..end]`, which needs no unescaping.
    At { start: u32, end: u32 },
    /// Spelled with escapes (or past 4 GiB): read it from the tree.
    InTree,
}

/// What [`scan`] saw besides the compact text.
pub(super) struct Scanned {
    pub(super) shape: Shape,
    /// Where the values of the (last) top-level `params` and `jsonrpc`
    /// are, for a live request (recorded messages do not keep them: a
    /// cassette holds hundreds of thousands).
    pub(super) params_value: Option<(u32, u32)>,
    pub(super) jsonrpc_value: Option<(u32, u32)>,
    /// How deep the text nests.
    pub(super) depth: usize,
}

/// `text` without the whitespace between tokens, and what [`Scanned`]
/// holds. Text that is compact already is not copied.
pub(super) fn scan(text: &str) -> (Cow<'_, str>, Scanned) {
    let mut scanner = Scanner {
        text,
        bytes: text.as_bytes(),
        out: SCRATCH.take(),
        copying: false,
        run: 0,
        at: 0,
        deepest: 0,
        escapes: false,
    };
    let mut scanned = Scanned {
        shape: Shape {
            method: Method::Absent,
            has_id: false,
            id_value: None,
            escaped_keys: false,
            escapes: false,
        },
        params_value: None,
        jsonrpc_value: None,
        depth: 0,
    };
    scanner.space();
    if scanner.peek() == Some(b'{') {
        scanner.top_level_object(&mut scanned);
    } else {
        scanner.value(0);
    }
    scanner.space();
    scanned.shape.escapes = scanner.escapes;
    scanned.depth = scanner.deepest;
    let text = if scanner.copying {
        scanner.out.push_str(&text[scanner.run..]);
        Cow::Owned(String::from(scanner.out.as_str()))
    } else {
        Cow::Borrowed(text)
    };
    if scanner.out.capacity() <= SCRATCH_KEPT {
        scanner.out.clear();
        SCRATCH.set(scanner.out);
    }
    (text, scanned)
}

/// The most of a compacting buffer a thread keeps for its next message.
const SCRATCH_KEPT: usize = 1 << 20;

thread_local! {
    /// The buffer messages are compacted into before their text gets an
    /// allocation of its exact size. Compacting straight into a message's
    /// own allocation meant one as big as the pretty text, then a smaller
    /// one and a copy: at load, the first touch of those pages was a
    /// sixth of a 1 000-interaction cassette's page faults.
    static SCRATCH: std::cell::Cell<String> = const { std::cell::Cell::new(String::new()) };
}

/// The state of one pass: where it is in the input, and the compact text
/// written so far (`out`, then the input from `run` up to `at`).
struct Scanner<'t> {
    text: &'t str,
    bytes: &'t [u8],
    /// The compact text up to `run`, once some whitespace has been cut.
    out: String,
    /// Whether `out` is in use (nothing was cut until it is).
    copying: bool,
    /// The start of the input not yet copied to `out`.
    run: usize,
    at: usize,
    deepest: usize,
    /// Whether a backslash was seen.
    escapes: bool,
}

impl Scanner<'_> {
    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.at).copied()
    }

    /// Where input offset `self.at` lands in the compact text.
    fn landed(&self) -> usize {
        if self.copying {
            self.out.len() + (self.at - self.run)
        } else {
            self.at
        }
    }

    /// Skips whitespace at `self.at`, cutting it out of the compact text.
    fn space(&mut self) {
        let start = self.at;
        self.at = space_end(self.bytes, self.at);
        if self.at > start {
            self.cut(start);
        }
    }

    /// Leaves the input from `start` to `self.at` (whitespace) out of the
    /// compact text.
    #[inline]
    fn cut(&mut self, start: usize) {
        if !self.copying {
            self.copying = true;
            self.out.reserve(self.bytes.len());
        }
        // Whitespace is ASCII, so every cut falls on a character boundary.
        self.out.push_str(&self.text[self.run..start]);
        self.run = self.at;
    }

    /// Skips the string whose opening quote is at `self.at`; whether it
    /// holds an escape.
    fn string(&mut self) -> bool {
        let (end, escaped) = string_end_seen(self.bytes, self.at + 1);
        self.escapes |= escaped;
        self.at = end;
        escaped
    }

    /// Skips the value at `self.at`, which sits `depth` containers deep.
    fn value(&mut self, depth: usize) {
        match self.peek() {
            Some(b'"') => {
                self.string();
            }
            Some(b'{' | b'[') => self.container(depth),
            _ => {
                // A number or a literal: up to the next delimiter.
                while let Some(b) = self.peek() {
                    if matches!(b, b',' | b'}' | b']') || is_space(b) {
                        break;
                    }
                    self.at += 1;
                }
            }
        }
    }

    /// Skips the object or array that opens at `self.at`, `depth`
    /// containers deep. Below the top level only strings, brackets and
    /// whitespace need looking at.
    fn container(&mut self, depth: usize) {
        let mut level = depth;
        let bytes = self.bytes;
        while self.at < bytes.len() {
            match bytes[self.at] {
                b'"' => {
                    self.string();
                    continue;
                }
                b'{' | b'[' => {
                    level += 1;
                    self.deepest = self.deepest.max(level);
                }
                b'}' | b']' => {
                    level -= 1;
                    if level == depth {
                        self.at += 1;
                        return;
                    }
                }
                b' ' | b'\n' | b'\r' | b'\t' => {
                    let start = self.at;
                    self.at = space_end(bytes, self.at);
                    self.cut(start);
                    continue;
                }
                _ => {}
            }
            self.at += 1;
        }
    }

    /// Reads the object at the top level, member by member, noting the
    /// members [`Scanned`] keeps.
    fn top_level_object(&mut self, scanned: &mut Scanned) {
        self.deepest = 1;
        self.at += 1; // the `{`
        loop {
            self.space();
            match self.peek() {
                Some(b'"') => {}
                Some(b'}') => {
                    self.at += 1;
                    break;
                }
                // Valid text has a key or the end here.
                _ => break,
            }
            let key_start = self.at + 1;
            let escaped = self.string();
            let key = self
                .bytes
                .get(key_start..self.at.saturating_sub(1))
                .unwrap_or_default();
            self.space();
            if self.peek() == Some(b':') {
                self.at += 1;
            }
            self.space();
            let start = self.landed();
            let (string, value_escaped) = match self.peek() {
                Some(b'"') => (true, self.string()),
                _ => {
                    self.value(1);
                    (false, false)
                }
            };
            let end = self.landed();
            let shape = &mut scanned.shape;
            if escaped {
                shape.escaped_keys = true;
            } else {
                match key {
                    b"method" if string => {
                        // Inside the quotes.
                        let inside = span(start + 1, end.saturating_sub(1));
                        shape.method = match inside {
                            Some((start, end)) if !value_escaped => Method::At { start, end },
                            _ => Method::InTree,
                        };
                    }
                    b"method" => shape.method = Method::NotString,
                    b"id" => {
                        shape.has_id = true;
                        shape.id_value = span(start, end);
                    }
                    b"params" => scanned.params_value = span(start, end),
                    b"jsonrpc" => scanned.jsonrpc_value = span(start, end),
                    _ => {}
                }
            }
            self.space();
            match self.peek() {
                Some(b',') => self.at += 1,
                Some(b'}') => {
                    self.at += 1;
                    break;
                }
                _ => break,
            }
        }
        if scanned.shape.escaped_keys {
            // A key spelled with escapes could be `method` or `id`.
            scanned.shape.method = Method::InTree;
        }
    }
}

/// `start..end` as offsets a [`Shape`] keeps, if they fit.
fn span(start: usize, end: usize) -> Option<(u32, u32)> {
    Some((u32::try_from(start).ok()?, u32::try_from(end).ok()?))
}

fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\n' | b'\r' | b'\t')
}

/// Just past the whitespace that starts at `at`. A pretty-printed
/// cassette indents each line by up to a few dozen spaces, so they are
/// skipped eight at a time.
fn space_end(bytes: &[u8], mut at: usize) -> usize {
    loop {
        if bytes.get(at..at + 8) == Some(b"        ") {
            at += 8;
            continue;
        }
        match bytes.get(at) {
            Some(&b) if is_space(b) => at += 1,
            _ => return at,
        }
    }
}

/// How far [`string_end_seen`] looks byte by byte before it calls
/// `memchr2`.
const SHORT_STRING: usize = 16;

/// Just past the quote that closes the string whose contents start at
/// `at`.
pub(super) fn string_end(bytes: &[u8], at: usize) -> usize {
    string_end_seen(bytes, at).0
}

/// [`string_end`], and whether the string holds an escape.
fn string_end_seen(bytes: &[u8], mut at: usize) -> (usize, bool) {
    // Most strings of a message are short (keys, names, ids): a plain
    // loop finds their end before `memchr2` would have set up.
    let short = bytes.len().min(at + SHORT_STRING);
    while at < short {
        match bytes[at] {
            b'"' => return (at + 1, false),
            b'\\' => break,
            _ => at += 1,
        }
    }
    let mut escaped = false;
    while let Some(n) = bytes
        .get(at..)
        .and_then(|rest| memchr::memchr2(b'"', b'\\', rest))
    {
        if bytes[at + n] == b'"' {
            return (at + n + 1, escaped);
        }
        // Past the backslash and the character it escapes.
        escaped = true;
        at += n + 2;
    }
    (bytes.len(), escaped)
}
