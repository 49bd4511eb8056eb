//! The host-memory backend: zeroed memory aligned to at least 256 bytes (as `cudaMalloc` gives), so
//! offsets are aligned alike on host and device, in a [`HostVm`] reservation that grows in place.

use core::fmt;
use core::ptr::NonNull;

use super::vm::HostVm;
use super::{Buffer, Grow, HostAccess, MoveBytes, Rows, Span, StreamOrder};
use crate::align::{bytes_of, offset_of, round_up};

/// The smallest alignment a [`HostBuffer`] gets: `cudaMalloc`'s.
pub(super) const MIN_HOST_ALIGN: usize = crate::align::ARRAY_ALIGN;

/// The host backend's error; the OS's refusals carry its `errno`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum HostError {
    /// A buffer or reservation of zero bytes: it would have no address.
    ZeroLength,
    /// The alignment is not a power of two.
    AlignNotPowerOfTwo {
        /// The alignment asked for.
        align: usize,
    },
    /// The length, rounded up to pages and the alignment, exceeds `isize`.
    TooLarge {
        /// The length asked for.
        len: usize,
    },
    /// The OS (or the fallback's allocator) refused the address space.
    Reserve {
        /// The length asked for.
        len: usize,
        /// The OS error number (`errno`), 0 where there is none.
        errno: i32,
    },
    /// The OS refused to commit pages.
    Commit {
        /// The committed length asked for.
        len: usize,
        /// The OS error number (`errno`).
        errno: i32,
    },
    /// The OS refused to give pages back.
    Decommit {
        /// The committed length asked for.
        len: usize,
        /// The OS error number (`errno`).
        errno: i32,
    },
    /// Pages to discard that are not whole committed pages (`errno` 0), or
    /// the OS refused to replace them.
    Discard {
        /// The range's first byte.
        offset: usize,
        /// The range's length.
        len: usize,
        /// The OS error number (`errno`), 0 for a bad range.
        errno: i32,
    },
    /// A commit past the end of the reservation.
    BeyondReservation {
        /// The committed length asked for.
        len: usize,
        /// The reservation's length.
        reserved: usize,
    },
    /// A byte range outside the buffer was handed to a copy.
    OutOfRange {
        /// First byte of the range.
        offset: u64,
        /// Bytes in the range.
        len: usize,
    },
}

impl fmt::Display for HostError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            HostError::ZeroLength => f.write_str("a host buffer or reservation cannot be empty"),
            HostError::AlignNotPowerOfTwo { align } => {
                write!(f, "host memory alignment {align} is not a power of two")
            }
            HostError::TooLarge { len } => {
                write!(f, "{len} bytes of host memory exceed the address space")
            }
            HostError::Reserve { len, errno } => write!(
                f,
                "the OS refused to reserve {len} bytes of address space (errno {errno})"
            ),
            HostError::Commit { len, errno } => {
                write!(f, "the OS refused to commit {len} bytes (errno {errno})")
            }
            HostError::Decommit { len, errno } => write!(
                f,
                "the OS refused to decommit memory down to {len} bytes (errno {errno})"
            ),
            HostError::Discard { offset, len, errno } => write!(
                f,
                "cannot discard the {len} bytes at {offset}: not whole committed pages, \
                 or the OS refused (errno {errno})"
            ),
            HostError::BeyondReservation { len, reserved } => write!(
                f,
                "cannot commit {len} bytes of a reservation of {reserved} bytes"
            ),
            HostError::OutOfRange { offset, len } => write!(
                f,
                "{len} bytes at offset {offset} do not lie inside the host buffer"
            ),
        }
    }
}

#[cfg(feature = "std")]
impl std::error::Error for HostError {}

/// An aligned, zero-initialised host buffer, freed on drop. Only the pages its arrays write become
/// memory; a [`growable`](HostBuffer::growable) one grows in place.
pub struct HostBuffer {
    vm: HostVm,
    /// The buffer's length: at most what `vm` has committed.
    len: usize,
    /// The most `len` may grow to, at most what `vm` reserved.
    max: usize,
}

// SAFETY: `HostBuffer` owns its reservation like a `Box<[u8]>`.
unsafe impl Send for HostBuffer {}
// SAFETY: through `&HostBuffer`, bytes are only touched by the `unsafe`
// `Backend` methods, whose callers promise exclusive access to the ranges
// written and shared access to the ranges read, whatever thread they run on.
unsafe impl Sync for HostBuffer {}

impl HostBuffer {
    /// A zeroed buffer of `len` bytes whose address is a multiple of
    /// `max(align, 256)`. Its pages become memory when first written.
    ///
    /// ```
    /// use gpu_aligned::backend::{Buffer, HostBuffer};
    ///
    /// let buffer = HostBuffer::new(1000, 4096)?;
    /// assert_eq!((buffer.len(), buffer.base_address() % 4096), (1000, 0));
    /// # Ok::<(), gpu_aligned::backend::HostError>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`HostError::ZeroLength`], [`HostError::AlignNotPowerOfTwo`], [`HostError::TooLarge`], or
    /// [`HostError::Reserve`] when the OS refuses the address space ([`HostError::Commit`] when it
    /// refuses to commit it).
    pub fn new(len: usize, align: usize) -> Result<HostBuffer, HostError> {
        HostBuffer::growable(len, len, align)
    }

    /// A zeroed buffer of `len` bytes, at a multiple of `max(align, 256)`,
    /// that can grow in place to `max` bytes.
    ///
    /// ```
    /// use gpu_aligned::backend::{Buffer, Grow, HostBuffer};
    ///
    /// let buffer = HostBuffer::growable(1 << 16, 16 << 20, 256)?;
    /// assert_eq!((buffer.len(), buffer.max_len()), (1 << 16, 16 << 20));
    /// # Ok::<(), gpu_aligned::backend::HostError>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`new`](HostBuffer::new), for `max` as well as `len`;
    /// [`HostError::TooLarge`] when `len > max`.
    pub fn growable(len: usize, max: usize, align: usize) -> Result<HostBuffer, HostError> {
        if len == 0 {
            return Err(HostError::ZeroLength);
        }
        if !align.is_power_of_two() {
            return Err(HostError::AlignNotPowerOfTwo { align });
        }
        if len > max {
            return Err(HostError::TooLarge { len });
        }
        let align = align.max(MIN_HOST_ALIGN);
        let mut vm = HostVm::reserve(max, align)?;
        vm.grow_to(len)?;
        Ok(HostBuffer { vm, len, max })
    }
}

impl fmt::Debug for HostBuffer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HostBuffer")
            .field("len", &self.len)
            .field("max", &self.max)
            .field("memory", &self.vm)
            .finish()
    }
}

impl HostBuffer {
    /// The whole buffer (`&mut self`: an arena lends its arrays through shared borrows).
    ///
    /// ```
    /// use gpu_aligned::backend::HostBuffer;
    ///
    /// let mut buffer = HostBuffer::new(1024, 256)?;
    /// assert!(buffer.bytes().iter().all(|&b| b == 0));
    /// # Ok::<(), gpu_aligned::backend::HostError>(())
    /// ```
    pub fn bytes(&mut self) -> &[u8] {
        let len = self.len;
        // SAFETY: the first `len` bytes are committed, owned and initialised;
        // `&mut self` keeps every other access away.
        unsafe { core::slice::from_raw_parts(self.vm.as_ptr().as_ptr(), len) }
    }

    /// The whole buffer, mutably.
    ///
    /// ```
    /// use gpu_aligned::backend::HostBuffer;
    ///
    /// let mut buffer = HostBuffer::new(1024, 256)?;
    /// buffer.bytes_mut()[7] = 1;
    /// assert_eq!(buffer.bytes()[7], 1);
    /// # Ok::<(), gpu_aligned::backend::HostError>(())
    /// ```
    pub fn bytes_mut(&mut self) -> &mut [u8] {
        let len = self.len;
        // SAFETY: as in `bytes`, and `&mut self` makes this the only view.
        unsafe { core::slice::from_raw_parts_mut(self.vm.as_ptr().as_ptr(), len) }
    }

    /// `span` as a pointer into the buffer, if it lies inside it.
    fn at(&self, span: Span) -> Option<*mut u8> {
        if !span.within(self.len) {
            return None;
        }
        // In bounds (checked just above), so the offset fits `usize`.
        let offset = bytes_of(span.offset)?;
        // SAFETY: `offset + len <= self.len`, so the pointer stays inside
        // (or one past the end of) the committed bytes.
        Some(unsafe { self.vm.as_ptr().as_ptr().add(offset) })
    }
}

/// A range the buffer does not hold: only a broken caller gets here.
fn outside(span: Span) -> HostError {
    let Span { offset, len } = span;
    HostError::OutOfRange { offset, len }
}

/// Row `row` of `rows`, or `array` as the error on overflow.
fn row_span(rows: Rows, row: usize, array: Span) -> Result<Span, HostError> {
    let offset = row
        .checked_mul(rows.pitch)
        .and_then(|skip| offset_of(skip).checked_add(rows.offset))
        .ok_or(outside(array))?;
    Ok(Span::new(offset, rows.row_bytes))
}

// SAFETY: a reservation never moves; the length changes only in `grow_to`
// (committing first) and `shrink_to`; the reservation is owned until drop.
unsafe impl Buffer for HostBuffer {
    type Error = HostError;

    fn len(&self) -> usize {
        self.len
    }

    fn base_address(&self) -> u64 {
        self.vm.base_address()
    }
}

// SAFETY: every method touches only the bytes of the ranges it is given,
// after checking they lie inside.
unsafe impl MoveBytes for HostBuffer {
    type Stream = ();

    fn stream(&self) -> &() {
        &()
    }

    unsafe fn write(
        &self,
        _tracking: &mut (),
        _array: Span,
        dst: Span,
        src: &[u8],
    ) -> Result<(), HostError> {
        if src.len() != dst.len {
            return Err(outside(dst));
        }
        let to = self.at(dst).ok_or(outside(dst))?;
        // SAFETY: `to` starts `dst.len == src.len()` writable bytes of the
        // buffer (checked by `at`); the caller holds the only access to them,
        // and `src` is a separate borrow, so the two cannot overlap.
        unsafe { core::ptr::copy_nonoverlapping(src.as_ptr(), to, src.len()) };
        Ok(())
    }

    unsafe fn read(
        &self,
        _tracking: &(),
        _array: Span,
        src: Span,
        dst: &mut [u8],
    ) -> Result<(), HostError> {
        if dst.len() != src.len {
            return Err(outside(src));
        }
        let from = self.at(src).ok_or(outside(src))?;
        // SAFETY: `from` starts `src.len == dst.len()` initialised bytes of
        // the buffer, which nobody writes meanwhile (the caller holds shared
        // access to the array); `dst` is an exclusive borrow elsewhere.
        unsafe { core::ptr::copy_nonoverlapping(from, dst.as_mut_ptr(), dst.len()) };
        Ok(())
    }

    unsafe fn zero(&self, _tracking: &mut (), _array: Span, dst: Span) -> Result<(), HostError> {
        let to = self.at(dst).ok_or(outside(dst))?;
        // SAFETY: as in `write`.
        unsafe { core::ptr::write_bytes(to, 0, dst.len) };
        Ok(())
    }

    unsafe fn copy(
        &self,
        _src_tracking: &(),
        src: Span,
        _dst_tracking: &mut (),
        dst: Span,
    ) -> Result<(), HostError> {
        let from = self.at(src).ok_or(outside(src))?;
        let to = self.at(dst).ok_or(outside(dst))?;
        if src.len != dst.len {
            return Err(outside(dst));
        }
        let len = dst.len;
        // SAFETY: both ranges lie inside the buffer (checked by `at`) and
        // are two distinct live arrays, which never overlap; the caller
        // holds the first shared and the second exclusively.
        unsafe { core::ptr::copy_nonoverlapping(from.cast_const(), to, len) };
        Ok(())
    }

    unsafe fn write_rows(
        &self,
        tracking: &mut (),
        array: Span,
        dst: Rows,
        src: &[u8],
    ) -> Result<(), HostError> {
        let row_bytes = dst.row_bytes;
        if row_bytes == 0 || src.len() != row_bytes.saturating_mul(dst.rows) {
            return Err(outside(array));
        }
        for (row, source) in (0..dst.rows).zip(src.chunks_exact(row_bytes)) {
            let span = row_span(dst, row, array)?;
            // SAFETY: the caller promises every row lies inside the array it
            // holds exclusively; `write` checks the buffer's bounds again.
            unsafe { self.write(tracking, array, span, source) }?;
        }
        Ok(())
    }

    unsafe fn read_rows(
        &self,
        tracking: &(),
        array: Span,
        src: Rows,
        dst: &mut [u8],
    ) -> Result<(), HostError> {
        let row_bytes = src.row_bytes;
        if row_bytes == 0 || dst.len() != row_bytes.saturating_mul(src.rows) {
            return Err(outside(array));
        }
        for (row, target) in (0..src.rows).zip(dst.chunks_exact_mut(row_bytes)) {
            let span = row_span(src, row, array)?;
            // SAFETY: as in `write_rows`, with shared access.
            unsafe { self.read(tracking, array, span, target) }?;
        }
        Ok(())
    }
}

// SAFETY: no work is queued on the host: a freed array's bytes are free at
// once, and no fence is ever made.
unsafe impl StreamOrder for HostBuffer {
    type Tracking = ();

    type Fence = core::convert::Infallible;

    fn needs_retire(&self, _tracking: &()) -> bool {
        false
    }

    fn never_used(_tracking: &()) -> bool {
        // Host copies finish before they return.
        true
    }

    fn retire(&mut self, _tracking: &mut ()) -> Result<(), HostError> {
        // Host copies finish before they return.
        Ok(())
    }

    fn fence_passed(&self, fence: &Self::Fence) -> Result<bool, HostError> {
        match *fence {}
    }

    fn wait_fence(&self, fence: &Self::Fence) -> Result<(), HostError> {
        match *fence {}
    }

    fn quiesce(&mut self) -> Result<(), HostError> {
        Ok(())
    }
}

// SAFETY: `grow` commits before the length goes up, so the bytes below stay;
// `release` and `shrink_to` touch only the pages of the ranges they are given.
unsafe impl Grow for HostBuffer {
    fn max_len(&self) -> usize {
        self.max
    }

    fn grow_to(&mut self, len: usize) -> Result<usize, HostError> {
        let len = len.min(self.max);
        if len > self.len {
            self.vm.grow_to(len)?;
            self.len = len;
        }
        Ok(self.len)
    }

    fn can_release(&self) -> bool {
        true
    }

    fn release(&mut self, span: Span) -> Result<bool, HostError> {
        if !span.within(self.len) {
            return Err(outside(span));
        }
        // Only the whole pages inside: the bytes around may be arrays'.
        let page = HostVm::page_size();
        let offset = bytes_of(span.offset).ok_or(outside(span))?;
        let end = (offset + span.len) / page * page;
        match round_up(offset, page) {
            Some(start) if start < end => {
                self.vm.discard(start, end - start)?;
                Ok(true)
            }
            _ => Ok(false),
        }
    }

    fn shrink_to(&mut self, len: usize) -> Result<usize, HostError> {
        if len >= self.len {
            return Ok(self.len);
        }
        // The bytes from `len` to its page's end stay committed: zero them,
        // as the pages given back will read.
        let page_end = self
            .len
            .min(round_up(len, HostVm::page_size()).unwrap_or(usize::MAX));
        if page_end > len {
            // SAFETY: `len < page_end <= self.len`: committed bytes, and
            // `&mut self` means no view of them is alive.
            unsafe {
                core::ptr::write_bytes(self.vm.as_ptr().as_ptr().add(len), 0, page_end - len)
            };
        }
        self.vm.shrink_to(len)?;
        self.len = len;
        Ok(len)
    }
}

// SAFETY: the pointer starts the `len` committed, initialised bytes this
// value owns; `bytes`/`bytes_mut`, the other accesses, need `&mut self`.
unsafe impl HostAccess for HostBuffer {
    fn host_ptr(&self) -> NonNull<u8> {
        self.vm.as_ptr()
    }
}
