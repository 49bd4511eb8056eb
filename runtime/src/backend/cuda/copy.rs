//! How the device buffer's bytes move: host<->device copies, zero-fill and pitched 2D copies of one
//! array's range on a named stream, each waiting on and recording that array's events; and
//! stream-ordered reuse of freed arrays' bytes.

use std::ops::Range;
use std::sync::Arc;

use cudarc::driver::{result, sys, CudaEvent, CudaStream};

use super::buffer::CudaBackend;
use super::error::CudaError;
use super::order::{Access, LastUses};
use crate::align::{bytes_of, offset_of};
use crate::backend::{Buffer, Grow, MoveBytes, Rows, Span, StreamOrder};

/// `range` as indices into the bytes of `array`.
fn local(array: Span, range: Span) -> Result<Range<usize>, CudaError> {
    let Span { offset, len } = range;
    let outside = CudaError::OutOfRange { offset, len };
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
    /// The device address of `range`, checked to lie inside `array` (itself
    /// inside the buffer, checked by the arena) and to hold `len` bytes.
    fn device_range(&self, array: Span, range: Span, len: usize) -> Result<u64, CudaError> {
        let local = local(array, range)?;
        if local.len() != len || !array.within(self.buffer_len()) {
            return Err(CudaError::OutOfRange {
                offset: range.offset,
                len: range.len,
            });
        }
        // Inside the buffer (checked above), so no overflow.
        Ok(self.base + range.offset)
    }

    /// Queues `work` on `stream` as a use of the array (`access`): after
    /// the uses it conflicts with, and recorded once queued.
    fn ordered(
        &self,
        uses: &LastUses,
        array: Span,
        stream: &Arc<CudaStream>,
        access: Access,
        work: impl FnOnce(sys::CUstream) -> Result<(), CudaError>,
    ) -> Result<(), CudaError> {
        let ordered = self.begin_use(uses, array, stream, access)?;
        // The raw driver calls below need the context current.
        let bound = stream.context().bind_to_thread();
        let worked = self
            .driver("cuCtxSetCurrent", bound)
            .and_then(|()| work(stream.cu_stream()));
        self.end_use(uses, &ordered);
        worked
    }

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
        // SAFETY: the device rows lie inside the array (checked by the caller, whose slice spans
        // exactly the array); the host side is the caller's slice of exactly `width * height`
        // bytes, borrowed until we return, and we wait for the copy before returning.
        let r = unsafe { sys::cuMemcpy2DAsync_v2(&copy, stream.cu_stream()) }.result();
        self.driver("cuMemcpy2D", r)?;
        self.wait_for(stream)
    }

    /// Checks a 2D range against its array and returns the device address of its first row.
    fn rows_address(array: Span, rows: Rows, device_array: u64) -> Result<u64, CudaError> {
        let (offset, len) = (rows.offset, 0);
        let reach = rows.reach().ok_or(CudaError::OutOfRange { offset, len })?;
        let range = local(array, Span::new(offset, reach))?;
        // Inside the array (checked just above).
        Ok(device_array + offset_of(range.start))
    }
}

// SAFETY: the memory is owned by the backend for its whole life and never replaced, so its device
// address is fixed; its length changes only in `grow_to` (mapping chunks after the mapped ones,
// which stay) and `shrink_to` (which waits for the context before unmapping); the bytes belong to
// this allocation or reservation alone. Every method below touches only the range it is given,
// checked to lie inside the array's slice, itself inside the buffer; a freed array's bytes are
// handed out again only after the arena's stream has waited on every use its record names.
unsafe impl Buffer for CudaBackend {
    type Error = CudaError;

    // Inline: every view's range check asks, from code instantiated in the user's crate.
    #[inline]
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
        // Not `bind_to_thread`: it first takes the context's pending error (one a cudarc drop
        // recorded), so the user's next call would not see it, and then binds nothing. A failure
        // here shows in the tool's own report of the call that follows.
        let context = self.stream().context();
        // SAFETY: the context is alive (the backend's stream holds it);
        // making it current changes only this thread's current context.
        let _bound = unsafe { cudarc::driver::result::ctx::set_current(context.cu_ctx()) };
    }
}

// SAFETY: every method touches only the range it is given, checked to lie
// inside the array, itself inside the buffer.
unsafe impl MoveBytes for CudaBackend {
    type Stream = Arc<CudaStream>;

    fn stream(&self) -> &Arc<CudaStream> {
        &self.stream
    }

    unsafe fn write(
        &self,
        tracking: &mut LastUses,
        array: Span,
        dst: Span,
        src: &[u8],
    ) -> Result<(), CudaError> {
        let stream = &self.stream;
        let device = self.device_range(array, dst, src.len())?;
        self.ordered(tracking, array, stream, Access::Write, |raw| {
            // Inside a capture the copy reads its source at every replay: from a copy the graph
            // keeps, not from the caller's slice.
            // SAFETY: `device` holds `src.len()` bytes of the array, which the caller holds
            // exclusively; the host side is read before the call returns, or kept by the graph.
            let r = self.staged(src, |src| unsafe {
                result::memcpy_htod_async(device, src, raw)
            });
            self.driver("cuMemcpyHtoDAsync", r)
        })
    }

    unsafe fn read(
        &self,
        tracking: &LastUses,
        array: Span,
        src: Span,
        dst: &mut [u8],
    ) -> Result<(), CudaError> {
        let stream = &self.stream;
        // A download waits for the stream.
        self.not_capturing("reading an array to the host")?;
        let device = self.device_range(array, src, dst.len())?;
        self.ordered(tracking, array, stream, Access::Read, |raw| {
            // SAFETY: `device` holds `dst.len()` bytes of the array, which the caller holds shared;
            // `dst` is borrowed until the stream is waited for, below.
            let r = unsafe { result::memcpy_dtoh_async(&mut *dst, device, raw) };
            self.driver("cuMemcpyDtoHAsync", r)
        })?;
        self.wait_for(stream)
    }

    unsafe fn zero(
        &self,
        tracking: &mut LastUses,
        array: Span,
        dst: Span,
    ) -> Result<(), CudaError> {
        let stream = &self.stream;
        let device = self.device_range(array, dst, dst.len)?;
        self.ordered(tracking, array, stream, Access::Write, |raw| {
            // SAFETY: `device` holds `dst.len` bytes of the array, which the
            // caller holds exclusively.
            let r = unsafe { result::memset_d8_async(device, 0, dst.len, raw) };
            self.driver("cuMemsetD8Async", r)
        })
    }

    unsafe fn copy(
        &self,
        src_tracking: &LastUses,
        src: Span,
        dst_tracking: &mut LastUses,
        dst: Span,
    ) -> Result<(), CudaError> {
        let stream = &self.stream;
        let from = self.device_range(src, src, dst.len)?;
        let to = self.device_range(dst, dst, src.len)?;
        let read = self.begin_use(src_tracking, src, stream, Access::Read)?;
        let copied = self.ordered(dst_tracking, dst, stream, Access::Write, |raw| {
            // SAFETY: two distinct live arrays of `dst.len` bytes each, the
            // source held shared and the destination exclusively.
            let r = unsafe { result::memcpy_dtod_async(to, from, dst.len, raw) };
            self.driver("cuMemcpyDtoDAsync", r)
        });
        // Ended whether the copy was queued or not: a use that queued nothing ends as one that did.
        self.end_use(src_tracking, &read);
        copied
    }

    unsafe fn write_rows(
        &self,
        tracking: &mut LastUses,
        array: Span,
        dst: Rows,
        src: &[u8],
    ) -> Result<(), CudaError> {
        let stream = &self.stream;
        // A 2D copy from borrowed host rows is waited for.
        self.not_capturing("writing rows from the host")?;
        if Some(src.len()) != dst.row_bytes.checked_mul(dst.rows) {
            let (offset, len) = (dst.offset, src.len());
            return Err(CudaError::OutOfRange { offset, len });
        }
        let device = Self::rows_address(array, dst, self.base + array.offset)?;
        let host = src.as_ptr().cast_mut();
        self.ordered(tracking, array, stream, Access::Write, |_| {
            self.copy_2d(stream, dst, device, host, Direction::HostToDevice)
        })
    }

    unsafe fn read_rows(
        &self,
        tracking: &LastUses,
        array: Span,
        src: Rows,
        dst: &mut [u8],
    ) -> Result<(), CudaError> {
        let stream = &self.stream;
        self.not_capturing("reading rows to the host")?;
        if Some(dst.len()) != src.row_bytes.checked_mul(src.rows) {
            let (offset, len) = (src.offset, dst.len());
            return Err(CudaError::OutOfRange { offset, len });
        }
        let device = Self::rows_address(array, src, self.base + array.offset)?;
        let host = dst.as_mut_ptr();
        self.ordered(tracking, array, stream, Access::Read, |_| {
            self.copy_2d(stream, src, device, host, Direction::DeviceToHost)
        })
    }
}

// SAFETY: a freed array's bytes are handed out again only in the arena's stream's order, once that
// stream waited for every use the array's record names on another stream; a record never used names
// none, and no work used the array.
unsafe impl StreamOrder for CudaBackend {
    type Tracking = LastUses;

    type Fence = CudaEvent;

    // Inline: the arena asks for every array it takes back, from code
    // instantiated in the user's crate.
    #[inline]
    fn needs_retire(&self, tracking: &LastUses) -> bool {
        !tracking.is_unused()
    }

    // Inline too: asked on every drop (see the arena's `returns` module).
    #[inline]
    fn never_used(tracking: &LastUses) -> bool {
        tracking.is_unused()
    }

    fn retire(&mut self, tracking: &mut LastUses) -> Result<(), CudaError> {
        // The arena holds every array given back during a capture; this guards the promise (waiting
        // from the capturing stream on events recorded outside it would end the capture).
        self.not_capturing("retiring an array")?;
        if self.fault().is_some() {
            // After a sticky fault no work runs at all.
            *tracking = LastUses::default();
            return Ok(());
        }
        let bound = self.stream.context().bind_to_thread();
        self.driver("cuCtxSetCurrent", bound)?;
        // The arena's stream waits (on the device) for the uses on other
        // streams; the bytes are then free in its order, at once.
        self.order.retire(tracking)
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
