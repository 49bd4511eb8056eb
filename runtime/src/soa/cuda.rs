//! Launching a kernel over a structure of arrays on a CUDA device, with
//! every column tracked as a written kernel argument.

use super::{GpuSoa, Soa};
use crate::arena::{Arena, ArenaError, ArenaResult, ArenaSlice};
use crate::backend::cuda::{CudaBackend, CudaError};
use crate::backend::Backend;
use crate::layout::GpuAligned;
use alloc_crate::boxed::Box;
use alloc_crate::vec::Vec;
use cudarc::driver::{CudaStream, CudaViewMut, DevicePtrMut, SyncOnDrop};

/// A backend whose arrays have writable device views: the CUDA backend.
#[doc(hidden)]
pub trait DeviceBackend: Backend + Sized {
    /// `column` as a writable device view ([`Arena::view_mut`]).
    fn view_mut<'a, F: GpuAligned>(
        arena: &'a Arena<Self>,
        column: &'a mut ArenaSlice<F, Self>,
    ) -> ArenaResult<Box<dyn WritableView + 'a>, Self>;
}

impl DeviceBackend for CudaBackend {
    fn view_mut<'a, F: GpuAligned>(
        arena: &'a Arena<Self>,
        column: &'a mut ArenaSlice<F, Self>,
    ) -> ArenaResult<Box<dyn WritableView + 'a>, Self> {
        Ok(Box::new(arena.view_mut(column)?))
    }
}

/// A writable device view, whatever its element type.
#[doc(hidden)]
pub trait WritableView {
    /// Makes `stream` wait for the column's earlier reads and writes; the
    /// guard records a write of it on `stream` when dropped.
    fn begin_write<'s>(&'s mut self, stream: &'s CudaStream) -> SyncOnDrop<'s>;
}

impl<F> WritableView for CudaViewMut<'_, F> {
    fn begin_write<'s>(&'s mut self, stream: &'s CudaStream) -> SyncOnDrop<'s> {
        self.device_ptr_mut(stream).1
    }
}

impl Arena<CudaBackend> {
    /// Runs `launch` with the kernel's view of `soa` ([`GpuSoa::View`]),
    /// tracking every column as a kernel argument that writes it would
    /// be: `stream` first waits for the columns' earlier reads and
    /// writes on any stream, and after `launch` a write of each column
    /// is recorded on `stream`. A read on another stream then waits for
    /// the kernel, and a dropped column is not reused before it ends.
    /// `launch` must enqueue its work on `stream`.
    ///
    /// ```no_run
    /// use gpu_aligned::arena::Arena;
    /// use gpu_aligned::backend::cuda::cudarc::driver::{CudaContext, LaunchConfig, PushKernelArg};
    /// use gpu_aligned::backend::cuda::cudarc::nvrtc::compile_ptx;
    /// use gpu_aligned::header::CudaHeader;
    ///
    /// #[derive(Clone, Copy, gpu_aligned::GpuSoa)]
    /// struct Hit { x: f32, id: u32 }
    ///
    /// let context = CudaContext::new(0)?;
    /// let (s1, s2) = (context.new_stream()?, context.new_stream()?);
    /// let mut header = CudaHeader::new();
    /// header.add_soa::<Hit>()?;
    /// let source = format!(
    ///     "{}\nextern \"C\" __global__ void bump(Hit_soa v) {{ \
    ///      unsigned long long i = blockIdx.x * blockDim.x + threadIdx.x; \
    ///      if (i < v.len) v.x[i] += 1.0f; }}",
    ///     header.render()
    /// );
    /// let module = context.load_module(compile_ptx(source)?)?;
    /// let bump = module.load_function("bump")?;
    ///
    /// let mut arena = Arena::device(&s1, 1 << 20)?;
    /// let mut hits = arena.alloc_soa::<Hit>(1000)?;
    /// arena.launch_soa(&mut hits, &s2, |view| {
    ///     let mut launch = s2.launch_builder(&bump); // not the arena's stream
    ///     launch.arg(view);
    ///     // SAFETY: `bump` takes one `Hit_soa`, laid out as the view.
    ///     unsafe { launch.launch(LaunchConfig::for_num_elems(1000)) }.map(|_| ())
    /// })?;
    /// let after = arena.read_soa(&hits)?; // on s1: waits for the kernel on s2
    /// assert!(after.iter().all(|hit| hit.x == 1.0));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`ArenaError::Handle`] if a column is not this arena's;
    /// [`CudaError::ForeignStream`]
    /// for a stream of another context; a backend error after a sticky
    /// fault. `launch` is not called then. Its own error (a cudarc
    /// `DriverError`, say) comes back converted, in the same `Result`.
    pub fn launch_soa<T: GpuSoa, R, E>(
        &self,
        soa: &mut Soa<T, CudaBackend>,
        stream: &CudaStream,
        launch: impl FnOnce(&T::View) -> Result<R, E>,
    ) -> ArenaResult<R, CudaBackend>
    where
        ArenaError<CudaError>: From<E>,
    {
        // cudarc records a write event only on a stream of the event's own
        // context, and reports a failure to that stream's context, not
        // ours: on a foreign stream the kernel would go untracked, and the
        // columns could be read or handed out again under it.
        self.backend()
            .same_context(stream)
            .map_err(ArenaError::Backend)?;
        let view = self.soa_view(soa)?;
        let mut views = T::columns_mut(&mut soa.columns)
            .into_iter()
            .map(|column| column.view_mut(self))
            .collect::<ArenaResult<Vec<_>, CudaBackend>>()?;
        let writes: Vec<SyncOnDrop<'_>> = views
            .iter_mut()
            .map(|view| view.begin_write(stream))
            .collect();
        let result = launch(&view);
        // Dropping the guards records each column's write on `stream`,
        // after what `launch` enqueued (also after a failed launch: what it
        // enqueued before failing is still ordered).
        drop(writes);
        Ok(result?)
    }
}
