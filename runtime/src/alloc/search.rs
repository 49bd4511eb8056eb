//! Finding a free block for a request: the constant-time lookups through the size classes (two
//! bitmaps say which lists hold blocks), the walks after a miss, bounded by [`SEARCH_LIMIT`], and
//! the largest block an alignment can still use.

use super::bins::{self, BIN_COUNT, SECOND_LEVEL_COUNT};
use super::block::{Block, NONE};
use super::{align_up, bytes, AllocError, Allocator, SEARCH_LIMIT};
use crate::align::offset_of;

/// What a constant-time lookup found: the free block heading size class
/// `bin`'s list, in slot `slot`, and where the allocation would start in it.
pub(super) struct Found {
    pub(super) slot: u32,
    pub(super) bin: usize,
    pub(super) start: u64,
}

impl Allocator {
    /// The largest size that [`alloc`](Allocator::alloc) would grant right now at alignment `align`
    /// (0 when nothing fits), found by a walk of every free block: it is meant for reports and
    /// tests, not for the allocation path.
    ///
    /// ```
    /// # let mut allocator = gpu_aligned::alloc::Allocator::with_granularity(1024, 1)?;
    /// let _a = allocator.alloc(100, 1)?;
    /// assert_eq!(allocator.largest_allocatable(1)?, 924);
    /// assert_eq!(allocator.largest_allocatable(512)?, 512);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`AllocError::AlignNotPowerOfTwo`] for a bad alignment.
    pub fn largest_allocatable(&self, align: usize) -> Result<usize, AllocError> {
        if !align.is_power_of_two() {
            return Err(AllocError::AlignNotPowerOfTwo { align });
        }
        let align = offset_of(align).max(self.granularity);
        Ok(bytes(
            self.blocks
                .iter()
                .filter(|block| block.is_free())
                .map(|block| Self::fit_in(block, align))
                .max()
                .unwrap_or(0),
        ))
    }

    /// How many bytes at `align` fit in `block`.
    #[inline]
    pub(super) fn fit_in(block: &Block, align: u64) -> u64 {
        align_up(block.offset, align)
            .and_then(|start| block.end().checked_sub(start))
            .unwrap_or(0)
    }

    /// The largest free block: the longest list of the largest non-empty
    /// size class is walked, nothing else.
    pub(super) fn largest_free_block(&self) -> u64 {
        let Some(bin) = self.bitmaps.last() else {
            return 0;
        };
        let mut largest = 0;
        let mut cursor = self.heads[bin];
        while cursor != NONE {
            largest = largest.max(self.blocks[cursor as usize].size);
            cursor = self.blocks[cursor as usize].list_next();
        }
        largest
    }

    /// The two constant-time lookups: where `size` bytes at `align` can go, if either finds it.
    #[inline(always)]
    pub(super) fn find_fast(&self, size: u64, align: u64) -> Option<Found> {
        if align > self.granularity {
            if let Some(found) = self.find_padded(size, align) {
                return Some(found);
            }
        }
        // 1. Good fit: the head of the first size class whose blocks all hold
        //    `size`. It fits unless its start needs padding it cannot spare.
        let bin = self.bitmaps.first_at_or_after(bins::first_fitting(size)?)?;
        let slot = self.heads[bin];
        let block = &self.blocks[slot as usize];
        let start = align_up(block.offset, align)?;
        if start <= block.end() && block.end() - start >= size {
            return Some(Found { slot, bin, start });
        }
        None
    }

    #[inline(always)]
    pub(super) fn find_padded(&self, size: u64, align: u64) -> Option<Found> {
        // 2. A class whose blocks hold `size + align - 1` bytes fits at any
        //    start, so its head always does.
        let padded = bins::first_fitting(size.checked_add(align - 1)?)?;
        let bin = self.bitmaps.first_at_or_after(padded)?;
        let slot = self.heads[bin];
        let offset = self.blocks[slot as usize].offset;
        let start = align_up(offset, align)?;
        Some(Found { slot, bin, start })
    }

    /// The bounded walks after the constant-time lookups found nothing: the
    /// size classes that may hold a fitting block, smallest first, then the
    /// largest blocks, which also gives the largest fit for the error.
    #[cold]
    #[inline(never)]
    pub(super) fn find_slow(
        &self,
        size: u64,
        align: u64,
        block_align: u64,
    ) -> Result<(u32, u64), AllocError> {
        // Only blocks of `size ..= size + align - 2` bytes can fit here,
        // since larger ones were found above.
        let mut budget = SEARCH_LIMIT;
        let mut from = Some(bins::containing(size));
        while let Some(bin) = from.and_then(|b| self.bitmaps.first_at_or_after(b)) {
            let mut cursor = self.heads[bin];
            while cursor != NONE {
                if budget == 0 {
                    break;
                }
                budget -= 1;
                let block = &self.blocks[cursor as usize];
                if Self::fit_in(block, block_align) >= size {
                    return Ok((cursor, align_up(block.offset, block_align).unwrap_or(0)));
                }
                cursor = block.list_next();
            }
            from = (bin + 1 < BIN_COUNT && budget > 0).then_some(bin + 1);
        }
        // The largest-first walk may meet a fitting block that the
        // smallest-first one gave up before; it is taken, so a refusal never
        // names a largest fit that would have held the request.
        match self.largest_fit_bounded(size, block_align) {
            Ok(found) => Ok(found),
            Err(largest_fit) => Err(AllocError::OutOfMemory {
                size: bytes(size),
                align: bytes(align),
                free: bytes(self.capacity - self.used),
                largest_fit: bytes(largest_fit),
            }),
        }
    }

    /// Looks at up to [`SEARCH_LIMIT`] free blocks, largest size classes first: the first one
    /// holding `size` bytes at `align` (slot and start), or else the largest size that fits at
    /// `align` among those seen (exact while there are no more free blocks than the limit, a lower
    /// bound beyond).
    pub(super) fn largest_fit_bounded(&self, size: u64, align: u64) -> Result<(u32, u64), u64> {
        let mut budget = SEARCH_LIMIT;
        let mut largest = 0;
        let mut row_bits = self.bitmaps.first_bits();
        while row_bits != 0 {
            let first = 63 - row_bits.leading_zeros() as usize;
            row_bits &= !(1u64 << first);
            let mut bins = self.bitmaps.row(first);
            while bins != 0 {
                let second = 31 - bins.leading_zeros() as usize;
                bins &= !(1u32 << second);
                let mut cursor = self.heads[first * SECOND_LEVEL_COUNT + second];
                while cursor != NONE {
                    if budget == 0 {
                        return Err(largest);
                    }
                    budget -= 1;
                    let block = &self.blocks[cursor as usize];
                    let fit = Self::fit_in(block, align);
                    if fit >= size {
                        return Ok((cursor, block.end() - fit));
                    }
                    largest = largest.max(fit);
                    cursor = block.list_next();
                }
            }
        }
        Err(largest)
    }
}
