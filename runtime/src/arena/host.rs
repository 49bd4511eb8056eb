//! What only a host arena does: show its buffer, lend its arrays as `&[T]` / `&mut [T]`.

use core::mem::{align_of, size_of};

use super::{Arena, ArenaResult, ArenaSlice, Pitched};
use crate::backend::{HostAccess, HostBuffer, Span};
use crate::GpuWords;

impl Arena<HostBuffer> {
    /// The whole buffer, for inspection (`&mut`: no view is alive).
    ///
    /// ```
    /// # let mut arena = gpu_aligned::arena::Arena::host(4096)?;
    /// let mut a = arena.alloc::<u8>(2)?;
    /// arena.write(&mut a, .., &[5, 6])?;
    /// let at = arena.offset(&a)? as usize;
    /// assert_eq!(&arena.bytes()[at..at + 2], &[5, 6]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn bytes(&mut self) -> &[u8] {
        self.backend.bytes()
    }
}

impl<B: HostAccess> Arena<B> {
    /// The first element of row `row` of a pitched array, checked.
    fn row_elements<T>(&self, array: &Pitched<T, B>, row: usize) -> ArenaResult<*mut T, B> {
        let shape = (array.width, array.height, array.pitch);
        let element = (size_of::<T>(), align_of::<T>());
        let rows = self.rows_span(&array.place, shape, element, row, 1)?;
        let (offset, len) = (rows.offset, rows.row_bytes);
        Ok(self.host_elements::<T>(Span { offset, len }))
    }

    /// The array's elements.
    ///
    /// ```
    /// # let mut arena = gpu_aligned::arena::Arena::host(4096)?;
    /// let a = arena.alloc::<u32>(3)?;
    /// assert_eq!(arena.get(&a)?, &[0, 0, 0]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`ArenaError::Handle`](super::ArenaError::Handle) for another
    /// arena's handle; the range check's errors.
    pub fn get<'a, T: GpuWords>(&'a self, slice: &'a ArenaSlice<T, B>) -> ArenaResult<&'a [T], B> {
        let span = self.element_span(slice, 0, slice.len)?;
        let elements = self.host_elements::<T>(span);
        // SAFETY: `span` holds `slice.len` initialised elements of `T` (`T: Pod`) inside the
        // buffer, aligned (checked by `element_span`; dangling and aligned for none). `&slice`
        // keeps the array from being written and `&self` from being freed while the view lives.
        Ok(unsafe { core::slice::from_raw_parts(elements, slice.len) })
    }

    /// The array's elements, mutably (the array borrowed alone).
    ///
    /// ```
    /// # let mut arena = gpu_aligned::arena::Arena::host(4096)?;
    /// let mut a = arena.alloc::<u32>(2)?;
    /// let b = arena.alloc::<u32>(2)?;
    /// let read_b = arena.get(&b)?;
    /// arena.get_mut(&mut a)?.copy_from_slice(&[1, 2]);
    /// assert_eq!(read_b, &[0, 0]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// A mutable view while the array is borrowed does not compile:
    ///
    /// ```compile_fail,E0502
    /// # let mut arena = gpu_aligned::arena::Arena::host(4096).unwrap();
    /// let mut a = arena.alloc::<u32>(2).unwrap();
    /// let read_a = arena.get(&a).unwrap();
    /// arena.get_mut(&mut a).unwrap()[0] = 1;
    /// assert_eq!(read_a[0], 0);
    /// ```
    ///
    /// # Errors
    ///
    /// As [`get`](Arena::get).
    pub fn get_mut<'a, T: GpuWords>(
        &'a self,
        slice: &'a mut ArenaSlice<T, B>,
    ) -> ArenaResult<&'a mut [T], B> {
        let span = self.element_span(slice, 0, slice.len)?;
        let elements = self.host_elements::<T>(span);
        // SAFETY: as in `get`; `&mut slice` makes this the only access (live arrays never overlap).
        Ok(unsafe { core::slice::from_raw_parts_mut(elements, slice.len) })
    }

    /// The `width` elements of one row, without its padding.
    ///
    /// ```
    /// # let mut arena = gpu_aligned::arena::Arena::host(1 << 16)?;
    /// let image = arena.alloc_pitched::<f32>(100, 4)?;
    /// assert_eq!(arena.row(&image, 3)?.len(), 100);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`ArenaError::OutOfRange`](super::ArenaError::OutOfRange), or as [`Arena::get`].
    pub fn row<'a, T: GpuWords>(
        &'a self,
        array: &'a Pitched<T, B>,
        row: usize,
    ) -> ArenaResult<&'a [T], B> {
        let elements = self.row_elements(array, row)?;
        // SAFETY: as in `get`, the row checked by `rows_span`.
        Ok(unsafe { core::slice::from_raw_parts(elements, array.width) })
    }

    /// One row, mutably.
    ///
    /// ```
    /// # let mut arena = gpu_aligned::arena::Arena::host(1 << 16)?;
    /// let mut image = arena.alloc_pitched::<f32>(100, 4)?;
    /// arena.row_mut(&mut image, 3)?[99] = 1.0;
    /// assert_eq!(arena.row(&image, 3)?[99], 1.0);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`row`](Arena::row).
    pub fn row_mut<'a, T: GpuWords>(
        &'a self,
        array: &'a mut Pitched<T, B>,
        row: usize,
    ) -> ArenaResult<&'a mut [T], B> {
        let elements = self.row_elements(array, row)?;
        // SAFETY: as in `row`, and `&mut array` makes this the only access.
        Ok(unsafe { core::slice::from_raw_parts_mut(elements, array.width) })
    }
}
