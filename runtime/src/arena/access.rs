//! Checked typed ranges of an array, and the verbs that move its bytes:
//! host slices in and out ([`write`](Arena::write), [`read`](Arena::read),
//! [`to_vec`](Arena::to_vec)), zero-fill, and one array into another on the
//! device ([`copy`](Arena::copy)), on the backend's stream or on one named
//! with [`on`](Arena::on). Every typed view and copy of a flat array goes
//! through one check, [`Arena::element_span`], in release builds too.

use alloc_crate::vec::Vec;
use core::fmt;
use core::mem::{align_of, size_of};

use super::{Arena, ArenaArray, ArenaError, ArenaResult, ArenaSlice, Place, SEALED};
use crate::align::offset_of;
use crate::backend::{Backend, Span};
use crate::{GpuField, GpuWords};

impl<B: Backend> Arena<B> {
    /// The bytes of elements `start .. start + count` of `slice`, checked:
    /// the handle is live here, its elements fit the bytes its allocation
    /// holds, the range lies inside it and inside the buffer, and its first
    /// address is aligned for `T`. Every typed view and copy of a flat array
    /// goes through this one check, in release builds too.
    pub(super) fn element_span<T>(
        &self,
        slice: &ArenaSlice<T, B>,
        start: usize,
        count: usize,
    ) -> ArenaResult<Span, B> {
        let element = (size_of::<T>(), align_of::<T>());
        self.place_span(&slice.place, slice.len, element, start, count)
    }

    /// [`element_span`](Arena::element_span) for the array of `len`
    /// elements at `place`, of an element type known by its `(size,
    /// align)` alone.
    fn place_span(
        &self,
        place: &Place<B>,
        len: usize,
        (size, align): (usize, usize),
        start: usize,
        count: usize,
    ) -> ArenaResult<Span, B> {
        let allocation = &place.allocation;
        self.check_place(place)?;
        let out_of_range = ArenaError::OutOfRange {
            start,
            len: count,
            array_len: len,
        };
        match start.checked_add(count) {
            Some(end) if end <= len => {}
            _ => return Err(out_of_range),
        }
        if place.is_empty() {
            // No bytes, none to reach: the span of nothing at offset 0.
            // (A range inside an empty array is empty; a non-empty one was
            // refused just above unless the handle's length is forged, and
            // then it holds more elements than bytes.)
            if len.checked_mul(size) != Some(0) {
                return Err(ArenaError::OutsideBuffer);
            }
            return Ok(Span { offset: 0, len: 0 });
        }
        match len.checked_mul(size) {
            Some(bytes) if bytes <= allocation.size() => {}
            _ => return Err(ArenaError::OutsideBuffer),
        }
        // Both below the allocation's size (checked just above).
        let span = Span {
            offset: allocation.offset() + offset_of(start * size),
            len: count * size,
        };
        self.aligned_span(span, align)
    }

    /// `span` if it lies inside the buffer and starts on an address aligned
    /// for `T`.
    pub(super) fn checked_start<T>(&self, span: Span) -> ArenaResult<Span, B> {
        self.aligned_span(span, align_of::<T>())
    }

    fn aligned_span(&self, span: Span, align: usize) -> ArenaResult<Span, B> {
        if !span.within(self.backend.len()) {
            return Err(ArenaError::OutsideBuffer);
        }
        let address = self
            .backend
            .base_address()
            .checked_add(span.offset)
            .ok_or(ArenaError::AddressOverflow)?;
        if address % offset_of(align) != 0 {
            return Err(ArenaError::Misaligned { address, align });
        }
        Ok(span)
    }

    /// The address of a structure of arrays' column: an array of `len`
    /// elements of `field`, whose type only the derive names. Checked as
    /// [`element_span`](Arena::element_span) checks a typed array, and to
    /// hold exactly `len` elements (a column swapped for one of another
    /// length is refused), so that whole-column copies fit it exactly.
    pub(crate) fn column_address(
        &self,
        column: &dyn ArenaArray<B>,
        len: usize,
        field: &GpuField,
    ) -> ArenaResult<u64, B> {
        let place = column.place(SEALED);
        self.check_place(place)?;
        if len.checked_mul(field.size) != Some(place.bytes) {
            let found = place.bytes.checked_div(field.size).unwrap_or(0);
            return Err(ArenaError::LengthMismatch {
                expected: len,
                found,
            });
        }
        let span = self.place_span(place, len, (field.size, field.align), 0, len)?;
        self.backend
            .base_address()
            .checked_add(span.offset)
            .ok_or(ArenaError::AddressOverflow)
    }

    /// A view of the arena that runs copies and zero-fill on `stream`
    /// instead of the backend's own (on the host, where there are no
    /// streams, the same as the arena).
    ///
    /// ```
    /// # let mut arena = gpu_aligned::arena::Arena::host(4096)?;
    /// let mut a = arena.alloc::<u32>(2)?;
    /// arena.on(&()).write(&mut a, &[4, 5])?;
    /// assert_eq!(arena.to_vec(&a)?, [4, 5]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn on<'a>(&'a self, stream: &'a B::Stream) -> OnStream<'a, B> {
        OnStream {
            arena: self,
            stream,
        }
    }

    pub(crate) fn here(&self) -> OnStream<'_, B> {
        self.on(self.backend.stream())
    }

    /// Copies `src` into the array (`src.len()` must equal its length).
    ///
    /// ```
    /// # let mut arena = gpu_aligned::arena::Arena::host(4096)?;
    /// let mut a = arena.alloc::<u32>(3)?;
    /// arena.write(&mut a, &[1, 2, 3])?;
    /// assert_eq!(arena.to_vec(&a)?, [1, 2, 3]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`ArenaError::LengthMismatch`], [`ArenaError::Handle`] for a handle
    /// this arena does not hold, [`ArenaError::Backend`].
    pub fn write<T: GpuWords>(
        &self,
        slice: &mut ArenaSlice<T, B>,
        src: &[T],
    ) -> ArenaResult<(), B> {
        self.here().write(slice, src)
    }

    /// Copies `src` into elements `start .. start + src.len()` of the array.
    ///
    /// ```
    /// # let mut arena = gpu_aligned::arena::Arena::host(4096)?;
    /// let mut a = arena.alloc::<u32>(4)?;
    /// arena.write_range(&mut a, 2, &[7, 8])?;
    /// assert_eq!(arena.to_vec(&a)?, [0, 0, 7, 8]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`write`](Arena::write), and [`ArenaError::OutOfRange`].
    pub fn write_range<T: GpuWords>(
        &self,
        slice: &mut ArenaSlice<T, B>,
        start: usize,
        src: &[T],
    ) -> ArenaResult<(), B> {
        self.here().write_range(slice, start, src)
    }

    /// Copies the array into `dst` (`dst.len()` must equal its length); on a
    /// device, waits for the copy.
    ///
    /// ```
    /// # let mut arena = gpu_aligned::arena::Arena::host(4096)?;
    /// let mut a = arena.alloc::<u32>(2)?;
    /// arena.write(&mut a, &[1, 2])?;
    /// let mut out = [0; 2];
    /// arena.read(&a, &mut out)?;
    /// assert_eq!(out, [1, 2]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`write`](Arena::write).
    pub fn read<T: GpuWords>(&self, slice: &ArenaSlice<T, B>, dst: &mut [T]) -> ArenaResult<(), B> {
        self.here().read(slice, dst)
    }

    /// Copies elements `start .. start + dst.len()` of the array into `dst`.
    ///
    /// ```
    /// # let mut arena = gpu_aligned::arena::Arena::host(4096)?;
    /// let mut a = arena.alloc::<u32>(4)?;
    /// arena.write(&mut a, &[1, 2, 3, 4])?;
    /// let mut middle = [0; 2];
    /// arena.read_range(&a, 1, &mut middle)?;
    /// assert_eq!(middle, [2, 3]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`write_range`](Arena::write_range).
    pub fn read_range<T: GpuWords>(
        &self,
        slice: &ArenaSlice<T, B>,
        start: usize,
        dst: &mut [T],
    ) -> ArenaResult<(), B> {
        self.here().read_range(slice, start, dst)
    }

    /// The array, copied into a new `Vec`.
    ///
    /// ```
    /// # let mut arena = gpu_aligned::arena::Arena::host(4096)?;
    /// let a = arena.alloc::<u16>(3)?;
    /// assert_eq!(arena.to_vec(&a)?, [0, 0, 0]); // a fresh buffer is zeroed
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`read`](Arena::read).
    pub fn to_vec<T: GpuWords>(&self, slice: &ArenaSlice<T, B>) -> ArenaResult<Vec<T>, B> {
        self.here().to_vec(slice)
    }

    /// Sets every byte of the array to zero.
    ///
    /// ```
    /// # let mut arena = gpu_aligned::arena::Arena::host(4096)?;
    /// let mut a = arena.alloc::<u32>(2)?;
    /// arena.write(&mut a, &[1, 2])?;
    /// arena.zero(&mut a)?;
    /// assert_eq!(arena.to_vec(&a)?, [0, 0]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`ArenaError::Handle`] for a handle this arena does not hold,
    /// [`ArenaError::Backend`].
    pub fn zero<T: GpuWords>(&self, slice: &mut ArenaSlice<T, B>) -> ArenaResult<(), B> {
        self.here().zero(slice)
    }

    /// Copies array `src` into array `dst`, of the same type and length: on
    /// a device, one device-to-device copy queued on the arena's stream
    /// after the work recorded on both arrays, recorded as a read of `src`
    /// and a write of `dst` (the host does not wait for it).
    ///
    /// ```
    /// # let mut arena = gpu_aligned::arena::Arena::host(4096)?;
    /// let a = arena.alloc_from(&[1u32, 2, 3])?;
    /// let mut b = arena.alloc::<u32>(3)?;
    /// arena.copy(&a, &mut b)?;
    /// assert_eq!(arena.to_vec(&b)?, [1, 2, 3]);
    /// let mut short = arena.alloc::<u32>(2)?;
    /// assert!(arena.copy(&a, &mut short).is_err());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`ArenaError::LengthMismatch`] for arrays of different lengths,
    /// [`ArenaError::Handle`] for a handle this arena does not hold,
    /// [`ArenaError::Backend`].
    pub fn copy<T: GpuWords>(
        &self,
        src: &ArenaSlice<T, B>,
        dst: &mut ArenaSlice<T, B>,
    ) -> ArenaResult<(), B> {
        self.here().copy(src, dst)
    }
}

/// An [`Arena`] whose copies and zero-fill run on a stream the caller named
/// (see [`Arena::on`]): the same verbs, the same checks.
///
/// ```
/// # let mut arena = gpu_aligned::arena::Arena::host(4096)?;
/// let mut a = arena.alloc::<u8>(2)?;
/// let on = arena.on(&());
/// on.write(&mut a, &[1, 2])?;
/// assert_eq!(on.to_vec(&a)?, [1, 2]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct OnStream<'a, B: Backend> {
    pub(super) arena: &'a Arena<B>,
    pub(super) stream: &'a B::Stream,
}

impl<B: Backend> fmt::Debug for OnStream<'_, B> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OnStream")
            .field("arena", self.arena)
            .finish_non_exhaustive()
    }
}

impl<B: Backend> Clone for OnStream<'_, B> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<B: Backend> Copy for OnStream<'_, B> {}

pub(super) fn check_len<E>(expected: usize, found: usize) -> Result<(), ArenaError<E>> {
    if expected == found {
        Ok(())
    } else {
        Err(ArenaError::LengthMismatch { expected, found })
    }
}

impl<'a, B: Backend> OnStream<'a, B> {
    /// The arena.
    ///
    /// ```
    /// # let arena = gpu_aligned::arena::Arena::host(4096)?;
    /// assert_eq!(arena.on(&()).arena().min_align(), 256);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn arena(&self) -> &'a Arena<B> {
        self.arena
    }

    /// [`Arena::write`] on this stream.
    ///
    /// ```
    /// # let mut arena = gpu_aligned::arena::Arena::host(4096)?;
    /// let mut a = arena.alloc::<u8>(1)?;
    /// arena.on(&()).write(&mut a, &[9])?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`Arena::write`].
    pub fn write<T: GpuWords>(self, slice: &mut ArenaSlice<T, B>, src: &[T]) -> ArenaResult<(), B> {
        check_len(slice.len, src.len())?;
        self.write_range(slice, 0, src)
    }

    /// [`Arena::write_range`] on this stream.
    ///
    /// ```
    /// # let mut arena = gpu_aligned::arena::Arena::host(4096)?;
    /// let mut a = arena.alloc::<u8>(3)?;
    /// arena.on(&()).write_range(&mut a, 1, &[9])?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`Arena::write_range`].
    pub fn write_range<T: GpuWords>(
        self,
        slice: &mut ArenaSlice<T, B>,
        start: usize,
        src: &[T],
    ) -> ArenaResult<(), B> {
        let element = (size_of::<T>(), align_of::<T>());
        self.write_bytes(
            &mut slice.place,
            slice.len,
            element,
            start,
            bytemuck::cast_slice(src),
        )
    }

    /// [`Arena::read`] on this stream.
    ///
    /// ```
    /// # let mut arena = gpu_aligned::arena::Arena::host(4096)?;
    /// let a = arena.alloc::<u8>(1)?;
    /// let mut out = [7];
    /// arena.on(&()).read(&a, &mut out)?;
    /// assert_eq!(out, [0]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`Arena::read`].
    pub fn read<T: GpuWords>(self, slice: &ArenaSlice<T, B>, dst: &mut [T]) -> ArenaResult<(), B> {
        check_len(slice.len, dst.len())?;
        self.read_range(slice, 0, dst)
    }

    /// [`Arena::read_range`] on this stream.
    ///
    /// ```
    /// # let mut arena = gpu_aligned::arena::Arena::host(4096)?;
    /// let a = arena.alloc::<u8>(3)?;
    /// let mut out = [7];
    /// arena.on(&()).read_range(&a, 2, &mut out)?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`Arena::read_range`].
    pub fn read_range<T: GpuWords>(
        self,
        slice: &ArenaSlice<T, B>,
        start: usize,
        dst: &mut [T],
    ) -> ArenaResult<(), B> {
        let element = (size_of::<T>(), align_of::<T>());
        self.read_bytes(
            &slice.place,
            slice.len,
            element,
            start,
            bytemuck::cast_slice_mut(dst),
        )
    }

    /// [`Arena::to_vec`] on this stream.
    ///
    /// ```
    /// # let mut arena = gpu_aligned::arena::Arena::host(4096)?;
    /// let a = arena.alloc::<u8>(2)?;
    /// assert_eq!(arena.on(&()).to_vec(&a)?, [0, 0]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`Arena::to_vec`].
    pub fn to_vec<T: GpuWords>(self, slice: &ArenaSlice<T, B>) -> ArenaResult<Vec<T>, B> {
        // Checked before the `Vec` is made, so a forged length cannot ask for
        // a huge allocation.
        self.arena.element_span(slice, 0, slice.len)?;
        let mut out = alloc_crate::vec![T::zeroed(); slice.len];
        self.read(slice, &mut out)?;
        Ok(out)
    }

    /// [`Arena::zero`] on this stream.
    ///
    /// ```
    /// # let mut arena = gpu_aligned::arena::Arena::host(4096)?;
    /// let mut a = arena.alloc::<u8>(2)?;
    /// arena.on(&()).zero(&mut a)?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`Arena::zero`].
    pub fn zero<T: GpuWords>(self, slice: &mut ArenaSlice<T, B>) -> ArenaResult<(), B> {
        let dst = self.arena.element_span(slice, 0, slice.len)?;
        if slice.place.is_empty() {
            return Ok(());
        }
        let array = slice.span();
        // SAFETY: as in `write_range`.
        unsafe {
            self.arena
                .backend
                .zero(self.stream, &mut slice.place.tracking, array, dst)
        }
        .map_err(ArenaError::Backend)
    }

    /// [`Arena::copy`] on this stream.
    ///
    /// ```
    /// # let mut arena = gpu_aligned::arena::Arena::host(4096)?;
    /// let a = arena.alloc_from(&[7u8])?;
    /// let mut b = arena.alloc::<u8>(1)?;
    /// arena.on(&()).copy(&a, &mut b)?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`Arena::copy`].
    pub fn copy<T: GpuWords>(
        self,
        src: &ArenaSlice<T, B>,
        dst: &mut ArenaSlice<T, B>,
    ) -> ArenaResult<(), B> {
        check_len(dst.len, src.len)?;
        let from = self.arena.element_span(src, 0, src.len)?;
        let to = self.arena.element_span(dst, 0, dst.len)?;
        // The backend's tracking spans whole arrays.
        if from != src.span() || to != dst.span() {
            return Err(ArenaError::OutsideBuffer);
        }
        // Two empty arrays (one length): nothing to copy, and no bytes for
        // the backend to track.
        if src.place.is_empty() {
            return Ok(());
        }
        // SAFETY: `from` and `to` are the whole bytes of two live arrays
        // inside the buffer (checked by `element_span`), distinct because
        // `&mut dst` cannot alias `&src`, of one length (same `T`, same
        // `len`); `&src` keeps the first from being written, `&mut dst`
        // gives us the second alone.
        unsafe {
            self.arena.backend.copy(
                self.stream,
                &src.place.tracking,
                from,
                &mut dst.place.tracking,
                to,
            )
        }
        .map_err(ArenaError::Backend)
    }

    /// Copies `src` into whole elements of the array of `len` elements of
    /// `(size, align)` at `place`, from element `start` on: every write
    /// goes through here, checked by [`Arena::element_span`]'s check.
    pub(crate) fn write_bytes(
        self,
        place: &mut Place<B>,
        len: usize,
        element: (usize, usize),
        start: usize,
        src: &[u8],
    ) -> ArenaResult<(), B> {
        let count = src.len() / element.0.max(1);
        let dst = self.arena.place_span(place, len, element, start, count)?;
        check_len(dst.len, src.len())?;
        // An empty array has no bytes for the backend to write or track.
        if place.is_empty() {
            return Ok(());
        }
        let array = place.span();
        // SAFETY: `dst` lies inside the buffer and inside the live array at
        // `place` (checked by `place_span`), which `&mut` gives us alone;
        // `src` holds exactly `dst.len` bytes.
        unsafe {
            self.arena
                .backend
                .write(self.stream, &mut place.tracking, array, dst, src)
        }
        .map_err(ArenaError::Backend)
    }

    /// Copies whole elements of the array at `place`, from element `start`
    /// on, into `dst`: every read goes through here.
    pub(crate) fn read_bytes(
        self,
        place: &Place<B>,
        len: usize,
        element: (usize, usize),
        start: usize,
        dst: &mut [u8],
    ) -> ArenaResult<(), B> {
        let count = dst.len() / element.0.max(1);
        let src = self.arena.place_span(place, len, element, start, count)?;
        check_len(src.len, dst.len())?;
        if place.is_empty() {
            return Ok(());
        }
        // SAFETY: `src` lies inside the buffer and inside the live array at
        // `place`, which `&` keeps from being written meanwhile; `dst` holds
        // exactly `src.len` bytes.
        unsafe {
            self.arena
                .backend
                .read(self.stream, &place.tracking, place.span(), src, dst)
        }
        .map_err(ArenaError::Backend)
    }
}
