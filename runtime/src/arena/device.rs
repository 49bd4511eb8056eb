//! What only a device arena does (feature `cuda`): lend part of an array,
//! flat or pitched, as a typed device view, the kernel argument. A
//! read-only view ([`Arena::view`]) borrows the array shared and is
//! recorded as a read by cudarc's launch builder and stream verbs; a
//! writable one ([`Arena::view_mut`]) borrows the array `&mut` and is
//! recorded as a write. Both borrow the arena shared, so a view of one
//! array can be held while another is written. What they return, and its
//! adaptors, are in `view`.

use core::ops::RangeBounds;

use cudarc::driver::{CudaSlice, CudaView};

use super::access::Part;
use super::view::{View, ViewMut};
use super::{Arena, ArenaArray, ArenaError, ArenaResult, TypedArray, SEALED};
use crate::align::bytes_of;
use crate::backend::cuda::{CudaBackend, CudaError};
use crate::backend::{Buffer, Span};
use crate::GpuField;

impl Arena<CudaBackend> {
    /// Elements `range` of the array (rows, for a pitched array) as a
    /// typed, read-only device view: a kernel argument for cudarc's launch
    /// builder (`builder.arg(&view)`) or a source for its stream verbs
    /// (`stream.memcpy_dtoh(&view, ..)`), recorded as a read of this array
    /// alone on whichever stream uses it. [`View::read_only`] and
    /// [`View::checked`] adapt it.
    ///
    /// A pitched array's rows come with their padding: the view holds
    /// `rows * pitch / size_of::<T>()` elements, and a kernel reaches row
    /// `r` of it at element `r * pitch / size_of::<T>()`.
    ///
    /// ```no_run
    /// # use gpu_aligned::arena::Arena;
    /// # use gpu_aligned::backend::cuda::cudarc::driver::CudaContext;
    /// # let stream = CudaContext::new(0)?.default_stream();
    /// let mut arena = Arena::device(&stream, 1 << 20)?;
    /// let a = arena.alloc::<f32>(100)?;
    /// let mut b = arena.alloc::<f32>(100)?;
    /// let image = arena.alloc_pitched::<f32>(100, 4)?;
    /// let view_a = arena.view(&a, ..)?;
    /// arena.write(&mut b, .., &[1.0; 100])?; // another array, while `view_a` lives
    /// assert_eq!(view_a.len(), 100);
    /// assert_eq!(arena.view(&a, 90..)?.len(), 10);
    /// assert!(arena.view(&a, 95..105).is_err());
    /// assert_eq!(arena.view(&image, 1..3)?.len(), 2 * 512 / 4); // rows 1 and 2
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
    /// let read = arena.view(&a, ..).unwrap();
    /// let write = arena.view_mut(&mut a, ..).unwrap();
    /// drop((read, write));
    /// ```
    ///
    /// # Errors
    ///
    /// [`ArenaError::OutOfRange`] for a range that is reversed or not
    /// inside the array; [`ArenaError::Handle`] for a handle this arena does
    /// not hold; the range check's errors for a handle whose type does not
    /// match its bytes; [`CudaError::Poisoned`] after a sticky fault.
    pub fn view<'a, A: TypedArray<CudaBackend>>(
        &'a self,
        array: &'a A,
        range: impl RangeBounds<usize>,
    ) -> ArenaResult<View<'a, A::Element>, CudaBackend> {
        let part = self.part(array, range)?;
        let place = array.place(SEALED);
        let whole = place.span();
        let bytes = place
            .tracking
            .get(&self.backend, whole)
            .map_err(ArenaError::Backend)?;
        let (start, end) = within(part.span, whole)?;
        let outside = outside(part.span);
        let len = view_len::<A::Element>(part);
        let range = bytes.try_slice(start..end).ok_or(outside)?;
        // SAFETY: `part` checked that its span holds `len` elements of the
        // element type inside the array, starting on an address aligned for
        // it; the bytes are initialised and any bit pattern is an element
        // (`GpuWords: Pod`).
        let view: CudaView<'a, A::Element> = unsafe { range.transmute(len) }.ok_or(outside)?;
        Ok(View::new(view, self, self.region_of(array)))
    }

    /// Elements `range` of the array (rows, for a pitched array) as a
    /// typed, writable device view: a kernel argument (`builder.arg(&mut
    /// view)`) or a destination for cudarc's stream verbs
    /// (`stream.memcpy_htod(&src, &mut view)`), recorded as a write of this
    /// array alone on whichever stream uses it. It needs the array, not the
    /// arena, exclusively. [`ViewMut::checked`] adapts it.
    ///
    /// ```no_run
    /// # use gpu_aligned::arena::Arena;
    /// # use gpu_aligned::backend::cuda::cudarc::driver::{CudaContext, DeviceSlice};
    /// let context = CudaContext::new(0)?;
    /// let (s1, s2) = (context.new_stream()?, context.new_stream()?);
    /// let mut arena = Arena::device(&s1, 1 << 20)?;
    /// let mut a = arena.alloc::<f32>(100)?;
    /// let mut b = arena.alloc::<f32>(100)?;
    /// let mut tail = arena.view_mut(&mut a, 50..)?;
    /// arena.write(&mut b, .., &[1.0; 100])?; // another array, while `tail` lives
    /// assert_eq!(tail.len(), 50);
    /// s2.memcpy_htod(&[2.0f32; 50], &mut tail)?; // on s2, after the array's earlier work
    /// let back = arena.to_vec(&a)?; // on s1: waits for the copy on s2
    /// assert_eq!(back[50..], [2.0; 50]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`view`](Arena::view).
    pub fn view_mut<'a, A: TypedArray<CudaBackend>>(
        &'a self,
        array: &'a mut A,
        range: impl RangeBounds<usize>,
    ) -> ArenaResult<ViewMut<'a, A::Element>, CudaBackend> {
        let part = self.part(array, range)?;
        let place = array.place_mut(SEALED);
        let whole = place.span();
        let bytes = place
            .tracking
            .get_mut(&self.backend, whole)
            .map_err(ArenaError::Backend)?;
        let (start, end) = within(part.span, whole)?;
        let bytes = bytes
            .try_slice_mut(start..end)
            .ok_or_else(|| outside(part.span))?;
        Ok(ViewMut::new(bytes, view_len::<A::Element>(part), self))
    }

    /// The address of the array's first byte, the key of its sanitizer
    /// region, when it has one to mark read-only: a non-empty array while
    /// regions are kept.
    fn region_of(&self, array: &impl ArenaArray<CudaBackend>) -> Option<u64> {
        let place = array.place(SEALED);
        if place.is_empty() || !self.pool.watch().regions.is_active() {
            return None;
        }
        let offset = place.allocation.offset();
        self.backend.base_address().checked_add(offset)
    }

    /// A structure of arrays' column ([`column_address`](Arena::column_address))
    /// as its device bytes, writable: what `soa_view` tracks a kernel's
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

/// The elements of `T` a view of `part` holds: a flat range's own, or
/// whole rows with their padding.
fn view_len<T>(part: Part) -> usize {
    match part.rows {
        None => part.elements,
        Some(_) => part.span.len / core::mem::size_of::<T>().max(1),
    }
}

/// `span`'s bytes as a range of the array's byte slice, whose bytes are
/// `array`.
fn within(span: Span, array: Span) -> ArenaResult<(usize, usize), CudaBackend> {
    // Inside the array (checked by `part`).
    let start = span
        .offset
        .checked_sub(array.offset)
        .and_then(bytes_of)
        .ok_or_else(|| outside(span))?;
    let end = start.checked_add(span.len).ok_or_else(|| outside(span))?;
    Ok((start, end))
}

fn outside(span: Span) -> ArenaError<CudaError> {
    ArenaError::Backend(CudaError::OutOfRange {
        offset: span.offset,
        len: span.len,
    })
}
