//! The CUDA backend (feature `cuda`): an arena whose memory is ONE device
//! allocation, so every typed sub-array the allocator core carves out of it
//! starts where the core put it (a multiple of 256 bytes by default) on the
//! GPU too. It adds what only the device needs: typed views usable as kernel
//! arguments with cudarc's launch API, typed host<->device copies of a whole
//! sub-array or a sub-range of it, zero-fill, pitched 2D copies
//! (`cuMemcpy2D`, rows padded like `cuMemAllocPitch`), and driver errors as
//! typed [`CudaError`]s.
//!
//! ```no_run
//! use gpu_aligned::arena::Arena;
//! use gpu_aligned::backend::cuda::cudarc::driver::{CudaContext, LaunchConfig, PushKernelArg};
//! use gpu_aligned::backend::cuda::cudarc::nvrtc::compile_ptx;
//! use gpu_aligned::vector::float4;
//!
//! let stream = CudaContext::new(0)?.default_stream();
//! let ptx = compile_ptx(r#"extern "C" __global__ void scale(float4* p, float* w, unsigned n) {
//!     unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
//!     if (i < n) { float4 v = p[i]; v.x *= w[i]; p[i] = v; }
//! }"#)?;
//! let scale = stream.context().load_module(ptx)?.load_function("scale")?;
//!
//! let mut arena = Arena::device(&stream, 1 << 20)?;
//! let points = arena.alloc::<float4>(1000)?; // both start on 256-byte boundaries
//! let weights = arena.alloc::<f32>(1000)?;   // of the same device buffer
//! arena.upload(&points, &vec![float4::new(1.0, 2.0, 3.0, 4.0); 1000])?;
//! arena.upload(&weights, &vec![0.5; 1000])?;
//! let (p, w, n) = (arena.view(&points)?, arena.view(&weights)?, 1000u32);
//! let mut launch = stream.launch_builder(&scale);
//! launch.arg(&p).arg(&w).arg(&n);
//! // SAFETY: `scale` touches elements [0, n) of two arrays of n elements.
//! unsafe { launch.launch(LaunchConfig::for_num_elems(n)) }?;
//! assert_eq!(arena.to_vec(&points)?[999].x, 0.5);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! cudarc loads `libcuda` (and `libnvrtc`) when first used, and panics if
//! they are missing; building needs neither. Everything this module does
//! after a context exists returns errors instead.
//!
//! # After a sticky fault
//!
//! Some device faults (misaligned or illegal address, a trap, an illegal
//! instruction, ...) destroy the CUDA context: every later call in that
//! context fails, whatever it is. When the backend sees one, it records it,
//! and from then on every device operation of the arena returns
//! [`CudaError::Poisoned`] with that first fault instead of touching the
//! driver; bookkeeping (freeing handles, [`Arena::stats`]) still works, and
//! dropping the arena does not panic (cudarc records the failed free). To
//! recover, drop the arena and every other user of the context, then create
//! a new context. The safe API of this module cannot cause such a fault:
//! views are always aligned for their element type; only a kernel that
//! indexes out of bounds or reinterprets memory can (the test
//! `cuda_fault.rs` provokes one through a raw address on purpose).

use std::sync::{Arc, OnceLock};
use std::vec::Vec;

use core::mem::size_of;

use cudarc::driver::{sys, CudaSlice, CudaStream, CudaView, CudaViewMut, DriverError};

use crate::arena::{Arena, ArenaSlice, Copy2d, Pitched, DEFAULT_MIN_ALIGN, DEFAULT_PITCH_ALIGN};
use crate::backend::Backend;
use crate::GpuAligned;

pub use cudarc;

/// The start alignment `cudaMalloc`/`cuMemAlloc` documents for every
/// allocation, and the smallest base alignment the backend accepts.
pub const DRIVER_BASE_ALIGN: u64 = 256;

/// The row-pitch alignment `cuMemAllocPitch` used on an H100 (driver
/// 580.159.04): for every width tried (1 to 65,536 bytes) and element size (4,
/// 8 and 16 bytes) the pitch it returned was the width rounded up to a
/// multiple of 512. It is the arena's default, so pitched arrays of a device
/// arena follow the driver's rule.
pub const DRIVER_PITCH_ALIGN: u64 = DEFAULT_PITCH_ALIGN;

/// Driver errors after which the context is unusable: CUDA documents each as
/// leaving "the process in an inconsistent state" so that "any further CUDA
/// work will return the same error".
fn is_sticky(error: DriverError) -> bool {
    use sys::CUresult::*;
    matches!(
        error.0,
        CUDA_ERROR_ECC_UNCORRECTABLE
            | CUDA_ERROR_ILLEGAL_ADDRESS
            | CUDA_ERROR_LAUNCH_TIMEOUT
            | CUDA_ERROR_ASSERT
            | CUDA_ERROR_HARDWARE_STACK_ERROR
            | CUDA_ERROR_ILLEGAL_INSTRUCTION
            | CUDA_ERROR_MISALIGNED_ADDRESS
            | CUDA_ERROR_INVALID_ADDRESS_SPACE
            | CUDA_ERROR_INVALID_PC
            | CUDA_ERROR_LAUNCH_FAILED
            | CUDA_ERROR_CONTEXT_IS_DESTROYED
    )
}

/// Why a device operation failed.
#[derive(Debug)]
#[non_exhaustive]
pub enum CudaError {
    /// The driver refused an operation.
    Driver {
        /// What the backend was doing.
        op: &'static str,
        /// The driver's error code.
        error: DriverError,
    },
    /// An earlier sticky fault destroyed the context; the arena does no more
    /// device work (see the module docs).
    Poisoned {
        /// The fault that destroyed the context.
        first: DriverError,
    },
    /// The device buffer's start is not aligned to what the arena needs.
    BaseMisaligned {
        /// The buffer's device address.
        base: u64,
        /// The alignment required.
        required: u64,
    },
    /// A device arena of zero bytes was asked for.
    ZeroLength,
    /// A host slice's length differs from the device range it is copied to
    /// or from.
    LengthMismatch {
        /// Elements on the device side.
        device: usize,
        /// Elements on the host side.
        host: usize,
    },
    /// A sub-range does not lie inside its array.
    OutOfRange {
        /// First element of the range.
        start: usize,
        /// Elements in the range.
        len: usize,
        /// Elements in the array.
        array_len: usize,
    },
    /// The arena refused: a handle it does not hold, out of memory, a bad
    /// alignment, ...
    Arena(crate::arena::ArenaError),
}

impl core::fmt::Display for CudaError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            CudaError::Driver { op, error } => write!(f, "CUDA driver error in {op}: {error:?}"),
            CudaError::Poisoned { first } => write!(
                f,
                "the CUDA context was destroyed by an earlier fault ({first:?}); \
                 drop the arena and create a new context"
            ),
            CudaError::BaseMisaligned { base, required } => write!(
                f,
                "device buffer at {base:#x} is not aligned to {required} bytes"
            ),
            CudaError::ZeroLength => f.write_str("a device arena needs at least one byte"),
            CudaError::LengthMismatch { device, host } => write!(
                f,
                "host slice has {host} elements but the device range has {device}"
            ),
            CudaError::OutOfRange {
                start,
                len,
                array_len,
            } => write!(
                f,
                "elements {start}..{start}+{len} are not inside an array of {array_len}"
            ),
            CudaError::Arena(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for CudaError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            CudaError::Arena(e) => Some(e),
            _ => None,
        }
    }
}

impl From<crate::arena::ArenaError> for CudaError {
    fn from(e: crate::arena::ArenaError) -> Self {
        CudaError::Arena(e)
    }
}

/// Checks that a device buffer starting at `base` can hold sub-arrays whose
/// offsets are multiples of `min_align`: the base must be aligned to both
/// `min_align` and [`DRIVER_BASE_ALIGN`]. Returns the base's own alignment
/// (its largest power-of-two divisor), which the backend records.
///
/// # Errors
///
/// [`CudaError::BaseMisaligned`] if it is not.
pub fn check_base(base: u64, min_align: u64) -> Result<u64, CudaError> {
    let required = min_align.max(DRIVER_BASE_ALIGN);
    if base == 0 || base % required != 0 {
        return Err(CudaError::BaseMisaligned { base, required });
    }
    Ok(1u64 << base.trailing_zeros())
}

/// Memory for an [`Arena`] that lives on a CUDA device: one allocation,
/// owned as one `CudaSlice<u8>`, zeroed at creation. cudarc takes it from the
/// device's stream-ordered pool (`cuMemAllocAsync`) where the device has one,
/// else with `cuMemAlloc`; either way the arena never calls the driver's
/// allocator again.
#[derive(Debug)]
pub struct CudaBackend {
    buf: CudaSlice<u8>,
    stream: Arc<CudaStream>,
    base: u64,
    base_align: u64,
    fault: OnceLock<DriverError>,
}

impl CudaBackend {
    /// Allocates `len` bytes on `stream`'s device, zeroes them, and checks
    /// that the start is at least [`DRIVER_BASE_ALIGN`]-aligned.
    ///
    /// # Errors
    ///
    /// [`CudaError::ZeroLength`], [`CudaError::Driver`] if the allocation
    /// fails (out of device memory, say), [`CudaError::BaseMisaligned`] if the
    /// driver broke its alignment promise.
    pub fn new(stream: &Arc<CudaStream>, len: u64) -> Result<Self, CudaError> {
        if len == 0 {
            return Err(CudaError::ZeroLength);
        }
        let bytes = usize::try_from(len).map_err(|_| CudaError::Driver {
            op: "device allocation",
            error: DriverError(sys::CUresult::CUDA_ERROR_OUT_OF_MEMORY),
        })?;
        let buf = stream
            .alloc_zeros::<u8>(bytes)
            .map_err(|error| CudaError::Driver {
                op: "device allocation",
                error,
            })?;
        let base = {
            let (ptr, _sync) = cudarc::driver::DevicePtr::device_ptr(&buf, stream);
            ptr
        };
        let base_align = check_base(base, DRIVER_BASE_ALIGN)?;
        stream.synchronize().map_err(|error| CudaError::Driver {
            op: "zero-fill",
            error,
        })?;
        Ok(CudaBackend {
            buf,
            stream: Arc::clone(stream),
            base,
            base_align,
            fault: OnceLock::new(),
        })
    }

    /// The stream every operation of this backend is ordered on.
    pub fn stream(&self) -> &Arc<CudaStream> {
        &self.stream
    }

    /// The largest power of two dividing the device base address, recorded
    /// at creation (at least [`DRIVER_BASE_ALIGN`]; 2 MiB was seen on an H100).
    pub fn base_alignment(&self) -> u64 {
        self.base_align
    }

    /// The device address of byte 0 of the buffer.
    pub fn device_base(&self) -> u64 {
        self.base
    }

    /// The sticky fault that destroyed the context, if one was seen.
    pub fn fault(&self) -> Option<DriverError> {
        self.fault.get().copied()
    }

    /// Fails with [`CudaError::Poisoned`] once a sticky fault was seen.
    fn healthy(&self) -> Result<(), CudaError> {
        match self.fault() {
            Some(first) => Err(CudaError::Poisoned { first }),
            None => Ok(()),
        }
    }

    /// Turns a driver result into ours, remembering a sticky fault.
    fn driver<T>(&self, op: &'static str, r: Result<T, DriverError>) -> Result<T, CudaError> {
        r.map_err(|error| {
            if is_sticky(error) {
                let first = *self.fault.get_or_init(|| error);
                if first != error {
                    return CudaError::Poisoned { first };
                }
            }
            CudaError::Driver { op, error }
        })
    }

    /// Waits for all work queued on the backend's stream: kernel faults
    /// surface here (a launch itself returns success).
    ///
    /// # Errors
    ///
    /// The driver's error; a sticky one also poisons the backend.
    pub fn synchronize(&self) -> Result<(), CudaError> {
        self.healthy()?;
        let r = self.stream.synchronize();
        self.driver("synchronize", r)
    }

    fn byte_range(&self, offset: u64, len: usize) -> Result<core::ops::Range<usize>, CudaError> {
        let start = usize::try_from(offset).ok();
        let end = start.and_then(|s| s.checked_add(len));
        match (start, end) {
            (Some(s), Some(e)) if e <= self.buf.len() => Ok(s..e),
            _ => Err(CudaError::OutOfRange {
                start: start.unwrap_or(usize::MAX),
                len,
                array_len: self.buf.len(),
            }),
        }
    }

    fn bytes(&self, offset: u64, len: usize) -> Result<CudaView<'_, u8>, CudaError> {
        let range = self.byte_range(offset, len)?;
        let array_len = self.buf.len();
        self.buf.try_slice(range).ok_or(CudaError::OutOfRange {
            start: offset as usize,
            len,
            array_len,
        })
    }

    fn bytes_mut(&mut self, offset: u64, len: usize) -> Result<CudaViewMut<'_, u8>, CudaError> {
        let range = self.byte_range(offset, len)?;
        let array_len = self.buf.len();
        self.buf.try_slice_mut(range).ok_or(CudaError::OutOfRange {
            start: offset as usize,
            len,
            array_len,
        })
    }

    /// Copies `src` to the device bytes starting at `offset`.
    pub(crate) fn write_bytes(&mut self, offset: u64, src: &[u8]) -> Result<(), CudaError> {
        self.healthy()?;
        let stream = Arc::clone(&self.stream);
        let mut dst = self.bytes_mut(offset, src.len())?;
        let r = stream.memcpy_htod(src, &mut dst);
        self.driver("cuMemcpyHtoD", r)
    }

    /// Copies the device bytes starting at `offset` into `dst`, and waits for
    /// the copy.
    pub(crate) fn read_bytes(&self, offset: u64, dst: &mut [u8]) -> Result<(), CudaError> {
        self.healthy()?;
        let src = self.bytes(offset, dst.len())?;
        let r = self.stream.memcpy_dtoh(&src, dst);
        self.driver("cuMemcpyDtoH", r)?;
        self.synchronize()
    }

    /// Sets `len` device bytes starting at `offset` to zero.
    pub(crate) fn zero_bytes(&mut self, offset: u64, len: usize) -> Result<(), CudaError> {
        self.healthy()?;
        let stream = Arc::clone(&self.stream);
        let mut dst = self.bytes_mut(offset, len)?;
        let r = stream.memset_zeros(&mut dst);
        self.driver("cuMemsetD8", r)
    }

    /// A typed view of `len` elements at byte `offset`.
    ///
    /// # Safety
    ///
    /// `offset` must be a multiple of `align_of::<T>()` (the base is at least
    /// 256-aligned, so the device address then is too).
    pub(crate) unsafe fn typed<T: GpuAligned>(
        &self,
        offset: u64,
        len: usize,
    ) -> Result<CudaView<'_, T>, CudaError> {
        debug_assert_eq!(
            offset % core::mem::align_of::<T>() as u64,
            0,
            "offset {offset:#x}"
        );
        let bytes = len
            .checked_mul(core::mem::size_of::<T>())
            .ok_or(CudaError::OutOfRange {
                start: 0,
                len,
                array_len: self.buf.len(),
            })?;
        let view = self.bytes(offset, bytes)?;
        // SAFETY: `T: GpuAligned` is `Pod` (every bit pattern is a valid `T`),
        // the view holds exactly `len * size_of::<T>()` bytes, and the caller
        // promises the start is aligned for `T`.
        let typed = unsafe { view.transmute::<T>(len) };
        typed.ok_or(CudaError::OutOfRange {
            start: 0,
            len,
            array_len: self.buf.len(),
        })
    }
}

// SAFETY: `buf` is owned by the backend for its whole life and never
// replaced, so its device address and length are fixed; the bytes belong to
// this allocation alone.
unsafe impl Backend for CudaBackend {
    fn len(&self) -> u64 {
        self.buf.len() as u64
    }

    fn base_address(&self) -> u64 {
        self.base
    }
}

fn usize_of(n: u64, array_len: u64) -> Result<usize, CudaError> {
    usize::try_from(n).map_err(|_| CudaError::OutOfRange {
        start: usize::MAX,
        len: usize::MAX,
        array_len: usize::try_from(array_len).unwrap_or(usize::MAX),
    })
}

/// Byte offset of elements `start .. start + len` of `slice`, after checking
/// that they lie inside it.
fn sub_range<T>(
    arena: &Arena<CudaBackend>,
    slice: &ArenaSlice<T>,
    start: u64,
    len: u64,
) -> Result<u64, CudaError> {
    let offset = arena.offset(slice)?;
    let out_of_range = || CudaError::OutOfRange {
        start: usize::try_from(start).unwrap_or(usize::MAX),
        len: usize::try_from(len).unwrap_or(usize::MAX),
        array_len: usize::try_from(slice.len()).unwrap_or(usize::MAX),
    };
    let end = start.checked_add(len).ok_or_else(out_of_range)?;
    if end > slice.len() {
        return Err(out_of_range());
    }
    // Cannot overflow: `start <= slice.len()` and the slice fits the buffer.
    Ok(offset + start * size_of::<T>() as u64)
}

/// The device side of an arena: typed views for kernels, typed copies,
/// zero-fill and pitched 2D copies. Every operation is ordered on the
/// backend's stream; a kernel launched on that stream with a [`view`]
/// sees earlier uploads, and a later download sees its writes.
///
/// [`view`]: Arena::view
impl Arena<CudaBackend> {
    /// An arena over a fresh, zeroed device buffer of `len` bytes on
    /// `stream`'s device, with the default alignments: array starts on
    /// multiples of 256 bytes, row pitches on multiples of
    /// [`DRIVER_PITCH_ALIGN`] (what `cuMemAllocPitch` does).
    ///
    /// ```no_run
    /// use gpu_aligned::arena::Arena;
    /// use gpu_aligned::backend::cuda::cudarc::driver::CudaContext;
    /// use gpu_aligned::vector::float4;
    ///
    /// let stream = CudaContext::new(0)?.default_stream();
    /// let mut arena = Arena::device(&stream, 64 << 20)?;
    /// let points = arena.alloc::<float4>(1000)?;
    /// let weights = arena.alloc::<f32>(1000)?;
    /// arena.upload(&weights, &vec![1.0; 1000])?;
    /// // `arena.view(&points)?` and `arena.view(&weights)?` are kernel arguments.
    /// assert_eq!(arena.address(&weights)? % 256, 0);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`CudaBackend::new`].
    pub fn device(stream: &Arc<CudaStream>, len: u64) -> Result<Self, CudaError> {
        Arena::device_with_alignment(stream, len, DEFAULT_MIN_ALIGN, DRIVER_PITCH_ALIGN)
    }

    /// Like [`Arena::device`], with other alignments for array starts and row
    /// pitches (powers of two).
    ///
    /// # Errors
    ///
    /// As [`CudaBackend::new`], and [`CudaError::Arena`] for an alignment
    /// that is not a power of two or that the buffer's base lacks.
    pub fn device_with_alignment(
        stream: &Arc<CudaStream>,
        len: u64,
        min_align: u64,
        pitch_align: u64,
    ) -> Result<Self, CudaError> {
        let backend = CudaBackend::new(stream, len)?;
        Ok(Arena::with_alignment(backend, min_align, pitch_align)?)
    }

    /// Waits for the stream; see [`CudaBackend::synchronize`].
    ///
    /// # Errors
    ///
    /// The driver's error (a kernel fault surfaces here).
    pub fn synchronize(&self) -> Result<(), CudaError> {
        self.backend().synchronize()
    }

    /// The array as a typed device view: a kernel argument for cudarc's
    /// launch builder (`builder.arg(&view)`), always aligned for `T`.
    ///
    /// A kernel may write through it (cudarc's `launch` is `unsafe` for that
    /// reason). Launch on the arena's stream (`arena.backend().stream()`):
    /// the arena's copies run there too, so the kernel's writes are ordered
    /// before later downloads. cudarc records a view passed by `&` as read,
    /// not written, so a kernel on another stream must be ordered by the
    /// caller (an event, or a synchronize).
    ///
    /// The view's type is the handle's: there is no call that views bytes at
    /// an arbitrary offset as `T`, so a misaligned typed view cannot be
    /// written. This does not compile:
    ///
    /// ```compile_fail,E0308
    /// use gpu_aligned::arena::{Arena, ArenaSlice};
    /// use gpu_aligned::backend::cuda::CudaBackend;
    /// use gpu_aligned::vector::float4;
    ///
    /// fn naive_carve(arena: &Arena<CudaBackend>, bytes: &ArenaSlice<u8>) {
    ///     // 4 bytes into a byte array, viewed as float4: a fault on the GPU.
    ///     let points = arena.view_range::<float4>(bytes, 4, 1);
    /// }
    /// ```
    ///
    /// # Errors
    ///
    /// [`CudaError::Arena`] for a handle this arena does not hold;
    /// [`CudaError::Poisoned`] after a sticky fault.
    pub fn view<T: GpuAligned>(&self, slice: &ArenaSlice<T>) -> Result<CudaView<'_, T>, CudaError> {
        self.view_range(slice, 0, slice.len())
    }

    /// Elements `start .. start + len` of the array as a typed device view.
    ///
    /// # Errors
    ///
    /// As [`Arena::view`], and [`CudaError::OutOfRange`].
    pub fn view_range<T: GpuAligned>(
        &self,
        slice: &ArenaSlice<T>,
        start: u64,
        len: u64,
    ) -> Result<CudaView<'_, T>, CudaError> {
        self.backend().healthy()?;
        let offset = sub_range(self, slice, start, len)?;
        let len = usize_of(len, slice.len())?;
        // SAFETY: the arena put the array at a multiple of
        // `align_for::<T>() >= align_of::<T>()`, and `size_of::<T>()` is a
        // multiple of `align_of::<T>()`, so element `start` is aligned too.
        unsafe { self.backend().typed::<T>(offset, len) }
    }

    /// Copies `src` into the array (`src.len()` must equal its length).
    ///
    /// # Errors
    ///
    /// [`CudaError::LengthMismatch`], [`CudaError::Arena`] for a foreign
    /// handle, the driver's error, [`CudaError::Poisoned`].
    pub fn upload<T: GpuAligned>(
        &mut self,
        slice: &ArenaSlice<T>,
        src: &[T],
    ) -> Result<(), CudaError> {
        check_len(slice.len(), src.len())?;
        self.upload_range(slice, 0, src)
    }

    /// Copies `src` into elements `start .. start + src.len()` of the array.
    ///
    /// # Errors
    ///
    /// As [`Arena::upload`], and [`CudaError::OutOfRange`].
    pub fn upload_range<T: GpuAligned>(
        &mut self,
        slice: &ArenaSlice<T>,
        start: u64,
        src: &[T],
    ) -> Result<(), CudaError> {
        let offset = sub_range(self, slice, start, src.len() as u64)?;
        self.backend_mut()
            .write_bytes(offset, bytemuck::cast_slice(src))
    }

    /// Copies the array into `dst` (`dst.len()` must equal its length) and
    /// waits for the copy, so kernel faults surface here as well.
    ///
    /// # Errors
    ///
    /// As [`Arena::upload`].
    pub fn download<T: GpuAligned>(
        &self,
        slice: &ArenaSlice<T>,
        dst: &mut [T],
    ) -> Result<(), CudaError> {
        check_len(slice.len(), dst.len())?;
        self.download_range(slice, 0, dst)
    }

    /// Copies elements `start .. start + dst.len()` of the array into `dst`.
    ///
    /// # Errors
    ///
    /// As [`Arena::upload_range`].
    pub fn download_range<T: GpuAligned>(
        &self,
        slice: &ArenaSlice<T>,
        start: u64,
        dst: &mut [T],
    ) -> Result<(), CudaError> {
        let offset = sub_range(self, slice, start, dst.len() as u64)?;
        self.backend()
            .read_bytes(offset, bytemuck::cast_slice_mut(dst))
    }

    /// The array, copied into a new `Vec`.
    ///
    /// # Errors
    ///
    /// As [`Arena::download`].
    pub fn to_vec<T: GpuAligned>(&self, slice: &ArenaSlice<T>) -> Result<Vec<T>, CudaError> {
        let mut out = std::vec![T::zeroed(); usize_of(slice.len(), slice.len())?];
        self.download(slice, &mut out)?;
        Ok(out)
    }

    /// Sets every byte of the array to zero.
    ///
    /// # Errors
    ///
    /// [`CudaError::Arena`] for a foreign handle, the driver's error,
    /// [`CudaError::Poisoned`].
    pub fn zero<T: GpuAligned>(&mut self, slice: &ArenaSlice<T>) -> Result<(), CudaError> {
        let offset = self.offset(slice)?;
        let bytes = usize_of(slice.size_bytes(), slice.len())?;
        self.backend_mut().zero_bytes(offset, bytes)
    }

    /// The whole pitched array (padding included) as a typed device view of
    /// `height * pitch / size_of::<T>()` elements: a kernel reaches row `r`
    /// at element `r * pitch / size_of::<T>()`.
    ///
    /// # Errors
    ///
    /// As [`Arena::view`].
    pub fn pitched_view<T: GpuAligned>(
        &self,
        array: &Pitched<T>,
    ) -> Result<CudaView<'_, T>, CudaError> {
        self.backend().healthy()?;
        let offset = self.pitched_offset(array)?;
        let len = usize_of(array.size_bytes() / size_of::<T>() as u64, array.height())?;
        // SAFETY: the array starts at a multiple of the pitch alignment and
        // of `align_of::<T>()` (see `alloc_pitched`).
        unsafe { self.backend().typed::<T>(offset, len) }
    }

    /// Copies a packed host array (`height` rows of `width` elements, back to
    /// back) into the pitched array with one `cuMemcpy2D`.
    ///
    /// # Errors
    ///
    /// [`CudaError::LengthMismatch`] unless `src.len() == width * height`;
    /// otherwise as [`Arena::upload`].
    pub fn upload_2d<T: GpuAligned>(
        &mut self,
        array: &Pitched<T>,
        src: &[T],
    ) -> Result<(), CudaError> {
        check_len(array.width().saturating_mul(array.height()), src.len())?;
        let params = self.copy_in_params(array, src.as_ptr() as usize as u64)?;
        self.backend().copy_2d(params, Direction::HostToDevice)
    }

    /// Copies the pitched array out into a packed host array with one
    /// `cuMemcpy2D`, and waits for it.
    ///
    /// # Errors
    ///
    /// As [`Arena::upload_2d`].
    pub fn download_2d<T: GpuAligned>(
        &self,
        array: &Pitched<T>,
        dst: &mut [T],
    ) -> Result<(), CudaError> {
        check_len(array.width().saturating_mul(array.height()), dst.len())?;
        let params = self.copy_out_params(array, dst.as_mut_ptr() as usize as u64)?;
        self.backend().copy_2d(params, Direction::DeviceToHost)
    }
}

fn check_len(device: u64, host: usize) -> Result<(), CudaError> {
    if device != host as u64 {
        return Err(CudaError::LengthMismatch {
            device: usize::try_from(device).unwrap_or(usize::MAX),
            host,
        });
    }
    Ok(())
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Direction {
    HostToDevice,
    DeviceToHost,
}

impl CudaBackend {
    /// One `cuMemcpy2D` between host memory and this buffer, checked to stay
    /// inside the buffer, then waited for (the host side is a borrowed
    /// slice that must not be touched after we return).
    fn copy_2d(&self, p: Copy2d, direction: Direction) -> Result<(), CudaError> {
        self.healthy()?;
        let (device, device_pitch) = match direction {
            Direction::HostToDevice => (p.dst, p.dpitch),
            Direction::DeviceToHost => (p.src, p.spitch),
        };
        // Last byte touched on the device: (height - 1) * pitch + width.
        let reach = p
            .height
            .checked_sub(1)
            .and_then(|rows| rows.checked_mul(device_pitch))
            .and_then(|b| b.checked_add(p.width));
        let offset = device.checked_sub(self.base);
        match (offset, reach) {
            (Some(off), Some(reach)) => {
                let len = usize_of(reach, p.height)?;
                self.byte_range(off, len)?;
            }
            _ => {
                return Err(CudaError::OutOfRange {
                    start: 0,
                    len: 0,
                    array_len: self.buf.len(),
                })
            }
        }
        let host = |addr: u64| addr as usize as *mut core::ffi::c_void;
        let too_big = |_| CudaError::OutOfRange {
            start: 0,
            len: 0,
            array_len: self.buf.len(),
        };
        let mut copy = sys::CUDA_MEMCPY2D {
            srcXInBytes: 0,
            srcY: 0,
            srcMemoryType: sys::CUmemorytype::CU_MEMORYTYPE_HOST,
            srcHost: core::ptr::null(),
            srcDevice: 0,
            srcArray: core::ptr::null_mut(),
            srcPitch: usize::try_from(p.spitch).map_err(too_big)?,
            dstXInBytes: 0,
            dstY: 0,
            dstMemoryType: sys::CUmemorytype::CU_MEMORYTYPE_DEVICE,
            dstHost: core::ptr::null_mut(),
            dstDevice: 0,
            dstArray: core::ptr::null_mut(),
            dstPitch: usize::try_from(p.dpitch).map_err(too_big)?,
            WidthInBytes: usize::try_from(p.width).map_err(too_big)?,
            Height: usize::try_from(p.height).map_err(too_big)?,
        };
        match direction {
            Direction::HostToDevice => {
                copy.srcHost = host(p.src);
                copy.dstDevice = p.dst;
            }
            Direction::DeviceToHost => {
                copy.srcMemoryType = sys::CUmemorytype::CU_MEMORYTYPE_DEVICE;
                copy.srcDevice = p.src;
                copy.dstMemoryType = sys::CUmemorytype::CU_MEMORYTYPE_HOST;
                copy.dstHost = host(p.dst);
            }
        }
        let bound = self.stream.context().bind_to_thread();
        self.driver("cuCtxSetCurrent", bound)?;
        // SAFETY: the device range was checked above to lie inside `buf`;
        // the host range is the caller's slice of exactly `width * height`
        // bytes (checked by `upload_2d`/`download_2d`), borrowed until we
        // return, and we wait for the copy before returning.
        let r = unsafe { sys::cuMemcpy2DAsync_v2(&copy, self.stream.cu_stream()) }.result();
        self.driver("cuMemcpy2D", r)?;
        self.synchronize()
    }
}
