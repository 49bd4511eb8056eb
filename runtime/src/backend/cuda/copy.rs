//! How the device buffer's bytes move: host<->device copies, zero-fill and
//! pitched 2D copies of one array's range on the buffer's stream, each waiting on
//! and recording that array's events; and stream-ordered reuse of freed
//! arrays' bytes.

use std::ops::Range;
use std::sync::Arc;

use cudarc::driver::{sys, CudaEvent, CudaStream, DevicePtrMut};

use super::buffer::CudaBackend;
use super::error::CudaError;
use super::tracking::ArrayEvents;
use crate::align::{bytes_of, offset_of};
use crate::backend::{Buffer, Grow, MoveBytes, Rows, Span, StreamOrder};

/// `range` as indices into the bytes of `array`.
fn local(array: Span, range: Span) -> Result<Range<usize>, CudaError> {
    let outside = CudaError::OutOfRange {
        offset: range.offset,
        len: range.len,
    };
    let start = range.offset.checked_sub(array.offset).ok_or(outside)?;
    let start = bytes_of(start).ok_or(outside)?;
    let end = start.checked_add(range.len).ok_or(outside)?;
    if end > array.len {
        return Err(outside);
    }
    Ok(start..end)
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Direction {
    HostToDevice,
    DeviceToHost,
}

impl CudaBackend {
    /// One `cuMemcpy2DAsync` between packed host rows at `host` and the
    /// pitched rows at device address `device`, then waited for (the host
    /// side is a borrowed slice that must not be touched after we return).
    fn copy_2d(
        &self,
        stream: &CudaStream,
        rows: Rows,
        device: u64,
        host: *mut u8,
        direction: Direction,
    ) -> Result<(), CudaError> {
        let (pitch, width, height) = (rows.pitch, rows.row_bytes, rows.rows);
        let mut copy = sys::CUDA_MEMCPY2D {
            srcXInBytes: 0,
            srcY: 0,
            srcMemoryType: sys::CUmemorytype::CU_MEMORYTYPE_HOST,
            srcHost: host.cast_const().cast(),
            srcDevice: 0,
            srcArray: core::ptr::null_mut(),
            srcPitch: width,
            dstXInBytes: 0,
            dstY: 0,
            dstMemoryType: sys::CUmemorytype::CU_MEMORYTYPE_DEVICE,
            dstHost: core::ptr::null_mut(),
            dstDevice: device,
            dstArray: core::ptr::null_mut(),
            dstPitch: pitch,
            WidthInBytes: width,
            Height: height,
        };
        if direction == Direction::DeviceToHost {
            copy.srcMemoryType = sys::CUmemorytype::CU_MEMORYTYPE_DEVICE;
            copy.srcHost = core::ptr::null();
            copy.srcDevice = device;
            copy.srcPitch = pitch;
            copy.dstMemoryType = sys::CUmemorytype::CU_MEMORYTYPE_HOST;
            copy.dstHost = host.cast();
            copy.dstDevice = 0;
            copy.dstPitch = width;
        }
        let bound = stream.context().bind_to_thread();
        self.driver("cuCtxSetCurrent", bound)?;
        // SAFETY: the device rows lie inside the array (checked by the
        // caller, whose slice spans exactly the array); the host side is the
        // caller's slice of exactly `width * height` bytes, borrowed until we
        // return, and we wait for the copy before returning.
        let r = unsafe { sys::cuMemcpy2DAsync_v2(&copy, stream.cu_stream()) }.result();
        self.driver("cuMemcpy2D", r)?;
        self.wait_for(stream)
    }

    /// Checks a 2D range against its array and returns the device address of
    /// its first row.
    fn rows_address(array: Span, rows: Rows, device_array: u64) -> Result<u64, CudaError> {
        let reach = rows.reach().ok_or(CudaError::OutOfRange {
            offset: rows.offset,
            len: 0,
        })?;
        let range = local(
            array,
            Span {
                offset: rows.offset,
                len: reach,
            },
        )?;
        // Inside the array (checked just above).
        Ok(device_array + offset_of(range.start))
    }
}

// SAFETY: the memory is owned by the backend for its whole life and never
// replaced, so its device address is fixed; its length changes only in
// `grow_to` (mapping chunks after the mapped ones, which stay) and `shrink_to`
// (which waits for the context before unmapping); the bytes belong to this
// allocation or reservation alone. Every method below touches only the range it is
// given, checked to lie inside the array's slice, itself inside the buffer;
// a freed array's fence is recorded after its slice's stream has waited on
// every event its uses recorded.
unsafe impl Buffer for CudaBackend {
    type Error = CudaError;

    fn len(&self) -> usize {
        self.buffer_len()
    }

    fn base_address(&self) -> u64 {
        self.base
    }

    fn watched_by_tools(&self) -> bool {
        self.tools_can_register()
    }

    fn enter_for_tools(&self) {
        // Not `bind_to_thread`: it first takes the context's pending error
        // (one a cudarc drop recorded), so the user's next call would not
        // see it, and then binds nothing. A failure here shows in the
        // tool's own report of the call that follows.
        let context = self.stream().context();
        // SAFETY: the context is alive (the backend's stream holds it);
        // making it current changes only this thread's current context.
        let _bound = unsafe { cudarc::driver::result::ctx::set_current(context.cu_ctx()) };
    }
}

// SAFETY: every method touches only the range it is given, checked to lie
// inside the array's slice, itself inside the buffer.
unsafe impl MoveBytes for CudaBackend {
    type Stream = Arc<CudaStream>;

    fn stream(&self) -> &Arc<CudaStream> {
        &self.stream
    }

    unsafe fn write(
        &self,
        tracking: &mut ArrayEvents,
        array: Span,
        dst: Span,
        src: &[u8],
    ) -> Result<(), CudaError> {
        self.healthy()?;
        let stream = &self.stream;
        let range = local(array, dst)?;
        if range.len() != src.len() {
            return Err(CudaError::OutOfRange {
                offset: dst.offset,
                len: dst.len,
            });
        }
        let slice = tracking.get_mut(self, array)?;
        let mut view = slice.try_slice_mut(range).ok_or(CudaError::OutOfRange {
            offset: dst.offset,
            len: dst.len,
        })?;
        // Inside a capture the copy reads its source at every replay: from
        // a copy the graph keeps, not from the caller's slice.
        let r = self.staged(src, |src| stream.memcpy_htod(src, &mut view));
        self.driver("cuMemcpyHtoDAsync", r)
    }

    unsafe fn read(
        &self,
        tracking: &ArrayEvents,
        array: Span,
        src: Span,
        dst: &mut [u8],
    ) -> Result<(), CudaError> {
        self.healthy()?;
        // A download waits for the stream.
        self.not_capturing("reading an array to the host")?;
        let stream = &self.stream;
        let range = local(array, src)?;
        if range.len() != dst.len() {
            return Err(CudaError::OutOfRange {
                offset: src.offset,
                len: src.len,
            });
        }
        let slice = tracking.get(self, array)?;
        let view = slice.try_slice(range).ok_or(CudaError::OutOfRange {
            offset: src.offset,
            len: src.len,
        })?;
        let r = stream.memcpy_dtoh(&view, dst);
        self.driver("cuMemcpyDtoHAsync", r)?;
        self.wait_for(stream)
    }

    unsafe fn zero(
        &self,
        tracking: &mut ArrayEvents,
        array: Span,
        dst: Span,
    ) -> Result<(), CudaError> {
        self.healthy()?;
        let stream = &self.stream;
        let range = local(array, dst)?;
        let slice = tracking.get_mut(self, array)?;
        let mut view = slice.try_slice_mut(range).ok_or(CudaError::OutOfRange {
            offset: dst.offset,
            len: dst.len,
        })?;
        let r = stream.memset_zeros(&mut view);
        self.driver("cuMemsetD8Async", r)
    }

    unsafe fn copy(
        &self,
        src_tracking: &ArrayEvents,
        src: Span,
        dst_tracking: &mut ArrayEvents,
        dst: Span,
    ) -> Result<(), CudaError> {
        self.healthy()?;
        let stream = &self.stream;
        if src.len != dst.len {
            return Err(CudaError::OutOfRange {
                offset: dst.offset,
                len: dst.len,
            });
        }
        let from = src_tracking.get(self, src)?;
        let to = dst_tracking.get_mut(self, dst)?;
        // Waits on the source's last write and the destination's last read
        // and write, and records a read of one and a write of the other.
        // Equal lengths (checked above), so cudarc's length assertion holds.
        let r = stream.memcpy_dtod(from, to);
        self.driver("cuMemcpyDtoDAsync", r)
    }

    unsafe fn write_rows(
        &self,
        tracking: &mut ArrayEvents,
        array: Span,
        dst: Rows,
        src: &[u8],
    ) -> Result<(), CudaError> {
        self.healthy()?;
        // A 2D copy from borrowed host rows is waited for.
        self.not_capturing("writing rows from the host")?;
        let stream = &self.stream;
        if Some(src.len()) != dst.row_bytes.checked_mul(dst.rows) {
            return Err(CudaError::OutOfRange {
                offset: dst.offset,
                len: src.len(),
            });
        }
        let slice = tracking.get_mut(self, array)?;
        // Waits on the array's read and write events; recording its write
        // event when `_record` drops, after the copy is queued.
        let (device_array, _record) = slice.device_ptr_mut(stream);
        let device = Self::rows_address(array, dst, device_array)?;
        self.copy_2d(
            stream,
            dst,
            device,
            src.as_ptr().cast_mut(),
            Direction::HostToDevice,
        )
    }

    unsafe fn read_rows(
        &self,
        tracking: &ArrayEvents,
        array: Span,
        src: Rows,
        dst: &mut [u8],
    ) -> Result<(), CudaError> {
        self.healthy()?;
        self.not_capturing("reading rows to the host")?;
        let stream = &self.stream;
        if Some(dst.len()) != src.row_bytes.checked_mul(src.rows) {
            return Err(CudaError::OutOfRange {
                offset: src.offset,
                len: dst.len(),
            });
        }
        let slice = tracking.get(self, array)?;
        let (device_array, _record) = cudarc::driver::DevicePtr::device_ptr(slice, stream);
        let device = Self::rows_address(array, src, device_array)?;
        self.copy_2d(
            stream,
            src,
            device,
            dst.as_mut_ptr(),
            Direction::DeviceToHost,
        )
    }
}

// SAFETY: a freed array's fence is recorded after its slice's stream has
// waited on every event its uses recorded.
unsafe impl StreamOrder for CudaBackend {
    type Tracking = ArrayEvents;

    type Fence = CudaEvent;

    // Inline: the arena asks for every array it takes back, from code
    // instantiated in the user's crate.
    #[inline]
    fn needs_retire(&self, tracking: &ArrayEvents) -> bool {
        // An array never used on the device has no events to wait for.
        tracking.is_made()
    }

    // Inline too: asked on every drop (see the arena's `returns` module).
    #[inline]
    fn never_used(tracking: &ArrayEvents) -> bool {
        !tracking.is_made()
    }

    fn retire(&mut self, tracking: &mut ArrayEvents) -> Result<Option<CudaEvent>, CudaError> {
        // The arena holds every array given back during a capture; this
        // guards the promise (waiting on the array's events from the
        // capturing stream would end the capture).
        self.not_capturing("retiring an array")?;
        if !tracking.is_made() {
            // Never used on the device: nothing can still be using it.
            return Ok(None);
        }
        let context = Arc::clone(self.stream.context());
        if self.fault().is_some() || !context.is_managing_stream_synchronization() {
            // One stream orders every use before any later one; and after a
            // sticky fault no work runs at all.
            drop(tracking.take());
            return Ok(None);
        }
        let probe = context.new_event(None);
        let fence = self.driver("cuEventCreate", probe)?;
        if let Some(tracked) = tracking.take() {
            let owner = Arc::clone(tracked.owner());
            // The owner stream waits on the array's read and write events...
            drop(tracked);
            // ... and the fence passes once it has.
            let recorded = fence.record(&owner);
            if recorded.is_err() {
                // The tracking is empty now, so a later free would hand the
                // bytes out at once: make that true before reporting.
                let waited = owner.synchronize();
                self.driver("cuStreamSynchronize", waited)?;
            }
            self.driver("cuEventRecord", recorded)?;
        }
        Ok(Some(fence))
    }

    fn fence_passed(&self, fence: &CudaEvent) -> Result<bool, CudaError> {
        if self.fault().is_some() {
            return Ok(true);
        }
        if self.capturing() {
            // Querying an event ends a capture: unknown counts as pending.
            return Ok(false);
        }
        let r = fence.try_is_complete();
        self.driver("cuEventQuery", r)
    }

    fn wait_fence(&self, fence: &CudaEvent) -> Result<(), CudaError> {
        if self.fault().is_some() {
            return Ok(());
        }
        self.not_capturing("waiting for a pending free")?;
        let r = fence.synchronize();
        self.driver("cuEventSynchronize", r)
    }

    fn quiesce(&mut self) -> Result<(), CudaError> {
        self.not_capturing("waiting for the context")?;
        let context = Arc::clone(self.stream.context());
        if self.fault().is_some() || !context.is_managing_stream_synchronization() {
            return Ok(());
        }
        let r = context.synchronize();
        self.driver("cuCtxSynchronize", r)
    }

    fn stream_fence(&mut self) -> Result<Option<CudaEvent>, CudaError> {
        self.not_capturing("recording a fence")?;
        if self.fault().is_some() {
            return Ok(None);
        }
        let made = self.stream.record_event(None);
        self.driver("cuEventRecord", made).map(Some)
    }
}

// SAFETY: `grow` maps chunks after the mapped ones, which stay; `trim`
// waits for the context before unmapping.
unsafe impl Grow for CudaBackend {
    fn max_len(&self) -> usize {
        self.reserved_len()
    }

    fn grow_to(&mut self, len: usize) -> Result<usize, CudaError> {
        self.map_zeroed(len)
    }

    fn shrink_to(&mut self, len: usize) -> Result<usize, CudaError> {
        self.unmap(len)
    }
}
