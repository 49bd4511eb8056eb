//! What only a device arena does (feature `cuda`): lend typed device views of its arrays.

use core::ops::RangeBounds;
use std::sync::Arc;

use cudarc::driver::CudaStream;

use super::access::Part;
use super::view::{Lent, View, ViewMut};
use super::{Arena, ArenaArray, ArenaResult, Place, TypedArray, SEALED};
use crate::backend::cuda::{Access, CudaBackend};
use crate::backend::{Buffer, Span};
use crate::GpuField;

impl Arena<CudaBackend> {
    /// Elements `range` of the array (rows with their padding, for a pitched one) as a read-only
    /// device view for work on `stream`, which waits now for the array's last write; the read is
    /// recorded when it drops. Launch on `stream`: the launch builder does not say which it uses.
    ///
    /// ```no_run
    /// # use gpu_aligned::arena::Arena;
    /// # use gpu_aligned::backend::cuda::cudarc::driver::{CudaContext, DeviceSlice};
    /// # let stream = CudaContext::new(0)?.new_stream()?;
    /// let mut arena = Arena::device(&stream, 1 << 20)?;
    /// let a = arena.alloc::<f32>(100)?;
    /// let mut b = arena.alloc::<f32>(100)?;
    /// let image = arena.alloc_pitched::<f32>(100, 4)?;
    /// let view_a = arena.view(&a, .., &stream)?;
    /// arena.write(&mut b, .., &[1.0; 100])?; // another array, while `view_a` lives
    /// assert_eq!(view_a.len(), 100);
    /// assert_eq!(arena.view(&a, 90.., &stream)?.len(), 10);
    /// assert!(arena.view(&a, 95..105, &stream).is_err());
    /// assert_eq!(arena.view(&image, 1..3, &stream)?.len(), 2 * 512 / 4); // rows 1 and 2
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
    /// let read = arena.view(&a, .., &stream).unwrap();
    /// let write = arena.view_mut(&mut a, .., &stream).unwrap();
    /// drop((read, write));
    /// ```
    ///
    /// # Errors
    ///
    /// The range check's errors;
    /// [`CudaError::ForeignStream`](crate::backend::cuda::CudaError::ForeignStream)
    /// for a stream of another context (unless [shared](crate::share) with its device), [`CudaError::Poisoned`](crate::backend::cuda::CudaError::Poisoned)
    /// after a sticky fault.
    #[inline]
    pub fn view<'a, A: TypedArray<CudaBackend>>(
        &'a self,
        array: &'a A,
        range: impl RangeBounds<usize>,
        stream: &'a Arc<CudaStream>,
    ) -> ArenaResult<View<'a, A::Element>, CudaBackend> {
        let part = self.part(array, range)?;
        let len = view_len::<A::Element>(part);
        let lent = self.lend(array.place(SEALED), part.span, len, stream, Access::Read)?;
        Ok(View::new(lent, self.region_of(array)))
    }

    /// As [`view`](Arena::view), writable: the view records a write when it drops.
    ///
    /// ```no_run
    /// # use gpu_aligned::arena::Arena;
    /// # use gpu_aligned::backend::cuda::cudarc::driver::{CudaContext, DeviceSlice};
    /// let context = CudaContext::new(0)?;
    /// let (s1, s2) = (context.new_stream()?, context.new_stream()?);
    /// let mut arena = Arena::device(&s1, 1 << 20)?;
    /// let mut a = arena.alloc::<f32>(100)?;
    /// let mut b = arena.alloc::<f32>(100)?;
    /// let mut tail = arena.view_mut(&mut a, 50.., &s2)?; // s2 waits for a's earlier work
    /// arena.write(&mut b, .., &[1.0; 100])?; // another array, while `tail` lives
    /// assert_eq!(tail.len(), 50);
    /// s2.memcpy_htod(&[2.0f32; 50], &mut tail)?;
    /// drop(tail); // records the copy as a's last write, on s2
    /// let back = arena.to_vec(&a)?; // on s1: waits for the copy on s2
    /// assert_eq!(back[50..], [2.0; 50]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`view`](Arena::view).
    #[inline]
    pub fn view_mut<'a, A: TypedArray<CudaBackend>>(
        &'a self,
        array: &'a mut A,
        range: impl RangeBounds<usize>,
        stream: &'a Arc<CudaStream>,
    ) -> ArenaResult<ViewMut<'a, A::Element>, CudaBackend> {
        let part = self.part(array, range)?;
        let len = view_len::<A::Element>(part);
        let place = array.place_mut(SEALED);
        let lent = self.lend(place, part.span, len, stream, Access::Write)?;
        Ok(ViewMut::new(lent))
    }

    /// The `len` elements at `span` of the array at `place`, used on `stream`.
    #[inline(always)]
    fn lend<'a>(
        &'a self,
        place: &'a Place<CudaBackend>,
        span: Span,
        len: usize,
        stream: &'a Arc<CudaStream>,
        access: Access,
    ) -> ArenaResult<Lent<'a>, CudaBackend> {
        let address = self.address(span.offset)?;
        let (uses, whole) = (&*place.tracking, place.span());
        let ordered = self.backend.begin_use(uses, whole, stream, access)?;
        Ok(Lent {
            backend: &self.backend,
            uses,
            ordered,
            stream,
            address,
            len,
        })
    }

    /// The array's bytes, checked live here (`share::send`).
    pub(crate) fn shared_span(
        &self,
        array: &impl ArenaArray<CudaBackend>,
    ) -> ArenaResult<Span, CudaBackend> {
        let place = array.place(SEALED);
        Ok(self.check_place(place).map(|()| place.span())?)
    }

    /// The address keying the array's sanitizer region, if it has one.
    fn region_of(&self, array: &impl ArenaArray<CudaBackend>) -> Option<(&Self, u64)> {
        let place = array.place(SEALED);
        if place.is_empty() || !self.pool.watch().regions.watching() {
            return None;
        }
        let offset = place.allocation.offset();
        Some((self, self.backend.base_address().checked_add(offset)?))
    }

    /// A structure of arrays' column, written on `stream` (`soa_view`).
    pub(crate) fn lend_column<'a>(
        &'a self,
        column: &'a mut dyn ArenaArray<CudaBackend>,
        len: usize,
        field: &GpuField,
        stream: &'a Arc<CudaStream>,
    ) -> ArenaResult<Lent<'a>, CudaBackend> {
        self.column_address(column, len, field)?;
        let place = column.place_mut(SEALED);
        self.lend(place, place.span(), len, stream, Access::Write)
    }
}

/// The elements of `T` a view of `part` holds (whole rows with padding).
fn view_len<T>(part: Part) -> usize {
    match part.rows {
        None => part.elements,
        Some(_) => part.span.len / core::mem::size_of::<T>().max(1),
    }
}
