//! Room for a cassette's interactions, made once before they are read.
//!
//! serde fills a `Vec` by pushing, so a cassette of a thousand
//! interactions grew its vector ten times, copying it each time. At
//! 200-odd bytes an interaction, the copies touched twice the memory the
//! vector ends up in, and every fresh page is a fault: at replay's start
//! these were a fifth of a 1 000-interaction cassette's page faults. The
//! loader knows the file's size, and an interaction as `save` writes it
//! takes well over [`BYTES_PER_INTERACTION`] bytes, so that bounds the
//! count from above; room that goes unused is never touched, so it costs
//! address space, not memory.

use std::cell::Cell;

use std::marker::PhantomData;

use serde::Deserialize;
use serde::de::{Deserializer, SeqAccess, Visitor};

/// Fewer bytes than any interaction takes in a saved cassette (a bare
/// notification, pretty-printed, takes about 90).
const BYTES_PER_INTERACTION: usize = 64;

/// Never more room than this up front (a 4 MB file's worth, about 15 MB
/// of address space); a bigger cassette grows from there.
const MOST: usize = 1 << 16;

thread_local! {
    /// Room for how many interactions the next cassette read on this
    /// thread gets up front.
    static EXPECTED: Cell<usize> = const { Cell::new(0) };
}

/// Runs `parse`, which reads a cassette from `text_len` bytes of text,
/// with room made for as many interactions as that text can hold.
pub(super) fn for_text<R>(text_len: usize, parse: impl FnOnce() -> R) -> R {
    struct Restore(usize);
    impl Drop for Restore {
        fn drop(&mut self) {
            EXPECTED.set(self.0);
        }
    }
    let _restore = Restore(EXPECTED.replace((text_len / BYTES_PER_INTERACTION).min(MOST)));
    parse()
}

/// Reads the `interactions` array into a vector with the room
/// [`for_text`] made (none outside it). Generic over the item, so that
/// this file needs nothing from the format it serves.
pub(super) fn interactions<'de, D: Deserializer<'de>, T: Deserialize<'de>>(
    deserializer: D,
) -> Result<Vec<T>, D::Error> {
    struct Items<T>(PhantomData<T>);
    impl<'de, T: Deserialize<'de>> Visitor<'de> for Items<T> {
        type Value = Vec<T>;

        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("a sequence")
        }

        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
            // Taken, so that a cassette nested in this one's text (there
            // is none today) would not get the room too.
            let mut items = Vec::with_capacity(EXPECTED.take());
            while let Some(item) = seq.next_element()? {
                items.push(item);
            }
            Ok(items)
        }
    }
    deserializer.deserialize_seq(Items(PhantomData))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cassette::Interaction;

    fn parse(text: &str) -> Vec<Interaction> {
        let mut de = serde_json::Deserializer::from_str(text);
        interactions(&mut de).unwrap()
    }

    const TWO: &str = r#"[{"notification":{"jsonrpc":"2.0","method":"a"}},
                          {"notification":{"jsonrpc":"2.0","method":"b"}}]"#;

    #[test]
    fn room_is_made_from_the_texts_size_and_only_for_that_text() {
        let text = " ".repeat(640);
        let read = for_text(text.len(), || parse(TWO));
        assert_eq!(read.len(), 2);
        assert_eq!(read.capacity(), 10);
        // Outside `for_text`, and after it, serde's usual growth.
        assert!(parse(TWO).capacity() < 10);
        assert_eq!(EXPECTED.get(), 0);
    }

    #[test]
    fn more_interactions_than_expected_still_all_load() {
        let read = for_text(64, || parse(TWO));
        assert_eq!(read.len(), 2);
    }

    #[test]
    fn room_is_bounded() {
        let read = for_text(usize::MAX, || {
            assert_eq!(EXPECTED.get(), MOST);
            Vec::<Interaction>::new()
        });
        assert!(read.is_empty());
    }
}
