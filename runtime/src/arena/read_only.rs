//! Read-only device views that the tools enforce: while a
//! [`ReadOnlyView`] of an array lives, compute-sanitizer reports any kernel
//! that writes the array (NVTX memory permissions), not only the Rust
//! borrow checker on the host.
//!
//! The scope is the whole process (NVTX's process-wide permissions, from
//! `nvtxMemCudaGetProcessWidePermissions`): the view borrows the array
//! shared, so no writable view of it can exist anywhere meanwhile, and a
//! write from a kernel on any stream is a bug. Write access comes back when
//! the last read-only view of the array drops. Under compute-sanitizer a
//! launch completes before it returns, so a kernel launched with the view
//! has run by then; without a tool attached this is [`Arena::view`] plus one
//! branch.

use core::ops::Deref;

use cudarc::driver::CudaView;

use super::{Arena, ArenaResult, ArenaSlice};
use crate::backend::cuda::CudaBackend;
use crate::GpuWords;

/// A read-only device view of an array that is also read-only for the
/// kernels compute-sanitizer watches, until it drops: made by
/// [`Arena::view_read_only`]. Dereferences to the cudarc view, the kernel
/// argument: `builder.arg(&*view)`.
///
/// The scope is the whole process (NVTX's process-wide permissions): the
/// view borrows the array shared, so no writable view of it can exist
/// meanwhile, and a write from a kernel on any stream is a bug. Write
/// access comes back when the last read-only view of the array drops.
#[derive(Debug)]
pub struct ReadOnlyView<'a, T> {
    view: CudaView<'a, T>,
    pub(super) arena: &'a Arena<CudaBackend>,
    /// The array's address while it is marked read-only, `None` when no
    /// tool is attached.
    marked: Option<u64>,
}

impl<'a, T> Deref for ReadOnlyView<'a, T> {
    type Target = CudaView<'a, T>;

    fn deref(&self) -> &CudaView<'a, T> {
        &self.view
    }
}

impl<T> Drop for ReadOnlyView<'_, T> {
    fn drop(&mut self) {
        if let Some(address) = self.marked {
            self.arena.pool.watch().regions.read_only_end(address);
        }
    }
}

impl Arena<CudaBackend> {
    /// [`view`](Arena::view), and the array read-only for every kernel
    /// while the view lives, as far as compute-sanitizer is concerned: a
    /// kernel writing it is reported (`... is not writable ...`) with the
    /// array's start and size.
    ///
    /// ```no_run
    /// # use gpu_aligned::arena::Arena;
    /// # use gpu_aligned::backend::cuda::cudarc::driver::CudaContext;
    /// # let stream = CudaContext::new(0)?.default_stream();
    /// let mut arena = Arena::device(&stream, 1 << 20)?;
    /// let weights = arena.alloc::<f32>(100)?;
    /// let w = arena.view_read_only(&weights)?; // pass `&*w` to a kernel
    /// assert_eq!(w.len(), 100);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`view`](Arena::view).
    pub fn view_read_only<'a, T: GpuWords>(
        &'a self,
        array: &'a ArenaSlice<T, CudaBackend>,
    ) -> ArenaResult<ReadOnlyView<'a, T>, CudaBackend> {
        let view = self.view(array)?;
        // An empty array has no region (its address is the buffer's base,
        // where another array may live): nothing to mark.
        let regions = &self.pool.watch().regions;
        let marked = if regions.is_active() && !array.is_empty() {
            let address = self.address(array)?;
            crate::backend::Buffer::enter_for_tools(&self.backend);
            regions.read_only_begin(address).then_some(address)
        } else {
            None
        };
        Ok(ReadOnlyView {
            view,
            arena: self,
            marked,
        })
    }
}
