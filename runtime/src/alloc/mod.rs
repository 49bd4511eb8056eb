//! The offsets-only sub-allocator: hands out aligned byte ranges of a buffer
//! it never touches, so the same bookkeeping serves host memory and device
//! memory alike (the [`arena`](crate::arena) puts it over a real buffer).
//!
//! It is a two-level segregated fit (TLSF): size-class free lists and two bitmaps make alloc and
//! free constant-time, and a failing search bounded ([`SEARCH_LIMIT`]). Bytes skipped to reach an
//! aligned start go back to the free list; every block starts on a multiple of the granularity.
//!
//! Give each thread its own allocator: an operation costs about what handing
//! a lock's cache lines to another core does, so sharing one is slower.
//!
//! Misuse is a typed error, never a panic: every [`Allocation`] carries its
//! allocator's id, a slot and a **stamp** no other allocation ever gets, so a
//! double free, a stale handle and a foreign one are all detected in O(1).
//!
//! ```
//! use gpu_aligned::alloc::Allocator;
//!
//! let mut allocator = Allocator::new(1 << 20);
//! let a = allocator.alloc(100, 1)?;
//! let b = allocator.alloc(1000, 256)?;
//! assert_eq!(b.offset() % 256, 0);
//! // `a` holds 112 bytes (100 rounded up to 16); the 144 bytes between `a`
//! // and `b` were skipped for alignment and are free.
//! assert_eq!(allocator.stats().alignment_waste, 12 + 8);
//! allocator.free(a)?;
//! assert!(allocator.free(a).is_err()); // double free
//! allocator.free(b)?;
//! assert_eq!(allocator.stats().largest_free_block, 1 << 20);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![deny(unsafe_code)]

mod bins;
mod block;
mod check;
mod error;
mod handle;
mod resize;
mod search;
mod stats;

pub use error::{AllocError, FreeError, HandleError, InvariantError};
pub use handle::Allocation;
pub use stats::Stats;

use alloc_crate::boxed::Box;
use alloc_crate::vec::Vec;
use core::fmt;

use crate::align::{bytes_of, offset_of};

use bins::{Bitmaps, BIN_COUNT};
use block::{Block, NONE};
use handle::{next_allocator_id, RETIRED, SCRATCH};
use search::Found;

/// The most free blocks each of the two walks of [`Allocator::alloc`] looks at beyond its
/// constant-time lookups before it reports [`OutOfMemory`](AllocError::OutOfMemory). With no more
/// free blocks than this, a refusal has seen every one of them:
///
/// ```
/// use gpu_aligned::alloc::{AllocError, Allocator, SEARCH_LIMIT};
///
/// assert_eq!(SEARCH_LIMIT, 64);
/// // 32 free holes of 16 bytes, each between two used blocks.
/// let mut allocator = Allocator::new(64 * 16);
/// let blocks = (0..64).map(|_| allocator.alloc(16, 1)).collect::<Result<Vec<_>, _>>()?;
/// for &hole in blocks.iter().step_by(2) {
///     allocator.free(hole)?;
/// }
/// let refused = allocator.alloc(32, 1).unwrap_err();
/// assert!(matches!(refused, AllocError::OutOfMemory { free: 512, largest_fit: 16, .. }));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub const SEARCH_LIMIT: usize = 64;

/// The granularity of [`Allocator::new`]: the widest load a CUDA thread
/// makes (`float4`), which keeps slivers out of the free lists.
///
/// ```
/// use gpu_aligned::alloc::{Allocator, DEFAULT_GRANULARITY};
///
/// assert_eq!(DEFAULT_GRANULARITY, 16);
/// let mut allocator = Allocator::new(1024);
/// let a = allocator.alloc(1, 1)?; // a whole granule
/// assert_eq!(allocator.stats().alignment_waste, 15);
/// allocator.free(a)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub const DEFAULT_GRANULARITY: usize = 16;

/// The sub-allocator. See the [module docs](self).
pub struct Allocator {
    blocks: Vec<Block>,
    /// First block of each size class's free list.
    heads: Box<[u32; BIN_COUNT]>,
    bitmaps: Bitmaps,
    id: u32,
    /// Every block starts on a multiple of this (a power of two).
    granularity: u64,
    capacity: u64,
    /// The stamp of the next allocation; never wraps (at `u64::MAX`
    /// allocation stops), so a stamp names one allocation for good.
    next_stamp: u64,
    /// The first stamp since the last reset: older handles were freed by it.
    reset_stamp: u64,
    /// First slot of the vacant list, and its length.
    vacant: u32,
    vacant_count: u32,
    /// Bytes in used blocks (requests rounded up to the granularity).
    used: u64,
    /// Bytes requested by the live allocations.
    requested: u64,
    allocations: usize,
}

impl fmt::Debug for Allocator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Allocator")
            .field("id", &self.id)
            .field("capacity", &self.capacity)
            .field("granularity", &self.granularity)
            .field("used", &self.used)
            .field("allocations", &self.allocations)
            .field("free_blocks", &self.free_blocks())
            .finish_non_exhaustive()
    }
}

/// A byte count kept as a `u64`, at the public surface: at most the
/// capacity, which came in as a `usize`, so this never saturates.
#[inline(always)]
fn bytes(count: u64) -> usize {
    bytes_of(count).unwrap_or(usize::MAX)
}

/// `offset` rounded up to `align`, a power of two already checked (the hot
/// path's `round_up` without the check), or `None` on overflow.
#[inline(always)]
fn align_up(offset: u64, align: u64) -> Option<u64> {
    let mask = align - 1;
    offset.checked_add(mask).map(|bumped| bumped & !mask)
}

impl Allocator {
    /// An allocator for a buffer of `capacity` bytes (zero allowed), all
    /// free, with [`DEFAULT_GRANULARITY`].
    ///
    /// ```
    /// use gpu_aligned::alloc::{Allocator, DEFAULT_GRANULARITY};
    ///
    /// let mut allocator = Allocator::new(1 << 20);
    /// assert_eq!(allocator.capacity(), 1 << 20);
    /// assert_eq!(allocator.granularity(), DEFAULT_GRANULARITY);
    /// let a = allocator.alloc(1, 1)?;
    /// let b = allocator.alloc(1, 1)?;
    /// assert_eq!(b.offset() - a.offset(), 16);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn new(capacity: usize) -> Allocator {
        Allocator::build(capacity, DEFAULT_GRANULARITY, next_allocator_id())
    }

    /// An allocator whose blocks all start on multiples of `granularity` (1 for byte-exact blocks);
    /// [`Stats::alignment_waste`] counts the rounding.
    ///
    /// ```
    /// # use gpu_aligned::alloc::Allocator;
    /// let mut allocator = Allocator::with_granularity(4096, 256)?;
    /// let a = allocator.alloc(10, 1)?;
    /// let b = allocator.alloc(10, 1)?;
    /// assert_eq!(b.offset() - a.offset(), 256);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`AllocError::AlignNotPowerOfTwo`] unless `granularity` is a power of two.
    pub fn with_granularity(capacity: usize, granularity: usize) -> Result<Allocator, AllocError> {
        Allocator::granular(capacity, granularity, next_allocator_id)
    }

    /// An allocator whose handles never leave the function that made it
    /// (sizing a plan): its id, [`SCRATCH`], takes none from the counter.
    pub(crate) fn scratch(capacity: usize, granularity: usize) -> Result<Allocator, AllocError> {
        Allocator::granular(capacity, granularity, || SCRATCH)
    }

    fn granular(
        capacity: usize,
        granularity: usize,
        id: impl FnOnce() -> u32,
    ) -> Result<Allocator, AllocError> {
        if !granularity.is_power_of_two() {
            return Err(AllocError::AlignNotPowerOfTwo { align: granularity });
        }
        Ok(Allocator::build(capacity, granularity, id()))
    }

    fn build(capacity: usize, granularity: usize, id: u32) -> Allocator {
        let mut allocator = Allocator {
            blocks: Vec::new(),
            heads: Box::new([NONE; BIN_COUNT]),
            bitmaps: Bitmaps::new(),
            id,
            granularity: offset_of(granularity),
            capacity: offset_of(capacity),
            next_stamp: if id == RETIRED { u64::MAX } else { 1 },
            reset_stamp: 1,
            vacant: NONE,
            vacant_count: 0,
            used: 0,
            requested: 0,
            allocations: 0,
        };
        allocator.rebuild_empty();
        allocator
    }

    /// The size of the managed buffer in bytes.
    ///
    /// ```
    /// # let allocator = gpu_aligned::alloc::Allocator::new(4096);
    /// assert_eq!(allocator.capacity(), 4096);
    /// ```
    #[inline]
    pub fn capacity(&self) -> usize {
        bytes(self.capacity)
    }

    /// The granularity every block start is a multiple of.
    ///
    /// ```
    /// # use gpu_aligned::alloc::Allocator;
    /// assert_eq!(Allocator::with_granularity(4096, 256)?.granularity(), 256);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[inline]
    pub fn granularity(&self) -> usize {
        bytes(self.granularity)
    }

    /// Allocates `size` bytes whose offset (from the buffer's start, so 0
    /// satisfies any alignment) is a multiple of `align`.
    ///
    /// ```
    /// use gpu_aligned::alloc::{AllocError, Allocator};
    ///
    /// let mut allocator = Allocator::new(100);
    /// let a = allocator.alloc(1, 128)?;
    /// assert_eq!(a.offset(), 0);
    /// assert!(matches!(allocator.alloc(1, 128), Err(AllocError::OutOfMemory { .. })));
    /// allocator.free(a)?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`AllocError::ZeroSize`], [`AllocError::AlignNotPowerOfTwo`] and
    /// [`AllocError::SizeExceedsCapacity`] for requests that can never succeed;
    /// [`AllocError::OutOfMemory`] when the bounded search finds no block (beyond [`SEARCH_LIMIT`]
    /// free blocks a fit among near misses can be passed over); [`AllocError::TooManyBlocks`];
    /// [`AllocError::StampsExhausted`]. The allocator is unchanged on error.
    #[inline(always)]
    pub fn alloc(&mut self, size: usize, align: usize) -> Result<Allocation, AllocError> {
        self.alloc_placed(offset_of(size), offset_of(align), false)
    }

    /// As [`alloc`](Allocator::alloc), but placed at the high end of the block found, so small
    /// blocks kept low do not split the holes large ones leave.
    ///
    /// ```
    /// use gpu_aligned::alloc::Allocator;
    ///
    /// let mut allocator = Allocator::with_granularity(4096, 256)?;
    /// let high = allocator.alloc_high(1000, 256)?;
    /// assert_eq!(high.offset(), 3072);
    /// let low = allocator.alloc(1000, 256)?;
    /// assert_eq!(low.offset(), 0);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`alloc`](Allocator::alloc).
    #[inline]
    pub fn alloc_high(&mut self, size: usize, align: usize) -> Result<Allocation, AllocError> {
        self.alloc_placed(offset_of(size), offset_of(align), true)
    }

    /// [`alloc`](Allocator::alloc), or [`alloc_high`](Allocator::alloc_high) when `high`.
    #[inline(always)]
    fn alloc_placed(
        &mut self,
        size: u64,
        align: u64,
        high: bool,
    ) -> Result<Allocation, AllocError> {
        // One test (`|`, one branch) for all the common path does not
        // handle: a hopeless request, the end of the stamps, no spare slots.
        if (size.wrapping_sub(1) >= self.capacity)
            | (align & align.wrapping_sub(1) != 0)
            | (align == 0)
            | (self.next_stamp == u64::MAX)
            | (self.vacant_count < 2)
        {
            // The cold call only refuses or reserves: a whole `Result` from it would go through
            // memory and stall the caller's copy (docs/RESULTS.md, "The hot path").
            self.admit_slow(size, align)?;
        }
        self.alloc_checked(size, align, high)
    }

    /// [`alloc`](Allocator::alloc) for a valid request with two spare slots.
    #[inline(always)]
    fn alloc_checked(
        &mut self,
        size: u64,
        align: u64,
        high: bool,
    ) -> Result<Allocation, AllocError> {
        // Starting on a granule boundary is what keeps every block on one.
        let block_align = align.max(self.granularity);
        let (slot, mut start, block) = match self.find_fast(size, block_align) {
            Some(Found { slot, bin, start }) => (slot, start, self.unlink_head(slot, bin)),
            None => {
                let (slot, start) = self.find_slow(size, align, block_align)?;
                (slot, start, self.unlink_free(slot))
            }
        };
        if high {
            // The highest aligned start whose rounded request still fits.
            let reserved = align_up(size, self.granularity).unwrap_or(u64::MAX);
            if let Some(top) = block.end().checked_sub(reserved) {
                start = start.max(top & !(block_align - 1));
            }
        }
        Ok(self.split_and_use(slot, block, start, size))
    }

    /// Refuses a request that can never succeed, or makes the room the common path assumes.
    #[cold]
    #[inline(never)]
    fn admit_slow(&mut self, size: u64, align: u64) -> Result<(), AllocError> {
        if size == 0 {
            return Err(AllocError::ZeroSize);
        }
        if !align.is_power_of_two() {
            return Err(AllocError::AlignNotPowerOfTwo {
                align: bytes(align),
            });
        }
        if size > self.capacity {
            return Err(AllocError::SizeExceedsCapacity {
                size: bytes(size),
                capacity: bytes(self.capacity),
            });
        }
        if self.next_stamp == u64::MAX {
            return Err(AllocError::StampsExhausted);
        }
        // Splitting needs up to two more slots; get them before changing
        // anything so a failure leaves the allocator as it was.
        self.reserve_slots(2)
    }

    /// Frees an allocation, merging it with free neighbours.
    ///
    /// ```
    /// use gpu_aligned::alloc::{Allocator, HandleError};
    ///
    /// let mut allocator = Allocator::new(1024);
    /// let a = allocator.alloc(100, 1)?;
    /// allocator.free(a)?;
    /// let refused = allocator.free(a).unwrap_err();
    /// assert_eq!(refused.kind(), HandleError::DoubleFree);
    /// assert_eq!(refused.into_allocation(), a); // handed back, not consumed
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    ///
    /// A [`FreeError`] holding the handle and why it was refused: [`HandleError::ForeignHandle`]
    /// for a handle from another allocator, [`HandleError::DoubleFree`] or
    /// [`HandleError::StaleHandle`] for one whose allocation was already freed. The allocator is
    /// unchanged on error.
    #[inline(always)]
    pub fn free(&mut self, allocation: Allocation) -> Result<(), FreeError> {
        self.free_merged(allocation).map(|_| ())
    }

    /// [`free`](Allocator::free), returning the merged free block as `(offset, end)`.
    #[inline(always)]
    pub(crate) fn free_merged(&mut self, allocation: Allocation) -> Result<(u64, u64), FreeError> {
        let slot = allocation.slot;
        let block = match self.blocks.get(slot as usize) {
            Some(block) if self.matches(block, &allocation) => *block,
            _ => return Err(FreeError::new(self.refusal(&allocation), allocation)),
        };
        let (mut prev, mut next) = (block.prev_phys, block.next());
        let end = self.used_end(&block);
        let (mut offset, mut size) = (block.offset, end - block.offset);
        self.used -= size;
        self.requested -= block.size;
        self.allocations -= 1;

        // Physical neighbours are never vacant: a clear state bit means free.
        if prev != NONE && !self.blocks[prev as usize].is_used() {
            let absorbed = self.unlink_free(prev);
            self.release_slot(prev);
            offset = absorbed.offset;
            size += absorbed.size;
            prev = absorbed.prev_phys;
            if prev != NONE {
                self.blocks[prev as usize].set_next_of_used(slot);
            }
        }
        if next != NONE && !self.blocks[next as usize].is_used() {
            let absorbed = self.unlink_free(next);
            self.release_slot(next);
            size += absorbed.size;
            next = absorbed.next();
            if next != NONE {
                self.blocks[next as usize].prev_phys = slot;
            }
        }
        self.blocks[slot as usize] = Block::free(offset, size, prev, next);
        self.link_free(slot);
        Ok((offset, offset + size))
    }

    /// The number of live allocations.
    #[inline]
    pub(crate) fn live_count(&self) -> usize {
        self.allocations
    }

    /// The live allocations as `(offset, requested size)` pairs, in no
    /// particular order (a walk of the block table, for leak reports).
    ///
    /// ```
    /// # let mut allocator = gpu_aligned::alloc::Allocator::new(1024);
    /// let _kept = allocator.alloc(100, 1)?;
    /// let freed = allocator.alloc(10, 256)?;
    /// allocator.free(freed)?;
    /// assert_eq!(allocator.live().collect::<Vec<_>>(), [(0, 100)]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn live(&self) -> impl Iterator<Item = (u64, usize)> + '_ {
        self.blocks
            .iter()
            .filter(|block| block.is_used())
            .map(|block| (block.offset, bytes(block.size)))
    }

    /// The free blocks as `(offset, end)` pairs, in no particular order.
    /// Walks the block table: for trimming, not for the allocation path.
    pub(crate) fn free_extents(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        self.blocks
            .iter()
            .filter(|block| block.is_free())
            .map(|block| (block.offset, block.end()))
    }

    /// Slots neither vacant nor used.
    fn free_blocks(&self) -> usize {
        self.blocks.len() - self.vacant_count as usize - self.allocations
    }

    /// A snapshot of the counters; see [`Stats`].
    ///
    /// ```
    /// # let mut allocator = gpu_aligned::alloc::Allocator::with_granularity(1024, 256)?;
    /// let _a = allocator.alloc(100, 1)?;
    /// let stats = allocator.stats();
    /// assert_eq!((stats.used, stats.requested, stats.alignment_waste), (256, 100, 156));
    /// assert_eq!(stats.used + stats.free, stats.capacity);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn stats(&self) -> Stats {
        Stats {
            capacity: bytes(self.capacity),
            used: bytes(self.used),
            requested: bytes(self.requested),
            free: bytes(self.capacity - self.used),
            allocations: self.allocations,
            free_blocks: self.free_blocks(),
            largest_free_block: bytes(self.largest_free_block()),
            alignment_waste: bytes(self.used - self.requested),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scratch_allocators_take_no_id_and_still_place() {
        let mut scratch = Allocator::scratch(1 << 12, 256).unwrap();
        // Its handles carry the one id the counter never hands out.
        assert_eq!(scratch.id, SCRATCH);
        assert_ne!(next_allocator_id(), SCRATCH);
        let placed = scratch.alloc(100, 256).unwrap();
        assert_eq!((placed.offset(), placed.end()), (0, 100));
        assert!(Allocator::scratch(1 << 12, 3).is_err());
    }

    #[test]
    fn a_renewed_allocation_keeps_its_bytes_and_refuses_the_old_handle() {
        let mut allocator = Allocator::new(1 << 12);
        let old = allocator.alloc(100, 256).unwrap();
        let before = allocator.stats();
        let renewed = allocator.renew(&old).unwrap();
        assert_eq!(
            (renewed.offset(), renewed.size()),
            (old.offset(), old.size())
        );
        assert_ne!(renewed.stamp, old.stamp);
        assert_eq!(allocator.stats(), before);
        assert_eq!(allocator.check_handle(&old), Err(HandleError::StaleHandle));
        assert!(allocator.renew(&old).is_none());
        assert_eq!(
            allocator.free(old).unwrap_err().kind(),
            HandleError::StaleHandle
        );
        allocator.free(renewed).unwrap();
        assert!(allocator.renew(&renewed).is_none());
        allocator.check_invariants().unwrap();
    }
}
