//! What the allocator holds right now, as plain numbers, with the invariant
//! every test checks after every step.

use super::InvariantError;

/// A snapshot of an [`Allocator`](super::Allocator)'s counters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Stats {
    /// The size of the managed buffer in bytes.
    pub capacity: u64,
    /// Bytes in live allocations' blocks: the sizes requested, each rounded
    /// up to the allocator's granularity (1 by default, so exactly the sizes
    /// requested).
    pub used: u64,
    /// Bytes the live allocations asked for; `used - requested` is what
    /// rounding to the granularity costs.
    pub requested: u64,
    /// Bytes in free blocks.
    pub free: u64,
    /// Number of live allocations.
    pub allocations: u64,
    /// Number of free blocks (1 when everything is free).
    pub free_blocks: u64,
    /// Size of the largest free block.
    pub largest_free_block: u64,
    /// Bytes neither used nor free: padding kept inside allocations to align
    /// them. The allocator returns such bytes to the free list instead, so
    /// this is 0; it is counted (`capacity - used - free`) rather than
    /// assumed.
    pub alignment_waste: u64,
}

impl Stats {
    /// Checks `used + free + alignment_waste == capacity` and that no bytes
    /// are lost to alignment.
    ///
    /// # Errors
    ///
    /// The broken equation, with both sides.
    pub fn check(&self) -> Result<(), InvariantError> {
        let accounted = self.used.checked_add(self.free);
        if accounted != Some(self.capacity) {
            return Err(InvariantError {
                what: "used + free bytes (must equal the capacity)",
                expected: self.capacity,
                found: accounted.unwrap_or(u64::MAX),
            });
        }
        if self.alignment_waste != 0 {
            return Err(InvariantError {
                what: "bytes lost to alignment",
                expected: 0,
                found: self.alignment_waste,
            });
        }
        Ok(())
    }
}
