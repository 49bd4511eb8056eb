//! What the allocator holds right now, as plain numbers, with the invariant
//! every test checks after every step.

use super::InvariantError;
use crate::align::offset_of;

/// A snapshot of an [`Allocator`](super::Allocator)'s counters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Stats {
    /// The size of the managed buffer in bytes.
    pub capacity: usize,
    /// Bytes in live allocations' blocks: the requests rounded up to the granularity.
    pub used: usize,
    /// Bytes the live allocations asked for.
    pub requested: usize,
    /// Bytes in free blocks.
    pub free: usize,
    /// Number of live allocations.
    pub allocations: usize,
    /// Number of free blocks (1 when everything is free).
    pub free_blocks: usize,
    /// Size of the largest free block.
    pub largest_free_block: usize,
    /// `used - requested`: what rounding to the granularity cost (bytes
    /// skipped to reach an aligned start stay free blocks instead).
    pub alignment_waste: usize,
}

impl Stats {
    /// Checks that every byte is accounted for once: `requested + alignment_waste + free ==
    /// capacity`, with `used == requested + alignment_waste`: the last step of
    /// [`Allocator::check_invariants`](super::Allocator::check_invariants).
    ///
    /// # Errors
    ///
    /// The broken equation, with both sides.
    pub(crate) fn check(&self) -> Result<(), InvariantError> {
        let in_blocks = self.requested.checked_add(self.alignment_waste);
        if in_blocks != Some(self.used) {
            return Err(InvariantError {
                what: "requested + alignment waste bytes (must equal the used bytes)",
                expected: offset_of(self.used),
                found: in_blocks.map_or(u64::MAX, offset_of),
            });
        }
        let accounted = self.used.checked_add(self.free);
        if accounted != Some(self.capacity) {
            return Err(InvariantError {
                what: "used + free bytes (must equal the capacity)",
                expected: offset_of(self.capacity),
                found: accounted.map_or(u64::MAX, offset_of),
            });
        }
        Ok(())
    }
}
