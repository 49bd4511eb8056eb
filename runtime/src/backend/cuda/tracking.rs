//! Per-array stream tracking: each array of the buffer gets its own
//! `CudaSlice<u8>` over its bytes, made with `upgrade_device_ptr`, so it has
//! its own read and write events, exactly as cudarc keeps them for a slice
//! it allocated. Kernel arguments, copies and zero-fill wait on and record
//! those events through cudarc's own machinery.
//!
//! Such a slice must never be dropped normally: cudarc would then free its
//! pointer, an interior pointer of the buffer. [`Tracked`] holds it in a
//! `ManuallyDrop` and gives it up only through `CudaSlice::leak`, which makes
//! the slice's stream wait on both events and destroys them without
//! freeing anything.

use std::boxed::Box;
use std::mem::ManuallyDrop;
use std::sync::{Arc, OnceLock};

use cudarc::driver::{CudaSlice, CudaStream};

use super::buffer::CudaBackend;
use super::error::CudaError;
use crate::backend::Span;

/// One array's view of the buffer, with its own events.
#[derive(Debug)]
pub(super) struct Tracked(ManuallyDrop<CudaSlice<u8>>);

impl Tracked {
    pub(super) fn slice(&self) -> &CudaSlice<u8> {
        &self.0
    }

    pub(super) fn slice_mut(&mut self) -> &mut CudaSlice<u8> {
        &mut self.0
    }

    /// The stream that waits on the events when the slice is given up.
    pub(super) fn owner(&self) -> &Arc<CudaStream> {
        self.0.stream()
    }
}

impl Drop for Tracked {
    fn drop(&mut self) {
        // SAFETY: the slice is taken out exactly once, here, and `self` is
        // not used after.
        let slice = unsafe { ManuallyDrop::take(&mut self.0) };
        // `leak` waits on the events and destroys them; the bytes stay the
        // buffer's.
        let _interior = slice.leak();
    }
}

/// The read and write events of one array of a device arena, as cudarc
/// keeps them for each `CudaSlice`. Made on the array's first device use,
/// so arrays that are never touched cost nothing.
///
/// Boxed: every handle carries one and every drop moves one through the
/// arena's list of returns, so it is kept to two words (a `CudaSlice` is
/// seven); one heap allocation beside the two `cuEventCreate`s of a first
/// use costs nothing measurable.
#[derive(Debug, Default)]
pub struct ArrayEvents {
    cell: OnceLock<Box<Tracked>>,
}

impl ArrayEvents {
    fn make(backend: &CudaBackend, array: Span) -> Result<Box<Tracked>, CudaError> {
        backend.healthy()?;
        let len = array.len;
        if !array.within(backend.buffer_len()) {
            return Err(CudaError::OutOfRange {
                offset: array.offset,
                len,
            });
        }
        let owner = backend.owner_stream()?;
        // `upgrade_device_ptr` unwraps its event creation: make sure the
        // context can still create events, so a dead context is an error
        // here rather than a panic there.
        let probe = owner.context().new_event(None);
        drop(backend.driver("cuEventCreate", probe)?);
        // Inside the buffer (checked above), so no overflow.
        let address = backend.base + array.offset;
        // SAFETY: `address .. address + len` lies inside the buffer's one
        // live allocation (or mapped range), whose bytes are initialised
        // (zeroed when allocated or mapped) and valid as `u8`. The slice is never dropped normally (see
        // `Tracked`), so it never frees this interior pointer.
        let slice = unsafe { owner.upgrade_device_ptr::<u8>(address, len) };
        Ok(Box::new(Tracked(ManuallyDrop::new(slice))))
    }

    /// The array's slice, made on first use; inside a capture, the
    /// capture's slice over the array instead (see `capture.rs`).
    pub(crate) fn get<'a>(
        &'a self,
        backend: &'a CudaBackend,
        array: Span,
    ) -> Result<&'a CudaSlice<u8>, CudaError> {
        // SAFETY: `array` is this array's whole span (every caller passes
        // it), and `&self` is its tracking, held shared while the slice is.
        if let Some(captured) = unsafe { backend.capture_slice(array) } {
            return captured;
        }
        if self.cell.get().is_none() {
            let made = Self::make(backend, array)?;
            // Two threads reading the same array may race to make it; the
            // loser's slice is given up (no free) and the winner's used.
            let _lost = self.cell.set(made);
        }
        self.cell
            .get()
            .map(|tracked| tracked.slice())
            .ok_or(CudaError::OutOfRange {
                offset: array.offset,
                len: array.len,
            })
    }

    /// The array's slice for writing, made on first use; inside a capture,
    /// the capture's.
    pub(crate) fn get_mut<'a>(
        &'a mut self,
        backend: &'a CudaBackend,
        array: Span,
    ) -> Result<&'a mut CudaSlice<u8>, CudaError> {
        // SAFETY: as in `get`, with the tracking held exclusively while the
        // slice is.
        if let Some(captured) = unsafe { backend.capture_slice_mut(array) } {
            return captured;
        }
        if self.cell.get().is_none() {
            let made = Self::make(backend, array)?;
            let _unset = self.cell.set(made);
        }
        self.cell
            .get_mut()
            .map(|tracked| tracked.slice_mut())
            .ok_or(CudaError::OutOfRange {
                offset: array.offset,
                len: array.len,
            })
    }

    /// The tracked slice, taken out (the array is being freed).
    pub(super) fn take(&mut self) -> Option<Box<Tracked>> {
        self.cell.take()
    }

    /// Whether the array was ever used on the device.
    #[inline]
    pub(super) fn is_made(&self) -> bool {
        self.cell.get().is_some()
    }
}
