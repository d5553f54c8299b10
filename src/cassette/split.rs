//! A big cassette's interactions parsed on all cores at once.
//!
//! Loading a cassette is one typed pass over its text, and on a 50 MB file
//! that pass is most of what replay does before its first answer. The
//! interactions are independent of one another, so the pass splits: each
//! core parses a stretch of the `interactions` array.
//!
//! Where a stretch may start is a guess. `save` writes each interaction on
//! a line of its own, indented four spaces, and a raw newline can't occur
//! inside a JSON string, so such a line is very likely the start of one.
//! A guess counts only if the stretch before it, parsed from the true
//! start of the array, ends exactly there; otherwise that stretch parses
//! on to the end of the array by itself. The result is therefore always
//! the interactions one pass from the start gives, and anything out of the
//! ordinary (an error, a key written twice, a file with no such lines)
//! gives up with `None`: the caller then makes its ordinary single pass,
//! which accepts and refuses exactly as before and names where an error is.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde::Deserialize;
use serde_json::value::RawValue;

use super::format::{Cassette, Interaction};

/// Below this size a file is parsed in one pass. A helper thread's start
/// costs more than it saves below about 2 MB: on a virtual machine the idle
/// core it lands on can take from 0.1 to 4 ms to wake, while one pass over
/// 1 MB takes 3 (docs/benchmarks.md).
const SPLIT_FROM: usize = 2 << 20;

/// Each thread gets at least this much of the file.
const PER_THREAD: usize = 1 << 20;

/// Stretches per thread: enough that a thread that starts late still
/// finds some left.
const STRETCHES_PER_THREAD: usize = 8;

/// Where `save` starts an interaction: a new line, four spaces, `{`.
const LINE_START: &[u8] = b"\n    {";

/// Whether a file of `len` bytes is big enough to split.
fn worth_it(len: usize) -> bool {
    len >= SPLIT_FROM
}

/// `text` parsed as a cassette with its interactions split across the
/// cores, or `None` where that isn't worth it or anything is unusual (the
/// caller then parses it in one pass).
pub(super) fn parse(text: &str) -> Option<Cassette> {
    if !worth_it(text.len()) {
        return None;
    }
    match crate::parallel::threads_for(text.len(), PER_THREAD) {
        1 => None,
        threads => parse_split(text, threads),
    }
}

/// [`parse`] on `threads` threads, whatever the file's size.
fn parse_split(text: &str, threads: usize) -> Option<Cassette> {
    let mut cursor = Cursor::new(text);
    cursor.expect(b'{')?;
    // The top-level members but `interactions`, as they are written.
    let mut header = String::from("{");
    let mut interactions = None;
    if cursor.peek()? == b'}' {
        return None;
    }
    loop {
        let key_start = cursor.skip_whitespace();
        let key: String = cursor.value()?;
        let key_text = &text[key_start..cursor.pos];
        cursor.expect(b':')?;
        if key == "interactions" {
            if interactions.is_some() {
                return None;
            }
            interactions = Some(array(&mut cursor, threads)?);
        } else {
            let value: &RawValue = cursor.value()?;
            header.push_str(key_text);
            header.push(':');
            header.push_str(value.get());
            header.push(',');
        }
        match cursor.next()? {
            b',' => {}
            b'}' => break,
            _ => return None,
        }
    }
    cursor.skip_whitespace();
    if cursor.pos != text.len() {
        return None;
    }
    header.push_str("\"interactions\":[]}");
    let mut cassette: Cassette =
        crate::json::deserialize_borrowing(|| serde_json::from_str(&header)).ok()?;
    cassette.interactions = interactions?;
    Some(cassette)
}

/// The `interactions` array at `cursor`, in stretches parsed on `threads`
/// threads; the cursor ends after its `]`.
///
/// Threads take the next stretch as they come free, the calling thread
/// too: a helper the scheduler starts late (an idle virtual core can take
/// milliseconds to wake) just takes fewer.
fn array(cursor: &mut Cursor<'_>, threads: usize) -> Option<Vec<Interaction>> {
    cursor.expect(b'[')?;
    let first = cursor.skip_whitespace();
    if cursor.peek()? == b']' {
        cursor.pos += 1;
        return Some(Vec::new());
    }
    let text = cursor.text;
    let starts = guesses(text, first, threads * STRETCHES_PER_THREAD);
    let parsed: Vec<OnceLock<Option<Stretch>>> = starts.iter().map(|_| OnceLock::new()).collect();
    let next = AtomicUsize::new(0);
    let work = || {
        loop {
            let i = next.fetch_add(1, Ordering::Relaxed);
            let Some(&start) = starts.get(i) else { break };
            let stop = starts.get(i + 1).copied().unwrap_or(usize::MAX);
            let _ = parsed[i].set(Stretch::parse(text, start, stop));
        }
    };
    std::thread::scope(|scope| {
        for _ in 1..threads.min(starts.len()) {
            // Where no thread can be had, the others do its share.
            let _ = std::thread::Builder::new().spawn_scoped(scope, work);
        }
        work();
    });
    // A stretch counts only when the one before it ended exactly at its
    // start (or it is the first): those up to the first that closed the
    // array, which the last one does if it parsed at all.
    let mut used = Vec::new();
    for stretch in parsed {
        let stretch = stretch.into_inner()??;
        used.push(stretch.interactions);
        if stretch.closed {
            cursor.pos = stretch.end;
            let total: usize = used.iter().map(Vec::len).sum();
            let mut used = used.into_iter();
            let mut interactions = used.next()?;
            interactions.reserve_exact(total - interactions.len());
            used.for_each(|more| interactions.extend(more));
            return Some(interactions);
        }
    }
    None
}

/// Where each stretch starts: `first` (the first interaction), then a line
/// as `save` starts an interaction at or after each equal share of the
/// rest, in increasing order, at most `count` in all.
fn guesses(text: &str, first: usize, count: usize) -> Vec<usize> {
    let bytes = text.as_bytes();
    let share = (bytes.len() - first) / count.max(1);
    let mut starts = vec![first];
    for i in 1..count {
        let from = (first + i * share).max(starts[starts.len() - 1] + 1);
        let Some(found) = memchr::memmem::find(&bytes[from..], LINE_START) else {
            break;
        };
        // The `{` itself.
        starts.push(from + found + LINE_START.len() - 1);
    }
    starts
}

/// Interactions parsed from one start on.
struct Stretch {
    interactions: Vec<Interaction>,
    /// Where parsing stopped: the next stretch's start, or just past `]`.
    end: usize,
    /// Whether it reached the end of the array.
    closed: bool,
}

impl Stretch {
    /// The interactions from `start` until the next one would start at
    /// `stop`, or to the end of the array if none starts exactly there.
    fn parse(text: &str, start: usize, stop: usize) -> Option<Stretch> {
        crate::json::deserialize_borrowing(|| Stretch::parse_borrowing(text, start, stop))
    }

    /// [`Stretch::parse`], under [`crate::json::deserialize_borrowing`].
    fn parse_borrowing(text: &str, start: usize, stop: usize) -> Option<Stretch> {
        let mut cursor = Cursor { text, pos: start };
        let mut interactions: Vec<Interaction> = Vec::new();
        loop {
            let at = cursor.pos;
            interactions.push(cursor.value()?);
            if interactions.len() == 1 && stop != usize::MAX {
                // As many again as the first one's size suggests: the
                // vector grows once or twice, not a dozen times.
                let size = (cursor.pos - at).max(1);
                interactions.reserve((stop.saturating_sub(at) / size).min(1 << 20));
            }
            match cursor.next()? {
                b']' => {
                    return Some(Stretch {
                        interactions,
                        end: cursor.pos,
                        closed: true,
                    });
                }
                b',' => {
                    if cursor.skip_whitespace() == stop {
                        return Some(Stretch {
                            interactions,
                            end: stop,
                            closed: false,
                        });
                    }
                }
                _ => return None,
            }
        }
    }
}

/// A place in the text, read one JSON token or value at a time.
struct Cursor<'a> {
    text: &'a str,
    pos: usize,
}

impl<'a> Cursor<'a> {
    fn new(text: &'a str) -> Self {
        Cursor { text, pos: 0 }
    }

    /// Past any JSON whitespace; where that is.
    fn skip_whitespace(&mut self) -> usize {
        let bytes = self.text.as_bytes();
        while matches!(bytes.get(self.pos), Some(b' ' | b'\n' | b'\r' | b'\t')) {
            self.pos += 1;
        }
        self.pos
    }

    /// The next byte after whitespace, without taking it.
    fn peek(&mut self) -> Option<u8> {
        self.skip_whitespace();
        self.text.as_bytes().get(self.pos).copied()
    }

    /// The next byte after whitespace, taken.
    fn next(&mut self) -> Option<u8> {
        let byte = self.peek()?;
        self.pos += 1;
        Some(byte)
    }

    /// Takes `byte`, after whitespace, or gives up.
    fn expect(&mut self, byte: u8) -> Option<()> {
        (self.next()? == byte).then_some(())
    }

    /// The JSON value here, as serde_json reads it in a document.
    fn value<T: Deserialize<'a>>(&mut self) -> Option<T> {
        let mut values =
            serde_json::Deserializer::from_str(&self.text[self.pos..]).into_iter::<T>();
        let value = values.next()?.ok()?;
        self.pos += values.byte_offset();
        Some(value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A cassette as `save` writes it, `count` echo interactions.
    fn saved(count: usize) -> String {
        let mut interactions = Vec::new();
        for n in 0..count {
            interactions.push(serde_json::json!({
                "request": {"jsonrpc": "2.0", "id": n, "method": "tools/call",
                    "params": {"name": "echo", "arguments": {"message": format!("m{n}\n    {{")}}},
                "response": {"jsonrpc": "2.0", "id": n,
                    "result": {"content": [{"type": "text", "text": format!("m{n}")}]}},
            }));
        }
        let cassette = serde_json::json!({
            "format_version": 1,
            "recorded_at": "2026-01-01T00:00:00Z",
            "transport": {"kind": "stdio", "command": ["server"]},
            "protocol": {"era": "legacy", "version": "2025-11-25"},
            "interactions": interactions,
        });
        serde_json::to_string_pretty(&cassette).unwrap()
    }

    fn one_pass(text: &str) -> Cassette {
        serde_json::from_str(text).unwrap()
    }

    #[test]
    fn split_parses_give_what_one_pass_gives() {
        let text = saved(300);
        for threads in [1, 2, 3, 8] {
            let split = parse_split(&text, threads).expect("a saved cassette splits");
            assert_eq!(split, one_pass(&text), "{threads} threads");
        }
        let head = "\"interactions\": [\n    ";
        let first = text.find(head).unwrap() + head.len();
        assert_eq!(&text[first..=first], "{");
        let starts = guesses(&text, first, 8);
        assert_eq!(starts.len(), 8);
        assert!(starts.iter().all(|&s| &text[s..=s] == "{"));
    }

    #[test]
    fn a_guess_that_is_no_interaction_start_is_parsed_past() {
        // Interactions indented like a nested object, and nested objects
        // indented like interactions: every guess lands inside one.
        let text = saved(200)
            .replace("\n    {", "\n     {")
            .replace("\n            {", "\n    {");
        assert!(text.contains("\n    {"));
        for threads in [2, 4, 8] {
            assert_eq!(
                parse_split(&text, threads).expect("it still parses"),
                one_pass(&text),
                "{threads} threads"
            );
        }
    }

    #[test]
    fn members_after_the_interactions_and_empty_arrays_are_read() {
        let text = saved(50);
        let moved = text.replacen(
            "{\n  \"format_version\": 1,",
            "{\n  \"interactions\": [],\n  \"format_version\": 1,",
            1,
        );
        // `interactions` twice: a duplicate field for serde, so no split.
        assert!(parse_split(&moved, 2).is_none());
        let last = text.rfind("\n  ]").unwrap();
        let after = format!("{}\n  ],\n  \"rules\": {{}}\n}}\n", &text[..last]);
        assert_eq!(parse_split(&after, 4).unwrap(), one_pass(&after));
        let empty = saved(0);
        assert_eq!(parse_split(&empty, 2).unwrap(), one_pass(&empty));
    }

    #[test]
    fn anything_one_pass_refuses_gives_up() {
        let text = saved(100);
        let broken = [
            text.replacen("\"response\"", "\"respons\"", 1), // unknown member: accepted by both
            text.replacen("\"id\": 42,", "", 1),             // request without id
            text.replacen("},\n    {", "}\n    {", 1),       // missing comma
            format!("{text} x"),                             // trailing text
            text.replacen("\"format_version\": 1", "\"format_version\": \"1\"", 1),
            text[..text.len() - 3].to_string(), // cut short
        ];
        for (n, candidate) in broken.iter().enumerate() {
            let single = serde_json::from_str::<Cassette>(candidate);
            for threads in [1, 2, 4] {
                match (&single, parse_split(candidate, threads)) {
                    (Ok(one), Some(split)) => assert_eq!(&split, one, "case {n}"),
                    (Err(_), None) => {}
                    (one, split) => panic!("case {n}: {one:?} vs {:?}", split.is_some()),
                }
            }
        }
    }

    proptest::proptest! {
        /// Whatever one byte's edit does to a saved cassette, a split
        /// parse that answers gives what one pass gives.
        #[test]
        fn a_split_parse_never_differs_from_one_pass(
            at in 0usize..usize::MAX,
            edit in 0u8..3,
            byte in proptest::sample::select(b"{}[],:\"\\\n 0a".to_vec()),
            threads in 2usize..5,
        ) {
            let mut bytes = saved(40).into_bytes();
            let at = at % bytes.len();
            match edit {
                0 => {
                    bytes.remove(at);
                }
                1 => bytes.insert(at, byte),
                _ => bytes[at] = byte,
            }
            let text = String::from_utf8(bytes).unwrap();
            if let Some(split) = parse_split(&text, threads) {
                let one = serde_json::from_str::<Cassette>(&text).map_err(|e| e.to_string());
                proptest::prop_assert_eq!(Ok(split), one);
            }
        }
    }

    #[test]
    fn load_splits_a_big_saved_cassette_and_gets_what_one_pass_gets() {
        let text = saved(6000);
        assert!(worth_it(text.len()), "{} bytes", text.len());
        assert!(parse_split(&text, 2).is_some());
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("big.json");
        std::fs::write(&path, &text).unwrap();
        let loaded = crate::cassette::load(&path).unwrap();
        assert_eq!(loaded.interactions.len(), 6000);
        assert_eq!(loaded, crate::cassette::parse(&path, &text).unwrap());
    }

    #[test]
    fn small_files_take_the_single_pass() {
        assert!(parse(&saved(3)).is_none());
    }
}
