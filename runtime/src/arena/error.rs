//! Why an arena operation was refused, and the refused free that hands its handle back.

use core::fmt;

use super::GrowthError;
use crate::alloc::{AllocError, FreeError, HandleError};
use crate::backend::HostError;

/// Why an [`Arena`](super::Arena) operation was refused; `E` is the backend's error.
///
/// ```
/// use gpu_aligned::alloc::AllocError;
/// use gpu_aligned::arena::{Arena, ArenaError};
///
/// let mut arena = Arena::host(4096)?;
/// assert_eq!(arena.alloc::<u32>(usize::MAX).unwrap_err(), ArenaError::Alloc(AllocError::SizeOverflow));
/// # Ok::<(), ArenaError>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ArenaError<E = HostError> {
    /// The allocator refused the request.
    Alloc(AllocError),
    /// The handle is not live in this arena.
    Handle(HandleError),
    /// The backend failed.
    Backend(E),
    /// The buffer's address is not a multiple of the alignment needed.
    MisalignedBase {
        /// The buffer's address.
        base: u64,
        /// The alignment it lacks.
        align: usize,
    },
    /// A typed view would start misaligned for its element (a handle of the wrong type).
    Misaligned {
        /// The address the view would start at.
        address: u64,
        /// The element's alignment.
        align: usize,
    },
    /// A base address plus an offset overflows `u64`.
    AddressOverflow,
    /// A handle's elements do not fit its bytes, or those the buffer.
    OutsideBuffer,
    /// The range is reversed or not inside the array.
    OutOfRange {
        /// First element (or row), `usize::MAX` if past it.
        start: usize,
        /// One past the last, `usize::MAX` if past it.
        end: usize,
        /// Elements (or rows) in the array.
        array_len: usize,
    },
    /// A host slice's length differs from the elements it is copied with.
    LengthMismatch {
        /// Elements on the arena's side.
        expected: usize,
        /// Elements given.
        found: usize,
    },
    /// The arena did not grow.
    Growth(GrowthError),
    /// A key of another [`Plan`](super::Plan) (a clone included).
    ForeignKey,
    /// The key's array was already taken out of the carving.
    AlreadyTaken,
    /// The key asks for another element type or shape than its entry holds.
    KeyMismatch {
        /// The element type the plan entry was made for.
        planned: &'static str,
        /// The element type the key asked for.
        asked: &'static str,
    },
}

impl<E: fmt::Display> fmt::Display for ArenaError<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ArenaError::Alloc(error) => write!(f, "{error}"),
            ArenaError::Handle(error) => write!(f, "{error}"),
            ArenaError::Backend(error) => write!(f, "{error}"),
            ArenaError::MisalignedBase { base, align } => write!(
                f,
                "the buffer's address {base:#x} is not a multiple of {align}, \
                 so aligned offsets would not give aligned addresses"
            ),
            ArenaError::Misaligned { address, align } => write!(
                f,
                "a typed view at {address:#x} would not be aligned to its element's {align} bytes"
            ),
            ArenaError::AddressOverflow => f.write_str("base address plus offset overflows u64"),
            ArenaError::OutsideBuffer => {
                f.write_str("the handle's elements do not fit the bytes its allocation holds")
            }
            ArenaError::OutOfRange {
                start,
                end,
                array_len,
            } => write!(
                f,
                "the range {start}..{end} is reversed or not inside an array of {array_len} \
                 elements (rows, for a pitched array)"
            ),
            ArenaError::LengthMismatch { expected, found } => write!(
                f,
                "{found} elements given where the array range holds {expected}"
            ),
            ArenaError::Growth(error) => write!(f, "{error}"),
            ArenaError::ForeignKey => f.write_str("the key belongs to another plan"),
            ArenaError::AlreadyTaken => f.write_str("the key's array was already taken"),
            ArenaError::KeyMismatch { planned, asked } => write!(
                f,
                "the plan entry holds {planned} in another shape or type than the key's {asked}"
            ),
        }
    }
}

// A wrapped error is shown as itself, so its source is the wrapped one's
// (else a reporter walking the chain prints its message twice).
#[cfg(feature = "std")]
impl<E: std::error::Error + 'static> std::error::Error for ArenaError<E> {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            ArenaError::Alloc(error) => error.source(),
            ArenaError::Handle(error) => error.source(),
            ArenaError::Backend(error) => error.source(),
            ArenaError::Growth(error) => error.source(),
            _ => None,
        }
    }
}

// `?` turns every error into a `Box<dyn Error + Send + Sync>`.
#[cfg(feature = "std")]
const _: () = {
    fn is_boxable<T: std::error::Error + Send + Sync + 'static>() {}
    let _ = is_boxable::<ArenaError<HostError>>;
    #[cfg(feature = "cuda")]
    let _ = is_boxable::<ArenaError<crate::backend::cuda::CudaError>>;
};

/// So `?` takes the device backend's errors, and cudarc's, where the device arena's are returned.
#[cfg(feature = "cuda")]
impl<E: Into<crate::backend::cuda::CudaError>> From<E>
    for ArenaError<crate::backend::cuda::CudaError>
{
    fn from(error: E) -> Self {
        ArenaError::Backend(error.into())
    }
}

impl<E> From<AllocError> for ArenaError<E> {
    fn from(error: AllocError) -> Self {
        ArenaError::Alloc(error)
    }
}

impl<E> From<HandleError> for ArenaError<E> {
    fn from(error: HandleError) -> Self {
        ArenaError::Handle(error)
    }
}

impl<E> From<FreeError> for ArenaError<E> {
    fn from(error: FreeError) -> Self {
        ArenaError::Handle(error.kind())
    }
}

/// A refused free: why, and the handle, so the array is not lost.
///
/// ```
/// use gpu_aligned::arena::Arena;
///
/// let mut mine = Arena::host(4096)?;
/// let mut theirs = Arena::host(4096)?;
/// let a = mine.alloc::<u32>(4)?;
/// let refused = theirs.free(a).unwrap_err();
/// mine.free(refused.handle)?; // still live where it belongs
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
#[must_use = "the refused handle still names a live array"]
pub struct FreeFailed<H, E = HostError> {
    /// The handle, unchanged.
    pub handle: H,
    /// Why it was refused.
    pub error: ArenaError<E>,
}

impl<H, E: fmt::Display> fmt::Display for FreeFailed<H, E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "cannot free: {}", self.error)
    }
}

#[cfg(feature = "std")]
impl<H: fmt::Debug, E: std::error::Error + 'static> std::error::Error for FreeFailed<H, E> {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.error.source()
    }
}

impl<H, E> From<FreeFailed<H, E>> for ArenaError<E> {
    fn from(refused: FreeFailed<H, E>) -> Self {
        refused.error
    }
}
