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
//! An optional granularity ([`Allocator::with_granularity`]) keeps every
//! block on a multiple of it: requests are rounded up to it (the
//! [`Arena`](crate::arena::Arena) uses its minimum alignment, since the bytes
//! after an array up to the next aligned start could never hold another of
//! its arrays anyway), and [`Stats::alignment_waste`] counts what that
//! rounding costs. That keeps slivers out of the free lists.
//!
//! The buffer can [`grow`](Allocator::grow) in place (every offset handed out
//! stays valid) and [`shrink`](Allocator::shrink) by its free tail, for
//! arenas over memory that is mapped on demand.
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
//! // The 156 bytes between `a` and `b` were skipped for alignment and are free.
//! assert_eq!(allocator.stats().alignment_waste, 0);
//! allocator.free(a)?;
//! assert!(allocator.free(a).is_err()); // double free
//! allocator.free(b)?;
//! assert_eq!(allocator.stats().largest_free_block, 1 << 20);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![deny(unsafe_code)]

mod bins;
mod error;
mod stats;
#[cfg(feature = "std")]
mod sync;

pub use error::{AllocError, FreeError, HandleError, InvariantError};
pub use stats::Stats;
#[cfg(feature = "std")]
pub use sync::SyncAllocator;

use alloc_crate::boxed::Box;
use alloc_crate::vec::Vec;
use core::fmt;
use core::sync::atomic::{AtomicU64, Ordering};

use bins::{Bin, Bitmaps, BIN_COUNT, SECOND_LEVEL_COUNT};

/// The most free blocks one [`Allocator::alloc`] looks at beyond its
/// constant-time lookups before it reports
/// [`OutOfMemory`](AllocError::OutOfMemory): a failing allocation takes
/// bounded time however fragmented the buffer is.
pub const SEARCH_LIMIT: usize = 64;

/// "No block" in the intrusive links and list heads.
const NONE: u32 = u32::MAX;

/// Every allocator gets a distinct id so a handle presented to the wrong one
/// is recognised.
fn next_allocator_id() -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    Free,
    Used,
    /// The slot holds no block; it waits on the vacant list for reuse.
    Vacant,
}

/// One block of the buffer, free or used, in a slot of the block table.
/// Blocks link to their physical neighbours (to merge on free) and, while
/// free, to the other blocks of their size class.
#[derive(Clone, Debug)]
struct Block {
    offset: u64,
    size: u64,
    prev_phys: u32,
    next_phys: u32,
    /// Free list links; `next_free` also links the vacant list.
    prev_free: u32,
    next_free: u32,
    /// While used: the stamp of the allocation in it, which its handle
    /// carries. Stamps come from one 64-bit counter per allocator and are
    /// never reused, so no handle of an earlier allocation matches.
    stamp: u64,
    /// While used: the bytes requested (`size` is rounded to the
    /// granularity).
    requested: u64,
    /// While free: the index of its size class, saved so unlinking it need
    /// not recompute it.
    bin: u16,
    state: State,
}

impl Block {
    const VACANT: Block = Block {
        offset: 0,
        size: 0,
        prev_phys: NONE,
        next_phys: NONE,
        prev_free: NONE,
        next_free: NONE,
        stamp: 0,
        requested: 0,
        bin: 0,
        state: State::Vacant,
    };

    fn end(&self) -> u64 {
        // Blocks lie within `[0, capacity)`, so this cannot overflow.
        self.offset + self.size
    }
}

/// A live allocation: a byte range of the allocator's buffer. Give it back
/// with [`Allocator::free`].
///
/// The handle is `Copy` because it is only a name: the allocator checks it
/// on every use (allocator id, slot, and a 64-bit stamp no other allocation
/// of that allocator ever gets), so a copy that outlives its allocation is
/// caught as a [`HandleError`] instead of freeing someone else's bytes, however
/// many allocations and resets happened in between. The typed
/// [`ArenaSlice`](crate::arena::ArenaSlice) built on it is move-only.
///
/// Dropping the last copy of a live allocation leaks its bytes until
/// [`Allocator::reset`]; [`Allocator::live`] lists what is still allocated.
///
/// ```
/// use gpu_aligned::alloc::Allocator;
///
/// let mut allocator = Allocator::new(1024);
/// let a = allocator.alloc(100, 64)?;
/// assert_eq!((a.offset(), a.size(), a.end()), (0, 100, 100));
/// allocator.free(a)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[must_use = "dropping an allocation leaks its bytes until the allocator is reset"]
pub struct Allocation {
    offset: u64,
    size: u64,
    allocator: u64,
    stamp: u64,
    slot: u32,
}

impl Allocation {
    /// Byte offset of the first byte, from the start of the buffer.
    ///
    /// ```
    /// # let mut allocator = gpu_aligned::alloc::Allocator::new(1024);
    /// let a = allocator.alloc(10, 1)?;
    /// let b = allocator.alloc(10, 256)?;
    /// assert_eq!((a.offset(), b.offset()), (0, 256));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[inline]
    pub fn offset(&self) -> u64 {
        self.offset
    }

    /// Size in bytes, exactly as requested.
    ///
    /// ```
    /// # let mut allocator = gpu_aligned::alloc::Allocator::with_granularity(1024, 256)?;
    /// let a = allocator.alloc(10, 1)?;
    /// assert_eq!(a.size(), 10); // its block holds 256 bytes
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[inline]
    pub fn size(&self) -> u64 {
        self.size
    }

    /// Byte offset one past the last byte.
    ///
    /// ```
    /// # let mut allocator = gpu_aligned::alloc::Allocator::new(1024);
    /// let a = allocator.alloc(10, 1)?;
    /// assert_eq!(a.end(), 10);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[inline]
    pub fn end(&self) -> u64 {
        // An allocation lies within the capacity, a `u64`.
        self.offset + self.size
    }
}

/// The sub-allocator. See the [module docs](self).
pub struct Allocator {
    id: u64,
    /// Every block starts on a multiple of this (a power of two).
    granularity: u64,
    /// The stamp of the next allocation. Only ever grows (never wraps: at
    /// `u64::MAX` allocation stops), so a stamp names one allocation for the
    /// allocator's lifetime, across [`reset`](Allocator::reset)s too.
    next_stamp: u64,
    /// The first stamp handed out since the last reset: handles with an
    /// older stamp were freed by a reset, not by [`free`](Allocator::free).
    reset_stamp: u64,
    capacity: u64,
    blocks: Vec<Block>,
    /// First block of each size class's free list.
    heads: Box<[u32; BIN_COUNT]>,
    bitmaps: Bitmaps,
    /// First slot of the vacant list, and its length.
    vacant: u32,
    vacant_count: u32,
    /// Bytes in used blocks (requests rounded up to the granularity).
    used: u64,
    /// Bytes requested by the live allocations.
    requested: u64,
    free: u64,
    allocations: u64,
    free_blocks: u64,
}

impl fmt::Debug for Allocator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Allocator")
            .field("id", &self.id)
            .field("capacity", &self.capacity)
            .field("used", &self.used)
            .field("free", &self.free)
            .field("allocations", &self.allocations)
            .field("free_blocks", &self.free_blocks)
            .finish_non_exhaustive()
    }
}

/// `offset` rounded up to a multiple of `align` (a power of two), or `None`
/// on overflow.
#[inline]
fn align_up(offset: u64, align: u64) -> Option<u64> {
    let mask = align - 1;
    offset.checked_add(mask).map(|bumped| bumped & !mask)
}

impl Allocator {
    /// An allocator for a buffer of `capacity` bytes, all free. A capacity of
    /// zero is allowed; every allocation from it fails.
    pub fn new(capacity: u64) -> Allocator {
        Allocator::build(capacity, 1)
    }

    /// An allocator whose blocks all start on multiples of `granularity`:
    /// each request is rounded up to it (only the last block of a capacity
    /// that is not a multiple may be shorter). [`Allocation::size`] still
    /// reports the size requested; [`Stats::used`] counts the rounded
    /// blocks and [`Stats::requested`] the requests.
    ///
    /// # Errors
    ///
    /// [`AllocError::AlignNotPowerOfTwo`] unless `granularity` is a power of
    /// two.
    pub fn with_granularity(capacity: u64, granularity: u64) -> Result<Allocator, AllocError> {
        if !granularity.is_power_of_two() {
            return Err(AllocError::AlignNotPowerOfTwo { align: granularity });
        }
        Ok(Allocator::build(capacity, granularity))
    }

    fn build(capacity: u64, granularity: u64) -> Allocator {
        let mut allocator = Allocator {
            id: next_allocator_id(),
            granularity,
            next_stamp: 1,
            reset_stamp: 1,
            capacity,
            blocks: Vec::with_capacity(16),
            heads: Box::new([NONE; BIN_COUNT]),
            bitmaps: Bitmaps::new(),
            vacant: NONE,
            vacant_count: 0,
            used: 0,
            requested: 0,
            free: 0,
            allocations: 0,
            free_blocks: 0,
        };
        allocator.rebuild_empty();
        allocator
    }

    /// The size of the managed buffer in bytes.
    pub fn capacity(&self) -> u64 {
        self.capacity
    }

    /// The granularity every block start is a multiple of (1 unless made
    /// with [`with_granularity`](Allocator::with_granularity)).
    pub fn granularity(&self) -> u64 {
        self.granularity
    }

    /// Frees every allocation at once. Handles made before the reset become
    /// stale: freeing one is refused with [`HandleError::StaleHandle`].
    ///
    /// This takes time proportional to the number of size classes, not to
    /// the number of allocations.
    pub fn reset(&mut self) {
        // No epoch is needed: the stamps of the allocations made after the
        // reset are new, so the handles of those before it match nothing.
        self.reset_stamp = self.next_stamp;
        self.rebuild_empty();
    }

    /// Moves the stamp counter `count` allocations ahead (saturating at its
    /// end), as if that many allocations had been made and freed. Tests use
    /// it to reach the counter's limit; it can only make stamps newer, so no
    /// old handle can ever match through it.
    #[doc(hidden)]
    pub fn skip_stamps(&mut self, count: u64) {
        self.next_stamp = self.next_stamp.saturating_add(count);
    }

    /// Grows the buffer to `new_capacity` bytes in place: every live
    /// allocation keeps its offset and stays valid, and the new bytes join
    /// the free block at the end (or become one).
    ///
    /// ```
    /// use gpu_aligned::alloc::Allocator;
    ///
    /// let mut allocator = Allocator::new(1024);
    /// let a = allocator.alloc(1000, 1)?;
    /// assert!(allocator.alloc(1000, 1).is_err());
    /// allocator.grow(4096)?;
    /// let b = allocator.alloc(1000, 1)?;
    /// assert_eq!(b.offset(), 1000);
    /// assert_eq!(allocator.free_tail(), 4096 - 2000);
    /// allocator.free(a)?;
    /// allocator.free(b)?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`AllocError::CannotResize`] when `new_capacity` is below the
    /// capacity; [`AllocError::TooManyBlocks`] when the block table cannot
    /// take the new free block. The allocator is unchanged on error.
    pub fn grow(&mut self, new_capacity: u64) -> Result<(), AllocError> {
        if new_capacity < self.capacity {
            return Err(AllocError::CannotResize {
                capacity: self.capacity,
                new_capacity,
            });
        }
        if new_capacity == self.capacity {
            return Ok(());
        }
        self.reserve_slots(1)?;
        let old_capacity = self.capacity;
        self.capacity = new_capacity;
        let Some(last) = self.last_block() else {
            let slot = self.take_slot();
            self.blocks[slot as usize] = Block {
                size: new_capacity,
                ..Block::VACANT
            };
            self.insert_free(slot);
            return Ok(());
        };
        if self.blocks[last as usize].state == State::Free {
            self.remove_free(last);
            self.blocks[last as usize].size += new_capacity - old_capacity;
            self.insert_free(last);
            return Ok(());
        }
        // A used block that the old end cut short of its granule reaches it
        // now, so the free block after it starts on a granule boundary.
        let block = &mut self.blocks[last as usize];
        let granule_end = align_up(old_capacity, self.granularity)
            .unwrap_or(u64::MAX)
            .min(new_capacity);
        block.size += granule_end - old_capacity;
        self.used += granule_end - old_capacity;
        if granule_end < new_capacity {
            let slot = self.take_slot();
            self.blocks[slot as usize] = Block {
                offset: granule_end,
                size: new_capacity - granule_end,
                prev_phys: last,
                ..Block::VACANT
            };
            self.blocks[last as usize].next_phys = slot;
            self.insert_free(slot);
        }
        Ok(())
    }

    /// Shrinks the buffer to `new_capacity` bytes, dropping free bytes from
    /// its end: what a growable arena does before giving the end of its
    /// memory back. At most [`free_tail`](Allocator::free_tail) bytes can go.
    ///
    /// ```
    /// # let mut allocator = gpu_aligned::alloc::Allocator::new(4096);
    /// let a = allocator.alloc(1000, 1)?;
    /// assert_eq!(allocator.free_tail(), 3096);
    /// allocator.shrink(2048)?;
    /// assert_eq!(allocator.capacity(), 2048);
    /// assert!(allocator.shrink(999).is_err()); // `a` is in the way
    /// # allocator.free(a)?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`AllocError::CannotResize`] when `new_capacity` exceeds the capacity
    /// or would cut into bytes that are not free. The allocator is unchanged
    /// on error.
    pub fn shrink(&mut self, new_capacity: u64) -> Result<(), AllocError> {
        let refused = AllocError::CannotResize {
            capacity: self.capacity,
            new_capacity,
        };
        if new_capacity > self.capacity || self.capacity - new_capacity > self.free_tail() {
            return Err(refused);
        }
        if new_capacity == self.capacity {
            return Ok(());
        }
        let Some(last) = self.last_block() else {
            return Err(refused);
        };
        let cut = self.capacity - new_capacity;
        self.capacity = new_capacity;
        self.remove_free(last);
        let block = &mut self.blocks[last as usize];
        if block.size > cut {
            block.size -= cut;
            self.insert_free(last);
        } else {
            let prev = block.prev_phys;
            if prev != NONE {
                self.blocks[prev as usize].next_phys = NONE;
            }
            self.release_slot(last);
        }
        Ok(())
    }

    /// The number of free bytes at the end of the buffer: how far
    /// [`shrink`](Allocator::shrink) can go.
    ///
    /// ```
    /// # let mut allocator = gpu_aligned::alloc::Allocator::new(4096);
    /// assert_eq!(allocator.free_tail(), 4096);
    /// let _a = allocator.alloc(4000, 1)?;
    /// assert_eq!(allocator.free_tail(), 96);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn free_tail(&self) -> u64 {
        match self.last_block() {
            Some(last) if self.blocks[last as usize].state == State::Free => {
                self.blocks[last as usize].size
            }
            _ => 0,
        }
    }

    /// The slot of the block that ends the buffer, if it has any.
    fn last_block(&self) -> Option<u32> {
        self.blocks
            .iter()
            .position(|block| block.state != State::Vacant && block.next_phys == NONE)
            .map(|slot| slot as u32)
    }

    fn rebuild_empty(&mut self) {
        self.blocks.clear();
        self.heads.fill(NONE);
        self.bitmaps.reset();
        self.vacant = NONE;
        self.vacant_count = 0;
        self.used = 0;
        self.requested = 0;
        self.free = 0;
        self.allocations = 0;
        self.free_blocks = 0;
        if self.capacity > 0 {
            self.blocks.push(Block {
                size: self.capacity,
                ..Block::VACANT
            });
            self.insert_free(0);
        }
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
    /// allocations.
    ///
    /// The search takes bounded time, found or not: the constant-time
    /// good-fit lookups, then, when they find nothing, a walk of at most
    /// [`SEARCH_LIMIT`] free blocks in the size classes that might still hold
    /// a fitting block. While the allocator has at most that many free blocks
    /// the walk sees them all, so out of memory means nothing fits; beyond
    /// that a fitting block deep in a list of near misses can be passed over
    /// ([`largest_allocatable`](Allocator::largest_allocatable) walks
    /// everything).
    #[inline]
    pub fn alloc(&mut self, size: u64, align: u64) -> Result<Allocation, AllocError> {
        if size == 0 {
            return Err(AllocError::ZeroSize);
        }
        if !align.is_power_of_two() {
            return Err(AllocError::AlignNotPowerOfTwo { align });
        }
        if size > self.capacity {
            return Err(AllocError::SizeExceedsCapacity {
                size,
                capacity: self.capacity,
            });
        }
        if self.next_stamp == u64::MAX {
            return Err(AllocError::StampsExhausted);
        }
        // Starting on a granule boundary is what keeps every block on one.
        let block_align = align.max(self.granularity);
        let found = match self.find_block(size, block_align) {
            Some(found) => found,
            // The largest-first walk may meet a fitting block that the
            // smallest-first one gave up before; it is taken, so a refusal
            // never names a largest fit that would have held the request.
            None => match self.largest_fit_bounded(size, block_align) {
                Ok(found) => found,
                Err(largest_fit) => {
                    return Err(AllocError::OutOfMemory {
                        size,
                        align,
                        free: self.free,
                        largest_fit,
                    })
                }
            },
        };
        let (slot, start) = found;
        // Splitting needs up to two more slots; get them before changing
        // anything so a failure leaves the allocator as it was.
        self.reserve_slots(2)?;
        Ok(self.split_and_use(slot, start, size))
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
    #[inline]
    pub fn free(&mut self, allocation: Allocation) -> Result<(), FreeError> {
        let slot = match self.resolve(&allocation) {
            Ok(slot) => slot,
            Err(kind) => return Err(FreeError::new(kind, allocation)),
        };
        let index = slot as usize;
        let block = &mut self.blocks[index];
        block.stamp = 0;
        self.used -= block.size;
        self.requested -= block.requested;
        self.allocations -= 1;

        let prev = block.prev_phys;
        if prev != NONE && self.blocks[prev as usize].state == State::Free {
            self.remove_free(prev);
            let absorbed = self.blocks[prev as usize].clone();
            let block = &mut self.blocks[index];
            block.offset = absorbed.offset;
            block.size += absorbed.size;
            block.prev_phys = absorbed.prev_phys;
            if absorbed.prev_phys != NONE {
                self.blocks[absorbed.prev_phys as usize].next_phys = slot;
            }
            self.release_slot(prev);
        }
        let next = self.blocks[index].next_phys;
        if next != NONE && self.blocks[next as usize].state == State::Free {
            self.remove_free(next);
            let absorbed = self.blocks[next as usize].clone();
            let block = &mut self.blocks[index];
            block.size += absorbed.size;
            block.next_phys = absorbed.next_phys;
            if absorbed.next_phys != NONE {
                self.blocks[absorbed.next_phys as usize].prev_phys = slot;
            }
            self.release_slot(next);
        }
        self.insert_free(slot);
        Ok(())
    }

    /// Checks that `allocation` is live in this allocator, as
    /// [`free`](Allocator::free) would, without freeing it.
    ///
    /// ```
    /// use gpu_aligned::alloc::{Allocator, HandleError};
    ///
    /// let mut allocator = Allocator::new(1024);
    /// let a = allocator.alloc(100, 1)?;
    /// assert_eq!(allocator.check_handle(&a), Ok(()));
    /// allocator.reset();
    /// assert_eq!(allocator.check_handle(&a), Err(HandleError::StaleHandle));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    ///
    /// The [`HandleError`] [`free`](Allocator::free) would report.
    #[inline]
    pub fn check_handle(&self, allocation: &Allocation) -> Result<(), HandleError> {
        self.resolve(allocation).map(|_| ())
    }

    /// The number of live allocations (what a leak report starts from).
    ///
    /// ```
    /// # let mut allocator = gpu_aligned::alloc::Allocator::new(1024);
    /// let a = allocator.alloc(100, 1)?;
    /// assert_eq!(allocator.live_count(), 1);
    /// allocator.free(a)?;
    /// assert_eq!(allocator.live_count(), 0);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[inline]
    pub fn live_count(&self) -> u64 {
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
    pub fn live(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        self.blocks
            .iter()
            .filter(|block| block.state == State::Used)
            .map(|block| (block.offset, block.requested))
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
            capacity: self.capacity,
            used: self.used,
            requested: self.requested,
            free: self.free,
            allocations: self.allocations,
            free_blocks: self.free_blocks,
            largest_free_block: self.largest_free_block(),
            alignment_waste: self.used - self.requested,
        }
    }

    /// The largest size that [`alloc`](Allocator::alloc) would grant right
    /// now at alignment `align` (0 when nothing fits), found by a walk of
    /// every free block: it is meant for reports and tests, not for the
    /// allocation path.
    ///
    /// ```
    /// # let mut allocator = gpu_aligned::alloc::Allocator::new(1024);
    /// let _a = allocator.alloc(100, 1)?;
    /// assert_eq!(allocator.largest_allocatable(1)?, 924);
    /// assert_eq!(allocator.largest_allocatable(512)?, 512);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`AllocError::AlignNotPowerOfTwo`] for a bad alignment.
    pub fn largest_allocatable(&self, align: u64) -> Result<u64, AllocError> {
        if !align.is_power_of_two() {
            return Err(AllocError::AlignNotPowerOfTwo { align });
        }
        let align = align.max(self.granularity);
        Ok(self
            .blocks
            .iter()
            .filter(|block| block.state == State::Free)
            .map(|block| Self::fit_in(block, align))
            .max()
            .unwrap_or(0))
    }

    /// How many bytes at `align` fit in `block`.
    fn fit_in(block: &Block, align: u64) -> u64 {
        align_up(block.offset, align)
            .and_then(|start| block.end().checked_sub(start))
            .unwrap_or(0)
    }

    /// Looks at up to [`SEARCH_LIMIT`] free blocks, largest size classes
    /// first: the first one holding `size` bytes at `align` (slot and start),
    /// or else the largest size that fits at `align` among those seen (exact
    /// while there are no more free blocks than the limit, a lower bound
    /// beyond).
    #[cold]
    fn largest_fit_bounded(&self, size: u64, align: u64) -> Result<(u32, u64), u64> {
        let mut budget = SEARCH_LIMIT;
        let mut largest = 0;
        let mut row_bits = self.bitmaps.first_bits();
        while row_bits != 0 {
            let first = 63 - row_bits.leading_zeros();
            row_bits &= !(1u64 << first);
            let mut bins = self.bitmaps.row(first as usize);
            while bins != 0 {
                let second = 31 - bins.leading_zeros();
                bins &= !(1u32 << second);
                let mut cursor = self.heads[Bin { first, second }.index()];
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
                    cursor = block.next_free;
                }
            }
        }
        Err(largest)
    }

    /// The largest free block: the longest list of the largest non-empty
    /// size class is walked, nothing else.
    fn largest_free_block(&self) -> u64 {
        let Some(bin) = self.bitmaps.last() else {
            return 0;
        };
        let mut largest = 0;
        let mut cursor = self.heads[bin.index()];
        while cursor != NONE {
            let block = &self.blocks[cursor as usize];
            largest = largest.max(block.size);
            cursor = block.next_free;
        }
        largest
    }

    /// Where `size` bytes at `align` can go: a free block's slot and the
    /// aligned start inside it.
    #[inline]
    fn find_block(&self, size: u64, align: u64) -> Option<(u32, u64)> {
        // 1. Good fit: the head of the first size class whose blocks all hold
        //    `size`. It fits unless its start needs padding it cannot spare.
        if let Some(bin) = Bin::first_fitting(size).and_then(|b| self.bitmaps.first_at_or_after(b))
        {
            let slot = self.heads[bin.index()];
            if let Some(start) = self.fit_start(slot, size, align) {
                return Some((slot, start));
            }
        }
        // 2. A class whose blocks hold `size + align - 1` bytes fits at any
        //    start, so its head always does.
        let padded = size.checked_add(align - 1);
        if align > 1 {
            if let Some(bin) = padded
                .and_then(Bin::first_fitting)
                .and_then(|b| self.bitmaps.first_at_or_after(b))
            {
                let slot = self.heads[bin.index()];
                if let Some(start) = self.fit_start(slot, size, align) {
                    return Some((slot, start));
                }
            }
        }
        // 3. Nearly full or fragmented: walk the classes that may hold a
        //    fitting block, up to the search limit. Only blocks of
        //    `size ..= size + align - 2` bytes get here, since larger ones
        //    were found above.
        let mut budget = SEARCH_LIMIT;
        let mut from = Some(Bin::containing(size));
        while let Some(bin) = from.and_then(|b| self.bitmaps.first_at_or_after(b)) {
            let mut cursor = self.heads[bin.index()];
            while cursor != NONE {
                if budget == 0 {
                    return None;
                }
                budget -= 1;
                if let Some(start) = self.fit_start(cursor, size, align) {
                    return Some((cursor, start));
                }
                cursor = self.blocks[cursor as usize].next_free;
            }
            from = bin.next();
        }
        None
    }

    /// The aligned start of `size` bytes inside free block `slot`, if they fit.
    #[inline]
    fn fit_start(&self, slot: u32, size: u64, align: u64) -> Option<u64> {
        let block = &self.blocks[slot as usize];
        let start = align_up(block.offset, align)?;
        let end = start.checked_add(size)?;
        (end <= block.end()).then_some(start)
    }

    #[inline]
    fn reserve_slots(&mut self, needed: u32) -> Result<(), AllocError> {
        if self.vacant_count >= needed {
            return Ok(());
        }
        let missing = (needed - self.vacant_count) as usize;
        if self.blocks.len() + missing > NONE as usize {
            return Err(AllocError::TooManyBlocks);
        }
        self.blocks
            .try_reserve(missing)
            .map_err(|_| AllocError::TooManyBlocks)
    }

    /// Takes a slot for a new block; [`reserve_slots`](Self::reserve_slots)
    /// has made sure one is there without reallocating.
    #[inline]
    fn take_slot(&mut self) -> u32 {
        if self.vacant != NONE {
            let slot = self.vacant;
            self.vacant = self.blocks[slot as usize].next_free;
            self.vacant_count -= 1;
            slot
        } else {
            self.blocks.push(Block::VACANT);
            (self.blocks.len() - 1) as u32
        }
    }

    #[inline]
    fn release_slot(&mut self, slot: u32) {
        let block = &mut self.blocks[slot as usize];
        block.state = State::Vacant;
        block.prev_phys = NONE;
        block.next_phys = NONE;
        block.prev_free = NONE;
        block.next_free = self.vacant;
        self.vacant = slot;
        self.vacant_count += 1;
    }

    /// Turns free block `slot` into an allocation of `size` bytes at `start`,
    /// returning the bytes before and after it to the free lists.
    #[inline]
    fn split_and_use(&mut self, slot: u32, start: u64, size: u64) -> Allocation {
        let end = self.blocks[slot as usize].end();
        // The block reaches the next granule boundary, or the end of the
        // buffer when that comes first.
        let reserved = align_up(size, self.granularity)
            .unwrap_or(u64::MAX)
            .min(end - start);
        self.remove_free(slot);
        let Block {
            offset,
            prev_phys,
            next_phys,
            ..
        } = self.blocks[slot as usize];
        debug_assert!(
            offset <= start && start + size <= end,
            "allocation {start}+{size} outside its block {offset}..{end}"
        );

        let front = start - offset;
        if front > 0 {
            let pad = self.take_slot();
            self.blocks[pad as usize] = Block {
                offset,
                size: front,
                prev_phys,
                next_phys: slot,
                ..Block::VACANT
            };
            if prev_phys != NONE {
                self.blocks[prev_phys as usize].next_phys = pad;
            }
            self.blocks[slot as usize].prev_phys = pad;
            self.insert_free(pad);
        }
        let back = end - (start + reserved);
        if back > 0 {
            let tail = self.take_slot();
            self.blocks[tail as usize] = Block {
                offset: start + reserved,
                size: back,
                prev_phys: slot,
                next_phys,
                ..Block::VACANT
            };
            if next_phys != NONE {
                self.blocks[next_phys as usize].prev_phys = tail;
            }
            self.blocks[slot as usize].next_phys = tail;
            self.insert_free(tail);
        }

        let stamp = self.next_stamp;
        // `alloc` refused before the counter could reach its end.
        self.next_stamp += 1;
        let block = &mut self.blocks[slot as usize];
        block.offset = start;
        block.size = reserved;
        block.state = State::Used;
        block.stamp = stamp;
        block.requested = size;
        self.used += reserved;
        self.requested += size;
        self.allocations += 1;
        Allocation {
            offset: start,
            size,
            allocator: self.id,
            stamp,
            slot,
        }
    }

    #[inline]
    fn insert_free(&mut self, slot: u32) {
        let size = self.blocks[slot as usize].size;
        let bin = Bin::containing(size);
        let head = self.heads[bin.index()];
        if head != NONE {
            self.blocks[head as usize].prev_free = slot;
        }
        let block = &mut self.blocks[slot as usize];
        block.state = State::Free;
        block.bin = bin.index() as u16;
        block.prev_free = NONE;
        block.next_free = head;
        self.heads[bin.index()] = slot;
        self.bitmaps.set(bin);
        self.free += size;
        self.free_blocks += 1;
    }

    #[inline]
    fn remove_free(&mut self, slot: u32) {
        let Block {
            size,
            prev_free,
            next_free,
            bin,
            ..
        } = self.blocks[slot as usize];
        let bin = Bin::from_index(usize::from(bin));
        if prev_free != NONE {
            self.blocks[prev_free as usize].next_free = next_free;
        } else {
            self.heads[bin.index()] = next_free;
            if next_free == NONE {
                self.bitmaps.clear(bin);
            }
        }
        if next_free != NONE {
            self.blocks[next_free as usize].prev_free = prev_free;
        }
        self.free -= size;
        self.free_blocks -= 1;
    }

    /// The slot of a live allocation, or why the handle is not one.
    #[inline]
    fn resolve(&self, allocation: &Allocation) -> Result<u32, HandleError> {
        if allocation.allocator != self.id {
            return Err(HandleError::ForeignHandle);
        }
        // A slot past the table's end was dropped by a reset.
        let block = self
            .blocks
            .get(allocation.slot as usize)
            .ok_or(HandleError::StaleHandle)?;
        match block.state {
            // The stamp alone names the allocation; the offset and size are
            // compared too so that even a bug elsewhere could not turn a
            // matching stamp into a view of other bytes.
            State::Used
                if block.stamp == allocation.stamp
                    && block.offset == allocation.offset
                    && block.requested == allocation.size =>
            {
                Ok(allocation.slot)
            }
            _ if allocation.stamp < self.reset_stamp => Err(HandleError::StaleHandle),
            State::Used => Err(HandleError::StaleHandle),
            State::Free | State::Vacant => Err(HandleError::DoubleFree),
        }
    }

    /// Walks every block and every free list and checks the allocator's
    /// invariants: the blocks tile `[0, capacity)` exactly, no two free
    /// blocks touch (they would have been merged), every free block sits in
    /// the list of its size class and the bitmaps agree, and the counters
    /// behind [`stats`](Allocator::stats) equal what the walk finds.
    ///
    /// Takes time proportional to the number of blocks; meant for tests.
    ///
    /// # Errors
    ///
    /// The first broken invariant found (which would be a bug in the
    /// allocator).
    pub fn check_invariants(&self) -> Result<(), InvariantError> {
        fn expect(what: &'static str, expected: u64, found: u64) -> Result<(), InvariantError> {
            if expected == found {
                Ok(())
            } else {
                Err(InvariantError {
                    what,
                    expected,
                    found,
                })
            }
        }

        let mut occupied = 0u64;
        let mut first = NONE;
        for (slot, block) in self.blocks.iter().enumerate() {
            if block.state != State::Vacant {
                occupied += 1;
                if block.prev_phys == NONE {
                    expect("blocks with no predecessor", NONE as u64, first as u64)?;
                    first = slot as u32;
                }
            }
        }
        expect(
            "occupied plus vacant slots",
            self.blocks.len() as u64,
            occupied + u64::from(self.vacant_count),
        )?;

        // Physical order: contiguous, in bounds, merged.
        let (mut cursor, mut offset, mut walked) = (first, 0u64, 0u64);
        let (mut used, mut free, mut allocations, mut free_blocks) = (0u64, 0u64, 0u64, 0u64);
        let mut previous_free = false;
        let mut previous = NONE;
        while cursor != NONE {
            let block = &self.blocks[cursor as usize];
            expect(
                "block offset (blocks must tile the buffer)",
                offset,
                block.offset,
            )?;
            expect(
                "back link of the physical list",
                previous as u64,
                block.prev_phys as u64,
            )?;
            expect("blocks of zero size", 1, u64::from(block.size > 0))?;
            expect(
                "block offset modulo the granularity",
                0,
                block.offset % self.granularity,
            )?;
            let is_free = block.state == State::Free;
            expect(
                "adjacent free blocks",
                0,
                u64::from(is_free && previous_free),
            )?;
            if is_free {
                free += block.size;
                free_blocks += 1;
            } else {
                used += block.size;
                allocations += 1;
            }
            walked += 1;
            expect(
                "physical list longer than the table",
                1,
                u64::from(walked <= occupied),
            )?;
            offset = block.end();
            previous_free = is_free;
            previous = cursor;
            cursor = block.next_phys;
        }
        expect("end of the last block", self.capacity, offset)?;
        expect("blocks reachable in physical order", occupied, walked)?;
        expect("used bytes", used, self.used)?;
        expect(
            "requested bytes within used bytes (1 = yes)",
            1,
            u64::from(self.requested <= self.used),
        )?;
        expect("free bytes", free, self.free)?;
        expect("allocations", allocations, self.allocations)?;
        expect("free blocks", free_blocks, self.free_blocks)?;

        // Free lists: right class, consistent links, bitmaps agree.
        let mut listed = 0u64;
        expect(
            "first-level bits matching non-empty rows (1 = yes)",
            1,
            u64::from(self.bitmaps.levels_agree()),
        )?;
        // A row of lists with no bits set is compared as a whole (one
        // `memcmp`, which keeps this check cheap enough to run after every
        // step, even under Miri); the few rows in use are checked list by list.
        const EMPTY_ROW: [u32; SECOND_LEVEL_COUNT] = [NONE; SECOND_LEVEL_COUNT];
        let rows = self.heads.chunks_exact(SECOND_LEVEL_COUNT).enumerate();
        for (first, row) in rows {
            if self.bitmaps.row(first) == 0 {
                expect(
                    "empty row of lists (1 = all empty)",
                    1,
                    u64::from(row == EMPTY_ROW),
                )?;
                continue;
            }
            for (second, &head) in row.iter().enumerate() {
                let index = first * SECOND_LEVEL_COUNT + second;
                let bin = Bin::from_index(index);
                expect(
                    "bitmap bit of a list (1 = non-empty)",
                    u64::from(head != NONE),
                    u64::from(self.bitmaps.is_set(bin)),
                )?;
                let (mut cursor, mut previous) = (head, NONE);
                while cursor != NONE {
                    let block = &self.blocks[cursor as usize];
                    expect(
                        "state of a listed block (1 = free)",
                        1,
                        u64::from(block.state == State::Free),
                    )?;
                    expect(
                        "size class of a listed block",
                        index as u64,
                        Bin::containing(block.size).index() as u64,
                    )?;
                    expect(
                        "size class saved in a listed block",
                        index as u64,
                        u64::from(block.bin),
                    )?;
                    expect(
                        "back link of a free list",
                        previous as u64,
                        block.prev_free as u64,
                    )?;
                    listed += 1;
                    expect(
                        "free lists longer than the free blocks",
                        1,
                        u64::from(listed <= free_blocks),
                    )?;
                    previous = cursor;
                    cursor = block.next_free;
                }
            }
        }
        expect("blocks on free lists", free_blocks, listed)?;

        let (mut cursor, mut vacant) = (self.vacant, 0u64);
        while cursor != NONE {
            let block = &self.blocks[cursor as usize];
            expect(
                "state of a vacant slot (1 = vacant)",
                1,
                u64::from(block.state == State::Vacant),
            )?;
            vacant += 1;
            expect(
                "vacant list longer than the table",
                1,
                u64::from(vacant <= self.blocks.len() as u64),
            )?;
            cursor = block.next_free;
        }
        expect("vacant slots", u64::from(self.vacant_count), vacant)?;
        self.stats().check()
    }
}
