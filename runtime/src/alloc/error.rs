//! Why an allocation or a free was refused: one variant per bad input.

use core::fmt;

use super::Allocation;

/// Why [`Allocator::alloc`](super::Allocator::alloc) refused a request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum AllocError {
    /// A request for zero bytes: it would have no address of its own.
    ZeroSize,
    /// The alignment is not a power of two (zero included).
    AlignNotPowerOfTwo {
        /// The alignment asked for.
        align: usize,
    },
    /// The size exceeds the allocator's capacity.
    SizeExceedsCapacity {
        /// The size asked for, in bytes.
        size: usize,
        /// The allocator's capacity in bytes.
        capacity: usize,
    },
    /// Computing the size in bytes overflowed `usize`.
    SizeOverflow,
    /// The search found no free block holding `size` bytes at `align`.
    OutOfMemory {
        /// The size asked for, in bytes.
        size: usize,
        /// The alignment asked for.
        align: usize,
        /// Bytes free in total, scattered over all free blocks.
        free: usize,
        /// The largest size that fits at this alignment among the blocks the bounded search saw (a
        /// lower bound beyond [`SEARCH_LIMIT`](super::SEARCH_LIMIT) free blocks).
        largest_fit: usize,
    },
    /// The table of blocks cannot grow (2^31 - 1 slots, or the host allocator refused).
    TooManyBlocks,
    /// The allocator has handed out `u64::MAX - 1` allocations: one more would reuse a stamp.
    StampsExhausted,
    /// [`grow_to`](super::Allocator::grow_to) to a smaller capacity, or
    /// [`shrink_to`](super::Allocator::shrink_to) to a larger one or into bytes that are not free.
    CannotResize {
        /// The allocator's capacity in bytes.
        capacity: usize,
        /// The capacity asked for.
        new_capacity: usize,
    },
}

impl fmt::Display for AllocError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            AllocError::ZeroSize => f.write_str("cannot allocate zero bytes"),
            AllocError::AlignNotPowerOfTwo { align } => {
                write!(f, "alignment {align} is not a power of two")
            }
            AllocError::SizeExceedsCapacity { size, capacity } => write!(
                f,
                "{size} bytes exceed the allocator's capacity of {capacity} bytes"
            ),
            AllocError::SizeOverflow => f.write_str("the size in bytes overflows usize"),
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
            AllocError::StampsExhausted => {
                f.write_str("the allocator has used up its 64-bit allocation stamps")
            }
            AllocError::CannotResize {
                capacity,
                new_capacity,
            } => write!(
                f,
                "cannot resize from {capacity} to {new_capacity} bytes: growing cannot shrink, \
                 and shrinking can only drop free bytes at the end"
            ),
        }
    }
}

/// Why a handle is not live in the allocator it was presented to.
///
/// ```
/// use gpu_aligned::alloc::{Allocator, HandleError};
///
/// let mut mine = Allocator::new(64);
/// let theirs = Allocator::new(64);
/// let a = mine.alloc(8, 8)?;
/// assert_eq!(theirs.check_handle(&a), Err(HandleError::ForeignHandle));
/// # mine.free(a)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum HandleError {
    /// The handle was made by a different allocator.
    ForeignHandle,
    /// The handle's allocation was already freed by [`free`](super::Allocator::free) and nothing
    /// has taken its place in the block table yet.
    DoubleFree,
    /// The handle's allocation was freed and its place has been reused, or
    /// it was freed by [`reset`](super::Allocator::reset).
    StaleHandle,
}

impl fmt::Display for HandleError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            HandleError::ForeignHandle => "the handle belongs to a different allocator",
            HandleError::DoubleFree => "the allocation was already freed",
            HandleError::StaleHandle => {
                "the handle is stale: its allocation was freed and the space reused, or reset"
            }
        })
    }
}

/// [`Allocator::free`](super::Allocator::free) refused a handle: why, and
/// the handle, handed back rather than consumed.
///
/// ```
/// use gpu_aligned::alloc::{Allocator, HandleError};
///
/// let mut mine = Allocator::new(64);
/// let mut theirs = Allocator::new(64);
/// let a = mine.alloc(8, 8)?;
/// let refused = theirs.free(a).unwrap_err();
/// assert_eq!(refused.kind(), HandleError::ForeignHandle);
/// mine.free(refused.into_allocation())?; // still live where it belongs
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[must_use = "the refused handle may still name a live allocation"]
pub struct FreeError {
    kind: HandleError,
    allocation: Allocation,
}

impl FreeError {
    pub(super) fn new(kind: HandleError, allocation: Allocation) -> FreeError {
        FreeError { kind, allocation }
    }

    /// Why the handle was refused.
    ///
    /// ```
    /// # use gpu_aligned::alloc::{Allocator, HandleError};
    /// # let mut allocator = Allocator::new(64);
    /// let a = allocator.alloc(8, 8)?;
    /// allocator.free(a)?;
    /// assert_eq!(allocator.free(a).unwrap_err().kind(), HandleError::DoubleFree);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn kind(&self) -> HandleError {
        self.kind
    }

    /// The refused handle.
    ///
    /// ```
    /// # let mut allocator = gpu_aligned::alloc::Allocator::new(64);
    /// let a = allocator.alloc(8, 8)?;
    /// allocator.free(a)?;
    /// assert_eq!(*allocator.free(a).unwrap_err().allocation(), a);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn allocation(&self) -> &Allocation {
        &self.allocation
    }

    /// The refused handle, taken out of the error.
    ///
    /// ```
    /// # let mut allocator = gpu_aligned::alloc::Allocator::new(64);
    /// let a = allocator.alloc(8, 8)?;
    /// allocator.free(a)?;
    /// assert_eq!(allocator.free(a).unwrap_err().into_allocation(), a);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn into_allocation(self) -> Allocation {
        self.allocation
    }
}

impl From<FreeError> for HandleError {
    fn from(error: FreeError) -> HandleError {
        error.kind
    }
}

impl fmt::Display for FreeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "cannot free {} bytes at offset {}: {}",
            self.allocation.size(),
            self.allocation.offset(),
            self.kind
        )
    }
}

/// A broken internal invariant found by
/// [`Allocator::check_invariants`](super::Allocator::check_invariants).
/// Seeing one is a bug in the allocator.
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
impl std::error::Error for HandleError {}
#[cfg(feature = "std")]
impl std::error::Error for FreeError {}
#[cfg(feature = "std")]
impl std::error::Error for InvariantError {}
