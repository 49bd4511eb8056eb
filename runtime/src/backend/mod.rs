//! Where an [`Arena`](crate::arena::Arena)'s bytes live, and how they move: a buffer with a fixed
//! base ([`Buffer`]), byte movers ([`MoveBytes`]), per-array ordering ([`StreamOrder`]) and growth
//! ([`Grow`]); [`Backend`] is the four. It knows nothing of types or handles: the arena checks
//! every range first. [`HostBuffer`] is here; device memory is in `backend::cuda`.
//!
//! ```
//! use gpu_aligned::backend::{Buffer, HostBuffer};
//!
//! let buffer = HostBuffer::new(4096, 256)?;
//! assert_eq!(buffer.len(), 4096);
//! assert_eq!(buffer.base_address() % 256, 0);
//! # Ok::<(), gpu_aligned::backend::HostError>(())
//! ```

#[cfg(feature = "cuda")]
pub mod cuda;
#[cfg(feature = "alloc")]
mod host;
#[cfg(feature = "alloc")]
mod vm;

use crate::align::offset_of;

#[cfg(feature = "alloc")]
use host::MIN_HOST_ALIGN;
#[cfg(feature = "alloc")]
pub use host::{HostBuffer, HostError};
#[cfg(feature = "alloc")]
pub(crate) use vm::HostVm;

/// A byte range of a backend's buffer: `offset .. offset + len`, from the buffer's start.
///
/// ```
/// use gpu_aligned::backend::Span;
///
/// let span = Span { offset: 512, len: 64 };
/// assert_eq!(span.end(), Some(576));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Span {
    /// First byte, from the start of the buffer.
    pub offset: u64,
    /// Number of bytes.
    pub len: usize,
}

impl Span {
    /// The `len` bytes from `offset`.
    #[cfg(feature = "alloc")]
    pub(crate) const fn new(offset: u64, len: usize) -> Span {
        Span { offset, len }
    }

    /// One past the last byte, or `None` if that overflows `u64`.
    ///
    /// ```
    /// # use gpu_aligned::backend::Span;
    /// assert_eq!(Span { offset: u64::MAX, len: 1 }.end(), None);
    /// ```
    pub fn end(&self) -> Option<u64> {
        self.offset.checked_add(offset_of(self.len))
    }

    /// Whether the range lies inside a buffer of `buffer_len` bytes.
    ///
    /// ```
    /// # use gpu_aligned::backend::Span;
    /// assert!(Span { offset: 0, len: 4096 }.within(4096));
    /// assert!(!Span { offset: 1, len: 4096 }.within(4096));
    /// ```
    pub fn within(&self, buffer_len: usize) -> bool {
        self.end().is_some_and(|end| end <= offset_of(buffer_len))
    }
}

/// A pitched 2D byte range: `rows` rows of `row_bytes` bytes, each row
/// starting `pitch` bytes after the previous one, the first at `offset`.
///
/// ```
/// use gpu_aligned::backend::Rows;
///
/// let rows = Rows { offset: 0, pitch: 512, row_bytes: 400, rows: 3 };
/// assert_eq!(rows.reach(), Some(2 * 512 + 400));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rows {
    /// First byte of the first row, from the start of the buffer.
    pub offset: u64,
    /// Bytes from one row's start to the next.
    pub pitch: usize,
    /// Bytes of data in each row (at most `pitch`).
    pub row_bytes: usize,
    /// Number of rows.
    pub rows: usize,
}

impl Rows {
    /// Bytes from the first row's start to the last row's end, or `None` if
    /// that overflows (or there are no rows).
    ///
    /// ```
    /// # use gpu_aligned::backend::Rows;
    /// assert_eq!(Rows { offset: 0, pitch: 512, row_bytes: 1, rows: 0 }.reach(), None);
    /// ```
    pub fn reach(&self) -> Option<usize> {
        self.rows
            .checked_sub(1)?
            .checked_mul(self.pitch)?
            .checked_add(self.row_bytes)
    }
}

/// What an arena needs of its memory: the four capabilities, each its own
/// trait so each layer is bounded by what it uses.
///
/// The arena calls the `unsafe` methods only with ranges inside the buffer and one live array,
/// holding exclusive access to it for the writing ones and shared access for the reading ones.
pub trait Backend: Buffer + MoveBytes + StreamOrder + Grow {}

impl<B: Buffer + MoveBytes + StreamOrder + Grow> Backend for B {}

/// One buffer: its length, its address, and whether the tools watching kernels see it.
///
/// # Safety
///
/// For as long as the value lives, [`base_address`](Buffer::base_address) never changes, and the
/// bytes `base_address .. base_address + len` belong to this value alone and stay valid.
/// [`len`](Buffer::len) changes only through [`Grow`].
pub unsafe trait Buffer {
    /// Why an operation of this backend failed.
    type Error: core::fmt::Debug + core::fmt::Display;

    /// Size of the buffer in bytes.
    fn len(&self) -> usize;

    /// Whether the buffer has no bytes.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Address of the first byte (a host or device pointer, as a number).
    fn base_address(&self) -> u64;

    /// Whether the buffer is device memory compute-sanitizer can be told
    /// about (see [`crate::sanitizer`]).
    fn watched_by_tools(&self) -> bool {
        false
    }

    /// Makes the buffer's CUDA context current before the arena tells a tool about its arrays.
    fn enter_for_tools(&self) {}
}

/// The byte movers, each in the backend's stream order.
///
/// # Safety
///
/// The methods touch exactly the bytes of the ranges they are given.
pub unsafe trait MoveBytes: StreamOrder {
    /// Where work is ordered: a CUDA stream on a device, nothing on the host.
    type Stream;

    /// The stream every verb's work goes to.
    fn stream(&self) -> &Self::Stream;

    /// Copies `src` into the bytes of `dst`.
    ///
    /// # Safety
    ///
    /// `dst` lies inside the buffer and inside the array `tracking` belongs to (whose bytes are
    /// `array`), and the caller holds exclusive access to that array; `src.len() == dst.len`.
    ///
    /// # Errors
    ///
    /// The backend's error when the copy cannot be made.
    unsafe fn write(
        &self,
        tracking: &mut Self::Tracking,
        array: Span,
        dst: Span,
        src: &[u8],
    ) -> Result<(), Self::Error>;

    /// Copies the bytes of `src` into `dst`, and waits for the copy.
    ///
    /// # Safety
    ///
    /// As [`write`](MoveBytes::write), with shared access to the array; `dst.len() == src.len`.
    ///
    /// # Errors
    ///
    /// The backend's error.
    unsafe fn read(
        &self,
        tracking: &Self::Tracking,
        array: Span,
        src: Span,
        dst: &mut [u8],
    ) -> Result<(), Self::Error>;

    /// Sets the bytes of `dst` to zero.
    ///
    /// # Safety
    ///
    /// As [`write`](MoveBytes::write).
    ///
    /// # Errors
    ///
    /// The backend's error.
    unsafe fn zero(
        &self,
        tracking: &mut Self::Tracking,
        array: Span,
        dst: Span,
    ) -> Result<(), Self::Error>;

    /// Copies one array, `src`, into another of the same length, `dst`, without waiting.
    ///
    /// # Safety
    ///
    /// `src` and `dst` are the bytes of two distinct live arrays inside the
    /// buffer, of the same length, whose trackings these are; the caller
    /// holds shared access to the first and exclusive access to the second.
    ///
    /// # Errors
    ///
    /// The backend's error.
    unsafe fn copy(
        &self,
        src_tracking: &Self::Tracking,
        src: Span,
        dst_tracking: &mut Self::Tracking,
        dst: Span,
    ) -> Result<(), Self::Error>;

    /// Copies packed rows (`dst.rows` rows of `dst.row_bytes`, back to back)
    /// into the pitched rows `dst`, leaving the bytes between rows alone.
    ///
    /// # Safety
    ///
    /// As [`write`](MoveBytes::write); every row of `dst` lies inside the array
    /// and `src.len() == dst.row_bytes * dst.rows`.
    ///
    /// # Errors
    ///
    /// The backend's error.
    unsafe fn write_rows(
        &self,
        tracking: &mut Self::Tracking,
        array: Span,
        dst: Rows,
        src: &[u8],
    ) -> Result<(), Self::Error>;

    /// Copies the pitched rows `src` out into packed rows, and waits.
    ///
    /// # Safety
    ///
    /// As [`read`](MoveBytes::read); every row of `src` lies inside the array
    /// and `dst.len() == src.row_bytes * src.rows`.
    ///
    /// # Errors
    ///
    /// The backend's error.
    unsafe fn read_rows(
        &self,
        tracking: &Self::Tracking,
        array: Span,
        src: Rows,
        dst: &mut [u8],
    ) -> Result<(), Self::Error>;
}

/// Ordering: what the backend keeps for each array to order its work, and
/// when a freed array's bytes may be handed out again.
///
/// # Safety
///
/// Once [`retire`](StreamOrder::retire) returned `Ok`, work queued after it runs after every use of
/// the array; a tracking [`never_used`](StreamOrder::never_used) calls unused is one no queued work
/// can still use; a fence from [`stream_fence`](StreamOrder::stream_fence) passes only once the
/// work queued before it has finished.
pub unsafe trait StreamOrder: Buffer {
    /// What the backend keeps for each array (its events on a device), empty at allocation. One
    /// [`never_used`](StreamOrder::never_used) calls unused needs no drop: the arena forgets it.
    type Tracking: Default;

    /// A point on the backend's stream that work must pass.
    type Fence;

    /// Whether freeing an array with this tracking needs
    /// [`retire`](StreamOrder::retire) at all (the default: yes).
    fn needs_retire(&self, tracking: &Self::Tracking) -> bool {
        let _ = tracking;
        true
    }

    /// Whether an array with this tracking was never used, from the tracking alone, so a thread
    /// without the backend may reuse its bytes at once. The default, `false`, sends every array
    /// through [`retire`](StreamOrder::retire).
    fn never_used(tracking: &Self::Tracking) -> bool {
        let _ = tracking;
        false
    }

    /// An array is being freed: empty its tracking and order the stream
    /// after its uses, so its bytes may be handed out again at once.
    ///
    /// # Errors
    ///
    /// The backend's error, with `tracking` left as it was or empty only
    /// once nothing can still use the array, so a later free is as safe.
    fn retire(&mut self, tracking: &mut Self::Tracking) -> Result<(), Self::Error>;

    /// Whether the work before `fence` has finished, without waiting.
    ///
    /// # Errors
    ///
    /// The backend's error.
    fn fence_passed(&self, fence: &Self::Fence) -> Result<bool, Self::Error>;

    /// Waits until the work before `fence` has finished.
    ///
    /// # Errors
    ///
    /// The backend's error.
    fn wait_fence(&self, fence: &Self::Fence) -> Result<(), Self::Error>;

    /// Every array is about to be freed: wait until no work is pending.
    ///
    /// # Errors
    ///
    /// The backend's error.
    fn quiesce(&mut self) -> Result<(), Self::Error>;

    /// A fence that passes once the work queued so far on the backend's
    /// stream has finished, or `None` where no work is queued (the host).
    ///
    /// # Errors
    ///
    /// The backend's error.
    fn stream_fence(&mut self) -> Result<Option<Self::Fence>, Self::Error> {
        Ok(None)
    }
}

/// Growth: a buffer that grows in place and gives memory back. Every
/// method has a default for a buffer that does neither.
///
/// # Safety
///
/// Growing never lowers [`len`](Buffer::len) and keeps every byte below the
/// old length, its contents and its address; [`release`](Grow::release) and
/// [`shrink_to`](Grow::shrink_to) touch only the bytes they are given.
pub unsafe trait Grow: Buffer {
    /// The most bytes [`grow_to`](Grow::grow_to) can reach (the default: the length).
    ///
    /// ```
    /// use gpu_aligned::backend::{Grow, HostBuffer};
    ///
    /// assert_eq!(HostBuffer::new(4096, 256)?.max_len(), 4096);
    /// assert_eq!(HostBuffer::growable(4096, 1 << 20, 256)?.max_len(), 1 << 20);
    /// # Ok::<(), gpu_aligned::backend::HostError>(())
    /// ```
    fn max_len(&self) -> usize {
        self.len()
    }

    /// Grows the buffer in place to `len` bytes (at most [`max_len`](Grow::max_len)) and returns
    /// its new length (the default: unchanged).
    ///
    /// ```
    /// use gpu_aligned::backend::{Buffer, Grow, HostBuffer};
    ///
    /// let mut buffer = HostBuffer::growable(4096, 1 << 20, 256)?;
    /// let base = buffer.base_address();
    /// assert_eq!(buffer.grow_to(1 << 16)?, 1 << 16);
    /// assert_eq!(buffer.base_address(), base);
    /// assert_eq!(HostBuffer::new(4096, 256)?.grow_to(1 << 16)?, 4096);
    /// # Ok::<(), gpu_aligned::backend::HostError>(())
    /// ```
    ///
    /// # Errors
    ///
    /// The backend's error when the memory cannot be had (the OS or the
    /// driver refuses); the buffer keeps its length then.
    fn grow_to(&mut self, len: usize) -> Result<usize, Self::Error> {
        let _ = len;
        Ok(self.len())
    }

    /// Gives the memory behind `span` (no array's bytes) back to the system
    /// while keeping it addressable, reading as zero, and returns whether it
    /// did (the default and a device buffer: `false`).
    ///
    /// ```
    /// use gpu_aligned::backend::{Buffer, Grow, HostBuffer, Span};
    ///
    /// let mut buffer = HostBuffer::growable(1 << 20, 1 << 20, 256)?;
    /// // 64 KiB: whole pages of every common page size.
    /// assert!(buffer.release(Span { offset: 0, len: 64 << 10 })?);
    /// assert_eq!(buffer.len(), 1 << 20); // the addresses stay
    /// # Ok::<(), gpu_aligned::backend::HostError>(())
    /// ```
    ///
    /// # Errors
    ///
    /// The backend's error when the system refuses; the memory is kept.
    fn release(&mut self, span: Span) -> Result<bool, Self::Error> {
        let _ = span;
        Ok(false)
    }

    /// Whether [`release`](Grow::release) gives memory back (the default: no).
    fn can_release(&self) -> bool {
        false
    }

    /// Gives the memory past the first `len` bytes (no live array's) back
    /// once no queued work can use it, and returns the new length: `len` or
    /// more, in the backend's units (the default: unchanged).
    ///
    /// ```
    /// use gpu_aligned::backend::{Buffer, Grow, HostBuffer};
    ///
    /// let mut buffer = HostBuffer::growable(1 << 20, 1 << 20, 256)?;
    /// assert_eq!(buffer.shrink_to(4096)?, 4096);
    /// assert_eq!(buffer.len(), 4096);
    /// # Ok::<(), gpu_aligned::backend::HostError>(())
    /// ```
    ///
    /// # Errors
    ///
    /// The backend's error when waiting for the streams or giving memory
    /// back fails; [`len`](Buffer::len) then says what is left.
    fn shrink_to(&mut self, len: usize) -> Result<usize, Self::Error> {
        let _ = len;
        Ok(self.len())
    }
}

/// A backend whose bytes the CPU can read and write directly, which lets the
/// arena hand out `&[T]` and `&mut [T]` views of its arrays.
///
/// # Safety
///
/// [`host_ptr`](HostAccess::host_ptr) points to the [`len`](Buffer::len) bytes at
/// [`base_address`](Buffer::base_address), initialised, readable and writable for as long as the
/// value lives, and touched only through the [`Backend`] methods.
pub unsafe trait HostAccess: Backend {
    /// The first byte of the buffer.
    fn host_ptr(&self) -> core::ptr::NonNull<u8>;
}
