//! One column, whatever its element type: what the structure-of-arrays
//! verbs do with each column, as an object-safe trait implemented once for
//! every [`ArenaSlice`] of a GPU element. The derive hands the columns out as
//! `&dyn Column<B>` in column order; the verbs loop over them.

use crate::arena::{Arena, ArenaError, ArenaResult, ArenaSlice, Places};
use crate::backend::Backend;
use crate::layout::GpuAligned;
use alloc_crate::vec::Vec;
use core::fmt;

/// A column seen through its bytes: implemented for every [`ArenaSlice<F,
/// B>`](ArenaSlice) of a [`GpuAligned`] `F`, and only for them (a structure
/// of arrays gives its columns' places back as one handle).
#[doc(hidden)]
pub trait Column<B: Backend>: fmt::Debug + Places<B> {
    /// The number of elements.
    fn len(&self) -> usize;
    /// Whether it has no elements.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// [`Arena::address`], which also checks that `arena` holds it.
    fn address(&self, arena: &Arena<B>) -> ArenaResult<u64, B>;
    /// Copies `bytes` (as many whole elements as the column holds) into it.
    fn write_bytes(&mut self, arena: &Arena<B>, bytes: &[u8]) -> ArenaResult<(), B>;
    /// The column's bytes.
    fn read_bytes(&self, arena: &Arena<B>) -> ArenaResult<Vec<u8>, B>;
    /// The column as a writable device view, to track a kernel that writes it.
    #[cfg(feature = "cuda")]
    fn view_mut<'a>(
        &'a mut self,
        arena: &'a Arena<B>,
    ) -> ArenaResult<alloc_crate::boxed::Box<dyn super::cuda::WritableView + 'a>, B>
    where
        B: super::cuda::DeviceBackend;
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
        if bytes.len() != size * ArenaSlice::len(self) {
            return Err(ArenaError::LengthMismatch {
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
        Ok(bytemuck::cast_slice(&arena.to_vec(self)?).to_vec())
    }

    #[cfg(feature = "cuda")]
    fn view_mut<'a>(
        &'a mut self,
        arena: &'a Arena<B>,
    ) -> ArenaResult<alloc_crate::boxed::Box<dyn super::cuda::WritableView + 'a>, B>
    where
        B: super::cuda::DeviceBackend,
    {
        B::view_mut(arena, self)
    }
}
