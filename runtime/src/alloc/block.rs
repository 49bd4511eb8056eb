//! The block table: one record per block of the buffer (used, free, or a vacant slot waiting for
//! reuse), linked to its physical neighbours so that a free merges in O(1), and a free block also
//! into its size class's list. Here: the record, taking and releasing slots, carving a request out
//! of a free block, and filing blocks into and out of the free lists.

use super::bins;
use super::{align_up, AllocError, Allocation, Allocator};

/// "No block" in the intrusive links and list heads. Slot indices stay below it, which leaves the
/// top bit of [`Block::next_phys`] free for [`USED`].
pub(super) const NONE: u32 = 0x7fff_ffff;

/// The bit of [`Block::next_phys`] that marks a used block.
pub(super) const USED: u32 = 1 << 31;

/// One block of the buffer in a slot of the block table, 32 bytes, aligned
/// so none straddles two cache lines. What a slot holds:
///
/// - used: the [`USED`] bit of `next_phys` is set, the tag is the stamp its handle carries (low
///   half in `tag_low`) and `size` the size requested; the block reaches its request rounded up to
///   the granularity (or the capacity), where the next block starts, so no second size is stored;
/// - free: the bit is clear, `size != 0`, and the tag holds the links of
///   its size class's list (previous in `tag_low`, next in `tag_high`);
/// - vacant (no block; the slot waits on the vacant list): `size == 0`, and
///   `tag_high` links the vacant list.
///
/// The tag is two `u32`s so relinking a list writes one link with a plain
/// store, without first reading the record.
#[derive(Clone, Copy, Debug)]
#[repr(C, align(32))]
pub(super) struct Block {
    pub(super) offset: u64,
    pub(super) size: u64,
    pub(super) tag_low: u32,
    pub(super) tag_high: u32,
    pub(super) prev_phys: u32,
    pub(super) next_phys: u32,
}

impl Block {
    pub(super) const VACANT: Block = Block {
        offset: 0,
        size: 0,
        tag_low: NONE,
        tag_high: NONE,
        prev_phys: NONE,
        next_phys: NONE,
    };

    /// A free block, not yet on a list.
    #[inline(always)]
    pub(super) fn free(offset: u64, size: u64, prev_phys: u32, next_phys: u32) -> Block {
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
    pub(super) fn end(&self) -> u64 {
        // Blocks lie within `[0, capacity)`, so this cannot overflow.
        self.offset + self.size
    }

    #[inline(always)]
    pub(super) fn is_used(&self) -> bool {
        self.next_phys & USED != 0
    }

    #[inline(always)]
    pub(super) fn is_free(&self) -> bool {
        !self.is_used() && self.size != 0
    }

    #[inline(always)]
    pub(super) fn is_vacant(&self) -> bool {
        self.size == 0
    }

    /// The physical successor, without the state bit.
    #[inline(always)]
    pub(super) fn next(&self) -> u32 {
        self.next_phys & !USED
    }

    /// Points a used block's `next_phys` at `next`, writing the state bit
    /// rather than keeping it: a plain store, no read.
    #[inline(always)]
    pub(super) fn set_next_of_used(&mut self, next: u32) {
        debug_assert!(self.is_used(), "relinking the successor of {self:?}");
        self.next_phys = next | USED;
    }

    /// While used: the stamp of its handle.
    #[inline(always)]
    pub(super) fn stamp(&self) -> u64 {
        u64::from(self.tag_low) | u64::from(self.tag_high) << 32
    }

    /// While free: the previous block of its list.
    #[inline(always)]
    pub(super) fn list_prev(&self) -> u32 {
        self.tag_low
    }

    /// While free or vacant: the next block of its list.
    #[inline(always)]
    pub(super) fn list_next(&self) -> u32 {
        self.tag_high
    }

    #[inline(always)]
    pub(super) fn set_list_prev(&mut self, prev: u32) {
        self.tag_low = prev;
    }

    #[inline(always)]
    pub(super) fn set_list_next(&mut self, next: u32) {
        self.tag_high = next;
    }
}

impl Allocator {
    /// Makes sure `needed` slots wait on the vacant list, so a split takes
    /// them without a check or a reallocation.
    pub(super) fn reserve_slots(&mut self, needed: u32) -> Result<(), AllocError> {
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

    /// Takes a slot off the vacant list, which [`reserve_slots`](Self::reserve_slots) has filled.
    #[inline(always)]
    pub(super) fn take_slot(&mut self) -> u32 {
        let slot = self.vacant;
        self.vacant = self.blocks[slot as usize].list_next();
        self.vacant_count -= 1;
        slot
    }

    #[inline(always)]
    pub(super) fn release_slot(&mut self, slot: u32) {
        let block = &mut self.blocks[slot as usize];
        block.size = 0;
        block.next_phys = NONE;
        (block.tag_low, block.tag_high) = (NONE, self.vacant);
        self.vacant = slot;
        self.vacant_count += 1;
    }

    /// Turns `block`, just taken off its free list from slot `slot`, into an allocation of `size`
    /// bytes at `start`, returning the bytes before and after it to the free lists.
    #[inline(always)]
    pub(super) fn split_and_use(
        &mut self,
        slot: u32,
        block: Block,
        start: u64,
        size: u64,
    ) -> Allocation {
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
    pub(super) fn use_slot(
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
    pub(super) fn link_free(&mut self, slot: u32) {
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
    pub(super) fn unlink_head(&mut self, slot: u32, bin: usize) -> Block {
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
    pub(super) fn unlink_free(&mut self, slot: u32) -> Block {
        let block = self.blocks[slot as usize];
        let (prev, next) = (block.list_prev(), block.list_next());
        if prev != NONE {
            self.blocks[prev as usize].set_list_next(next);
        } else {
            let bin = bins::containing(block.size);
            self.heads[bin] = next;
            self.bitmaps.clear_if(bin, next == NONE);
        }
        // Without a successor the back link goes into `slot` itself, whose tag every caller
        // overwrites: a select instead of a branch that mispredicts on data.
        let back_linked = if next != NONE { next } else { slot };
        self.blocks[back_linked as usize].set_list_prev(prev);
        block
    }
}
