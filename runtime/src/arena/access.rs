//! The verbs that move an array's bytes on the backend's stream, and the one check of a range
//! they share, [`Arena::part`].

use alloc_crate::vec::Vec;
use bytemuck::Zeroable;
use core::mem::{align_of, size_of};
use core::ops::{Bound, RangeBounds};

use super::handle::Shape;
use super::{Arena, ArenaArray, ArenaError, ArenaResult, ArenaSlice, Place, TypedArray, SEALED};
use crate::align::offset_of;
use crate::backend::{Backend, Rows, Span};
use crate::{GpuField, GpuWords};

/// `range` over a sequence of `len` as its start and its count.
pub(crate) fn bounds<E>(
    range: &impl RangeBounds<usize>,
    len: usize,
) -> Result<(usize, usize), ArenaError<E>> {
    let start = match range.start_bound() {
        Bound::Included(&start) => Some(start),
        Bound::Excluded(&start) => start.checked_add(1),
        Bound::Unbounded => Some(0),
    };
    let end = match range.end_bound() {
        Bound::Included(&end) => end.checked_add(1),
        Bound::Excluded(&end) => Some(end),
        Bound::Unbounded => Some(len),
    };
    match (start, end) {
        (Some(start), Some(end)) if start <= end && end <= len => Ok((start, end - start)),
        _ => Err(ArenaError::OutOfRange {
            start: start.unwrap_or(usize::MAX),
            end: end.unwrap_or(usize::MAX),
            array_len: len,
        }),
    }
}

pub(super) fn check_len<E>(expected: usize, found: usize) -> Result<(), ArenaError<E>> {
    let mismatch = ArenaError::LengthMismatch { expected, found };
    (expected == found).then_some(()).ok_or(mismatch)
}

/// What a range reaches: `span` (row padding included), its rows, the elements it holds.
#[derive(Clone, Copy, Debug)]
pub(super) struct Part {
    pub(super) span: Span,
    pub(super) rows: Option<Rows>,
    pub(super) elements: usize,
}

impl Part {
    fn flat(span: Span, elements: usize) -> Part {
        Part {
            span,
            rows: None,
            elements,
        }
    }
}

impl<B: Backend> Arena<B> {
    /// Elements `start .. start + count` of `slice`, checked.
    pub(super) fn element_span<T>(
        &self,
        slice: &ArenaSlice<T, B>,
        start: usize,
        count: usize,
    ) -> ArenaResult<Span, B> {
        let element = (size_of::<T>(), align_of::<T>());
        self.place_span(&slice.place, slice.len, element, start, count)
    }

    /// `range` of `array`, checked: live, inside its bytes and the buffer, every element aligned.
    #[inline(always)]
    pub(super) fn part<A: TypedArray<B>>(
        &self,
        array: &A,
        range: impl RangeBounds<usize>,
    ) -> ArenaResult<Part, B> {
        let place = array.place(SEALED);
        let element = (size_of::<A::Element>(), align_of::<A::Element>());
        // Each arm checks the handle once.
        match array.shape(SEALED) {
            Shape::Flat { len } => {
                let (start, count) = bounds(&range, len)?;
                let span = self.place_span(place, len, element, start, count)?;
                Ok(Part::flat(span, count))
            }
            Shape::Rows {
                width,
                height,
                pitch,
            } => {
                self.check_place(place)?;
                let (first, count) = bounds(&range, height)?;
                let elements = width.checked_mul(count).ok_or(ArenaError::OutsideBuffer)?;
                let array = place.span();
                if place.is_empty() || count == 0 {
                    return Ok(Part::flat(Span { len: 0, ..array }, elements));
                }
                let shape = (width, height, pitch);
                let rows = self.rows_span(place, shape, element, first, count)?;
                // The last row's padding must lie inside the array too.
                let len = pitch.checked_mul(count).ok_or(ArenaError::OutsideBuffer)?;
                let span = Span::new(rows.offset, len);
                match (span.end(), array.end()) {
                    (Some(end), Some(array_end)) if end <= array_end => {}
                    _ => return Err(ArenaError::OutsideBuffer),
                }
                Ok(Part {
                    span,
                    rows: Some(rows),
                    elements,
                })
            }
        }
    }

    /// [`element_span`](Arena::element_span) of an element `(size, align)`.
    #[inline(always)]
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
        bounds(&(start..start.saturating_add(count)), len)?;
        if place.is_empty() {
            // Only a forged length holds elements here.
            if len.checked_mul(size) != Some(0) {
                return Err(ArenaError::OutsideBuffer);
            }
            return Ok(Span { offset: 0, len: 0 });
        }
        match len.checked_mul(size) {
            Some(bytes) if bytes <= allocation.size() => {}
            _ => return Err(ArenaError::OutsideBuffer),
        }
        let span = Span::new(allocation.offset() + offset_of(start * size), count * size);
        self.aligned_span(span, align)
    }

    /// `span` if it lies inside the buffer and starts aligned to `align`.
    #[inline(always)]
    pub(super) fn aligned_span(&self, span: Span, align: usize) -> ArenaResult<Span, B> {
        if !span.within(self.backend.len()) {
            return Err(ArenaError::OutsideBuffer);
        }
        let address = self.address(span.offset)?;
        // A mask, not a division, for the powers of two; never divides by 0.
        let misaligned = match align.is_power_of_two() {
            true => address & (offset_of(align) - 1) != 0,
            false => address.checked_rem(offset_of(align)) != Some(0),
        };
        if misaligned {
            return Err(ArenaError::Misaligned { address, align });
        }
        Ok(span)
    }

    /// The address of byte `offset` of the buffer.
    pub(super) fn address(&self, offset: u64) -> ArenaResult<u64, B> {
        let base = self.backend.base_address();
        base.checked_add(offset).ok_or(ArenaError::AddressOverflow)
    }

    /// The address of a structure of arrays' column of exactly `len` elements.
    pub(crate) fn column_address(
        &self,
        column: &dyn ArenaArray<B>,
        len: usize,
        field: &GpuField,
    ) -> ArenaResult<u64, B> {
        let place = column.place(SEALED);
        self.check_place(place)?;
        if len.checked_mul(field.size) != Some(place.bytes) {
            let (expected, found) = (len, place.bytes.checked_div(field.size).unwrap_or(0));
            return Err(ArenaError::LengthMismatch { expected, found });
        }
        let span = self.place_span(place, len, (field.size, field.align), 0, len)?;
        self.address(span.offset)
    }

    /// Copies `src` into elements `range` of the array (rows, packed, for a pitched one).
    ///
    /// ```
    /// # let mut arena = gpu_aligned::arena::Arena::host(1 << 16)?;
    /// let mut a = arena.alloc::<u32>(4)?;
    /// arena.write(&mut a, .., &[1, 2, 3, 4])?;
    /// arena.write(&mut a, 2.., &[7, 8])?;
    /// assert_eq!(arena.to_vec(&a)?, [1, 2, 7, 8]);
    /// let mut image = arena.alloc_pitched::<u16>(3, 2)?;
    /// arena.write(&mut image, 1..2, &[4, 5, 6])?; // the second row
    /// assert_eq!(arena.to_vec(&image)?, [0, 0, 0, 4, 5, 6]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`ArenaError::OutOfRange`], [`ArenaError::LengthMismatch`],
    /// [`ArenaError::Handle`] for another arena's handle, [`ArenaError::Backend`].
    pub fn write<A: TypedArray<B>>(
        &self,
        array: &mut A,
        range: impl RangeBounds<usize>,
        src: &[A::Element],
    ) -> ArenaResult<(), B> {
        let part = self.part(array, range)?;
        check_len(part.elements, src.len())?;
        self.write_part(array.place_mut(SEALED), part, bytemuck::cast_slice(src))
    }

    /// Copies elements `range` (rows, packed, for a pitched array) into `dst`, and waits.
    ///
    /// ```
    /// # let mut arena = gpu_aligned::arena::Arena::host(4096)?;
    /// let a = arena.alloc_from(&[1u32, 2, 3, 4])?;
    /// let mut middle = [0; 2];
    /// arena.read(&a, 1..3, &mut middle)?;
    /// assert_eq!(middle, [2, 3]);
    /// assert!(arena.read(&a, 3..5, &mut middle).is_err());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`write`](Arena::write).
    pub fn read<A: TypedArray<B>>(
        &self,
        array: &A,
        range: impl RangeBounds<usize>,
        dst: &mut [A::Element],
    ) -> ArenaResult<(), B> {
        let part = self.part(array, range)?;
        check_len(part.elements, dst.len())?;
        self.read_part(array.place(SEALED), part, bytemuck::cast_slice_mut(dst))
    }

    /// The whole array (rows packed), copied into a new `Vec`.
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
    pub fn to_vec<A: TypedArray<B>>(&self, array: &A) -> ArenaResult<Vec<A::Element>, B> {
        // Checked first, so a forged length cannot ask for a huge `Vec`.
        let part = self.part(array, ..)?;
        let mut out: Vec<A::Element> = alloc_crate::vec![Zeroable::zeroed(); part.elements];
        let dst = bytemuck::cast_slice_mut(&mut out);
        self.read_part(array.place(SEALED), part, dst)?;
        Ok(out)
    }

    /// Sets every byte of the array (a pitched one's padding too) to zero.
    ///
    /// ```
    /// # let mut arena = gpu_aligned::arena::Arena::host(4096)?;
    /// let mut a = arena.alloc_from(&[1u32, 2])?;
    /// arena.zero(&mut a)?;
    /// assert_eq!(arena.to_vec(&a)?, [0, 0]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`ArenaError::Handle`], [`ArenaError::Backend`].
    pub fn zero<A: TypedArray<B>>(&self, array: &mut A) -> ArenaResult<(), B> {
        let dst = self.part(array, ..)?.span;
        let place = array.place_mut(SEALED);
        if place.is_empty() || dst.len == 0 {
            return Ok(());
        }
        let array = place.span();
        // SAFETY: `dst` lies inside the buffer and inside the live array at
        // `place` (checked by `part`), which `&mut` gives us alone.
        unsafe { self.backend.zero(&mut place.tracking, array, dst) }.map_err(ArenaError::Backend)
    }

    /// Copies flat array `src` into `dst` of the same length, on the arena's stream.
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
    /// [`ArenaError::LengthMismatch`], [`ArenaError::Handle`], [`ArenaError::Backend`].
    pub fn copy<T: GpuWords>(
        &self,
        src: &ArenaSlice<T, B>,
        dst: &mut ArenaSlice<T, B>,
    ) -> ArenaResult<(), B> {
        check_len(dst.len, src.len)?;
        let from = self.element_span(src, 0, src.len)?;
        let to = self.element_span(dst, 0, dst.len)?;
        if from != src.span() || to != dst.span() {
            return Err(ArenaError::OutsideBuffer);
        }
        if src.place.is_empty() {
            return Ok(());
        }
        // SAFETY: the whole bytes of two live arrays inside the buffer (checked by `element_span`),
        // distinct (`&mut dst` cannot alias `&src`), of one length; `&src` shares the first, `&mut
        // dst` holds the second alone.
        unsafe {
            self.backend
                .copy(&src.place.tracking, from, &mut dst.place.tracking, to)
        }
        .map_err(ArenaError::Backend)
    }

    /// Copies `src` into a structure of arrays' whole column.
    pub(crate) fn write_column(
        &self,
        place: &mut Place<B>,
        len: usize,
        field: &GpuField,
        src: &[u8],
    ) -> ArenaResult<(), B> {
        let span = self.place_span(place, len, (field.size, field.align), 0, len)?;
        check_len(span.len, src.len())?;
        self.write_part(place, Part::flat(span, len), src)
    }

    /// Copies a structure of arrays' whole column into `dst`.
    pub(crate) fn read_column(
        &self,
        place: &Place<B>,
        len: usize,
        field: &GpuField,
        dst: &mut [u8],
    ) -> ArenaResult<(), B> {
        let span = self.place_span(place, len, (field.size, field.align), 0, len)?;
        check_len(span.len, dst.len())?;
        self.read_part(place, Part::flat(span, len), dst)
    }

    fn write_part(&self, place: &mut Place<B>, part: Part, src: &[u8]) -> ArenaResult<(), B> {
        if place.is_empty() || part.span.len == 0 {
            return Ok(());
        }
        let (array, tracking) = (place.span(), &mut place.tracking);
        // SAFETY: `part` lies inside the buffer and the live array at
        // `place` (checked by `part`), which `&mut` gives us alone; `src`
        // holds exactly its bytes (the caller checked the count).
        unsafe {
            match part.rows {
                None => (self.backend).write(tracking, array, part.span, src),
                Some(rows) => (self.backend).write_rows(tracking, array, rows, src),
            }
        }
        .map_err(ArenaError::Backend)
    }

    fn read_part(&self, place: &Place<B>, part: Part, dst: &mut [u8]) -> ArenaResult<(), B> {
        if place.is_empty() || part.span.len == 0 {
            return Ok(());
        }
        let (array, tracking) = (place.span(), &place.tracking);
        // SAFETY: as in `write_part`, with `&` keeping writers away.
        unsafe {
            match part.rows {
                None => (self.backend).read(tracking, array, part.span, dst),
                Some(rows) => (self.backend).read_rows(tracking, array, rows, dst),
            }
        }
        .map_err(ArenaError::Backend)
    }
}
