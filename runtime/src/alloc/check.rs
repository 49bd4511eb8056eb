//! The allocator's invariants, checked by walking every block and every free list: what the tests,
//! the model test and the fuzzer call after every step. Not on any allocation path.

use super::bins::{self, SECOND_LEVEL_COUNT};
use super::block::NONE;
use super::{Allocator, InvariantError};
use crate::align::offset_of;

impl Allocator {
    /// Walks every block and every free list and checks the allocator's invariants: the blocks tile
    /// `[0, capacity)` exactly, no two free blocks touch (they would have been merged), every free
    /// block sits in the list of its size class and the bitmaps agree, the counters behind
    /// [`stats`](Allocator::stats) equal what the walk finds, and they count every byte once
    /// (`used + free == capacity`).
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
    /// The first broken invariant found (which would be a bug in the allocator).
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
