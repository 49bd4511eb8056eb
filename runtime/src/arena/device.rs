//! What only a device arena does (feature `cuda`): wait for its stream, and lend its arrays as typed cudarc
//! views, the kernel arguments. A read-only view ([`Arena::view`]) borrows
//! the array shared and is recorded as a read by cudarc's launch builder; a
//! writable one ([`Arena::view_mut`]) borrows the array `&mut` and is
//! recorded as a write. Both borrow the arena shared, so a view of one
//! array can be held while another is written.

use cudarc::driver::{CudaSlice, CudaView, CudaViewMut};

use super::{Arena, ArenaArray, ArenaError, ArenaResult, ArenaSlice, Pitched, SEALED};
use crate::align::bytes_of;
use crate::backend::cuda::{CudaBackend, CudaError};
use crate::backend::Span;
use crate::{GpuField, GpuWords};

impl Arena<CudaBackend> {
    /// Waits for the arena's stream; see [`CudaBackend::synchronize`].
    ///
    /// ```no_run
    /// # use gpu_aligned::arena::Arena;
    /// # use gpu_aligned::backend::cuda::cudarc::driver::CudaContext;
    /// # let stream = CudaContext::new(0)?.default_stream();
    /// let arena = Arena::device(&stream, 1 << 20)?;
    /// arena.synchronize()?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    ///
    /// The driver's error (a kernel fault surfaces here).
    pub fn synchronize(&self) -> ArenaResult<(), CudaBackend> {
        self.backend.synchronize().map_err(ArenaError::Backend)
    }

    /// The array as a typed, read-only device view: a kernel argument for
    /// cudarc's launch builder (`builder.arg(&view)`), recorded as a read of
    /// this array alone.
    ///
    /// ```no_run
    /// # use gpu_aligned::arena::Arena;
    /// # use gpu_aligned::backend::cuda::cudarc::driver::CudaContext;
    /// # let stream = CudaContext::new(0)?.default_stream();
    /// let mut arena = Arena::device(&stream, 1 << 20)?;
    /// let a = arena.alloc::<f32>(100)?;
    /// let mut b = arena.alloc::<f32>(100)?;
    /// let view_a = arena.view(&a)?;
    /// arena.write(&mut b, &[1.0; 100])?; // another array, while `view_a` lives
    /// assert_eq!(view_a.len(), 100);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// A writable view needs the array alone; this does not compile:
    ///
    /// ```compile_fail,E0502
    /// # use gpu_aligned::arena::Arena;
    /// # use gpu_aligned::backend::cuda::cudarc::driver::CudaContext;
    /// # let stream = CudaContext::new(0).unwrap().default_stream();
    /// let mut arena = Arena::device(&stream, 1 << 20).unwrap();
    /// let mut a = arena.alloc::<f32>(100).unwrap();
    /// let read = arena.view(&a).unwrap();
    /// let write = arena.view_mut(&mut a).unwrap();
    /// drop((read, write));
    /// ```
    ///
    /// # Errors
    ///
    /// [`ArenaError::Handle`] for a handle this arena does not hold; the
    /// range check's errors for a handle whose type does not match its
    /// bytes; [`CudaError::Poisoned`] after a sticky fault.
    pub fn view<'a, T: GpuWords>(
        &'a self,
        slice: &'a ArenaSlice<T, CudaBackend>,
    ) -> ArenaResult<CudaView<'a, T>, CudaBackend> {
        self.view_range(slice, 0, slice.len)
    }

    /// Elements `start .. start + len` of the array as a read-only device
    /// view.
    ///
    /// ```no_run
    /// # use gpu_aligned::arena::Arena;
    /// # use gpu_aligned::backend::cuda::cudarc::driver::CudaContext;
    /// # let stream = CudaContext::new(0)?.default_stream();
    /// let mut arena = Arena::device(&stream, 1 << 20)?;
    /// let a = arena.alloc::<f32>(100)?;
    /// assert_eq!(arena.view_range(&a, 90, 10)?.len(), 10);
    /// assert!(arena.view_range(&a, 95, 10).is_err());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`view`](Arena::view), and [`ArenaError::OutOfRange`].
    pub fn view_range<'a, T: GpuWords>(
        &'a self,
        slice: &'a ArenaSlice<T, CudaBackend>,
        start: usize,
        len: usize,
    ) -> ArenaResult<CudaView<'a, T>, CudaBackend> {
        let span = self.element_span(slice, start, len)?;
        let array = slice.span();
        let bytes = slice
            .place
            .tracking
            .get(&self.backend, array)
            .map_err(ArenaError::Backend)?;
        typed_view(bytes, array, span, len)
    }

    /// The array as a typed, writable device view: a kernel argument
    /// (`builder.arg(&mut view)`) recorded as a write of this array alone.
    /// It needs the array, not the arena, exclusively. For part of the
    /// array, slice the view (`view.try_slice_mut(range)`).
    ///
    /// ```no_run
    /// # use gpu_aligned::arena::Arena;
    /// # use gpu_aligned::backend::cuda::cudarc::driver::CudaContext;
    /// # let stream = CudaContext::new(0)?.default_stream();
    /// let mut arena = Arena::device(&stream, 1 << 20)?;
    /// let mut a = arena.alloc::<f32>(100)?;
    /// let mut b = arena.alloc::<f32>(100)?;
    /// let write_a = arena.view_mut(&mut a)?;
    /// arena.write(&mut b, &[1.0; 100])?; // another array, while `write_a` lives
    /// assert_eq!(write_a.len(), 100);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`view`](Arena::view).
    pub fn view_mut<'a, T: GpuWords>(
        &'a self,
        slice: &'a mut ArenaSlice<T, CudaBackend>,
    ) -> ArenaResult<CudaViewMut<'a, T>, CudaBackend> {
        let len = slice.len;
        let span = self.element_span(slice, 0, len)?;
        let array = slice.span();
        let bytes = slice
            .place
            .tracking
            .get_mut(&self.backend, array)
            .map_err(ArenaError::Backend)?;
        typed_view_mut(bytes, array, span, len)
    }

    /// The whole pitched array (padding included) as a typed, read-only
    /// device view of `height * pitch / size_of::<T>()` elements: a kernel
    /// reaches row `r` at element `r * pitch / size_of::<T>()`.
    ///
    /// ```no_run
    /// # use gpu_aligned::arena::Arena;
    /// # use gpu_aligned::backend::cuda::cudarc::driver::CudaContext;
    /// # let stream = CudaContext::new(0)?.default_stream();
    /// let mut arena = Arena::device(&stream, 1 << 20)?;
    /// let image = arena.alloc_pitched::<f32>(100, 4)?;
    /// assert_eq!(arena.pitched_view(&image)?.len(), 4 * 512 / 4);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`view`](Arena::view).
    pub fn pitched_view<'a, T: GpuWords>(
        &'a self,
        array: &'a Pitched<T, CudaBackend>,
    ) -> ArenaResult<CudaView<'a, T>, CudaBackend> {
        let (span, len) = self.pitched_span(array)?;
        let whole = array.span();
        let bytes = array
            .place
            .tracking
            .get(&self.backend, whole)
            .map_err(ArenaError::Backend)?;
        typed_view(bytes, whole, span, len)
    }

    /// The whole pitched array as a typed, writable device view.
    ///
    /// ```no_run
    /// # use gpu_aligned::arena::Arena;
    /// # use gpu_aligned::backend::cuda::cudarc::driver::CudaContext;
    /// # let stream = CudaContext::new(0)?.default_stream();
    /// let mut arena = Arena::device(&stream, 1 << 20)?;
    /// let mut image = arena.alloc_pitched::<f32>(100, 4)?;
    /// assert_eq!(arena.pitched_view_mut(&mut image)?.len(), 512);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`view`](Arena::view).
    pub fn pitched_view_mut<'a, T: GpuWords>(
        &'a self,
        array: &'a mut Pitched<T, CudaBackend>,
    ) -> ArenaResult<CudaViewMut<'a, T>, CudaBackend> {
        let (span, len) = self.pitched_span(array)?;
        let whole = array.span();
        let bytes = array
            .place
            .tracking
            .get_mut(&self.backend, whole)
            .map_err(ArenaError::Backend)?;
        typed_view_mut(bytes, whole, span, len)
    }

    /// The bytes and element count of a whole pitched array, checked.
    fn pitched_span<T: GpuWords>(
        &self,
        array: &Pitched<T, CudaBackend>,
    ) -> ArenaResult<(Span, usize), CudaBackend> {
        // No rows, or rows of nothing: the view of no elements.
        if array.place.is_empty() {
            return Ok((Span { offset: 0, len: 0 }, 0));
        }
        let rows = self.rows_span(array, 0, array.height)?;
        let bytes = rows
            .pitch
            .checked_mul(rows.rows)
            .ok_or(ArenaError::OutsideBuffer)?;
        let len = bytes / core::mem::size_of::<T>();
        let span = Span {
            offset: rows.offset,
            len: bytes,
        };
        // `rows_span` checked the rows; the whole pitch of the last row must
        // fit as well.
        self.checked_start::<T>(span)?;
        if span.end() > array.span().end() {
            return Err(ArenaError::OutsideBuffer);
        }
        Ok((span, len))
    }

    /// A structure of arrays' column ([`column_address`](Arena::column_address))
    /// as its device bytes, writable: what `launch_soa` tracks a kernel's
    /// write of.
    pub(crate) fn column_bytes_mut<'a>(
        &'a self,
        column: &'a mut dyn ArenaArray<CudaBackend>,
        len: usize,
        field: &GpuField,
    ) -> ArenaResult<&'a mut CudaSlice<u8>, CudaBackend> {
        self.column_address(column, len, field)?;
        let place = column.place_mut(SEALED);
        let array = place.span();
        place
            .tracking
            .get_mut(&self.backend, array)
            .map_err(ArenaError::Backend)
    }
}

/// Elements of a checked span of an array's byte slice, viewed as `T`.
fn typed_view<'a, T>(
    bytes: &'a cudarc::driver::CudaSlice<u8>,
    array: Span,
    span: Span,
    len: usize,
) -> ArenaResult<CudaView<'a, T>, CudaBackend> {
    let outside = ArenaError::Backend(CudaError::OutOfRange {
        offset: span.offset,
        len: span.len,
    });
    // Inside the array (checked by the caller).
    let start = bytes_of(span.offset - array.offset).ok_or(outside)?;
    let end = start.checked_add(span.len).ok_or(outside)?;
    let range = bytes.try_slice(start..end).ok_or(outside)?;
    // SAFETY: the caller checked that `span` holds `len` elements of `T`
    // inside the array and starts on an address aligned for `T`; the bytes
    // are initialised and any bit pattern is a `T` (`T: Pod`).
    unsafe { range.transmute::<T>(len) }.ok_or(outside)
}

/// As [`typed_view`], writable; `span` must start at the array's start.
fn typed_view_mut<'a, T>(
    bytes: &'a mut cudarc::driver::CudaSlice<u8>,
    array: Span,
    span: Span,
    len: usize,
) -> ArenaResult<CudaViewMut<'a, T>, CudaBackend> {
    let outside = ArenaError::Backend(CudaError::OutOfRange {
        offset: span.offset,
        len: span.len,
    });
    if span.offset != array.offset || span.len > array.len {
        return Err(outside);
    }
    // SAFETY: as in `typed_view`; the view starts at the slice's start,
    // which is the array's.
    unsafe { bytes.transmute_mut::<T>(len) }.ok_or(outside)
}
