//! [`KernelArray`]: an array as a kernel argument that carries its length,
//! for the header's checked `gpu_load(a, i)` / `gpu_store(a, i, v)`
//! (see [`crate::header::write_checked_accessors`]); and [`KernelArg`],
//! which hands one to a launch the way cudarc hands a view: the launch's
//! stream waits for the array's earlier uses, and the launch is recorded as
//! the array's latest use.

use core::fmt;
use core::marker::PhantomData;
use core::ops::Deref;
use std::sync::Arc;

use cudarc::driver::{
    CudaStream, CudaView, CudaViewMut, DevicePtr, DeviceRepr, LaunchArgs, PushKernelArg, SyncOnDrop,
};

use super::read_only::ReadOnlyView;
use super::{Arena, ArenaError, ArenaResult, ArenaSlice};
use crate::backend::cuda::CudaBackend;
use crate::GpuWords;

/// An array's device address and length, laid out as the header's
/// `gpu_array<T>` (`T* ptr; unsigned long long len;`, 16 bytes): a kernel
/// argument (`builder.arg(&array)`) whose accessors can check an index.
///
/// On its own it is a plain address, ordered after nothing: the arena
/// hands it out inside a [`KernelArg`], which orders the launch after the
/// array's other work on every stream and records the launch as the
/// array's latest use.
#[repr(C)]
pub struct KernelArray<T> {
    address: u64,
    len: u64,
    _element: PhantomData<fn() -> T>,
}

impl<T> KernelArray<T> {
    /// The first element's device address.
    pub fn address(&self) -> u64 {
        self.address
    }

    /// Number of elements.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Whether the array has no elements (an empty array's address is
    /// its arena's base, never to be dereferenced).
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

impl<T> Clone for KernelArray<T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for KernelArray<T> {}

impl<T> fmt::Debug for KernelArray<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("KernelArray")
            .field("type", &core::any::type_name::<T>())
            .field("address", &format_args!("{:#x}", self.address))
            .field("len", &self.len)
            .finish()
    }
}

// SAFETY: `#[repr(C)]`, two `u64`s and a zero-sized marker: exactly the
// bytes of the header's `gpu_array<T>` on a 64-bit device, with no padding
// and no pointer into host memory.
unsafe impl<T> DeviceRepr for KernelArray<T> {}

/// A [`KernelArray`] lent to one launch on one stream, made by
/// [`Arena::kernel_array`], [`Arena::kernel_array_mut`] or
/// [`ReadOnlyView::kernel_array`] (or from any cudarc view with
/// [`reading`](KernelArg::reading) / [`writing`](KernelArg::writing)).
/// Pass it as `builder.arg(&arg)`, launch on the stream it was made for,
/// and let it drop after the launch.
///
/// It does what a cudarc view does as a kernel argument: when it is made,
/// the stream waits for the array's last write (and, for a writing one, its
/// last read); when it drops, the stream's work so far is recorded as a
/// read (or a write) of the array, so a later write, read or free on
/// another stream waits for the kernel. While the context has one stream
/// there are no events and it costs nothing.
///
/// A reading one is for a `gpu_array<const T>` parameter, a writing one for
/// a `gpu_array<T>`: the header gives `gpu_array<const T>` no `gpu_store`.
///
/// ```no_run
/// use gpu_aligned::arena::Arena;
/// use gpu_aligned::backend::cuda::cudarc::driver::{CudaContext, LaunchConfig, PushKernelArg};
///
/// let context = CudaContext::new(0)?;
/// let (s1, s2) = (context.new_stream()?, context.new_stream()?);
/// let mut arena = Arena::device(&s1, 1 << 20)?;
/// let weights = arena.alloc::<f32>(100)?;
/// let mut out = arena.alloc::<f32>(100)?;
/// # let ptx = gpu_aligned::backend::cuda::cudarc::nvrtc::compile_ptx(
/// #     "template <typename T> struct gpu_array { T* ptr; unsigned long long len; };
/// #      extern \"C\" __global__ void scale(gpu_array<const float> w, gpu_array<float> o) {}")?;
/// # let kernel = context.load_module(ptx)?.load_function("scale")?;
/// let w = arena.kernel_array(&weights, &s2)?; // a gpu_array<const float>
/// let o = arena.kernel_array_mut(&mut out, &s2)?; // a gpu_array<float>
/// let mut launch = s2.launch_builder(&kernel);
/// launch.arg(&w).arg(&o);
/// // SAFETY: `scale` indexes each array below its `len`.
/// unsafe { launch.launch(LaunchConfig::for_num_elems(100)) }?;
/// drop((w, o)); // records the launch as the arrays' latest read and write
/// let back = arena.to_vec(&out)?; // on s1: waits for the kernel on s2
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct KernelArg<'a, T> {
    array: KernelArray<T>,
    /// Records this launch's use of the array when dropped.
    _use: SyncOnDrop<'a>,
}

impl<'a, T> KernelArg<'a, T> {
    /// The array behind `view`, read by a kernel on `stream`: the stream
    /// waits for its last write now, and a read is recorded when the
    /// argument drops.
    pub fn reading(view: CudaView<'a, T>, stream: &'a CudaStream) -> KernelArg<'a, T> {
        let len = view.len();
        KernelArg::lent(view.view_ptr(stream), len)
    }

    /// The array behind `view`, written by a kernel on `stream`: the stream
    /// waits for its last read and write now, and a write is recorded when
    /// the argument drops.
    pub fn writing(view: CudaViewMut<'a, T>, stream: &'a CudaStream) -> KernelArg<'a, T> {
        let len = view.len();
        KernelArg::lent(view.view_ptr_mut(stream), len)
    }

    /// `len` elements at the address cudarc handed out with the use it
    /// records on drop.
    fn lent((address, used): (u64, SyncOnDrop<'a>), len: usize) -> KernelArg<'a, T> {
        KernelArg {
            array: KernelArray {
                address,
                len: len as u64,
                _element: PhantomData,
            },
            _use: used,
        }
    }
}

impl<T> Deref for KernelArg<'_, T> {
    type Target = KernelArray<T>;

    fn deref(&self) -> &KernelArray<T> {
        &self.array
    }
}

// SAFETY: pushes the `KernelArray`'s 16 bytes, which live as long as the
// argument (`'b`), exactly as cudarc pushes any `DeviceRepr` value; the
// ordering was done when the argument was made and is recorded when it
// drops, after the launch that borrows it.
unsafe impl<'a, 'b: 'a, 'c, T> PushKernelArg<&'b KernelArg<'c, T>> for LaunchArgs<'a> {
    #[inline(always)]
    fn arg(&mut self, arg: &'b KernelArg<'c, T>) -> &mut Self {
        self.arg(&arg.array)
    }
}

impl Arena<CudaBackend> {
    /// The array as a kernel argument read on `stream`: a
    /// [`KernelArg`] whose [`KernelArray`] (address and length) a kernel
    /// takes as a `gpu_array<const T>` and indexes through the header's
    /// checked accessors. The stream waits for the array's last write; the
    /// kernel's read is recorded when the argument drops.
    ///
    /// ```no_run
    /// # use gpu_aligned::arena::Arena;
    /// # use gpu_aligned::backend::cuda::cudarc::driver::CudaContext;
    /// # let stream = CudaContext::new(0)?.default_stream();
    /// let mut arena = Arena::device(&stream, 1 << 20)?;
    /// let weights = arena.alloc::<f32>(100)?;
    /// let argument = arena.kernel_array(&weights, &stream)?; // builder.arg(&argument)
    /// assert_eq!(argument.len(), 100);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`view`](Arena::view); [`CudaError::ForeignStream`](crate::backend::cuda::CudaError::ForeignStream)
    /// for a stream of another context.
    pub fn kernel_array<'a, T: GpuWords>(
        &'a self,
        array: &'a ArenaSlice<T, CudaBackend>,
        stream: &'a Arc<CudaStream>,
    ) -> ArenaResult<KernelArg<'a, T>, CudaBackend> {
        self.backend
            .same_context(stream)
            .map_err(ArenaError::Backend)?;
        Ok(KernelArg::reading(self.view(array)?, stream))
    }

    /// The array as a kernel argument written on `stream` (a
    /// `gpu_array<T>`): the stream waits for the array's last read and
    /// write; the kernel's write is recorded when the argument drops.
    ///
    /// ```no_run
    /// # use gpu_aligned::arena::Arena;
    /// # use gpu_aligned::backend::cuda::cudarc::driver::CudaContext;
    /// # let stream = CudaContext::new(0)?.default_stream();
    /// let mut arena = Arena::device(&stream, 1 << 20)?;
    /// let mut out = arena.alloc::<f32>(100)?;
    /// let argument = arena.kernel_array_mut(&mut out, &stream)?;
    /// assert_eq!(argument.len(), 100);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`kernel_array`](Arena::kernel_array).
    pub fn kernel_array_mut<'a, T: GpuWords>(
        &'a self,
        array: &'a mut ArenaSlice<T, CudaBackend>,
        stream: &'a Arc<CudaStream>,
    ) -> ArenaResult<KernelArg<'a, T>, CudaBackend> {
        self.backend
            .same_context(stream)
            .map_err(ArenaError::Backend)?;
        Ok(KernelArg::writing(self.view_mut(array)?, stream))
    }
}

impl<T> ReadOnlyView<'_, T> {
    /// The viewed array as a kernel argument read on `stream` (a
    /// `gpu_array<const T>`), as [`Arena::kernel_array`] makes it. It
    /// borrows the view, so the array stays read-only for the tools until
    /// the argument (and so the launch) is done with it.
    ///
    /// ```no_run
    /// # use gpu_aligned::arena::Arena;
    /// # use gpu_aligned::backend::cuda::cudarc::driver::CudaContext;
    /// # let stream = CudaContext::new(0)?.default_stream();
    /// let mut arena = Arena::device(&stream, 1 << 20)?;
    /// let weights = arena.alloc::<f32>(100)?;
    /// let view = arena.view_read_only(&weights)?;
    /// let argument = view.kernel_array(&stream)?;
    /// assert_eq!(argument.len(), 100);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`CudaError::ForeignStream`](crate::backend::cuda::CudaError::ForeignStream)
    /// for a stream of another context.
    pub fn kernel_array<'b>(
        &'b self,
        stream: &'b Arc<CudaStream>,
    ) -> ArenaResult<KernelArg<'b, T>, CudaBackend> {
        self.arena
            .backend
            .same_context(stream)
            .map_err(ArenaError::Backend)?;
        Ok(KernelArg::lent(self.device_ptr(stream), self.len()))
    }
}
