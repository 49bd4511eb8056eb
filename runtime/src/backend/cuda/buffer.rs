//! The device buffer: one `cuMemAlloc` allocation, or a range of device addresses that grows in
//! place ([`CudaVm`]); the stream the arena's work goes to by default, and the first sticky fault,
//! after which the backend refuses device work.

use std::sync::{Arc, OnceLock};

use cudarc::driver::{CudaStream, DriverError};

use super::error::{is_sticky, CudaError};
use super::order::Access;
use super::plain::DeviceAllocation;
use super::vm::{CudaVm, Sharing};
use crate::align::{bytes_of, offset_of, ARRAY_ALIGN};

/// The start alignment `cudaMalloc`/`cuMemAlloc` documents for every
/// allocation, and the smallest base alignment the backend accepts.
const DRIVER_BASE_ALIGN: usize = ARRAY_ALIGN;

/// Checks that a device buffer starting at `base` can hold sub-arrays whose offsets are multiples
/// of `min_align`: the base must be aligned to both `min_align` and [`ARRAY_ALIGN`]. Returns the
/// base's own alignment (its largest power-of-two divisor), which the backend records.
///
/// ```
/// use gpu_aligned::backend::cuda::check_base;
///
/// assert_eq!(check_base(0x7f00_0020_0000, 256)?, 0x20_0000);
/// assert!(check_base(0x7f00_0000_0004, 256).is_err());
/// # Ok::<(), gpu_aligned::backend::cuda::CudaError>(())
/// ```
///
/// # Errors
///
/// [`CudaError::BaseMisaligned`] if it is not.
pub fn check_base(base: u64, min_align: usize) -> Result<usize, CudaError> {
    let required = min_align.max(DRIVER_BASE_ALIGN);
    if base == 0 || base % offset_of(required) != 0 {
        return Err(CudaError::BaseMisaligned { base, required });
    }
    // A power of two dividing an address this host can hold fits `usize`.
    Ok(bytes_of(1u64 << base.trailing_zeros()).unwrap_or(usize::MAX))
}

/// Memory for an [`Arena`](crate::arena::Arena) that lives on a CUDA device, zeroed at creation:
/// one `cuMemAlloc` allocation ([`new`](CudaBackend::new)), or a reserved range of device addresses
/// onto which chunks are mapped as the arena grows ([`growable`](CudaBackend::growable)). Either
/// way the arena never calls the driver's allocator for an array.
#[derive(Debug)]
pub struct CudaBackend {
    pub(super) memory: DeviceMemory,
    pub(super) stream: Arc<CudaStream>,
    /// The streams the arrays were used on, and their events (see `order.rs`).
    pub(super) order: super::order::Streams,
    pub(super) base: u64,
    base_align: usize,
    fault: OnceLock<DriverError>,
    /// The capture under way on `stream`, if any (see `capture.rs`).
    pub(super) capture: Option<super::capture::CaptureLog>,
}

/// Where a [`CudaBackend`]'s bytes are: fixed or growing is the constructor's choice, and so is
/// which of these holds a growing buffer (see `plain.rs`).
#[derive(Debug)]
pub(super) enum DeviceMemory {
    /// One allocation whose front is the buffer: all of it when fixed.
    Allocated(DeviceAllocation),
    /// A reservation of addresses whose mapped front is the buffer.
    Mapped(CudaVm),
}

impl CudaBackend {
    /// The backend over `memory`, whose first byte is at `base`: every
    /// constructor ends here, after checking the base's alignment.
    fn over(memory: DeviceMemory, stream: &Arc<CudaStream>, base: u64) -> Result<Self, CudaError> {
        let base_align = check_base(base, DRIVER_BASE_ALIGN)?;
        Ok(CudaBackend {
            memory,
            stream: Arc::clone(stream),
            order: super::order::Streams::new(stream),
            base,
            base_align,
            fault: OnceLock::new(),
            capture: None,
        })
    }

    /// The buffer's length in bytes.
    #[inline]
    pub(super) fn buffer_len(&self) -> usize {
        match &self.memory {
            DeviceMemory::Allocated(buf) => buf.len(),
            DeviceMemory::Mapped(vm) => vm.mapped(),
        }
    }

    /// Reserves `max` bytes of device addresses on `stream`'s device (rounded up to whole chunks),
    /// maps and zeroes the first `len` (whole chunks too), and grows in place by `chunk`-byte
    /// chunks up to `max` when asked ([`Grow::grow_to`](crate::backend::Grow::grow_to)). `chunk` is
    /// a multiple of the device's allocation granularity (2 MiB on current GPUs:
    /// [`DEFAULT_CHUNK`](crate::arena::DEFAULT_CHUNK)). Growth zeroes the new chunks and waits for
    /// that, so a fresh array reads zero on any stream, as in a buffer from
    /// [`new`](CudaBackend::new).
    ///
    /// Under compute-sanitizer, the buffer is instead one `cuMemAlloc` of all `max` bytes, if that
    /// takes at most half the device's free memory, so that the tool can be told about its arrays
    /// (it refuses to watch mapped virtual memory); growth then only moves the buffer's end, and
    /// trimming gives nothing back.
    ///
    /// ```no_run
    /// use gpu_aligned::backend::{Buffer, Grow};
    /// use gpu_aligned::backend::cuda::cudarc::driver::CudaContext;
    /// use gpu_aligned::backend::cuda::CudaBackend;
    ///
    /// let stream = CudaContext::new(0)?.default_stream();
    /// let mut buffer = CudaBackend::growable(&stream, 2 << 20, 1 << 30, 2 << 20)?;
    /// let base = buffer.base_address();
    /// assert_eq!(buffer.grow_to(64 << 20)?, 64 << 20);
    /// assert_eq!(buffer.base_address(), base);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`CudaError::ZeroLength`]; [`CudaError::VmUnsupported`] where the device lacks virtual
    /// memory management, [`CudaError::ChunkNotMultiple`] for a chunk off the granularity, or
    /// [`CudaError::Driver`] when the driver refuses; [`CudaError::BaseMisaligned`] if the driver
    /// broke its alignment promise.
    pub fn growable(
        stream: &Arc<CudaStream>,
        len: usize,
        max: usize,
        chunk: usize,
    ) -> Result<Self, CudaError> {
        CudaBackend::shared(stream, len, max, chunk, Sharing::NONE)
    }

    /// As [`growable`](CudaBackend::growable), shared as `sharing` says:
    /// on virtual memory always, so refused under compute-sanitizer.
    pub(crate) fn shared(
        stream: &Arc<CudaStream>,
        len: usize,
        max: usize,
        chunk: usize,
        sharing: Sharing,
    ) -> Result<Self, CudaError> {
        if len == 0 {
            return Err(CudaError::ZeroLength);
        }
        let sanitized = crate::sanitizer::sanitizer_attached();
        if sanitized && sharing != Sharing::NONE {
            return Err(CudaError::Sharing(
                "compute-sanitizer watches no shared memory",
            ));
        }
        // Reserving checks the chunk and the device in every mode.
        let vm = CudaVm::reserve(stream.context(), Some(max), chunk, sharing)?;
        let plain = match sanitized {
            true => DeviceAllocation::growing(stream, vm.reserved(), chunk)
                .map_err(CudaError::driver("device allocation"))?,
            false => None,
        };
        let (base, memory) = match plain {
            Some(plain) => (plain.device_ptr(), DeviceMemory::Allocated(plain)),
            None => {
                if sanitized {
                    // Said where the tool's report is read.
                    std::eprintln!(
                        "gpu-aligned: a growing arena of up to {} bytes is more than half the \
                         free device memory: it grows on virtual memory, which the tool cannot \
                         watch, so its arrays are not checked",
                        vm.reserved()
                    );
                }
                (vm.base_address(), DeviceMemory::Mapped(vm))
            }
        };
        let mut backend = CudaBackend::over(memory, stream, base)?;
        backend.map_zeroed(len)?;
        Ok(backend)
    }

    /// A backend over memory another process exports (see `share.rs`).
    pub(crate) fn imported(vm: CudaVm, stream: &Arc<CudaStream>) -> Result<Self, CudaError> {
        let base = vm.base_address();
        CudaBackend::over(DeviceMemory::Mapped(vm), stream, base)
    }

    /// The growing buffer's mapping, if it is on virtual memory.
    pub(crate) fn mapping(&self) -> Option<&CudaVm> {
        match &self.memory {
            DeviceMemory::Mapped(vm) => Some(vm),
            DeviceMemory::Allocated(_) => None,
        }
    }

    /// As [`mapping`](CudaBackend::mapping), to change it.
    pub(crate) fn mapping_mut(&mut self) -> Option<&mut CudaVm> {
        match &mut self.memory {
            DeviceMemory::Mapped(vm) => Some(vm),
            DeviceMemory::Allocated(_) => None,
        }
    }

    /// Maps chunks of a growing buffer until `len` bytes (at most its reservation) are mapped,
    /// zeroes the new ones on the backend's stream and waits for that. Returns the buffer's length.
    pub(super) fn map_zeroed(&mut self, len: usize) -> Result<usize, CudaError> {
        self.healthy()?;
        self.not_capturing("growing the buffer")?;
        let (old, new) = match &mut self.memory {
            DeviceMemory::Mapped(vm) => {
                let old = vm.mapped();
                vm.grow_to(len.min(vm.reserved()))?;
                (old, vm.mapped())
            }
            DeviceMemory::Allocated(buf) => {
                let old = buf.len();
                buf.grow_to(len.min(buf.reserved()))?;
                (old, buf.len())
            }
        };
        if new > old {
            let bytes = new - old;
            // Mapping made the context current; moving an allocation's end called no driver.
            if matches!(self.memory, DeviceMemory::Allocated(_)) {
                let bound = self.stream.context().bind_to_thread();
                self.driver("cuCtxSetCurrent", bound)?;
            }
            // SAFETY: `base + old .. base + new` was just mapped for this buffer (or lies inside
            // its allocation), and no array lies in it yet; the context is current.
            let r = unsafe {
                cudarc::driver::result::memset_d8_async(
                    self.base + offset_of(old),
                    0,
                    bytes,
                    self.stream.cu_stream(),
                )
            };
            self.driver("cuMemsetD8Async", r)?;
            let r = self.stream.synchronize();
            self.driver("zero-fill", r)?;
        }
        Ok(new)
    }

    /// Waits for the context, then unmaps the chunks of a growing buffer
    /// past the first `len` bytes. Returns the buffer's length.
    pub(super) fn unmap(&mut self, len: usize) -> Result<usize, CudaError> {
        self.healthy()?;
        self.not_capturing("trimming the buffer")?;
        match &mut self.memory {
            DeviceMemory::Mapped(vm) => {
                vm.shrink_to(len)?;
                Ok(vm.mapped())
            }
            DeviceMemory::Allocated(buf) => {
                buf.shrink_to(len);
                Ok(buf.len())
            }
        }
    }

    /// The most bytes the buffer can grow to.
    pub(super) fn reserved_len(&self) -> usize {
        match &self.memory {
            DeviceMemory::Allocated(buf) => buf.reserved(),
            DeviceMemory::Mapped(vm) => vm.reserved(),
        }
    }

    /// Allocates `len` bytes on `stream`'s device, zeroes them, and checks
    /// that the start is at least [`ARRAY_ALIGN`]-aligned.
    ///
    /// ```no_run
    /// use gpu_aligned::backend::cuda::cudarc::driver::CudaContext;
    /// use gpu_aligned::backend::cuda::CudaBackend;
    ///
    /// let stream = CudaContext::new(0)?.default_stream();
    /// let buffer = CudaBackend::new(&stream, 1 << 20)?;
    /// assert!(buffer.base_alignment() >= 256);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`CudaError::ZeroLength`], [`CudaError::Driver`] if the allocation fails (out of device
    /// memory, say), [`CudaError::BaseMisaligned`] if the driver broke its alignment promise.
    pub fn new(stream: &Arc<CudaStream>, len: usize) -> Result<Self, CudaError> {
        if len == 0 {
            return Err(CudaError::ZeroLength);
        }
        let buf = DeviceAllocation::fixed(stream, len);
        let buf = buf.map_err(CudaError::driver("device allocation"))?;
        let base = buf.device_ptr();
        let zeroed = stream.synchronize();
        zeroed.map_err(CudaError::driver("zero-fill"))?;
        CudaBackend::over(DeviceMemory::Allocated(buf), stream, base)
    }

    /// Whether compute-sanitizer takes NVTX heaps over this buffer: a `cuMemAlloc` one, not mapped
    /// virtual memory (compute-sanitizer 2025.3 refuses heaps and regions over both, with "One or
    /// more of the parameters is invalid").
    pub(super) fn tools_can_register(&self) -> bool {
        matches!(self.memory, DeviceMemory::Allocated(_))
    }

    /// The largest power of two dividing the device base address, recorded
    /// at creation (at least [`ARRAY_ALIGN`]; 2 MiB was seen on an H100).
    ///
    /// ```no_run
    /// # use gpu_aligned::backend::cuda::{cudarc::driver::CudaContext, CudaBackend};
    /// use gpu_aligned::backend::Buffer;
    /// # let stream = CudaContext::new(0)?.default_stream();
    /// let buffer = CudaBackend::new(&stream, 4096)?;
    /// let alignment = buffer.base_alignment() as u64;
    /// assert_eq!(buffer.base_address() % alignment, 0);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn base_alignment(&self) -> usize {
        self.base_align
    }

    /// The sticky fault that destroyed the context, if one was seen.
    ///
    /// ```no_run
    /// # use gpu_aligned::backend::cuda::{cudarc::driver::CudaContext, CudaBackend};
    /// # let stream = CudaContext::new(0)?.default_stream();
    /// let buffer = CudaBackend::new(&stream, 4096)?;
    /// assert!(buffer.fault().is_none());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[inline]
    pub fn fault(&self) -> Option<DriverError> {
        self.fault.get().copied()
    }

    /// Fails with [`CudaError::Poisoned`] once a sticky fault was seen.
    #[inline]
    pub(super) fn healthy(&self) -> Result<(), CudaError> {
        match self.fault() {
            Some(first) => Err(CudaError::Poisoned { first }),
            None => Ok(()),
        }
    }

    /// Turns a driver result into ours, remembering a sticky fault.
    pub(super) fn driver<T>(
        &self,
        op: &'static str,
        r: Result<T, DriverError>,
    ) -> Result<T, CudaError> {
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

    /// Refuses a stream of another context, unless its device was granted `access` (the buffer's
    /// addresses mean nothing elsewhere), and a write to a read-only import. A read on the
    /// buffer's own context, a view's common case, reads no sharing.
    #[inline]
    pub(crate) fn same_context(
        &self,
        stream: &CudaStream,
        access: Access,
    ) -> Result<(), CudaError> {
        let (theirs, ours) = (stream.context(), self.stream.context());
        let same = Arc::ptr_eq(theirs, ours) || theirs == ours;
        if same && access == Access::Read {
            return Ok(());
        }
        let sharing = self.mapping().map(CudaVm::sharing).unwrap_or_default();
        let write = access == Access::Write;
        if write && sharing.read_only {
            return Err(CudaError::Sharing("the import is read-only"));
        }
        let granted = same || sharing.grants(theirs.ordinal(), write);
        granted.then_some(()).ok_or(CudaError::ForeignStream)
    }

    /// Waits for all work queued on the backend's stream: kernel faults
    /// surface here (a launch itself returns success).
    ///
    /// ```no_run
    /// # use gpu_aligned::backend::cuda::{cudarc::driver::CudaContext, CudaBackend};
    /// # let stream = CudaContext::new(0)?.default_stream();
    /// let buffer = CudaBackend::new(&stream, 4096)?;
    /// buffer.synchronize()?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    ///
    /// The driver's error; a sticky one also poisons the backend;
    /// [`CudaError::Capturing`] inside a capture.
    pub fn synchronize(&self) -> Result<(), CudaError> {
        self.healthy()?;
        self.not_capturing("synchronize")?;
        let r = self.stream.synchronize();
        self.driver("synchronize", r)
    }

    /// Waits for `stream`, turning its error into ours.
    pub(super) fn wait_for(&self, stream: &CudaStream) -> Result<(), CudaError> {
        self.not_capturing("waiting for a stream")?;
        let r = stream.synchronize();
        self.driver("synchronize", r)
    }
}

impl Drop for CudaBackend {
    fn drop(&mut self) {
        // A capture left under way (a panic inside `Arena::capture`) ends
        // first: synchronizing inside it would fail.
        if self.capturing() {
            drop(self.end_capture());
        }
        // With several streams, kernels elsewhere may still use arrays of the buffer (their events
        // are the arrays', not the buffer's): let them finish before the buffer goes back to the
        // driver. Errors land in the context's error state, as cudarc's own drops do. A peer
        // device's streams are not the context's: the arena's waits for them.
        let context = self.stream.context();
        if self.fault().is_none() && self.mapping().is_some() {
            let _ = self.order.join_all();
        }
        if self.fault().is_none() && context.is_managing_stream_synchronization() {
            context.record_err(context.synchronize());
        }
    }
}
