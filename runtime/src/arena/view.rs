//! What [`Arena::view`] and [`Arena::view_mut`] lend: typed device views
//! of part of an array ([`View`], [`ViewMut`]), which cudarc's launch
//! builder and stream verbs take as they take its own views, and the two
//! adaptors on them. [`View::read_only`] keeps the array read-only for
//! compute-sanitizer while the view lives (NVTX permissions), not only for
//! the borrow checker on the host. `checked` ([`View::checked`],
//! [`ViewMut::checked`]) hands a kernel the array's address and length (a
//! [`KernelArray`], the header's `gpu_array<T>`, whose accessors check an
//! index) inside a [`KernelArg`], which orders the launch as a view does.
//!
//! A writable view holds cudarc's byte view of its range and speaks
//! cudarc's traits (`DeviceSlice`, `DevicePtr`, `DevicePtrMut`, the launch
//! builder's `PushKernelArg`) for its elements, rather than dereferencing
//! to a typed `CudaViewMut`: cudarc narrows a writable view to a range only
//! by borrowing it, so a typed one of part of an array cannot outlive the
//! call that makes it.

use core::fmt;
use core::marker::PhantomData;
use core::ops::Deref;
use std::sync::Arc;
use std::vec::Vec;

use cudarc::driver::{
    sys, CudaStream, CudaView, CudaViewMut, DevicePtr, DevicePtrMut, DeviceRepr, DeviceSlice,
    LaunchArgs, PushKernelArg, SyncOnDrop,
};

use super::{Arena, ArenaError, ArenaResult};
use crate::backend::cuda::CudaBackend;

/// A typed, read-only device view of part of an array: made by
/// [`Arena::view`]. Dereferences to cudarc's `CudaView`, and is itself a
/// kernel argument (`builder.arg(&view)`) and a source for cudarc's stream
/// verbs (`stream.memcpy_dtoh(&view, ..)`); either way it is recorded as a
/// read of the array on the stream that uses it.
///
/// `R` is `()`, or [`ReadOnly`] for a view made
/// [read-only](View::read_only) for the tools: only such a view has work to
/// do when it drops, so a plain one's borrows end at its last use, as a
/// cudarc view's do.
#[derive(Debug)]
pub struct View<'a, T, R = ()> {
    view: CudaView<'a, T>,
    arena: &'a Arena<CudaBackend>,
    /// The array's region, when it has one to mark read-only.
    region: Option<u64>,
    read_only: R,
}

impl<'a, T> View<'a, T> {
    pub(super) fn new(
        view: CudaView<'a, T>,
        arena: &'a Arena<CudaBackend>,
        region: Option<u64>,
    ) -> Self {
        View {
            view,
            arena,
            region,
            read_only: (),
        }
    }

    /// The view, and the whole array it shows read-only for every kernel
    /// while it (or an argument made from it) lives, as far as
    /// compute-sanitizer is concerned: a kernel writing the array is
    /// reported (`... is not writable ...`) with the array's start and size.
    ///
    /// The scope is the whole process (NVTX's process-wide permissions):
    /// the view borrows the array shared, so no writable view of it can
    /// exist meanwhile, and a write from a kernel on any stream is a bug.
    /// Write access comes back when the last read-only view of the array
    /// drops. Under compute-sanitizer a launch completes before it returns,
    /// so a kernel launched with the view has run by then; without a tool
    /// attached this is the view unchanged.
    ///
    /// ```no_run
    /// # use gpu_aligned::arena::Arena;
    /// # use gpu_aligned::backend::cuda::cudarc::driver::CudaContext;
    /// # let stream = CudaContext::new(0)?.default_stream();
    /// let mut arena = Arena::device(&stream, 1 << 20)?;
    /// let weights = arena.alloc::<f32>(100)?;
    /// let w = arena.view(&weights, ..)?.read_only(); // pass `&w` to a kernel
    /// assert_eq!(w.len(), 100);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn read_only(self) -> View<'a, T, ReadOnly<'a>> {
        let View {
            view,
            arena,
            region,
            ..
        } = self;
        let marked = region.filter(|&address| {
            crate::backend::Buffer::enter_for_tools(&arena.backend);
            arena.pool.watch().regions.read_only_begin(address)
        });
        View {
            view,
            arena,
            region,
            read_only: ReadOnly {
                arena,
                address: marked,
            },
        }
    }
}

impl<'a, T, R: Marked<'a>> View<'a, T, R> {
    /// The viewed elements as a kernel argument read on `stream`: a
    /// [`KernelArg`] whose [`KernelArray`] (address and length) a kernel
    /// takes as a `gpu_array<const T>` and indexes through the header's
    /// checked accessors. The stream waits for the array's last write now;
    /// the kernel's read is recorded when the argument drops. A
    /// [read-only](View::read_only) view's array stays read-only until
    /// then.
    ///
    /// ```no_run
    /// # use gpu_aligned::arena::Arena;
    /// # use gpu_aligned::backend::cuda::cudarc::driver::CudaContext;
    /// # let stream = CudaContext::new(0)?.default_stream();
    /// let mut arena = Arena::device(&stream, 1 << 20)?;
    /// let weights = arena.alloc::<f32>(100)?;
    /// let argument = arena.view(&weights, ..)?.checked(&stream)?; // builder.arg(&argument)
    /// assert_eq!(argument.len(), 100);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`CudaError::ForeignStream`](crate::backend::cuda::CudaError::ForeignStream)
    /// for a stream of another context: cudarc could not record the
    /// kernel's use on it.
    pub fn checked(
        self,
        stream: &'a CudaStream,
    ) -> ArenaResult<KernelArg<'a, KernelArray<T>>, CudaBackend> {
        let View {
            view,
            arena,
            read_only,
            ..
        } = self;
        same_context(arena, stream)?;
        let len = view.len();
        let (address, used) = view.view_ptr(stream);
        let mut arg = KernelArg::lent(KernelArray::new(address, len), alloc_crate::vec![used]);
        arg._read_only = read_only.into_read_only();
        Ok(arg)
    }
}

impl<'a, T, R> Deref for View<'a, T, R> {
    type Target = CudaView<'a, T>;

    fn deref(&self) -> &CudaView<'a, T> {
        &self.view
    }
}

impl<T, R> DeviceSlice<T> for View<'_, T, R> {
    fn len(&self) -> usize {
        self.view.len()
    }

    fn stream(&self) -> &Arc<CudaStream> {
        self.view.stream()
    }
}

impl<T, R> DevicePtr<T> for View<'_, T, R> {
    fn device_ptr<'b>(&'b self, stream: &'b CudaStream) -> (sys::CUdeviceptr, SyncOnDrop<'b>) {
        self.view.device_ptr(stream)
    }
}

// SAFETY: pushes the cudarc view, as cudarc pushes its own: its address
// lives as long as the borrow, and its events order the launch.
unsafe impl<'a, 'b: 'a, 'c: 'b, T, R> PushKernelArg<&'b View<'c, T, R>> for LaunchArgs<'a> {
    #[inline(always)]
    fn arg(&mut self, arg: &'b View<'c, T, R>) -> &mut Self {
        self.arg(&arg.view)
    }
}

/// What keeps a [read-only](View::read_only) view's array read-only for
/// the tools: the view's last type parameter. The array is writable again
/// when the last one drops.
#[derive(Debug)]
pub struct ReadOnly<'a> {
    arena: &'a Arena<CudaBackend>,
    /// The array's address while it is marked, `None` when no tool is
    /// attached (or the array, empty, has no region).
    address: Option<u64>,
}

impl Drop for ReadOnly<'_> {
    fn drop(&mut self) {
        if let Some(address) = self.address {
            self.arena.pool.watch().regions.read_only_end(address);
        }
    }
}

mod sealed {
    /// A view's read-only state: `()` or a `ReadOnly`, which a kernel
    /// argument made from the view keeps.
    pub trait Marked<'a> {
        fn into_read_only(self) -> Option<super::ReadOnly<'a>>;
    }

    impl<'a> Marked<'a> for () {
        fn into_read_only(self) -> Option<super::ReadOnly<'a>> {
            None
        }
    }

    impl<'a> Marked<'a> for super::ReadOnly<'a> {
        fn into_read_only(self) -> Option<super::ReadOnly<'a>> {
            Some(self)
        }
    }
}

use sealed::Marked;

/// A typed, writable device view of part of an array: made by
/// [`Arena::view_mut`]. A kernel argument (`builder.arg(&mut view)`) and a
/// destination for cudarc's stream verbs (`stream.memcpy_htod(&src, &mut
/// view)`, `stream.memset_zeros(&mut view)`), recorded as a write of the
/// array on the stream that uses it. Its length is cudarc's
/// `DeviceSlice::len`.
#[derive(Debug)]
pub struct ViewMut<'a, T> {
    /// The range's bytes, with the array's events.
    bytes: CudaViewMut<'a, u8>,
    len: usize,
    arena: &'a Arena<CudaBackend>,
    _element: PhantomData<&'a mut [T]>,
}

impl<'a, T> ViewMut<'a, T> {
    /// `len` elements of `T` in `bytes`, which the caller checked hold
    /// them, aligned.
    pub(super) fn new(
        bytes: CudaViewMut<'a, u8>,
        len: usize,
        arena: &'a Arena<CudaBackend>,
    ) -> Self {
        ViewMut {
            bytes,
            len,
            arena,
            _element: PhantomData,
        }
    }

    /// The viewed elements as a kernel argument written on `stream` (a
    /// `gpu_array<T>`), as [`View::checked`] makes a read one: the stream
    /// waits for the array's last read and write now; the kernel's write is
    /// recorded when the argument drops.
    ///
    /// ```no_run
    /// # use gpu_aligned::arena::Arena;
    /// # use gpu_aligned::backend::cuda::cudarc::driver::CudaContext;
    /// # let stream = CudaContext::new(0)?.default_stream();
    /// let mut arena = Arena::device(&stream, 1 << 20)?;
    /// let mut out = arena.alloc::<f32>(100)?;
    /// let argument = arena.view_mut(&mut out, ..)?.checked(&stream)?;
    /// assert_eq!(argument.len(), 100);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`View::checked`].
    pub fn checked(
        self,
        stream: &'a CudaStream,
    ) -> ArenaResult<KernelArg<'a, KernelArray<T>>, CudaBackend> {
        same_context(self.arena, stream)?;
        let (address, used) = self.bytes.view_ptr_mut(stream);
        let uses = alloc_crate::vec![used];
        Ok(KernelArg::lent(KernelArray::new(address, self.len), uses))
    }
}

impl<T> DeviceSlice<T> for ViewMut<'_, T> {
    fn len(&self) -> usize {
        self.len
    }

    fn stream(&self) -> &Arc<CudaStream> {
        self.bytes.stream()
    }
}

impl<T> DevicePtr<T> for ViewMut<'_, T> {
    fn device_ptr<'b>(&'b self, stream: &'b CudaStream) -> (sys::CUdeviceptr, SyncOnDrop<'b>) {
        self.bytes.device_ptr(stream)
    }
}

impl<T> DevicePtrMut<T> for ViewMut<'_, T> {
    fn device_ptr_mut<'b>(
        &'b mut self,
        stream: &'b CudaStream,
    ) -> (sys::CUdeviceptr, SyncOnDrop<'b>) {
        self.bytes.device_ptr_mut(stream)
    }
}

// SAFETY: pushes the byte view, as cudarc pushes its own writable views:
// the same address (a kernel's pointer parameter has no element type), a
// borrow that lives as long as the launch's, and the array's events, which
// order the launch and record it as a write.
unsafe impl<'a, 'b: 'a, 'c: 'b, T> PushKernelArg<&'b mut ViewMut<'c, T>> for LaunchArgs<'a> {
    #[inline(always)]
    fn arg(&mut self, arg: &'b mut ViewMut<'c, T>) -> &mut Self {
        self.arg(&mut arg.bytes)
    }
}

/// `stream`, if it is of the arena's context: cudarc records an array's
/// use only on a stream of the array's own context.
fn same_context(arena: &Arena<CudaBackend>, stream: &CudaStream) -> ArenaResult<(), CudaBackend> {
    arena
        .backend
        .same_context(stream)
        .map_err(ArenaError::Backend)
}

/// An array's device address and length, laid out as the header's
/// `gpu_array<T>` (`T* ptr; unsigned long long len;`, 16 bytes): a kernel
/// argument whose accessors can check an index (see
/// [`crate::header::write_checked_accessors`]). Handed out inside a
/// [`KernelArg`], which orders the launch.
#[repr(C)]
pub struct KernelArray<T> {
    address: u64,
    len: u64,
    _element: PhantomData<fn() -> T>,
}

impl<T> KernelArray<T> {
    fn new(address: u64, len: usize) -> Self {
        KernelArray {
            address,
            len: len as u64,
            _element: PhantomData,
        }
    }

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

/// A value lent to one launch on one stream: a [`KernelArray`] made by
/// `checked` ([`View::checked`], [`ViewMut::checked`]), or a structure of
/// arrays' view made by `Arena::soa_view`. Pass it as `builder.arg(&arg)`,
/// launch on the stream it was made for, and let it drop after the launch.
///
/// It does what a cudarc view does as a kernel argument: when it is made,
/// the stream waits for the arrays' last writes (and, for a written one,
/// their last reads); when it drops, the stream's work so far is recorded
/// as a read (or a write) of them, so a later write, read or free on
/// another stream waits for the kernel. While the context has one stream
/// there are no events and it costs nothing.
///
/// A read `KernelArray` is for a `gpu_array<const T>` parameter, a written
/// one for a `gpu_array<T>`: the header gives `gpu_array<const T>` no
/// `gpu_store`.
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
/// let w = arena.view(&weights, ..)?.checked(&s2)?; // a gpu_array<const float>
/// let o = arena.view_mut(&mut out, ..)?.checked(&s2)?; // a gpu_array<float>
/// let mut launch = s2.launch_builder(&kernel);
/// launch.arg(&w).arg(&o);
/// // SAFETY: `scale` indexes each array below its `len`.
/// unsafe { launch.launch(LaunchConfig::for_num_elems(100)) }?;
/// drop((w, o)); // records the launch as the arrays' latest read and write
/// let back = arena.to_vec(&out)?; // on s1: waits for the kernel on s2
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct KernelArg<'a, A> {
    value: A,
    /// Record this launch's use of each array when dropped, before the
    /// read-only mark goes.
    _uses: Vec<SyncOnDrop<'a>>,
    _read_only: Option<ReadOnly<'a>>,
}

impl<'a, A> KernelArg<'a, A> {
    /// `value`, lent with the uses it records on drop.
    pub(crate) fn lent(value: A, uses: Vec<SyncOnDrop<'a>>) -> Self {
        KernelArg {
            value,
            _uses: uses,
            _read_only: None,
        }
    }
}

impl<A> Deref for KernelArg<'_, A> {
    type Target = A;

    fn deref(&self) -> &A {
        &self.value
    }
}

// SAFETY: pushes the value's bytes, which live as long as the argument
// (`'b`), exactly as cudarc pushes any `DeviceRepr` value; the ordering was
// done when the argument was made and is recorded when it drops, after the
// launch that borrows it.
unsafe impl<'a, 'b: 'a, 'c, A: DeviceRepr> PushKernelArg<&'b KernelArg<'c, A>> for LaunchArgs<'a> {
    #[inline(always)]
    fn arg(&mut self, arg: &'b KernelArg<'c, A>) -> &mut Self {
        self.arg(&arg.value)
    }
}
