//! Device buffers from `cuMemAlloc`: every fixed-size buffer, and a growing
//! one under compute-sanitizer.
//!
//! compute-sanitizer (2025.3) registers a sub-allocator heap only over memory from `cuMemAlloc`:
//! `nvtxMemHeapRegister` over a `cuMemAllocAsync` allocation fails with "One or more of the
//! parameters is invalid", and so does every heap tried over mapped virtual memory (`cuMemCreate` +
//! `cuMemMap`): over the whole mapped range, over exactly one mapped chunk (the first or a later
//! one), registered before or after `cuMemSetAccess`, over one `cuMemCreate` spanning two granules,
//! over the whole reserved range; a `LAYOUT` heap over a chunk, and regions in the process-wide
//! heap over mapped memory, are refused too. So a fixed buffer is one `cuMemAlloc` (the arena's one
//! allocation gains nothing from the stream-ordered pool), and under compute-sanitizer a growing
//! one is one `cuMemAlloc` of its whole maximum, whose first bytes are the buffer: growth only
//! moves the end, so the base address and every offset's address behave as on virtual memory.
//! (Chunks from separate `cuMemAlloc`s would keep memory proportional to use, but their addresses
//! are not contiguous, and every layer above the backend computes an array's address as base +
//! offset.)

use std::sync::Arc;

use cudarc::driver::{result, sys, CudaStream, DriverError};

use super::CudaError;
use crate::align::round_up;

/// One `cuMemAlloc` allocation, zeroed, freed on drop, of which the first [`len`](Self::len) bytes
/// are the buffer: all of them for a fixed buffer; for a growing one, a front that growing and
/// trimming move by whole chunks, as [`CudaVm`](super::CudaVm) does, though the device memory is
/// all taken up front and none goes back before the drop.
#[derive(Debug)]
pub(crate) struct DeviceAllocation {
    ptr: sys::CUdeviceptr,
    reserved: usize,
    len: usize,
    /// The unit the front moves by: the whole allocation for a fixed one.
    chunk: usize,
    stream: Arc<CudaStream>,
}

impl DeviceAllocation {
    /// A fixed buffer: `len` zeroed bytes on `stream`'s device (zeroed on
    /// the stream; the caller waits).
    pub(crate) fn fixed(stream: &Arc<CudaStream>, len: usize) -> Result<Self, DriverError> {
        Self::zeroed(stream, len, len, len)
    }

    /// A growing buffer of up to `reserved` bytes (a multiple of `chunk`) as one zeroed allocation,
    /// of which none is the buffer yet; `None` when that would take more than half of the device's
    /// free memory: the caller then grows on virtual memory, unwatched, rather than starve the
    /// program it debugs.
    pub(crate) fn growing(
        stream: &Arc<CudaStream>,
        reserved: usize,
        chunk: usize,
    ) -> Result<Option<Self>, DriverError> {
        stream.context().bind_to_thread()?;
        let (free, _total) = result::mem_get_info()?;
        if reserved > free / 2 {
            return Ok(None);
        }
        Self::zeroed(stream, reserved, 0, chunk).map(Some)
    }

    fn zeroed(
        stream: &Arc<CudaStream>,
        reserved: usize,
        len: usize,
        chunk: usize,
    ) -> Result<Self, DriverError> {
        stream.context().bind_to_thread()?;
        // SAFETY: the context is current; the bytes are zeroed below before anyone reads them.
        let ptr = unsafe { result::malloc_sync(reserved) }?;
        let allocation = DeviceAllocation {
            ptr,
            reserved,
            len,
            chunk,
            stream: Arc::clone(stream),
        };
        // SAFETY: `ptr` holds `reserved` bytes, just allocated on this context.
        unsafe { result::memset_d8_async(ptr, 0, reserved, stream.cu_stream()) }?;
        Ok(allocation)
    }

    pub(crate) fn device_ptr(&self) -> u64 {
        self.ptr
    }

    /// Bytes of the buffer now.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// The most the buffer can grow to: the allocation's length.
    pub(crate) fn reserved(&self) -> usize {
        self.reserved
    }

    /// Moves the end to at least `len` bytes, in whole chunks (as
    /// [`CudaVm::grow_to`](super::CudaVm::grow_to)).
    pub(crate) fn grow_to(&mut self, len: usize) -> Result<(), CudaError> {
        let reserved = self.reserved;
        let target = round_up(len, self.chunk).filter(|&target| target <= reserved);
        let target = target.ok_or(CudaError::BeyondReservation { len, reserved })?;
        self.len = self.len.max(target);
        Ok(())
    }

    /// Moves the end down to `len` bytes rounded up to whole chunks (as
    /// [`CudaVm::shrink_to`](super::CudaVm::shrink_to)); the memory stays
    /// allocated, so nothing needs to wait.
    pub(crate) fn shrink_to(&mut self, len: usize) {
        let keep = round_up(len, self.chunk).unwrap_or(usize::MAX);
        self.len = self.len.min(keep);
    }
}

impl Drop for DeviceAllocation {
    fn drop(&mut self) {
        let context = self.stream.context();
        context.record_err(context.bind_to_thread());
        // SAFETY: the pointer came from `cuMemAlloc` and is freed once;
        // `cuMemFree` waits for work using it.
        context.record_err(unsafe { result::free_sync(self.ptr) });
    }
}
