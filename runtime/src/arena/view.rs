//! What [`Arena::view`] and [`Arena::view_mut`] lend: typed device views
//! of part of an array ([`View`], [`ViewMut`]) for one stream, which
//! cudarc's launch builder and stream verbs take as they take its own
//! views, and the two adaptors on them. [`View::read_only`] keeps the array
//! read-only for compute-sanitizer while the view lives (NVTX permissions),
//! not only for the borrow checker on the host. `checked`
//! ([`View::checked`], [`ViewMut::checked`]) hands a kernel the array's
//! address and length (a [`KernelArray`], the header's `gpu_array<T>`,
//! whose accessors check an index) inside a [`KernelArg`].
//!
//! A view is made for the stream its kernel runs on: making it makes that
//! stream wait for the array's last uses it conflicts with on other
//! streams (nothing, on the stream of the last use), and dropping it, after
//! the launch that borrowed it, records the use (see
//! `backend::cuda::order`). Launch it on that stream: the launch builder
//! does not say which stream it launches on.

use core::fmt;
use core::marker::PhantomData;
use core::ops::Deref;
use std::sync::Arc;
use std::vec::Vec;

use cudarc::driver::{
    sys, CudaStream, DevicePtr, DevicePtrMut, DeviceRepr, DeviceSlice, LaunchArgs, PushKernelArg,
    SyncOnDrop,
};

use super::Arena;
use crate::backend::cuda::{CudaBackend, LastUses, Ordered};

/// One use of part of an array on one stream, recorded when it drops: what
/// every view and kernel argument holds.
pub(crate) struct Lent<'a> {
    pub(super) arena: &'a Arena<CudaBackend>,
    pub(super) uses: &'a LastUses,
    pub(super) ordered: Ordered,
    pub(super) stream: &'a Arc<CudaStream>,
    /// The first element's device address.
    pub(super) address: u64,
    /// Elements viewed.
    pub(super) len: usize,
}

impl Drop for Lent<'_> {
    fn drop(&mut self) {
        self.arena.backend.end_use(self.uses, &self.ordered);
    }
}

impl fmt::Debug for Lent<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Lent")
            .field("address", &format_args!("{:#x}", self.address))
            .field("len", &self.len)
            .finish_non_exhaustive()
    }
}

impl Lent<'_> {
    /// The address for cudarc's verb on `stream`: none to wait for on the
    /// view's own stream; on another, that stream first waits for the
    /// view's (which waited for the array's earlier uses), and the verb is
    /// waited for on the host once queued, as nothing records it.
    fn device_ptr<'b>(&'b self, stream: &'b CudaStream) -> (sys::CUdeviceptr, SyncOnDrop<'b>) {
        if stream.cu_stream() == self.stream.cu_stream() {
            return (self.address, SyncOnDrop::Record(None));
        }
        let joined = self
            .stream
            .record_event(None)
            .and_then(|event| stream.wait(&event));
        if joined.is_err() {
            // No event: the view's stream's work is waited for here.
            self.stream.context().record_err(self.stream.synchronize());
        }
        (self.address, SyncOnDrop::sync_stream(stream))
    }
}

/// A typed, read-only device view of part of an array, for one stream:
/// made by [`Arena::view`]. A kernel argument (`builder.arg(&view)`) and a
/// source for cudarc's stream verbs (`stream.memcpy_dtoh(&view, ..)`),
/// recorded as a read of the array when it drops. Its length is cudarc's
/// `DeviceSlice::len`.
///
/// `R` is `()`, or [`ReadOnly`] for a view made
/// [read-only](View::read_only) for the tools.
#[derive(Debug)]
pub struct View<'a, T, R = ()> {
    lent: Lent<'a>,
    /// The array's region, when it has one to mark read-only.
    region: Option<u64>,
    read_only: R,
    _element: PhantomData<&'a [T]>,
}

impl<'a, T> View<'a, T> {
    pub(super) fn new(lent: Lent<'a>, region: Option<u64>) -> Self {
        View {
            lent,
            region,
            read_only: (),
            _element: PhantomData,
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
    /// # use gpu_aligned::backend::cuda::cudarc::driver::{CudaContext, DeviceSlice};
    /// # let stream = CudaContext::new(0)?.new_stream()?;
    /// let mut arena = Arena::device(&stream, 1 << 20)?;
    /// let weights = arena.alloc::<f32>(100)?;
    /// let w = arena.view(&weights, .., &stream)?.read_only(); // pass `&w` to a kernel
    /// assert_eq!(w.len(), 100);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn read_only(self) -> View<'a, T, ReadOnly<'a>> {
        let View { lent, region, .. } = self;
        let arena = lent.arena;
        let marked = region.filter(|&address| {
            crate::backend::Buffer::enter_for_tools(&arena.backend);
            arena.pool.watch().regions.read_only_begin(address)
        });
        View {
            lent,
            region,
            read_only: ReadOnly {
                arena,
                address: marked,
            },
            _element: PhantomData,
        }
    }
}

impl<'a, T, R: Marked<'a>> View<'a, T, R> {
    /// The viewed elements as a kernel argument for the view's stream: a
    /// [`KernelArg`] whose [`KernelArray`] (address and length) a kernel
    /// takes as a `gpu_array<const T>` and indexes through the header's
    /// checked accessors. The kernel's read is recorded when the argument
    /// drops; a [read-only](View::read_only) view's array stays read-only
    /// until then.
    ///
    /// ```no_run
    /// # use gpu_aligned::arena::Arena;
    /// # use gpu_aligned::backend::cuda::cudarc::driver::CudaContext;
    /// # let stream = CudaContext::new(0)?.new_stream()?;
    /// let mut arena = Arena::device(&stream, 1 << 20)?;
    /// let weights = arena.alloc::<f32>(100)?;
    /// let argument = arena.view(&weights, .., &stream)?.checked(); // builder.arg(&argument)
    /// assert_eq!(argument.len(), 100);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn checked(self) -> KernelArg<'a, KernelArray<T>> {
        let View {
            lent, read_only, ..
        } = self;
        KernelArg {
            value: KernelArray::new(lent.address, lent.len),
            _uses: alloc_crate::vec![lent],
            _read_only: read_only.into_read_only(),
        }
    }
}

impl<T, R> DeviceSlice<T> for View<'_, T, R> {
    fn len(&self) -> usize {
        self.lent.len
    }

    fn stream(&self) -> &Arc<CudaStream> {
        self.lent.stream
    }
}

impl<T, R> DevicePtr<T> for View<'_, T, R> {
    fn device_ptr<'b>(&'b self, stream: &'b CudaStream) -> (sys::CUdeviceptr, SyncOnDrop<'b>) {
        self.lent.device_ptr(stream)
    }
}

// SAFETY: pushes the view's device address, as cudarc pushes its own
// views': a `u64` that lives as long as the borrow, the pointer a kernel's
// `const T*` parameter takes. The stream waited for the array's last write
// when the view was made; the read is recorded when it drops, after the
// launch that borrows it.
unsafe impl<'a, 'b: 'a, 'c: 'b, T, R> PushKernelArg<&'b View<'c, T, R>> for LaunchArgs<'a> {
    #[inline(always)]
    fn arg(&mut self, arg: &'b View<'c, T, R>) -> &mut Self {
        self.arg(&arg.lent.address)
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

/// A typed, writable device view of part of an array, for one stream:
/// made by [`Arena::view_mut`]. A kernel argument (`builder.arg(&mut
/// view)`) and a destination for cudarc's stream verbs
/// (`stream.memcpy_htod(&src, &mut view)`, `stream.memset_zeros(&mut
/// view)`), recorded as a write of the array when it drops. Its length is
/// cudarc's `DeviceSlice::len`.
#[derive(Debug)]
pub struct ViewMut<'a, T> {
    lent: Lent<'a>,
    _element: PhantomData<&'a mut [T]>,
}

impl<'a, T> ViewMut<'a, T> {
    pub(super) fn new(lent: Lent<'a>) -> Self {
        ViewMut {
            lent,
            _element: PhantomData,
        }
    }

    /// The viewed elements as a kernel argument written on the view's
    /// stream (a `gpu_array<T>`), as [`View::checked`] makes a read one:
    /// the kernel's write is recorded when the argument drops.
    ///
    /// ```no_run
    /// # use gpu_aligned::arena::Arena;
    /// # use gpu_aligned::backend::cuda::cudarc::driver::CudaContext;
    /// # let stream = CudaContext::new(0)?.new_stream()?;
    /// let mut arena = Arena::device(&stream, 1 << 20)?;
    /// let mut out = arena.alloc::<f32>(100)?;
    /// let argument = arena.view_mut(&mut out, .., &stream)?.checked();
    /// assert_eq!(argument.len(), 100);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn checked(self) -> KernelArg<'a, KernelArray<T>> {
        KernelArg {
            value: KernelArray::new(self.lent.address, self.lent.len),
            _uses: alloc_crate::vec![self.lent],
            _read_only: None,
        }
    }
}

impl<T> DeviceSlice<T> for ViewMut<'_, T> {
    fn len(&self) -> usize {
        self.lent.len
    }

    fn stream(&self) -> &Arc<CudaStream> {
        self.lent.stream
    }
}

impl<T> DevicePtr<T> for ViewMut<'_, T> {
    fn device_ptr<'b>(&'b self, stream: &'b CudaStream) -> (sys::CUdeviceptr, SyncOnDrop<'b>) {
        self.lent.device_ptr(stream)
    }
}

impl<T> DevicePtrMut<T> for ViewMut<'_, T> {
    fn device_ptr_mut<'b>(
        &'b mut self,
        stream: &'b CudaStream,
    ) -> (sys::CUdeviceptr, SyncOnDrop<'b>) {
        self.lent.device_ptr(stream)
    }
}

// SAFETY: pushes the view's device address, as cudarc pushes its own
// writable views': a `u64` that lives as long as the borrow. The stream
// waited for the array's last reads and write when the view was made; the
// write is recorded when it drops, after the launch that borrows it.
unsafe impl<'a, 'b: 'a, 'c: 'b, T> PushKernelArg<&'b mut ViewMut<'c, T>> for LaunchArgs<'a> {
    #[inline(always)]
    fn arg(&mut self, arg: &'b mut ViewMut<'c, T>) -> &mut Self {
        self.arg(&arg.lent.address)
    }
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
/// It orders the launch as the views it was made from do: the stream
/// waited for the arrays' conflicting uses on other streams when they were
/// made; when it drops, the kernel's read (or write) is recorded, so a
/// later write, read or free on another stream waits for it.
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
/// let w = arena.view(&weights, .., &s2)?.checked(); // a gpu_array<const float>
/// let o = arena.view_mut(&mut out, .., &s2)?.checked(); // a gpu_array<float>
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
    _uses: Vec<Lent<'a>>,
    _read_only: Option<ReadOnly<'a>>,
}

impl<'a, A> KernelArg<'a, A> {
    /// `value`, lent with the uses it records on drop.
    pub(crate) fn lent(value: A, uses: Vec<Lent<'a>>) -> Self {
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
