//! Where a recording's interactions are kept while it goes on.
//!
//! A recording can run for hours. The interactions that can still change
//! (requests in flight, the latest client message, whose unprompted
//! server traffic may still come, anything a server request is waiting
//! on) are kept in memory; once settled, an interaction can be written to
//! a spill file, an unnamed temporary file beside the cassette, and only
//! its place in that file is remembered (12 bytes). The cassette is then
//! written from the spill in recorded order, one interaction at a time.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::ops::{Index, IndexMut};
use std::os::unix::fs::FileExt;
use std::path::Path;

use super::format::Interaction;

/// A session's interactions by index: in memory, or settled on disk.
#[derive(Debug, Default)]
pub(super) struct Interactions {
    live: BTreeMap<usize, Interaction>,
    /// How many there have been.
    len: usize,
    spill: Option<Spill>,
}

/// Settled interactions, as compact JSON lines, and where each one is.
#[derive(Debug)]
struct Spill {
    file: BufWriter<File>,
    /// Where interaction `i` starts; [`NOT_SPILLED`] for those that were
    /// not written (still in memory, or dropped).
    starts: Vec<u64>,
    lens: Vec<u32>,
    end: u64,
}

const NOT_SPILLED: u64 = u64::MAX;

/// What [`Interactions::settle`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Settled {
    /// It stays in memory.
    Kept,
    /// It was written to the spill.
    Written,
    /// `prepare` dropped it.
    Dropped,
}

impl Interactions {
    /// Settled interactions will be written to a spill file in `dir`
    /// (unnamed: it vanishes with the process, however it ends).
    pub(super) fn spill_in(&mut self, dir: &Path) -> std::io::Result<()> {
        let file = tempfile::tempfile_in(dir)?;
        self.spill = Some(Spill {
            file: BufWriter::with_capacity(64 * 1024, file),
            starts: Vec::new(),
            lens: Vec::new(),
            end: 0,
        });
        Ok(())
    }

    /// How many interactions there have been.
    pub(super) fn len(&self) -> usize {
        self.len
    }

    /// Adds the next interaction.
    pub(super) fn push(&mut self, interaction: Interaction) {
        self.live.insert(self.len, interaction);
        self.len += 1;
    }

    /// Interaction `index`, while it is in memory.
    pub(super) fn get_mut(&mut self, index: usize) -> Option<&mut Interaction> {
        self.live.get_mut(&index)
    }

    /// The interactions still in memory.
    pub(super) fn live(&self) -> impl Iterator<Item = (usize, &Interaction)> {
        self.live
            .iter()
            .map(|(&index, interaction)| (index, interaction))
    }

    /// Interaction `index` is settled: nothing will change it again.
    /// With a spill, it leaves memory: written as `prepare` leaves it, or
    /// dropped if `prepare` says `None`. Without one (or if the spill
    /// cannot be written: the recording goes on either way) it stays.
    pub(super) fn settle(
        &mut self,
        index: usize,
        prepare: impl FnOnce(Interaction) -> Option<Interaction>,
    ) -> Settled {
        let Some(spill) = &mut self.spill else {
            return Settled::Kept;
        };
        let Some(interaction) = self.live.remove(&index) else {
            return Settled::Kept;
        };
        let Some(prepared) = prepare(interaction) else {
            return Settled::Dropped;
        };
        match spill.write(index, &prepared) {
            Ok(()) => Settled::Written,
            Err(e) => {
                tracing::warn!(
                    "cannot write to the recording's spill file ({e}); keeping the rest of the session in memory"
                );
                self.spill = None;
                // `prepare` is applied again when it is drained: it is
                // idempotent.
                self.live.insert(index, prepared);
                Settled::Kept
            }
        }
    }

    /// Every interaction in recorded order, the settled ones read back one
    /// at a time; `prepare` is applied to those still in memory (the
    /// settled ones were prepared when they were written).
    pub(super) fn drain(
        self,
        prepare: fn(Interaction) -> Option<Interaction>,
    ) -> Box<dyn Iterator<Item = std::io::Result<Interaction>>> {
        let Interactions {
            mut live,
            len,
            spill,
        } = self;
        let spill = spill.map(Spill::into_reader);
        let mut spill = match spill {
            Some(Ok(spill)) => Some(spill),
            Some(Err(e)) => return Box::new(std::iter::once(Err(e))),
            None => None,
        };
        Box::new((0..len).filter_map(move |index| {
            if let Some(interaction) = live.remove(&index) {
                return prepare(interaction).map(Ok);
            }
            spill.as_mut()?.read(index)
        }))
    }
}

impl Index<usize> for Interactions {
    type Output = Interaction;

    /// Interaction `index`, which must still be in memory: the builder
    /// settles only interactions nothing refers to any more.
    fn index(&self, index: usize) -> &Interaction {
        self.live
            .get(&index)
            .unwrap_or_else(|| panic!("interaction {index} was settled"))
    }
}

impl IndexMut<usize> for Interactions {
    fn index_mut(&mut self, index: usize) -> &mut Interaction {
        self.live
            .get_mut(&index)
            .unwrap_or_else(|| panic!("interaction {index} was settled"))
    }
}

impl Spill {
    fn write(&mut self, index: usize, interaction: &Interaction) -> std::io::Result<()> {
        // Messages as their compact text: read back, they are that text.
        let mut line = crate::json::serialize_as_text(|| serde_json::to_vec(interaction))
            .map_err(std::io::Error::other)?;
        line.push(b'\n');
        let len = u32::try_from(line.len()).map_err(std::io::Error::other)?;
        self.file.write_all(&line)?;
        if self.starts.len() <= index {
            self.starts.resize(index + 1, NOT_SPILLED);
            self.lens.resize(index + 1, 0);
        }
        self.starts[index] = self.end;
        self.lens[index] = len;
        self.end += u64::from(len);
        Ok(())
    }

    fn into_reader(self) -> std::io::Result<SpillReader> {
        let file = self.file.into_inner().map_err(|e| e.into_error())?;
        Ok(SpillReader {
            file,
            starts: self.starts,
            lens: self.lens,
            buffer: Vec::new(),
        })
    }
}

/// A spill file being read back.
struct SpillReader {
    file: File,
    starts: Vec<u64>,
    lens: Vec<u32>,
    buffer: Vec<u8>,
}

impl SpillReader {
    /// Interaction `index`, if it was spilled.
    fn read(&mut self, index: usize) -> Option<std::io::Result<Interaction>> {
        let start = *self.starts.get(index)?;
        if start == NOT_SPILLED {
            return None;
        }
        self.buffer.resize(self.lens[index] as usize, 0);
        Some(
            self.file
                .read_exact_at(&mut self.buffer, start)
                .and_then(|()| serde_json::from_slice(&self.buffer).map_err(std::io::Error::other)),
        )
    }
}
