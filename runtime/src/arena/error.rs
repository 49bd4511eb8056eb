//! Why an arena operation was refused: the allocator's errors plus those of
//! typed views, buffers and 2D layouts.

use core::fmt;

use crate::alloc::{AllocError, FreeError, HandleError};
use crate::backend::HostBufferError;

/// Why an [`Arena`](super::Arena) operation was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ArenaError {
    /// The allocator refused the request (zero size, overflow, out of
    /// memory, ...).
    Alloc(AllocError),
    /// The handle is not live in this arena (another arena's, freed, or from
    /// before a reset).
    Handle(HandleError),
    /// The host buffer could not be made.
    Host(HostBufferError),
    /// An alignment that is not a power of two.
    AlignNotPowerOfTwo {
        /// The alignment asked for.
        align: u64,
    },
    /// The buffer's address is not a multiple of the alignment needed, so
    /// aligned offsets would not be aligned addresses.
    MisalignedBase {
        /// The buffer's address.
        base: u64,
        /// The alignment it lacks.
        align: u64,
    },
    /// A base address plus an offset overflows `u64`.
    AddressOverflow,
    /// An allocation lies outside the bytes the backend exposes (a backend
    /// whose `bytes()` is shorter than its `len()`), or beyond `usize`.
    OutsideBuffer,
    /// The bytes could not be viewed as the element type (a backend whose
    /// `bytes()` does not start at its `base_address()`).
    View(bytemuck::PodCastError),
    /// A row index past the last row of a pitched array.
    RowOutOfRange {
        /// The row asked for.
        row: u64,
        /// The number of rows.
        height: u64,
    },
    /// A packed host array whose length is not `width * height`.
    LengthMismatch {
        /// Elements the pitched array holds.
        expected: u64,
        /// Elements given.
        found: u64,
    },
}

impl fmt::Display for ArenaError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ArenaError::Alloc(error) => write!(f, "{error}"),
            ArenaError::Handle(error) => write!(f, "{error}"),
            ArenaError::Host(error) => write!(f, "{error}"),
            ArenaError::AlignNotPowerOfTwo { align } => {
                write!(f, "alignment {align} is not a power of two")
            }
            ArenaError::MisalignedBase { base, align } => write!(
                f,
                "the buffer's address {base:#x} is not a multiple of {align}, \
                 so aligned offsets would not give aligned addresses"
            ),
            ArenaError::AddressOverflow => f.write_str("base address plus offset overflows u64"),
            ArenaError::OutsideBuffer => {
                f.write_str("the allocation lies outside the bytes the backend exposes")
            }
            ArenaError::View(error) => write!(f, "cannot view the bytes as elements: {error}"),
            ArenaError::RowOutOfRange { row, height } => {
                write!(
                    f,
                    "row {row} is out of range for a pitched array of {height} rows"
                )
            }
            ArenaError::LengthMismatch { expected, found } => write!(
                f,
                "a packed array of {found} elements given where {expected} are needed"
            ),
        }
    }
}

// `Display` shows a wrapped error's message itself, so `source` stays `None`
// (a reporter walking the chain would print it twice otherwise).
#[cfg(feature = "std")]
impl std::error::Error for ArenaError {}

impl From<AllocError> for ArenaError {
    fn from(error: AllocError) -> Self {
        ArenaError::Alloc(error)
    }
}

impl From<HandleError> for ArenaError {
    fn from(error: HandleError) -> Self {
        ArenaError::Handle(error)
    }
}

impl From<FreeError> for ArenaError {
    fn from(error: FreeError) -> Self {
        ArenaError::Handle(error.kind())
    }
}

impl From<HostBufferError> for ArenaError {
    fn from(error: HostBufferError) -> Self {
        ArenaError::Host(error)
    }
}
