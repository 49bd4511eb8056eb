//! Which whole chunks of a growing arena hold memory, so that the memory it
//! holds follows the bytes live rather than its span. A growing arena over
//! a backend that can give memory back while keeping the addresses
//! ([`Backend::release`]: the host) gives back the whole chunks of every
//! hole as the hole becomes free, and [`trim`](Arena::trim) sweeps them all;
//! an array placed over such chunks holds them again.
//!
//! Holes matter because a long-lived array can fence a freed range off
//! from the arena's end: the pattern that made PyTorch's expandable
//! segments grow without bound (a large block freed around a small one
//! that stays, then asked for again at a slightly different size) leaves
//! such holes every cycle. The span may grow past them (address space costs
//! nothing); the memory does not. For the same reason a large array (16
//! chunks or more) is placed at the top of the free block it goes into, so that
//! small arrays pack together at the bottom instead of splitting the holes
//! large ones leave, as PyTorch keeps its small blocks in pools of their
//! own. `tests/growth/hostile.rs` holds the arena to 1.1 times its peak
//! live bytes plus one chunk under five variants of that pattern.
//!
//! The map is a bit per chunk of the span: set once the chunk's memory went
//! back. It is off for a fixed arena and over a backend that cannot give
//! memory back ([`Backend::can_release`]: a device buffer), so those arenas
//! place and free as before.

use alloc_crate::vec::Vec;

use super::tuning::LARGE_CHUNKS;
use super::{Arena, GrowthPolicy};
use crate::align::bytes_of;
use crate::alloc::{AllocError, Allocation, FreeError};
use crate::backend::{Backend, Span};

/// The released chunks of a growing arena's span. See the [module
/// docs](self).
#[derive(Debug)]
pub(super) struct Chunks {
    /// The chunk size; 0 while the map is off.
    chunk: u64,
    /// Bit `i` set: chunk `i`'s memory was given back.
    released: Vec<u64>,
    /// How many bits are set.
    count: usize,
}

impl Chunks {
    /// The map of an arena with `growth` over a backend that can give
    /// memory back or not: on for a growing one that can.
    pub(super) fn new(growth: &GrowthPolicy, can_release: bool) -> Chunks {
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

    /// Whether an array of `bytes` goes at the top of its free block: one
    /// of [`LARGE_CHUNKS`] chunks or more.
    #[inline]
    fn places_high(&self, bytes: usize) -> bool {
        self.is_on() && bytes as u64 >= self.chunk.saturating_mul(LARGE_CHUNKS)
    }

    #[cfg(test)]
    fn set(&mut self, index: u64, released: bool) {
        self.set_range(index..index + 1, released);
    }

    /// Marks the chunks of `range` released or not, a word of 64 chunks at
    /// a time: an array of a gigabyte covers 512 chunks of 2 MiB, and a
    /// bit at a time cost every allocation and free of it that many loop
    /// turns (most of a trace replay's instructions on the host).
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

    /// The first chunk of `within` whose bit is `released`, a word of 64
    /// chunks at a time.
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

    /// An allocation now covers `start .. end`: the chunks it touches hold
    /// memory again.
    #[inline]
    fn taken(&mut self, start: u64, end: u64) {
        if self.count == 0 {
            return;
        }
        self.set_range(start / self.chunk..end.div_ceil(self.chunk), false);
    }

    /// The span is `len` bytes now (trimmed): chunks past it are gone.
    fn truncate(&mut self, len: u64) {
        if !self.is_on() {
            return;
        }
        let chunks = len.div_ceil(self.chunk);
        self.set_range(chunks..self.released.len() as u64 * 64, false);
    }
}

impl<B: Backend> Arena<B> {
    /// Bytes of memory the arena holds: its [`capacity`](Arena::capacity)
    /// less the whole chunks it gave back and holds no memory for. Those
    /// are chunks of free space, and, where the minimum alignment is larger
    /// than a chunk, the chunks past an array's last byte inside its block
    /// (a block is a whole number of minimum alignments; only the chunks
    /// the array's bytes cover get memory back). Equal to the
    /// capacity but for a growing arena over a backend that gives memory
    /// back while keeping the addresses (a host arena), which gives back the
    /// whole chunks of every hole as it becomes free: a long-lived array
    /// can fence a freed range off from the arena's end, and the memory
    /// held then follows the live bytes rather than the span.
    ///
    /// ```
    /// use gpu_aligned::arena::{ArenaOptions, GrowthPolicy};
    ///
    /// let growing = ArenaOptions::new().growth(GrowthPolicy::up_to(64 << 20));
    /// let mut arena = growing.host(2 << 20)?;
    /// let big = arena.alloc::<u8>(8 << 20)?;
    /// let small = arena.alloc::<u8>(1000)?; // after `big`: fences it in
    /// assert_eq!(arena.committed(), 10 << 20);
    /// arena.free(big)?;
    /// assert_eq!(arena.committed(), 2 << 20); // the hole's chunks went back
    /// assert_eq!(arena.capacity(), 10 << 20); // the span stays
    /// # arena.free(small)?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn committed(&self) -> usize {
        let released = bytes_of(self.chunks.count as u64 * self.chunks.chunk).unwrap_or(0);
        self.capacity().saturating_sub(released)
    }

    /// The allocator's block for `bytes` at `align`, placed high when it is
    /// a large array of an arena that gives chunks back; the chunks it
    /// covers hold memory again (the host's discarded pages come back on
    /// first touch, zeroed).
    #[inline]
    pub(super) fn place(&mut self, bytes: usize, align: usize) -> Result<Allocation, AllocError> {
        let high = self.chunks.places_high(bytes);
        self.place_at(bytes, align, high)
    }

    ///
    /// Inline, with the allocator's lookup inlined once: a high placement
    /// (a large array of a host arena that gives chunks back) is out of
    /// line, so the device's path, which never places high, pays no call.
    #[inline(always)]
    fn place_at(
        &mut self,
        bytes: usize,
        align: usize,
        high: bool,
    ) -> Result<Allocation, AllocError> {
        if high {
            return self.place_high(bytes, align);
        }
        let allocation = self.allocator.alloc(bytes, align)?;
        self.chunks.taken(allocation.offset(), allocation.end());
        Ok(allocation)
    }

    /// [`place`](Self::place) after a refusal (see `Arena::allocate`): one
    /// copy of the lookup out of line, for the tries that follow.
    #[inline(never)]
    pub(super) fn place_again(
        &mut self,
        bytes: usize,
        align: usize,
    ) -> Result<Allocation, AllocError> {
        self.place(bytes, align)
    }

    /// [`place_at`](Self::place_at) at the top of the free block.
    #[inline(never)]
    fn place_high(&mut self, bytes: usize, align: usize) -> Result<Allocation, AllocError> {
        let allocation = self.allocator.alloc_high(bytes, align)?;
        self.chunks.taken(allocation.offset(), allocation.end());
        Ok(allocation)
    }

    /// Gives a block back to the allocator, then the memory of the whole
    /// chunks of the free block it became part of.
    #[inline(never)]
    pub(super) fn free_offsets(&mut self, allocation: Allocation) -> Result<(), FreeError> {
        self.free_offsets_inline(allocation)
    }

    /// [`free_offsets`](Self::free_offsets) inlined, for the one caller
    /// every array freed by hand goes through (`Arena::give_back`): a call
    /// less per free.
    #[inline(always)]
    pub(super) fn free_offsets_inline(&mut self, allocation: Allocation) -> Result<(), FreeError> {
        let (start, end) = self.allocator.free_merged(allocation)?;
        if self.chunks.is_on() && end - start >= self.chunks.chunk {
            self.release_between(start, end);
        }
        Ok(())
    }

    /// Gives back the memory of every whole chunk of free space (what
    /// [`trim`](Arena::trim) does first).
    pub(super) fn release_free_chunks(&mut self) {
        if !self.chunks.is_on() {
            return;
        }
        let extents: Vec<(u64, u64)> = self.allocator.free_extents().collect();
        for (start, end) in extents {
            self.release_between(start, end);
        }
    }

    /// Gives back the memory of the whole chunks inside free space `start ..
    /// end` that still hold it, a run of chunks at a time.
    fn release_between(&mut self, start: u64, end: u64) {
        let chunk = self.chunks.chunk;
        let whole = self.chunks.whole(start, end);
        let mut from = whole.start;
        while let Some(first) = self.chunks.next(from..whole.end, false) {
            let last = self
                .chunks
                .next(first..whole.end, true)
                .unwrap_or(whole.end)
                - 1;
            from = last + 1;
            let len = bytes_of((last + 1 - first) * chunk).unwrap_or(usize::MAX);
            let span = Span {
                offset: first * chunk,
                len,
            };
            // Refused: the memory stays held, and a later sweep tries again.
            if let Ok(true) = self.backend.release(span) {
                self.chunks.set_range(first..last + 1, true);
            }
        }
    }

    /// The span was trimmed to `len` bytes.
    pub(super) fn chunks_trimmed(&mut self, len: usize) {
        self.chunks.truncate(len as u64);
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
            chunks.set(index, true);
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
