//! The handles, their O(1) checks, and the counter that gives every allocator its id.

use core::sync::atomic::{AtomicU64, Ordering};

use super::block::Block;
use super::{bytes, Allocator, HandleError};

/// The id of an allocator that may never allocate: the ids ran out.
pub(super) const RETIRED: u32 = u32::MAX;

/// The id of every [scratch](Allocator::scratch) allocator; the counter
/// behind [`next_allocator_id`] starts above it.
pub(super) const SCRATCH: u32 = 0;

/// A distinct id for a new allocator. The counter never wraps: once the ids run out an allocator
/// gets [`RETIRED`] and no stamps, so no two that hand out handles share one.
pub(super) fn next_allocator_id() -> u32 {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    u32::try_from(NEXT.fetch_add(1, Ordering::Relaxed))
        .ok()
        .filter(|&id| id != RETIRED)
        .unwrap_or(RETIRED)
}

/// A live allocation: a byte range of the allocator's buffer. Give it back
/// with [`Allocator::free`]. It is `Copy` because it is only a name the
/// allocator checks on every use: a copy that outlives its allocation is a
/// [`HandleError`]. Dropping every copy leaks the bytes until a reset.
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
    /// A name no allocator gives out (stamps start at 1), to fill arrays.
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
    /// Whether `allocation` names the used block `block`. The offset and
    /// size are compared too, so a bug elsewhere cannot turn a stamp into a
    /// view of other bytes; a free block's tag holds links, hence the state.
    #[inline(always)]
    pub(super) fn matches(&self, block: &Block, allocation: &Allocation) -> bool {
        block.stamp() == allocation.stamp
            && block.is_used()
            && allocation.allocator == self.id
            && block.offset == allocation.offset
            && block.size == allocation.size
    }

    /// Where used block `block` ends (its request rounded up to the granularity, at most the
    /// capacity), from the block alone, so a free does not wait on its successor's record.
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

    /// Gives the live `allocation` a new stamp: the bytes stay allocated but
    /// every copy of the old handle is refused, as after a free and alloc.
    /// `None` when it is not live here or the stamps are spent.
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
