//! Changing what lies under the live allocations: a reset frees them all
//! at once (stale handles are told apart by their stamps), growing appends
//! free bytes at the end, shrinking gives back the free tail.

use super::block::{Block, NONE};
use super::{align_up, bytes, AllocError, Allocator};
use crate::align::offset_of;

impl Allocator {
    /// Frees every allocation at once, in time independent of their number;
    /// older handles become [stale](super::HandleError::StaleHandle).
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
        self.reset_stamp = self.next_stamp;
        self.rebuild_empty();
    }

    /// Moves the stamp counter `count` ahead (saturating), for tests that
    /// reach its limit; stamps only get newer, so no old handle matches.
    #[doc(hidden)]
    pub fn skip_stamps(&mut self, count: u64) {
        self.next_stamp = self.next_stamp.saturating_add(count);
    }

    /// The lowest stamp a live handle can have (older ones predate a reset).
    pub(crate) fn reset_stamp(&self) -> u64 {
        self.reset_stamp
    }

    pub(super) fn rebuild_empty(&mut self) {
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

    /// Grows the buffer to `new_capacity` bytes in place: live allocations
    /// stay valid, and the new bytes join the free tail.
    ///
    /// ```
    /// use gpu_aligned::alloc::Allocator;
    ///
    /// let mut allocator = Allocator::new(1024);
    /// let a = allocator.alloc(1000, 1)?; // 1008 bytes at granularity 16
    /// assert!(allocator.alloc(1000, 1).is_err());
    /// allocator.grow_to(4096)?;
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
    pub fn grow_to(&mut self, new_capacity: usize) -> Result<(), AllocError> {
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
        // A used block reaches the next block or the capacity: nothing to change in it.
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

    /// Shrinks the buffer to `new_capacity` bytes, dropping at most
    /// [`free_tail`](Allocator::free_tail) free bytes from its end.
    ///
    /// ```
    /// # let mut allocator = gpu_aligned::alloc::Allocator::with_granularity(4096, 1)?;
    /// let a = allocator.alloc(1000, 1)?;
    /// assert_eq!(allocator.free_tail(), 3096);
    /// allocator.shrink_to(2048)?;
    /// assert_eq!(allocator.capacity(), 2048);
    /// assert!(allocator.shrink_to(999).is_err()); // `a` is in the way
    /// # allocator.free(a)?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`AllocError::CannotResize`] when `new_capacity` exceeds the capacity or would cut into
    /// bytes that are not free. The allocator is unchanged on error.
    pub fn shrink_to(&mut self, new_capacity: usize) -> Result<(), AllocError> {
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
    /// [`shrink_to`](Allocator::shrink_to) can go.
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

    pub(super) fn free_tail_bytes(&self) -> u64 {
        match self.last_block() {
            Some(last) if self.blocks[last as usize].is_free() => self.blocks[last as usize].size,
            _ => 0,
        }
    }

    /// The slot of the block that ends the buffer, if it has any. Growing
    /// and shrinking are rare, so a walk of the table does.
    pub(super) fn last_block(&self) -> Option<u32> {
        self.blocks
            .iter()
            .position(|block| !block.is_vacant() && block.next() == NONE)
            .map(|slot| slot as u32)
    }
}
