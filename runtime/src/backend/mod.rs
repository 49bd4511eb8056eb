//! Where an [`Arena`](crate::arena::Arena)'s bytes live, and how they move.
//! A backend is one buffer with a fixed base address ([`Buffer`]); it moves
//! host bytes in and out of ranges of it, zero-fills them and copies pitched
//! 2D ranges ([`MoveBytes`]), keeps whatever per-array state it needs to
//! order that work and says when a freed array's bytes are free
//! ([`StreamOrder`]: nothing on the host, events on a CUDA device), and may
//! grow in place ([`Grow`]). [`Backend`] is the four together. It knows
//! nothing of element types, handles or allocators: the typed arena checks
//! every range before it asks a backend to touch it.
//!
//! [`HostBuffer`] (aligned host memory, in a reservation of address space
//! committed as it grows) is here; a CUDA device buffer, and device memory that grows in place, are
//! in `backend::cuda`, behind the `cuda` feature.
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

/// A byte range of a backend's buffer: `offset .. offset + len`, relative to
/// the buffer's start. The offset is a place in a (device) buffer, so `u64`;
/// the length is a byte count, so `usize`.
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

/// What an arena needs of the memory it carves arrays out of: the four
/// capabilities below, each its own trait, so that each layer of the
/// arena's byte path is bounded by what it uses. Implemented for every type
/// that has all four; a backend implements those.
///
/// The arena calls the `unsafe` methods only with ranges it has checked to
/// lie inside the buffer and inside one live array, and only while it holds
/// exclusive access to that array for the writing ones (`&mut` on the
/// array's handle) or shared access for the reading ones. Backends may rely
/// on that; in turn they only touch the bytes they are asked to. Code that
/// launches kernels on `base_address + offset` relies on the traits'
/// promises: an address the backend lied about is a misaligned-address
/// fault or a write into someone else's memory.
pub trait Backend: Buffer + MoveBytes + StreamOrder + Grow {}

impl<B: Buffer + MoveBytes + StreamOrder + Grow> Backend for B {}

/// One buffer: its length, its address, and whether the tools watching
/// kernels see it.
///
/// # Safety
///
/// For as long as the value lives, [`base_address`](crate::backend::Buffer::base_address)
/// never changes, and the bytes `base_address .. base_address + len` (in
/// the address space the buffer lives in: host or device) belong to this
/// value alone and stay valid, so that `base_address + offset` is a usable
/// address for every `offset < len`. [`len`](crate::backend::Buffer::len) changes only
/// through [`Grow`].
pub unsafe trait Buffer {
    /// Why an operation of this backend failed.
    type Error: core::fmt::Debug + core::fmt::Display;

    /// Size of the buffer in bytes.
    fn len(&self) -> usize;

    /// Whether the buffer has no bytes.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Address of the first byte (a host pointer or a device pointer, as a
    /// number). The arena checks it is a multiple of its minimum alignment.
    fn base_address(&self) -> u64;

    /// Whether the buffer is device memory that the tools watching kernels
    /// (compute-sanitizer) can be told about, so the arena registers its
    /// arrays with them and keeps red zones under them (see
    /// [`crate::sanitizer`]). False for host memory.
    fn watched_by_tools(&self) -> bool {
        false
    }

    /// Makes the buffer's context current on this thread before the arena
    /// tells a tool about its arrays (a device backend binds its CUDA
    /// context; the tool checks addresses against the current one).
    fn enter_for_tools(&self) {}
}

/// The byte movers: host bytes in and out of ranges of the buffer,
/// zero-fill, copies between arrays and pitched rows, each in a stream's
/// order.
///
/// # Safety
///
/// The methods touch exactly the bytes of the ranges they are given.
pub unsafe trait MoveBytes: StreamOrder {
    /// Where work is ordered: a CUDA stream on a device, nothing on the host.
    type Stream;

    /// The stream every verb's work goes to.
    fn stream(&self) -> &Self::Stream;

    /// Copies `src` into the bytes of `dst`, in the backend's stream order.
    ///
    /// # Safety
    ///
    /// `dst` lies inside the buffer and inside the array `tracking` belongs
    /// to (whose bytes are `array`), and the caller holds exclusive access to
    /// that array; `src.len() == dst.len`.
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

    /// Copies the bytes of `src` into `dst`, in the backend's stream order, and waits
    /// for the copy.
    ///
    /// # Safety
    ///
    /// As [`write`](crate::backend::MoveBytes::write), with shared access to the array;
    /// `dst.len() == src.len`.
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

    /// Sets the bytes of `dst` to zero, in the backend's stream order.
    ///
    /// # Safety
    ///
    /// As [`write`](crate::backend::MoveBytes::write).
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

    /// Copies the bytes of one array, `src`, into another of the same
    /// length, `dst`, in the backend's stream order, without waiting: after the work
    /// recorded on both, and recorded as a read of one and a write of the
    /// other.
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
    /// As [`write`](crate::backend::MoveBytes::write); every row of `dst` lies inside the array
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
    /// As [`read`](crate::backend::MoveBytes::read); every row of `src` lies inside the array
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
/// Once [`retire`](crate::backend::StreamOrder::retire) returned `Ok`, work
/// queued after it on the backend's stream runs after every use of the
/// array; a tracking [`never_used`](crate::backend::StreamOrder::never_used)
/// calls unused is one no work queued so far can still use; a fence from
/// [`stream_fence`](crate::backend::StreamOrder::stream_fence) passes only
/// once the work queued before it has finished.
pub unsafe trait StreamOrder: Buffer {
    /// What the backend keeps for each array (its read and write events on
    /// a device). Made empty when the array is allocated; the backend fills
    /// it on first use. A tracking [`never_used`](crate::backend::StreamOrder::never_used)
    /// calls unused holds nothing that needs dropping: the arena forgets
    /// such trackings instead of dropping them.
    type Tracking: Default;

    /// A point on the backend's stream that work must pass (what a
    /// captured graph's replays wait for).
    type Fence;

    /// Whether freeing an array with this tracking needs
    /// [`retire`](crate::backend::StreamOrder::retire) at all: `false` lets the arena hand its
    /// bytes back at once, without asking. The default asks.
    fn needs_retire(&self, tracking: &Self::Tracking) -> bool {
        let _ = tracking;
        true
    }

    /// Whether an array with this tracking was never used by the backend's
    /// work, told from the tracking alone: then nothing can still be using
    /// its bytes, and a thread that does not hold the backend may hand them
    /// out again at once (what the per-thread caches of the arena's
    /// `ThreadArena` do). `false`, the default,
    /// sends every array through [`retire`](crate::backend::StreamOrder::retire).
    fn never_used(tracking: &Self::Tracking) -> bool {
        let _ = tracking;
        false
    }

    /// An array is being freed: empty its tracking, and order the
    /// backend's stream after its uses, so its bytes may be handed out
    /// again at once.
    ///
    /// # Errors
    ///
    /// The backend's error, with `tracking` either left as it was or empty
    /// only once nothing can still use the array: the arena then hands the
    /// array's handle back instead of freeing it, and a later free of it is
    /// as safe as the first.
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

    /// Every array is about to be freed at once: wait until no work that
    /// may still use the buffer is pending.
    ///
    /// # Errors
    ///
    /// The backend's error.
    fn quiesce(&mut self) -> Result<(), Self::Error>;

    /// A fence that passes once the work queued so far on the backend's
    /// own stream has finished (what a CUDA graph replayed there did), or
    /// `None` where no work is queued (the host).
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
/// Growing never lowers [`len`](crate::backend::Buffer::len) and keeps every byte below the
/// old length, its contents and its address; [`release`](crate::backend::Grow::release)
/// and [`shrink_to`](crate::backend::Grow::shrink_to) touch only the bytes they are given.
pub unsafe trait Grow: Buffer {
    /// The most bytes [`grow_to`](crate::backend::Grow::grow_to) can reach: the range reserved
    /// up front. A buffer that cannot grow (the default) says its length.
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

    /// Grows the buffer in place to `len` bytes (at most
    /// [`max_len`](crate::backend::Grow::max_len)) and returns its new length. The base
    /// address stays, and so does every byte below the old length. A buffer
    /// that cannot grow (the default) returns its length unchanged.
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

    /// Gives the memory behind `span`, bytes inside the buffer that no
    /// array holds, back to the system while keeping them addressable, and
    /// returns whether it did: the bytes then read as zero (the host maps
    /// fresh zero-fill-on-demand pages over them, which cost nothing until
    /// written). The arena calls it for the whole chunks of a growing
    /// arena's holes as they become free, so memory held stays close to
    /// the bytes live. A backend that cannot (the default, and a device
    /// buffer: unmapping would leave addresses that fault) returns `false`
    /// and keeps the memory.
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

    /// Whether [`release`](crate::backend::Grow::release) gives memory back (the
    /// default: no). A growing arena over a backend that does keeps its
    /// memory close to its live bytes (see [`Arena::committed`](crate::arena::Arena::committed)).
    fn can_release(&self) -> bool {
        false
    }

    /// Gives the memory past the first `len` bytes back (the host's pages,
    /// the device's chunks), once no work queued on any stream can still use
    /// it, and returns the new length: `len`, or more where the backend
    /// keeps whole units of its own. The bytes given back lose their
    /// contents. A buffer that cannot shrink (the default) returns its
    /// length unchanged.
    ///
    /// An arena calls it only for bytes that no live array holds.
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
    /// back fails; [`len`](crate::backend::Buffer::len) then says what is left.
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
/// [`host_ptr`](HostAccess::host_ptr) points to the [`len`](crate::backend::Buffer::len)
/// bytes of the buffer, at [`base_address`](crate::backend::Buffer::base_address),
/// initialised, readable and writable for as long as the value lives, and
/// nothing else reads or writes them except through the [`Backend`]
/// methods: the arena hands out references into them, guarded by its
/// handles.
pub unsafe trait HostAccess: Backend {
    /// The first byte of the buffer.
    fn host_ptr(&self) -> core::ptr::NonNull<u8>;
}
