//! The handles: an [`Allocation`] names its bytes by allocator id, slot and
//! a 64-bit stamp no other allocation of that allocator ever gets, so the
//! checks here recognise a double, stale or foreign handle in O(1), however
//! long it was kept; and the process-wide counter that gives every
//! allocator its id.

use core::sync::atomic::{AtomicU64, Ordering};

use super::block::Block;
use super::{bytes, Allocator, HandleError};

/// The id of an allocator that may never allocate: the ids ran out.
pub(super) const RETIRED: u32 = u32::MAX;

/// The id of every [scratch](Allocator::scratch) allocator; the counter
/// behind [`next_allocator_id`] starts above it.
pub(super) const SCRATCH: u32 = 0;

/// Every allocator gets a distinct 32-bit id so a handle presented to the
/// wrong one is recognised. The counter behind it is 64-bit and never wraps:
/// an allocator made after the 2^32 - 2 ids are used up gets [`RETIRED`] and
/// no stamps (every allocation is refused with
/// [`AllocError::StampsExhausted`]), so no two allocators that hand out
/// handles ever share an id.
pub(super) fn next_allocator_id() -> u32 {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    u32::try_from(NEXT.fetch_add(1, Ordering::Relaxed))
        .ok()
        .filter(|&id| id != RETIRED)
        .unwrap_or(RETIRED)
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
    pub(super) offset: u64,
    pub(super) size: u64,
    pub(super) stamp: u64,
    pub(super) allocator: u32,
    pub(super) slot: u32,
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

impl Allocator {
    /// Whether `allocation` names the used block `block`. The stamp alone
    /// names an allocation within its allocator; the offset is compared too
    /// so that even a bug elsewhere could not turn a matching stamp into a
    /// view of other bytes. A free block's tag holds links, which may equal
    /// a stamp, so the state bit is checked too.
    #[inline(always)]
    pub(super) fn matches(&self, block: &Block, allocation: &Allocation) -> bool {
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
    pub(super) fn used_end(&self, block: &Block) -> u64 {
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
    pub(super) fn refusal(&self, allocation: &Allocation) -> HandleError {
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
}
