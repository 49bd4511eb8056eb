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
//! [`crate::align::offset_of`] and [`crate::align::bytes_of`] convert. The
//! blocks themselves are kept in `u64`s, converted at this surface.
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

use crate::align::{bytes_of, offset_of};

use bins::{Bitmaps, BIN_COUNT, SECOND_LEVEL_COUNT};

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

/// "No block" in the intrusive links and list heads. Slot indices stay
/// below it, which leaves the top bit of [`Block::next_phys`] free for
/// [`USED`].
const NONE: u32 = 0x7fff_ffff;

/// The bit of [`Block::next_phys`] that marks a used block.
const USED: u32 = 1 << 31;

/// The id of an allocator that may never allocate: the ids ran out.
const RETIRED: u32 = u32::MAX;

/// The id of every [scratch](Allocator::scratch) allocator; the counter
/// behind [`next_allocator_id`] starts above it.
const SCRATCH: u32 = 0;

/// Every allocator gets a distinct 32-bit id so a handle presented to the
/// wrong one is recognised. The counter behind it is 64-bit and never wraps:
/// an allocator made after the 2^32 - 2 ids are used up gets [`RETIRED`] and
/// no stamps (every allocation is refused with
/// [`AllocError::StampsExhausted`]), so no two allocators that hand out
/// handles ever share an id.
fn next_allocator_id() -> u32 {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    u32::try_from(NEXT.fetch_add(1, Ordering::Relaxed))
        .ok()
        .filter(|&id| id != RETIRED)
        .unwrap_or(RETIRED)
}

/// One block of the buffer in a slot of the block table, 32 bytes, aligned
/// so that none straddles two cache lines: everything freeing or finding a
/// block reads of it and of its neighbours (state, physical links, free-list
/// links) lies in one line. Blocks link to their physical neighbours (to
/// merge on free); what a slot holds is read from two fields:
///
/// - used: the [`USED`] bit of `next_phys` is set, the tag is the stamp its
///   handle carries (low half in `tag_low`) and `size` the size requested;
///   the block reaches its request rounded up to the granularity (or the
///   capacity), where the next block starts, so no second size is stored;
/// - free: the bit is clear, `size != 0`, and the tag holds the links of
///   its size class's list (previous in `tag_low`, next in `tag_high`);
/// - vacant (no block; the slot waits on the vacant list): `size == 0`, and
///   `tag_high` links the vacant list.
///
/// The tag is two `u32` fields rather than one `u64` so that relinking a
/// list writes one link with a plain store: rewriting half of a `u64` would
/// first read the record, a cache miss that the list operation would wait
/// for.
#[derive(Clone, Copy, Debug)]
#[repr(C, align(32))]
struct Block {
    offset: u64,
    size: u64,
    tag_low: u32,
    tag_high: u32,
    prev_phys: u32,
    next_phys: u32,
}

impl Block {
    const VACANT: Block = Block {
        offset: 0,
        size: 0,
        tag_low: NONE,
        tag_high: NONE,
        prev_phys: NONE,
        next_phys: NONE,
    };

    /// A free block, not yet on a list.
    #[inline(always)]
    fn free(offset: u64, size: u64, prev_phys: u32, next_phys: u32) -> Block {
        Block {
            offset,
            size,
            tag_low: NONE,
            tag_high: NONE,
            prev_phys,
            next_phys,
        }
    }

    /// The end of a free block (a used block's `size` is the request).
    #[inline(always)]
    fn end(&self) -> u64 {
        // Blocks lie within `[0, capacity)`, so this cannot overflow.
        self.offset + self.size
    }

    #[inline(always)]
    fn is_used(&self) -> bool {
        self.next_phys & USED != 0
    }

    #[inline(always)]
    fn is_free(&self) -> bool {
        !self.is_used() && self.size != 0
    }

    #[inline(always)]
    fn is_vacant(&self) -> bool {
        self.size == 0
    }

    /// The physical successor, without the state bit.
    #[inline(always)]
    fn next(&self) -> u32 {
        self.next_phys & !USED
    }

    /// Points a used block's `next_phys` at `next`. Only used blocks have
    /// their successor changed by a neighbour (no two free blocks touch),
    /// so the state bit is written, not kept: a plain store, which does not
    /// wait for the record to be read.
    #[inline(always)]
    fn set_next_of_used(&mut self, next: u32) {
        debug_assert!(self.is_used(), "relinking the successor of {self:?}");
        self.next_phys = next | USED;
    }

    /// While used: the stamp of its handle.
    #[inline(always)]
    fn stamp(&self) -> u64 {
        u64::from(self.tag_low) | u64::from(self.tag_high) << 32
    }

    /// While free: the previous block of its list.
    #[inline(always)]
    fn list_prev(&self) -> u32 {
        self.tag_low
    }

    /// While free or vacant: the next block of its list.
    #[inline(always)]
    fn list_next(&self) -> u32 {
        self.tag_high
    }

    #[inline(always)]
    fn set_list_prev(&mut self, prev: u32) {
        self.tag_low = prev;
    }

    #[inline(always)]
    fn set_list_next(&mut self, next: u32) {
        self.tag_high = next;
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
    stamp: u64,
    allocator: u32,
    slot: u32,
}

impl Allocation {
    /// A name no allocator ever gives out (stamps start at 1), to fill
    /// arrays of allocations ahead of use: [`Allocator::free`] and
    /// [`Allocator::check_handle`] refuse it.
    pub(crate) const NONE: Allocation = Allocation {
        offset: 0,
        size: 0,
        stamp: 0,
        allocator: u32::MAX,
        slot: u32::MAX,
    };

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
    pub fn size(&self) -> usize {
        bytes(self.size)
    }

    /// The stamp that names this handle: higher for handles made later.
    #[inline]
    pub(crate) fn stamp(&self) -> u64 {
        self.stamp
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

/// What a constant-time lookup found: the free block heading size class
/// `bin`'s list, in slot `slot`, and where the allocation would start in it.
struct Found {
    slot: u32,
    bin: usize,
    start: u64,
}

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
/// on overflow: [`crate::align::round_up`] without its test for a power of
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
    /// from it fails until it [grows](Allocator::grow).
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

    /// Frees every allocation at once. Handles made before the reset become
    /// stale: freeing one is refused with [`HandleError::StaleHandle`].
    ///
    /// This takes time proportional to the number of size classes, not to
    /// the number of allocations.
    ///
    /// ```
    /// # let mut allocator = gpu_aligned::alloc::Allocator::new(4096);
    /// let a = allocator.alloc(4096, 1)?;
    /// allocator.reset();
    /// let b = allocator.alloc(4096, 1)?;
    /// assert!(allocator.free(a).is_err());
    /// allocator.free(b)?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
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

    /// The lowest stamp a live handle can have: every handle made before
    /// the last [`reset`](Allocator::reset) has a lower one.
    pub(crate) fn reset_stamp(&self) -> u64 {
        self.reset_stamp
    }

    fn rebuild_empty(&mut self) {
        self.blocks.clear();
        self.heads.fill(NONE);
        self.bitmaps.reset();
        self.vacant = NONE;
        self.vacant_count = 0;
        self.used = 0;
        self.requested = 0;
        self.allocations = 0;
        if self.capacity > 0 {
            self.blocks.push(Block::free(0, self.capacity, NONE, NONE));
            self.link_free(0);
        }
    }

    /// Grows the buffer to `new_capacity` bytes in place: every live
    /// allocation keeps its offset and stays valid, and the new bytes join
    /// the free block at the end (or become one).
    ///
    /// ```
    /// use gpu_aligned::alloc::Allocator;
    ///
    /// let mut allocator = Allocator::new(1024);
    /// let a = allocator.alloc(1000, 1)?; // 1008 bytes at granularity 16
    /// assert!(allocator.alloc(1000, 1).is_err());
    /// allocator.grow(4096)?;
    /// let b = allocator.alloc(1000, 1)?;
    /// assert_eq!(b.offset(), 1008);
    /// assert_eq!(allocator.free_tail(), 4096 - 2 * 1008);
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
    pub fn grow(&mut self, new_capacity: usize) -> Result<(), AllocError> {
        let refused = AllocError::CannotResize {
            capacity: bytes(self.capacity),
            new_capacity,
        };
        let new_capacity = offset_of(new_capacity);
        if new_capacity < self.capacity {
            return Err(refused);
        }
        if new_capacity == self.capacity {
            return Ok(());
        }
        self.reserve_slots(1)?;
        let old_capacity = self.capacity;
        self.capacity = new_capacity;
        let Some(last) = self.last_block() else {
            let slot = self.take_slot();
            self.blocks[slot as usize] = Block::free(0, new_capacity, NONE, NONE);
            self.link_free(slot);
            return Ok(());
        };
        if self.blocks[last as usize].is_free() {
            self.unlink_free(last);
            self.blocks[last as usize].size += new_capacity - old_capacity;
            self.link_free(last);
            return Ok(());
        }
        // A used block that the old end cut short of its granule reaches it
        // now, so the free block after it starts on a granule boundary.
        let granule_end = align_up(old_capacity, self.granularity)
            .unwrap_or(u64::MAX)
            .min(new_capacity);
        // A used block reaches the next block or the capacity: nothing to
        // change in it.
        self.used += granule_end - old_capacity;
        if granule_end < new_capacity {
            let slot = self.take_slot();
            self.blocks[slot as usize] =
                Block::free(granule_end, new_capacity - granule_end, last, NONE);
            self.blocks[last as usize].set_next_of_used(slot);
            self.link_free(slot);
        }
        Ok(())
    }

    /// Shrinks the buffer to `new_capacity` bytes, dropping free bytes from
    /// its end: what a growable arena does before giving the end of its
    /// memory back. At most [`free_tail`](Allocator::free_tail) bytes can go.
    ///
    /// ```
    /// # let mut allocator = gpu_aligned::alloc::Allocator::with_granularity(4096, 1)?;
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
    pub fn shrink(&mut self, new_capacity: usize) -> Result<(), AllocError> {
        let refused = AllocError::CannotResize {
            capacity: bytes(self.capacity),
            new_capacity,
        };
        let new_capacity = offset_of(new_capacity);
        if new_capacity > self.capacity || self.capacity - new_capacity > self.free_tail_bytes() {
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
        self.unlink_free(last);
        let block = &mut self.blocks[last as usize];
        if block.size > cut {
            block.size -= cut;
            self.link_free(last);
        } else {
            let prev = block.prev_phys;
            if prev != NONE {
                self.blocks[prev as usize].set_next_of_used(NONE);
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
    pub fn free_tail(&self) -> usize {
        bytes(self.free_tail_bytes())
    }

    fn free_tail_bytes(&self) -> u64 {
        match self.last_block() {
            Some(last) if self.blocks[last as usize].is_free() => self.blocks[last as usize].size,
            _ => 0,
        }
    }

    /// The slot of the block that ends the buffer, if it has any. Growing
    /// and shrinking are rare, so a walk of the table does.
    fn last_block(&self) -> Option<u32> {
        self.blocks
            .iter()
            .position(|block| !block.is_vacant() && block.next() == NONE)
            .map(|slot| slot as u32)
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
            // wrote it (1 to 2 ns of a 60 ns free + alloc pair).
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

    /// Whether `allocation` names the used block `block`. The stamp alone
    /// names an allocation within its allocator; the offset is compared too
    /// so that even a bug elsewhere could not turn a matching stamp into a
    /// view of other bytes. A free block's tag holds links, which may equal
    /// a stamp, so the state bit is checked too.
    #[inline(always)]
    fn matches(&self, block: &Block, allocation: &Allocation) -> bool {
        block.stamp() == allocation.stamp
            && block.is_used()
            && allocation.allocator == self.id
            && block.offset == allocation.offset
            && block.size == allocation.size
    }

    /// Where used block `block` ends: its request rounded up to the
    /// granularity, or the capacity when that comes first (where its
    /// successor starts). Worked out from the block alone, so that freeing
    /// it does not wait for its successor's record to come from memory
    /// (only the successor's state is needed, to merge, and that is a
    /// branch the processor predicts instead of waiting for).
    #[inline(always)]
    fn used_end(&self, block: &Block) -> u64 {
        // The block starts on a granule, so rounding its end rounds the
        // request; a sum past `u64::MAX` is past the capacity too.
        (block.offset + block.size)
            .checked_add(self.granularity - 1)
            .map_or(self.capacity, |bumped| {
                (bumped & !(self.granularity - 1)).min(self.capacity)
            })
    }

    /// Why `allocation` is not live here.
    #[cold]
    #[inline(never)]
    fn refusal(&self, allocation: &Allocation) -> HandleError {
        if allocation.allocator != self.id {
            return HandleError::ForeignHandle;
        }
        match self.blocks.get(allocation.slot as usize) {
            // A slot past the table's end was dropped by a reset.
            None => HandleError::StaleHandle,
            Some(_) if allocation.stamp < self.reset_stamp => HandleError::StaleHandle,
            Some(block) if block.is_used() => HandleError::StaleHandle,
            Some(_) => HandleError::DoubleFree,
        }
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
        match self.blocks.get(allocation.slot as usize) {
            Some(block) if self.matches(block, allocation) => Ok(()),
            _ => Err(self.refusal(allocation)),
        }
    }

    /// Gives the live `allocation` a new stamp, in a few steps: the bytes
    /// stay allocated, but every copy of the old handle is refused from now
    /// on, as if the block had been freed and allocated again. This is what
    /// lets the arena keep a dropped array's block for the next array of
    /// the same size without a handle given back by hand ever naming it
    /// again. `None` when `allocation` is not live here, or the stamps are
    /// spent (then [`free`](Allocator::free) says which).
    #[inline]
    pub(crate) fn renew(&mut self, allocation: &Allocation) -> Option<Allocation> {
        let block = self.blocks.get(allocation.slot as usize)?;
        if !self.matches(block, allocation) || self.next_stamp == u64::MAX {
            return None;
        }
        let stamp = self.next_stamp;
        self.next_stamp += 1;
        let block = &mut self.blocks[allocation.slot as usize];
        (block.tag_low, block.tag_high) = (stamp as u32, (stamp >> 32) as u32);
        Some(Allocation {
            stamp,
            ..*allocation
        })
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
    pub fn live_count(&self) -> usize {
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

    /// The largest size that [`alloc`](Allocator::alloc) would grant right
    /// now at alignment `align` (0 when nothing fits), found by a walk of
    /// every free block: it is meant for reports and tests, not for the
    /// allocation path.
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
    fn fit_in(block: &Block, align: u64) -> u64 {
        align_up(block.offset, align)
            .and_then(|start| block.end().checked_sub(start))
            .unwrap_or(0)
    }

    /// The largest free block: the longest list of the largest non-empty
    /// size class is walked, nothing else.
    fn largest_free_block(&self) -> u64 {
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

    /// The two constant-time lookups: where `size` bytes at `align` can go,
    /// if either finds it.
    #[inline(always)]
    fn find_fast(&self, size: u64, align: u64) -> Option<Found> {
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
    fn find_padded(&self, size: u64, align: u64) -> Option<Found> {
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
    fn find_slow(&self, size: u64, align: u64, block_align: u64) -> Result<(u32, u64), AllocError> {
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

    /// Looks at up to [`SEARCH_LIMIT`] free blocks, largest size classes
    /// first: the first one holding `size` bytes at `align` (slot and start),
    /// or else the largest size that fits at `align` among those seen (exact
    /// while there are no more free blocks than the limit, a lower bound
    /// beyond).
    fn largest_fit_bounded(&self, size: u64, align: u64) -> Result<(u32, u64), u64> {
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

    /// Makes sure `needed` slots wait on the vacant list, so a split takes
    /// them without a check or a reallocation.
    fn reserve_slots(&mut self, needed: u32) -> Result<(), AllocError> {
        while self.vacant_count < needed {
            if self.blocks.len() >= NONE as usize {
                return Err(AllocError::TooManyBlocks);
            }
            self.blocks
                .try_reserve(1)
                .map_err(|_| AllocError::TooManyBlocks)?;
            let slot = self.blocks.len() as u32;
            self.blocks.push(Block::VACANT);
            self.release_slot(slot);
        }
        Ok(())
    }

    /// Takes a slot off the vacant list, which
    /// [`reserve_slots`](Self::reserve_slots) has filled.
    #[inline(always)]
    fn take_slot(&mut self) -> u32 {
        let slot = self.vacant;
        self.vacant = self.blocks[slot as usize].list_next();
        self.vacant_count -= 1;
        slot
    }

    #[inline(always)]
    fn release_slot(&mut self, slot: u32) {
        let block = &mut self.blocks[slot as usize];
        block.size = 0;
        block.next_phys = NONE;
        (block.tag_low, block.tag_high) = (NONE, self.vacant);
        self.vacant = slot;
        self.vacant_count += 1;
    }

    /// Turns `block`, just taken off its free list from slot `slot`, into an
    /// allocation of `size` bytes at `start`, returning the bytes before and
    /// after it to the free lists.
    #[inline(always)]
    fn split_and_use(&mut self, slot: u32, block: Block, start: u64, size: u64) -> Allocation {
        let end = block.end();
        // The block reaches the next granule boundary, or the end of the
        // buffer when that comes first.
        let room = end - start;
        let reserved = match align_up(size, self.granularity) {
            Some(rounded) if rounded <= room => rounded,
            _ => room,
        };
        let used_end = start + reserved;
        let (mut prev, mut next) = (block.prev_phys, block.next());
        if start > block.offset {
            let pad = self.take_slot();
            self.blocks[pad as usize] = Block::free(block.offset, start - block.offset, prev, slot);
            if prev != NONE {
                self.blocks[prev as usize].set_next_of_used(pad);
            }
            self.link_free(pad);
            prev = pad;
        }
        if used_end < end {
            let tail = self.take_slot();
            self.blocks[tail as usize] = Block::free(used_end, end - used_end, slot, next);
            if next != NONE {
                self.blocks[next as usize].prev_phys = tail;
            }
            self.link_free(tail);
            next = tail;
        }
        self.use_slot(slot, start, reserved, size, prev, next)
    }

    /// Fills slot `slot` with a used block of `reserved` bytes at `start`
    /// for a request of `size` bytes, between `prev` and `next`.
    #[inline(always)]
    fn use_slot(
        &mut self,
        slot: u32,
        start: u64,
        reserved: u64,
        size: u64,
        prev: u32,
        next: u32,
    ) -> Allocation {
        let stamp = self.next_stamp;
        // `alloc` refused before the counter could reach its end.
        self.next_stamp += 1;
        self.blocks[slot as usize] = Block {
            offset: start,
            size,
            tag_low: stamp as u32,
            tag_high: (stamp >> 32) as u32,
            prev_phys: prev,
            next_phys: next | USED,
        };
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

    /// Puts free block `slot` at the head of its size class's list.
    #[inline(always)]
    fn link_free(&mut self, slot: u32) {
        let bin = bins::containing(self.blocks[slot as usize].size);
        let head = self.heads[bin];
        // Whether the list was empty is data, not a pattern a branch
        // predictor learns: the bit is set either way, and an empty list's
        // back link is written into `slot` itself, then overwritten.
        self.bitmaps.set(bin);
        let back_linked = if head != NONE { head } else { slot };
        self.blocks[back_linked as usize].set_list_prev(slot);
        let block = &mut self.blocks[slot as usize];
        (block.tag_low, block.tag_high) = (NONE, head);
        self.heads[bin] = slot;
    }

    /// Takes free block `slot`, the head of size class `bin`'s list, off the
    /// list, returning a copy of it: what [`unlink_free`](Self::unlink_free)
    /// does, without working out the class or whether the block heads it.
    #[inline(always)]
    fn unlink_head(&mut self, slot: u32, bin: usize) -> Block {
        let block = self.blocks[slot as usize];
        let next = block.list_next();
        self.heads[bin] = next;
        self.bitmaps.clear_if(bin, next == NONE);
        let back_linked = if next != NONE { next } else { slot };
        self.blocks[back_linked as usize].set_list_prev(NONE);
        block
    }

    /// Takes free block `slot` off its list, returning a copy of it.
    #[inline(always)]
    fn unlink_free(&mut self, slot: u32) -> Block {
        let block = self.blocks[slot as usize];
        let (prev, next) = (block.list_prev(), block.list_next());
        if prev != NONE {
            self.blocks[prev as usize].set_list_next(next);
        } else {
            let bin = bins::containing(block.size);
            self.heads[bin] = next;
            self.bitmaps.clear_if(bin, next == NONE);
        }
        // Without a successor the back link goes into `slot` itself, whose
        // tag every caller overwrites: a select instead of a branch that
        // mispredicts on data.
        let back_linked = if next != NONE { next } else { slot };
        self.blocks[back_linked as usize].set_list_prev(prev);
        block
    }

    /// Walks every block and every free list and checks the allocator's
    /// invariants: the blocks tile `[0, capacity)` exactly, no two free
    /// blocks touch (they would have been merged), every free block sits in
    /// the list of its size class and the bitmaps agree, and the counters
    /// behind [`stats`](Allocator::stats) equal what the walk finds.
    ///
    /// Takes time proportional to the number of blocks; meant for tests.
    ///
    /// ```
    /// # let mut allocator = gpu_aligned::alloc::Allocator::new(4096);
    /// let _a = allocator.alloc(100, 64)?;
    /// allocator.check_invariants()?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
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
            if !block.is_vacant() {
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
        let (mut used, mut requested) = (0u64, 0u64);
        let (mut allocations, mut free_blocks) = (0usize, 0usize);
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
            expect(
                "block offset modulo the granularity",
                0,
                block.offset % self.granularity,
            )?;
            let is_free = block.is_free();
            expect(
                "adjacent free blocks",
                0,
                u64::from(is_free && previous_free),
            )?;
            let end = if is_free {
                free_blocks += 1;
                block.end()
            } else {
                // A used block reaches its successor or the capacity.
                let end = self
                    .blocks
                    .get(block.next() as usize)
                    .map_or(self.capacity, |successor| successor.offset);
                expect(
                    "end of a used block (its granule-rounded request)",
                    end,
                    self.used_end(block),
                )?;
                let extent = end.saturating_sub(block.offset);
                used += extent;
                requested += block.size;
                allocations += 1;
                expect(
                    "requested bytes within the block (1 = yes)",
                    1,
                    u64::from(block.size <= extent && block.size > 0),
                )?;
                expect(
                    "stamp of a used block older than the next (1 = yes)",
                    1,
                    u64::from(block.stamp() < self.next_stamp),
                )?;
                end
            };
            walked += 1;
            expect(
                "physical list longer than the table",
                1,
                u64::from(walked <= occupied),
            )?;
            offset = end;
            previous_free = is_free;
            previous = cursor;
            cursor = block.next();
        }
        expect("end of the last block", self.capacity, offset)?;
        expect("blocks reachable in physical order", occupied, walked)?;
        expect("used bytes", used, self.used)?;
        expect("requested bytes", requested, self.requested)?;
        expect(
            "allocations",
            offset_of(allocations),
            offset_of(self.allocations),
        )?;
        expect(
            "free blocks",
            offset_of(free_blocks),
            offset_of(self.free_blocks()),
        )?;

        // Free lists: right class, consistent links, bitmaps agree.
        let mut listed = 0usize;
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
                expect(
                    "bitmap bit of a list (1 = non-empty)",
                    u64::from(head != NONE),
                    u64::from(self.bitmaps.is_set(index)),
                )?;
                let (mut cursor, mut previous) = (head, NONE);
                while cursor != NONE {
                    let block = &self.blocks[cursor as usize];
                    expect(
                        "state of a listed block (1 = free)",
                        1,
                        u64::from(block.is_free()),
                    )?;
                    expect(
                        "size class of a listed block",
                        index as u64,
                        bins::containing(block.size) as u64,
                    )?;
                    expect(
                        "back link of a free list",
                        previous as u64,
                        block.list_prev() as u64,
                    )?;
                    listed += 1;
                    expect(
                        "free lists longer than the free blocks",
                        1,
                        u64::from(listed <= free_blocks),
                    )?;
                    previous = cursor;
                    cursor = block.list_next();
                }
            }
        }
        expect(
            "blocks on free lists",
            offset_of(free_blocks),
            offset_of(listed),
        )?;

        let (mut cursor, mut vacant) = (self.vacant, 0u64);
        while cursor != NONE {
            let block = &self.blocks[cursor as usize];
            expect(
                "state of a vacant slot (1 = vacant)",
                1,
                u64::from(block.is_vacant()),
            )?;
            vacant += 1;
            expect(
                "vacant list longer than the table",
                1,
                u64::from(vacant <= self.blocks.len() as u64),
            )?;
            cursor = block.list_next();
        }
        expect("vacant slots", u64::from(self.vacant_count), vacant)?;
        self.stats().check()
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
