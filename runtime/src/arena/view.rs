//! What [`Arena::view`] and [`Arena::view_mut`] lend: typed device views ([`View`], [`ViewMut`])
//! for one stream, taken by cudarc's launch builder and verbs as its own, and their adaptors
//! [`View::read_only`] and `checked` (a [`KernelArray`] in a [`KernelArg`]). A view orders its
//! stream after the array's conflicting uses; dropped, it records its use (`backend::cuda::order`).

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

/// One use of part of an array on one stream, recorded when it drops.
pub(crate) struct Lent<'a> {
    pub(crate) backend: &'a CudaBackend,
    pub(crate) uses: &'a LastUses,
    pub(crate) ordered: Ordered,
    pub(crate) stream: &'a Arc<CudaStream>,
    /// The first element's device address.
    pub(crate) address: u64,
    /// Elements viewed.
    pub(crate) len: usize,
}

impl Drop for Lent<'_> {
    #[inline]
    fn drop(&mut self) {
        self.backend.end_use(self.uses, &self.ordered);
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
    /// The address for cudarc's verb on `stream`; on another stream than the view's, that one waits
    /// for the view's first, and the verb is waited for on the host, as nothing records it.
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

/// A typed, read-only device view of part of an array for one stream ([`Arena::view`]), a read
/// when dropped; `R` is `()`, or [`ReadOnly`] once [read-only](View::read_only) for the tools.
#[derive(Debug)]
pub struct View<'a, T, R = ()> {
    lent: Lent<'a>,
    /// The arena and the array's region, when it has one to mark read-only.
    region: Option<(&'a Arena<CudaBackend>, u64)>,
    read_only: R,
    _element: PhantomData<&'a [T]>,
}

impl<'a, T> View<'a, T> {
    pub(crate) fn new(lent: Lent<'a>, region: Option<(&'a Arena<CudaBackend>, u64)>) -> Self {
        View {
            lent,
            region,
            read_only: (),
            _element: PhantomData,
        }
    }

    /// The view, its whole array read-only to compute-sanitizer while it (or an argument made from
    /// it) lives, so any kernel writing it is reported; without the tool, the view unchanged.
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
        let marked = region.filter(|&(arena, address)| {
            crate::backend::Buffer::enter_for_tools(&arena.backend);
            arena.pool.watch().regions.read_only_begin(address)
        });
        View {
            lent,
            region,
            read_only: ReadOnly { marked },
            _element: PhantomData,
        }
    }
}

impl<'a, T, R: Marked<'a>> View<'a, T, R> {
    /// The viewed elements as a kernel argument, a `gpu_array<const T>` indexed through the
    /// header's checked accessors; the read is recorded (and a read-only mark ends) when it drops.
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
        let (lent, read_only) = (self.lent, self.read_only);
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

// SAFETY: pushes the view's device address, a `u64` that lives as long as
// the borrow, as cudarc pushes its own views'; the view ordered the stream
// and records the read when it drops, after the launch.
unsafe impl<'a, 'b: 'a, 'c: 'b, T, R> PushKernelArg<&'b View<'c, T, R>> for LaunchArgs<'a> {
    #[inline(always)]
    fn arg(&mut self, arg: &'b View<'c, T, R>) -> &mut Self {
        self.arg(&arg.lent.address)
    }
}

/// Keeps a [read-only](View::read_only) view's array read-only for the tools.
#[derive(Debug)]
pub struct ReadOnly<'a> {
    /// The arena and the array's address while it is marked.
    marked: Option<(&'a Arena<CudaBackend>, u64)>,
}

impl Drop for ReadOnly<'_> {
    fn drop(&mut self) {
        if let Some((arena, address)) = self.marked {
            arena.pool.watch().regions.read_only_end(address);
        }
    }
}

mod sealed {
    /// A view's read-only state, which a kernel argument keeps.
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

/// A typed, writable device view for one stream ([`Arena::view_mut`]), a write when dropped.
#[derive(Debug)]
pub struct ViewMut<'a, T> {
    lent: Lent<'a>,
    _element: PhantomData<&'a mut [T]>,
}

impl<'a, T> ViewMut<'a, T> {
    pub(crate) fn new(lent: Lent<'a>) -> Self {
        ViewMut {
            lent,
            _element: PhantomData,
        }
    }

    /// The viewed elements as a written kernel argument (`gpu_array<T>`), as [`View::checked`].
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

// SAFETY: as for `View`, the write recorded when it drops.
unsafe impl<'a, 'b: 'a, 'c: 'b, T> PushKernelArg<&'b mut ViewMut<'c, T>> for LaunchArgs<'a> {
    #[inline(always)]
    fn arg(&mut self, arg: &'b mut ViewMut<'c, T>) -> &mut Self {
        self.arg(&arg.lent.address)
    }
}

/// An array's device address and length, laid out as the header's `gpu_array<T>`, whose accessors
/// check an index ([`crate::header::write_checked_accessors`]). Lent in a [`KernelArg`].
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

    /// Whether the array has no elements.
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

// SAFETY: `#[repr(C)]` two `u64`s and a marker: the header's `gpu_array<T>`
// on a 64-bit device, no padding, no host pointer.
unsafe impl<T> DeviceRepr for KernelArray<T> {}

/// A value lent to one launch on one stream, ordering it as views do (a [`KernelArray`] from
/// `checked`, or `Arena::soa_view`'s): pass `builder.arg(&arg)`, launch on its stream, then drop.
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
    /// Dropped before the read-only mark goes.
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

// SAFETY: pushes the value's bytes, which live for `'b`, as cudarc pushes
// any `DeviceRepr`; ordered when made, recorded when dropped.
unsafe impl<'a, 'b: 'a, 'c, A: DeviceRepr> PushKernelArg<&'b KernelArg<'c, A>> for LaunchArgs<'a> {
    #[inline(always)]
    fn arg(&mut self, arg: &'b KernelArg<'c, A>) -> &mut Self {
        self.arg(&arg.value)
    }
}
