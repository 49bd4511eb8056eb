//! The bottom layer: the allocator's offsets, growth, trim, and the chunks given back. A long-lived
//! array can cut a hole off from a growing arena's end (what grew PyTorch's expandable segments
//! without bound: `tests/growth/hostile.rs`), so where the backend can
//! ([`Grow::release`](crate::backend::Grow::release)) a hole's whole chunks go back as it becomes
//! free, and a large array goes at the top of its free block.

use alloc_crate::boxed::Box;
use alloc_crate::vec::Vec;

use super::{Ask, Fate, Pool};
use crate::align::{bytes_of, round_up};
use crate::alloc::{AllocError, Allocation, Allocator};
use crate::arena::tuning::LARGE_CHUNKS;
use crate::arena::{ArenaError, ArenaResult, GrowthPolicy};
use crate::backend::{Grow, Span, StreamOrder};
use crate::history::{Event, Kind, Recorder};
use crate::sanitizer::ArrayInfo;

/// The released chunks of a growing arena's span.
#[derive(Debug)]
pub(in crate::arena) struct Chunks {
    /// The chunk size; 0 while the map is off.
    chunk: u64,
    /// Bit `i` set: chunk `i`'s memory was given back.
    released: Vec<u64>,
    count: usize,
}

impl Chunks {
    /// On for a growing arena over a backend that can give memory back.
    fn new(growth: &GrowthPolicy, can_release: bool) -> Chunks {
        Chunks {
            chunk: match growth.grows() && can_release {
                true => growth.chunk() as u64,
                false => 0,
            },
            released: Vec::new(),
            count: 0,
        }
    }

    fn is_on(&self) -> bool {
        self.chunk != 0
    }

    /// Whether an array of `bytes` goes at the top of its free block.
    #[inline]
    fn places_high(&self, bytes: usize) -> bool {
        self.is_on() && bytes as u64 >= self.chunk.saturating_mul(LARGE_CHUNKS)
    }

    /// Marks the chunks of `range` released or not, a word at a time.
    fn set_range(&mut self, range: core::ops::Range<u64>, released: bool) {
        if range.is_empty() {
            return;
        }
        let last = ((range.end - 1) / 64) as usize;
        if released && last >= self.released.len() {
            self.released.resize(last + 1, 0);
        }
        let mut index = range.start;
        while index < range.end {
            let word = index / 64;
            // Past the map only when clearing: nothing is set there.
            let Some(bits) = self.released.get_mut(word as usize) else {
                break;
            };
            let (low, high) = (index % 64, (range.end - word * 64).min(64));
            let mask = match high - low {
                64 => u64::MAX,
                width => ((1u64 << width) - 1) << low,
            };
            let changed = mask & if released { !*bits } else { *bits };
            *bits ^= changed;
            let changed = changed.count_ones() as usize;
            if released {
                self.count += changed;
            } else {
                self.count -= changed;
            }
            index = (word + 1) * 64;
        }
    }

    /// The chunks wholly inside `start .. end`.
    fn whole(&self, start: u64, end: u64) -> core::ops::Range<u64> {
        start.div_ceil(self.chunk)..end / self.chunk
    }

    /// The first chunk of `within` whose bit is `released`.
    fn next(&self, within: core::ops::Range<u64>, released: bool) -> Option<u64> {
        let mut index = within.start;
        while index < within.end {
            let word = self
                .released
                .get((index / 64) as usize)
                .copied()
                .unwrap_or(0);
            let bits = (if released { word } else { !word }) >> (index % 64);
            if bits != 0 {
                let found = index + u64::from(bits.trailing_zeros());
                return (found < within.end).then_some(found);
            }
            index = (index / 64 + 1) * 64;
        }
        None
    }

    /// The chunks `start .. end` touches hold memory again.
    #[inline]
    fn taken(&mut self, start: u64, end: u64) {
        if self.count == 0 {
            return;
        }
        self.set_range(start / self.chunk..end.div_ceil(self.chunk), false);
    }

    /// Trimmed to `len` bytes: chunks past it are gone.
    fn truncate(&mut self, len: u64) {
        if !self.is_on() {
            return;
        }
        let chunks = len.div_ceil(self.chunk);
        self.set_range(chunks..self.released.len() as u64 * 64, false);
    }
}

#[derive(Debug)]
pub(in crate::arena) struct Offsets {
    pub(in crate::arena) allocator: Allocator,
    pub(in crate::arena) growth: GrowthPolicy,
    /// The granule growth rounds blocks to.
    min_align: usize,
    chunks: Chunks,
    /// The history's ring, while it records (see `arena::history`).
    pub(in crate::arena) history: Option<Box<Recorder>>,
}

/// What [`Offsets::trim`] left: the length held and the backend's result.
type Trimmed<E> = Option<(usize, Result<usize, E>)>;

impl Offsets {
    pub(in crate::arena) fn new(
        allocator: Allocator,
        growth: GrowthPolicy,
        min_align: usize,
        can_release: bool,
    ) -> Offsets {
        Offsets {
            chunks: Chunks::new(&growth, can_release),
            allocator,
            growth,
            min_align,
            history: None,
        }
    }

    /// Bytes of the chunks given back.
    pub(in crate::arena) fn released_bytes(&self) -> usize {
        bytes_of(self.chunks.count as u64 * self.chunks.chunk).unwrap_or(0)
    }

    /// The allocator's block; the chunks it covers hold memory again.
    #[inline(always)]
    fn place(&mut self, bytes: usize, align: usize) -> Result<Allocation, AllocError> {
        if self.chunks.places_high(bytes) {
            return self.place_high(bytes, align);
        }
        let allocation = self.allocator.alloc(bytes, align)?;
        self.chunks.taken(allocation.offset(), allocation.end());
        Ok(allocation)
    }

    /// [`place`](Self::place) at the top of the free block.
    #[inline(never)]
    fn place_high(&mut self, bytes: usize, align: usize) -> Result<Allocation, AllocError> {
        let allocation = self.allocator.alloc_high(bytes, align)?;
        self.chunks.taken(allocation.offset(), allocation.end());
        Ok(allocation)
    }

    /// [`Pool::reserve`] once the allocator refused: grows the buffer so the block fits.
    #[cold]
    #[inline(never)]
    fn grow_and_place<B: Grow>(
        &mut self,
        backend: &mut B,
        bytes: usize,
        align: usize,
        refused: AllocError,
    ) -> ArenaResult<Allocation, B> {
        if !self.growth.grows() {
            return Err(refused.into());
        }
        let capacity = self.allocator.capacity();
        let tail_start = capacity - self.allocator.free_tail();
        let needed = round_up(tail_start, align)
            .zip(round_up(bytes, self.min_align))
            .and_then(|(start, size)| start.checked_add(size))
            .ok_or(AllocError::SizeOverflow)?;
        let target = self
            .growth
            .grow_to(capacity, needed)
            .map_err(ArenaError::Growth)?;
        let grown = backend.grow_to(target).map_err(ArenaError::Backend)?;
        if grown <= capacity {
            return Err(refused.into());
        }
        self.allocator.grow_to(grown)?;
        self.noted(None, |_| Event::new(Kind::Grow));
        Ok(self.place(bytes, align)?)
    }

    /// [`Arena::trim`](crate::arena::Arena::trim)'s work.
    pub(in crate::arena) fn trim<B: Grow>(
        &mut self,
        backend: &mut B,
    ) -> ArenaResult<Trimmed<B::Error>, B> {
        if self.chunks.is_on() {
            let extents: Vec<(u64, u64)> = self.allocator.free_extents().collect();
            for (start, end) in extents {
                self.release_between(backend, start, end);
            }
        }
        let capacity = self.allocator.capacity();
        let in_use = capacity - self.allocator.free_tail();
        let keep = round_up(in_use, self.growth.chunk())
            .unwrap_or(capacity)
            .max(self.growth.initial())
            .min(capacity);
        if keep >= capacity {
            return Ok(None);
        }
        self.allocator.shrink_to(keep)?;
        let trimmed = backend.shrink_to(keep);
        // What the backend still holds stays the allocator's.
        let held = backend.len().clamp(keep, capacity);
        self.allocator.grow_to(held)?;
        self.chunks.truncate(held as u64);
        self.noted(None, |_| Event::new(Kind::Trim));
        Ok(Some((held, trimmed)))
    }

    /// Gives back the whole chunks inside free space `start .. end`.
    #[inline(never)]
    fn release_between<B: Grow>(&mut self, backend: &mut B, start: u64, end: u64) {
        let chunk = self.chunks.chunk;
        let whole = self.chunks.whole(start, end);
        let mut from = whole.start;
        while let Some(first) = self.chunks.next(from..whole.end, false) {
            // The run ends where a released chunk or the free space does.
            let end = self.chunks.next(first..whole.end, true);
            let end = end.unwrap_or(whole.end);
            from = end;
            let (offset, size) = (first * chunk, (end - first) * chunk);
            let len = bytes_of(size).unwrap_or(usize::MAX);
            // Refused: the memory stays held, and a later sweep tries again.
            if let Ok(true) = backend.release(Span { offset, len }) {
                self.chunks.set_range(first..end, true);
                self.noted(None, |_| Event {
                    offset,
                    size,
                    ..Event::new(Kind::Release)
                });
            }
        }
    }
}

impl<B: StreamOrder + Grow> Pool<B> for Offsets {
    #[inline(always)]
    fn reserve(
        &mut self,
        backend: &mut B,
        ask: Ask,
        _: impl Fn() -> ArrayInfo,
    ) -> ArenaResult<Allocation, B> {
        match self.place(ask.bytes, ask.align) {
            Err(
                refused @ (AllocError::OutOfMemory { .. } | AllocError::SizeExceedsCapacity { .. }),
            ) if ask.grow => self.grow_and_place(backend, ask.bytes, ask.align, refused),
            other => Ok(other?),
        }
    }

    /// Frees the block, then the whole chunks of the free space it joined.
    #[inline(always)]
    fn release(
        &mut self,
        backend: &mut B,
        block: Allocation,
        _: &mut B::Tracking,
        _: Fate,
    ) -> ArenaResult<(), B> {
        let (start, end) = self.allocator.free_merged(block)?;
        if self.chunks.is_on() && end - start >= self.chunks.chunk {
            self.release_between(backend, start, end);
        }
        Ok(())
    }

    fn release_unused(&mut self, backend: &mut B, blocks: &[Allocation]) {
        for &block in blocks {
            // Refused only for a stale block, which is nobody's.
            let _ = self.release(backend, block, &mut B::Tracking::default(), Fate::Free);
        }
    }

    fn reclaim(&mut self, _: &mut B, _: bool) -> ArenaResult<bool, B> {
        Ok(false)
    }

    fn held(&self, _: &mut dyn FnMut(&Allocation)) {}

    fn watching(&self) -> bool {
        false
    }

    fn offsets(&self) -> &Offsets {
        self
    }

    fn offsets_mut(&mut self) -> &mut Offsets {
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_of_released_chunks_are_found_across_words() {
        let policy = GrowthPolicy::up_to(1 << 30).with_chunk(4096);
        let mut chunks = Chunks::new(&policy, true);
        for index in (3..70).chain(130..131) {
            chunks.set_range(index..index + 1, true);
        }
        assert_eq!(chunks.count, 68);
        assert_eq!(chunks.next(0..200, true), Some(3));
        assert_eq!(chunks.next(3..200, false), Some(70));
        assert_eq!(chunks.next(70..200, true), Some(130));
        assert_eq!(chunks.next(131..200, true), None);
        assert_eq!(chunks.next(0..3, true), None);
        assert_eq!(chunks.next(64..69, false), None);
        // An allocation over chunks 60..=65 holds them again.
        chunks.taken(60 * 4096, 65 * 4096 + 1);
        assert_eq!(chunks.next(3..200, false), Some(60));
        assert_eq!(chunks.next(60..200, true), Some(66));
        chunks.truncate(100 * 4096);
        assert_eq!((chunks.next(0..200, true), chunks.count), (Some(3), 57 + 4));
        // Runs of whole and partial words, set and cleared at once.
        let mut runs = Chunks::new(&policy, true);
        runs.set_range(5..200, true);
        assert_eq!((runs.count, runs.released.len()), (195, 4));
        runs.set_range(0..10, true);
        assert_eq!(runs.count, 200);
        runs.set_range(64..128, false);
        runs.set_range(150..300, false);
        assert_eq!(runs.count, 64 + 22);
        assert_eq!(runs.next(0..300, false), Some(64));
        assert_eq!(runs.next(64..300, true), Some(128));
        assert_eq!(runs.next(128..300, false), Some(150));
        runs.set_range(7..7, true);
        assert_eq!(runs.count, 86);
        assert!(!Chunks::new(&policy, false).is_on());
        assert!(!Chunks::new(&GrowthPolicy::fixed(), true).is_on());
    }
}
