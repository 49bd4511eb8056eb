//! One column, whatever its element type: what the structure-of-arrays
//! operations do with each column, as an object-safe trait implemented once
//! for every [`ArenaSlice`] of a GPU element. The derive hands the columns
//! out as `&dyn Column<B>` in column order; the operations loop over them.

use crate::arena::{Arena, ArenaResult, ArenaSlice, Places};
use crate::backend::Backend;
use crate::layout::GpuAligned;
use alloc_crate::vec::Vec;
use core::fmt;

/// A column of a structure of arrays seen through its bytes: implemented
/// for every [`ArenaSlice<F, B>`](ArenaSlice) of a [`GpuAligned`] `F`.
///
/// ```
/// use gpu_aligned::arena::Arena;
/// use gpu_aligned::soa::Column;
///
/// let mut arena = Arena::host(4096)?;
/// let mut a = arena.alloc::<u16>(2)?;
/// let column: &mut dyn Column<_> = &mut a;
/// column.write_bytes(&arena, &[1, 0, 2, 0])?;
/// assert_eq!(column.read_bytes(&arena)?, [1, 0, 2, 0]);
/// assert_eq!(arena.to_vec(&a)?, [1, 2]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// Sealed: only the crate's arrays are columns, and a structure of arrays
/// gives them back as one handle.
pub trait Column<B: Backend>: fmt::Debug + Places<B> {
    /// The number of elements.
    fn len(&self) -> usize;
    /// Whether it has no elements.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// The address of its first element ([`Arena::address`]), which also
    /// checks that `arena` holds it.
    ///
    /// # Errors
    ///
    /// As [`Arena::address`].
    fn address(&self, arena: &Arena<B>) -> ArenaResult<u64, B>;
    /// Copies `bytes` (a whole number of elements, as many as the column
    /// holds, in the element's byte order) into the column.
    ///
    /// # Errors
    ///
    /// [`ArenaError::LengthMismatch`](crate::arena::ArenaError::LengthMismatch)
    /// for bytes of another number of elements, and as [`Arena::write`].
    fn write_bytes(&mut self, arena: &Arena<B>, bytes: &[u8]) -> ArenaResult<(), B>;
    /// The column's bytes.
    ///
    /// # Errors
    ///
    /// As [`Arena::to_vec`].
    fn read_bytes(&self, arena: &Arena<B>) -> ArenaResult<Vec<u8>, B>;
}

impl<F: GpuAligned, B: Backend> Column<B> for ArenaSlice<F, B> {
    fn len(&self) -> usize {
        ArenaSlice::len(self)
    }

    fn address(&self, arena: &Arena<B>) -> ArenaResult<u64, B> {
        arena.address(self)
    }

    fn write_bytes(&mut self, arena: &Arena<B>, bytes: &[u8]) -> ArenaResult<(), B> {
        let size = core::mem::size_of::<F>();
        if bytes.len() % size != 0 {
            return Err(crate::arena::ArenaError::LengthMismatch {
                expected: ArenaSlice::len(self),
                found: bytes.len() / size,
            });
        }
        // A copy, not a cast: `bytes` need not be aligned for `F`.
        let mut values = alloc_crate::vec![F::zeroed(); bytes.len() / size];
        bytemuck::cast_slice_mut::<F, u8>(&mut values).copy_from_slice(bytes);
        arena.write(self, &values)
    }

    fn read_bytes(&self, arena: &Arena<B>) -> ArenaResult<Vec<u8>, B> {
        let values = arena.to_vec(self)?;
        Ok(bytemuck::cast_slice(&values).to_vec())
    }
}

#[cfg(feature = "cuda")]
pub use device::{DeviceColumn, WritableView};

#[cfg(feature = "cuda")]
mod device {
    use crate::arena::{Arena, ArenaResult, ArenaSlice};
    use crate::backend::cuda::CudaBackend;
    use crate::layout::GpuAligned;
    use alloc_crate::boxed::Box;
    use cudarc::driver::{CudaStream, CudaViewMut, DevicePtrMut, SyncOnDrop};

    /// A column on a CUDA device: a writable view of it, to track a kernel
    /// that writes it. Implemented for every [`ArenaSlice<F,
    /// CudaBackend>`](ArenaSlice) of a [`GpuAligned`] `F`.
    pub trait DeviceColumn {
        /// The column as a writable device view ([`Arena::view_mut`]),
        /// whatever its element type.
        ///
        /// # Errors
        ///
        /// As [`Arena::view_mut`].
        fn view_mut<'a>(
            &'a mut self,
            arena: &'a Arena<CudaBackend>,
        ) -> ArenaResult<Box<dyn WritableView + 'a>, CudaBackend>;
    }

    impl<F: GpuAligned> DeviceColumn for ArenaSlice<F, CudaBackend> {
        fn view_mut<'a>(
            &'a mut self,
            arena: &'a Arena<CudaBackend>,
        ) -> ArenaResult<Box<dyn WritableView + 'a>, CudaBackend> {
            Ok(Box::new(arena.view_mut(self)?))
        }
    }

    /// A writable device view, whatever its element type.
    pub trait WritableView {
        /// Makes `stream` wait for the column's earlier reads and writes;
        /// the guard records a write of it on `stream` when dropped.
        fn begin_write<'s>(&'s mut self, stream: &'s CudaStream) -> SyncOnDrop<'s>;
    }

    impl<F> WritableView for CudaViewMut<'_, F> {
        fn begin_write<'s>(&'s mut self, stream: &'s CudaStream) -> SyncOnDrop<'s> {
            self.device_ptr_mut(stream).1
        }
    }
}
