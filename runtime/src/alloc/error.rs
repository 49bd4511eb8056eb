//! Why an allocation or a free was refused. Every bad input the allocator can
//! be handed has its own variant, so callers (and tests) can tell them apart
//! instead of parsing messages.

use core::fmt;

/// Why [`Allocator::alloc`](super::Allocator::alloc) refused a request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum AllocError {
    /// A request for zero bytes: it would have no address of its own.
    ZeroSize,
    /// The alignment is not a power of two (zero included).
    AlignNotPowerOfTwo {
        /// The alignment asked for.
        align: u64,
    },
    /// The alignment exceeds the allocator's capacity.
    AlignExceedsCapacity {
        /// The alignment asked for.
        align: u64,
        /// The allocator's capacity in bytes.
        capacity: u64,
    },
    /// The size exceeds the allocator's capacity, so no amount of freeing
    /// could make it fit.
    SizeExceedsCapacity {
        /// The size asked for, in bytes.
        size: u64,
        /// The allocator's capacity in bytes.
        capacity: u64,
    },
    /// Computing the size in bytes overflowed `u64` (an element count times
    /// an element size, a pitch times a height, or a size rounded up to an
    /// alignment).
    SizeOverflow,
    /// No free block holds `size` bytes at `align`.
    OutOfMemory {
        /// The size asked for, in bytes.
        size: u64,
        /// The alignment asked for.
        align: u64,
        /// Bytes free in total, scattered over all free blocks.
        free: u64,
        /// The largest size that would have fit at this alignment.
        largest_fit: u64,
    },
    /// The table of blocks cannot grow: either it already holds `u32::MAX - 1`
    /// blocks or the host allocator refused to enlarge it.
    TooManyBlocks,
}

impl fmt::Display for AllocError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            AllocError::ZeroSize => f.write_str("cannot allocate zero bytes"),
            AllocError::AlignNotPowerOfTwo { align } => {
                write!(f, "alignment {align} is not a power of two")
            }
            AllocError::AlignExceedsCapacity { align, capacity } => write!(
                f,
                "alignment {align} exceeds the allocator's capacity of {capacity} bytes"
            ),
            AllocError::SizeExceedsCapacity { size, capacity } => write!(
                f,
                "{size} bytes exceed the allocator's capacity of {capacity} bytes"
            ),
            AllocError::SizeOverflow => f.write_str("the size in bytes overflows u64"),
            AllocError::OutOfMemory {
                size,
                align,
                free,
                largest_fit,
            } => write!(
                f,
                "out of memory: {size} bytes at alignment {align} requested, {free} bytes free, \
                 the largest block that fits at this alignment holds {largest_fit} bytes"
            ),
            AllocError::TooManyBlocks => f.write_str("the allocator's block table cannot grow"),
        }
    }
}

/// Why [`Allocator::free`](super::Allocator::free) (or a lookup through a
/// handle) refused a handle. Handles carry the id of the allocator that made
/// them and a generation counter, which is how these are detected.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum FreeError {
    /// The handle was made by a different allocator.
    ForeignHandle,
    /// The handle's allocation was already freed and nothing has taken its
    /// place in the block table yet.
    DoubleFree,
    /// The handle's allocation was freed (by [`free`](super::Allocator::free)
    /// or [`reset`](super::Allocator::reset)) and its place has been reused.
    StaleHandle,
}

impl fmt::Display for FreeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            FreeError::ForeignHandle => "the handle belongs to a different allocator",
            FreeError::DoubleFree => "the allocation was already freed",
            FreeError::StaleHandle => {
                "the handle is stale: its allocation was freed and the space reused"
            }
        })
    }
}

/// A broken internal invariant found by
/// [`Allocator::check_invariants`](super::Allocator::check_invariants) or
/// [`Stats::check`](super::Stats::check). Seeing one is a bug in the allocator.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InvariantError {
    pub(super) what: &'static str,
    pub(super) expected: u64,
    pub(super) found: u64,
}

impl fmt::Display for InvariantError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "allocator invariant broken: {}: expected {}, found {}",
            self.what, self.expected, self.found
        )
    }
}

#[cfg(feature = "std")]
impl std::error::Error for AllocError {}
#[cfg(feature = "std")]
impl std::error::Error for FreeError {}
#[cfg(feature = "std")]
impl std::error::Error for InvariantError {}
