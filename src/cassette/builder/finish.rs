//! Handing a recording over: the cassette's header (described from its
//! handshake) and its interactions, streamed from wherever the builder
//! kept them, to be saved one at a time or read whole.

use std::path::Path;

use super::describe::describe_from;
use super::{Builder, prepare};
use crate::cassette::Rules;
use crate::cassette::format::{Cassette, FORMAT_VERSION, Interaction};

impl Builder {
    /// The cassette recorded so far. Requests still in flight are kept,
    /// without a response.
    ///
    /// # Panics
    /// If the builder spills (see [`Builder::spill_in`]) and its spill
    /// cannot be read back; recorders that spill use
    /// [`finish_streamed`](Self::finish_streamed).
    pub fn finish(self) -> Cassette {
        self.finish_streamed()
            .into_cassette()
            .expect("the spill file is readable")
    }

    /// The cassette recorded so far, its interactions still where they are
    /// kept, to be saved one at a time ([`Finished::save`]).
    pub fn finish_streamed(mut self) -> Finished {
        // No answer will come now.
        while !self.undecided.is_empty() {
            self.decide_by_fallback(0);
        }
        let mut known: Vec<(usize, &Interaction)> = self
            .described
            .iter()
            .map(|(&index, interaction)| (index, interaction))
            .chain(self.interactions.live())
            .collect();
        known.sort_by_key(|&(index, _)| index);
        let (protocol, server) = describe_from(known.iter().map(|&(_, interaction)| interaction));
        let header = Cassette {
            format_version: FORMAT_VERSION,
            recorded_at: self.recorded_at,
            transport: self.transport,
            protocol,
            server,
            rules: Rules::default(),
            opening: self.opening,
            interactions: Vec::new(),
        };
        Finished {
            header,
            interactions: self.interactions.drain(prepare),
        }
    }
}

/// A finished recording: everything but its interactions, and the
/// interactions, read one at a time from where the builder kept them.
pub struct Finished {
    /// The cassette without its interactions: set its rules (or anything
    /// else) before saving.
    pub header: Cassette,
    interactions: InteractionStream,
}

/// Recorded interactions read one at a time, each read or its error.
pub type InteractionStream = Box<dyn Iterator<Item = std::io::Result<Interaction>>>;

impl std::fmt::Debug for Finished {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Finished")
            .field("header", &self.header)
            .finish_non_exhaustive()
    }
}

impl Finished {
    /// The cassette without its interactions, and the interactions, one at
    /// a time.
    pub fn into_parts(self) -> (Cassette, InteractionStream) {
        (self.header, self.interactions)
    }

    /// The whole cassette, in memory.
    pub fn into_cassette(self) -> std::io::Result<Cassette> {
        let mut cassette = self.header;
        cassette.interactions = self.interactions.collect::<Result<_, _>>()?;
        Ok(cassette)
    }

    /// Writes the cassette to `path` (atomically, as [`crate::cassette::save`] does,
    /// and byte for byte the same text) one interaction at a time. Whether
    /// it wrote anything: a recording with nothing in it leaves a cassette
    /// that is already there as it was.
    pub fn save(self, path: &Path) -> Result<bool, crate::cassette::CassetteError> {
        let mut interactions = self.interactions.peekable();
        if interactions.peek().is_none() && self.header.opening.is_empty() && path.exists() {
            return Ok(false);
        }
        crate::cassette::save::save_streamed(path, &self.header, interactions)?;
        Ok(true)
    }
}
