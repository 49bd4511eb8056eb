//! The offsets-only sub-allocator: hands out aligned byte ranges of a buffer
//! it never touches, so the same bookkeeping serves host memory and device
//! memory alike (the [`arena`](crate::arena) puts it over a real buffer).
//!
//! It is a two-level segregated fit (TLSF): free blocks sit in one of 1,920
//! size-class lists, two bitmaps say which lists are non-empty, so finding a
//! block and freeing one (merging it with free neighbours) take a constant
//! number of steps, and a failing search a bounded number
//! ([`SEARCH_LIMIT`]). Any power-of-two alignment can be asked for per
//! allocation, relative to the start of the buffer; the bytes skipped to
//! reach the aligned start go back to the free list as a block of their own
//! instead of being hidden inside the allocation.
//!
//! A granularity keeps every block on a multiple of it: requests are rounded
//! up to it, and [`Stats::alignment_waste`] counts what that rounding costs.
//! [`Allocator::new`] uses [`DEFAULT_GRANULARITY`] (16 bytes, the widest
//! CUDA vector load), which keeps slivers too small for anything out of the
//! free lists; [`Allocator::with_granularity`] picks another, 1 for
//! byte-exact blocks (the [`Arena`](crate::arena::Arena) uses its minimum
//! alignment, since the bytes after an array up to the next aligned start
//! could never hold another of its arrays anyway).
//!
//! Sizes, counts and alignments are `usize`, like every length in the
//! crate; offsets ([`Allocation::offset`], [`Allocation::end`]) are `u64`,
//! offsets into a buffer that may live on the device.
//! `crate::align::offset_of` and `bytes_of` convert. The
//! blocks themselves are kept in `u64`s, converted at this surface.
//!
//! The buffer can [`grow_to`](Allocator::grow_to) in place (every offset handed out
//! stays valid) and [`shrink_to`](Allocator::shrink_to) by its free tail, for
//! arenas over memory that is mapped on demand.
//!
//! For several threads, give each its own allocator over its own part of
//! the buffer: an operation takes tens of nanoseconds, about what handing a
//! lock and the allocator's cache lines to another core costs, so two threads
//! sharing one allocator get less done than one. Where one must be shared,
//! put it behind a `std::sync::Mutex` and take the lock once per batch (the
//! `alloc` benchmark's `threads` group measures both).
//!
//! Misuse is a typed error, never a panic or silent corruption: every
//! [`Allocation`] carries the id of its allocator, a slot index and a 64-bit
//! **stamp** that no other allocation of that allocator ever gets (the
//! counter never wraps), so a double free, a stale handle (freed, then its
//! slot reused, or freed by a reset) and a handle from another allocator are
//! all detected in O(1), however long the handle was kept. A refused
//! [`free`](Allocator::free) hands the handle back inside its [`FreeError`].
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

// One file per job: the size classes and their bitmaps (`bins`), the block
// table and the free lists (`block`), handles and their checks (`handle`),
// finding a block (`search`), reset and resizing (`resize`), the
// invariants (`check`), counters (`stats`); the public calls stay here.
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

/// The most free blocks each of the two walks of [`Allocator::alloc`] looks
/// at beyond its constant-time lookups (one through the size classes that
/// might hold the request, one through the largest blocks) before it reports
/// [`OutOfMemory`](AllocError::OutOfMemory): a failing allocation looks at
/// no more than twice this many blocks, however fragmented the buffer is.
///
/// With no more free blocks than this, a refusal has seen every one of them:
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

/// The granularity of [`Allocator::new`]: every block starts on 16 bytes,
/// the widest load a CUDA thread makes (`float4`, `double2`), and no free
/// block is ever smaller than that, which keeps the free lists short.
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
    /// The stamp of the next allocation. Only ever grows (never wraps: at
    /// `u64::MAX` allocation stops), so a stamp names one allocation for the
    /// allocator's lifetime, across [`reset`](Allocator::reset)s too.
    next_stamp: u64,
    /// The first stamp handed out since the last reset: handles with an
    /// older stamp were freed by a reset, not by [`free`](Allocator::free).
    reset_stamp: u64,
    /// First slot of the vacant list, and its length.
    vacant: u32,
    vacant_count: u32,
    /// Bytes in used blocks (requests rounded up to the granularity); the
    /// rest of the capacity is free.
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

/// A byte count the allocator keeps as a `u64`, at its public surface: every
/// one is at most the capacity, which came in as a `usize`, so this never
/// saturates; on 64-bit targets it compiles to nothing.
#[inline(always)]
fn bytes(count: u64) -> usize {
    bytes_of(count).unwrap_or(usize::MAX)
}

/// `offset` rounded up to a multiple of `align` (a power of two), or `None`
/// on overflow: `crate::align::round_up` without its test for a power of
/// two, which every alignment here already passed (`alloc` refuses others),
/// on the allocator's hot path.
#[inline(always)]
fn align_up(offset: u64, align: u64) -> Option<u64> {
    let mask = align - 1;
    offset.checked_add(mask).map(|bumped| bumped & !mask)
}

impl Allocator {
    /// An allocator for a buffer of `capacity` bytes, all free, whose blocks
    /// start on multiples of [`DEFAULT_GRANULARITY`] (16 bytes: each request
    /// is rounded up to it). A capacity of zero is allowed; every allocation
    /// from it fails until it [grows](Allocator::grow_to).
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
        Allocator::build(
            offset_of(capacity),
            offset_of(DEFAULT_GRANULARITY),
            next_allocator_id(),
        )
    }

    /// An allocator whose blocks all start on multiples of `granularity`:
    /// each request is rounded up to it (only the last block of a capacity
    /// that is not a multiple may be shorter). Granularity 1 gives
    /// byte-exact blocks. [`Allocation::size`] still
    /// reports the size requested; [`Stats::used`] counts the rounded
    /// blocks, [`Stats::requested`] the requests and
    /// [`Stats::alignment_waste`] the difference.
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
    /// [`AllocError::AlignNotPowerOfTwo`] unless `granularity` is a power of
    /// two.
    pub fn with_granularity(capacity: usize, granularity: usize) -> Result<Allocator, AllocError> {
        if !granularity.is_power_of_two() {
            return Err(AllocError::AlignNotPowerOfTwo { align: granularity });
        }
        Ok(Allocator::build(
            offset_of(capacity),
            offset_of(granularity),
            next_allocator_id(),
        ))
    }

    /// An allocator whose handles never leave the function that made it
    /// (sizing a plan by placing it): it takes no id from the process-wide
    /// counter, so making any number of them cannot use the ids up. Its id,
    /// [`SCRATCH`], is one no other allocator has.
    pub(crate) fn scratch(capacity: usize, granularity: usize) -> Result<Allocator, AllocError> {
        if !granularity.is_power_of_two() {
            return Err(AllocError::AlignNotPowerOfTwo { align: granularity });
        }
        Ok(Allocator::build(
            offset_of(capacity),
            offset_of(granularity),
            SCRATCH,
        ))
    }

    fn build(capacity: u64, granularity: u64, id: u32) -> Allocator {
        let mut allocator = Allocator {
            blocks: Vec::new(),
            heads: Box::new([NONE; BIN_COUNT]),
            bitmaps: Bitmaps::new(),
            id,
            granularity,
            capacity,
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

    /// The granularity every block start is a multiple of
    /// ([`DEFAULT_GRANULARITY`] unless made with
    /// [`with_granularity`](Allocator::with_granularity)).
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

    /// Allocates `size` bytes whose offset is a multiple of `align`.
    ///
    /// Alignment is relative to the start of the buffer, so offset 0
    /// satisfies any alignment, even one larger than the capacity.
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
    /// [`AllocError::SizeExceedsCapacity`] for requests that can never
    /// succeed; [`AllocError::OutOfMemory`] (with the free total and the
    /// largest fit the search saw) when the search finds no free block for
    /// the request; [`AllocError::TooManyBlocks`] when the block table cannot
    /// grow; [`AllocError::StampsExhausted`] after `u64::MAX - 1`
    /// allocations. The allocator is unchanged on error.
    ///
    /// The search takes bounded time, found or not: two constant-time
    /// lookups (the first size class whose blocks all hold `size` bytes, and
    /// the first whose blocks hold `size + align - 1`, which fit at any start;
    /// the second first when `align` exceeds the granularity, since the head
    /// of the first then often lacks room for its padding), then, when they
    /// find nothing, a walk of at most
    /// [`SEARCH_LIMIT`] free blocks in the size classes that might still hold
    /// a fitting block, then one of at most as many of the largest blocks
    /// (which also finds the largest fit the error reports). While the
    /// allocator has at most that many free blocks the walks see them all,
    /// so out of memory means nothing fits; beyond
    /// that a fitting block deep in a list of near misses can be passed over
    /// ([`largest_allocatable`](Allocator::largest_allocatable) walks
    /// everything).
    #[inline(always)]
    pub fn alloc(&mut self, size: usize, align: usize) -> Result<Allocation, AllocError> {
        self.alloc_bytes(offset_of(size), offset_of(align))
    }

    /// As [`alloc`](Allocator::alloc), but the allocation is placed at the
    /// high end of the free block the same lookups find, rather than at its
    /// start. A caller that puts its large blocks high and its small ones
    /// low keeps the small ones together at the bottom of the free space,
    /// where they do not split the holes the large ones leave (the arena
    /// does so in a growing arena that gives free chunks back).
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

    /// [`alloc`](Allocator::alloc) in the `u64`s the blocks are kept in.
    #[inline(always)]
    fn alloc_bytes(&mut self, size: u64, align: u64) -> Result<Allocation, AllocError> {
        self.alloc_placed(size, align, false)
    }

    /// [`alloc`](Allocator::alloc), or [`alloc_high`](Allocator::alloc_high)
    /// when `high`.
    #[inline(always)]
    fn alloc_placed(
        &mut self,
        size: u64,
        align: u64,
        high: bool,
    ) -> Result<Allocation, AllocError> {
        // One test for everything the common path does not handle: a request
        // that can never succeed, the end of the stamps, or too few spare
        // slots for a split.
        // `|`, not `||`: one branch instead of four. `align & (align - 1)`
        // is 0 only for powers of two and for 0, which `align == 0` adds.
        if (size.wrapping_sub(1) >= self.capacity)
            | (align & align.wrapping_sub(1) != 0)
            | (align == 0)
            | (self.next_stamp == u64::MAX)
            | (self.vacant_count < 2)
        {
            // The cold call only refuses the request or reserves slots; the
            // allocation itself is always made here, inlined into the
            // caller. Were the cold call to return a whole
            // `Result<Allocation, _>` too, the result would live in memory
            // and the caller's copy of it would stall on the stores that
            // wrote it (measured in `docs/RESULTS.md`, "The hot path").
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
            // The highest aligned start whose rounded request still ends
            // inside the block; `start`, the lowest, fits, so this one is
            // at least as high.
            let reserved = align_up(size, self.granularity).unwrap_or(u64::MAX);
            if let Some(top) = block.end().checked_sub(reserved) {
                start = start.max(top & !(block_align - 1));
            }
        }
        Ok(self.split_and_use(slot, block, start, size))
    }

    /// Refuses a request that can never succeed, or makes the room the
    /// common path assumes.
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
    /// A [`FreeError`] holding the handle and why it was refused:
    /// [`HandleError::ForeignHandle`] for a handle from another allocator,
    /// [`HandleError::DoubleFree`] or [`HandleError::StaleHandle`] for one
    /// whose allocation was already freed. The allocator is unchanged on
    /// error.
    #[inline(always)]
    pub fn free(&mut self, allocation: Allocation) -> Result<(), FreeError> {
        self.free_merged(allocation).map(|_| ())
    }

    /// [`free`](Allocator::free), returning the free block the allocation
    /// became part of once merged with its free neighbours, as `(offset,
    /// end)`: what an arena gives back memory of.
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

    /// The number of live allocations, without the rest of
    /// [`stats`](Allocator::stats) (what the arena counts on every call).
    #[inline]
    pub(crate) fn live_count(&self) -> usize {
        self.allocations
    }

    /// The live allocations as `(offset, requested size)` pairs, in no
    /// particular order: what a leak report lists when an arena is dropped or
    /// reset with allocations outstanding.
    ///
    /// This walks the block table: it is meant for reports, not for the
    /// allocation path.
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

    /// Every slot holds a used block, a free block or nothing (vacant), so
    /// the free blocks need no counter of their own.
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
