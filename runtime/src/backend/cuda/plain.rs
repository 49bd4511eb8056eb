//! A device buffer from `cuMemAlloc`, for processes watched by an NVTX tool.
//!
//! compute-sanitizer (2025.3) refuses to register a sub-allocator heap over
//! memory from a stream-ordered pool (`nvtxMemHeapRegister` over a
//! `cuMemAllocAsync` allocation fails with "One or more of the parameters
//! is invalid"; over a `cuMemAlloc` one it succeeds). So when a tool is
//! attached, a fixed-size buffer comes from `cuMemAlloc` and goes back
//! through `cuMemFree`, and the arena's arrays can be told to the tool.

use std::sync::Arc;

use cudarc::driver::{result, sys, CudaStream, DriverError};

/// One `cuMemAlloc` allocation, zeroed, freed on drop.
#[derive(Debug)]
pub(crate) struct PlainAllocation {
    ptr: sys::CUdeviceptr,
    len: usize,
    stream: Arc<CudaStream>,
}

impl PlainAllocation {
    /// `len` zeroed bytes on `stream`'s device.
    pub(crate) fn zeroed(stream: &Arc<CudaStream>, len: usize) -> Result<Self, DriverError> {
        stream.context().bind_to_thread()?;
        // SAFETY: the context is current; the bytes are zeroed below before
        // anyone reads them.
        let ptr = unsafe { result::malloc_sync(len) }?;
        let allocation = PlainAllocation {
            ptr,
            len,
            stream: Arc::clone(stream),
        };
        // SAFETY: `ptr` holds `len` bytes, just allocated on this context.
        unsafe { result::memset_d8_async(ptr, 0, len, stream.cu_stream()) }?;
        Ok(allocation)
    }

    pub(crate) fn device_ptr(&self) -> u64 {
        self.ptr
    }

    pub(crate) fn len(&self) -> usize {
        self.len
    }
}

impl Drop for PlainAllocation {
    fn drop(&mut self) {
        let context = self.stream.context();
        context.record_err(context.bind_to_thread());
        // SAFETY: the pointer came from `cuMemAlloc` and is freed once;
        // `cuMemFree` waits for work using it.
        context.record_err(unsafe { result::free_sync(self.ptr) });
    }
}
