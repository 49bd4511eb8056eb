//! A device as the arena sees it, without one: a made-up address whose
//! bytes nothing reads. The tests check the numbers the arena computes for
//! a buffer it cannot read (a growing device arena's peaks, pitches over an
//! odd base); the benches count the instructions of the device arena's
//! path. One file for both: the benches include it by path.

use gpu_aligned::backend::{Buffer, Grow, MoveBytes, Rows, Span, StreamOrder};

/// A device as the arena sees it: a made-up address whose bytes nothing
/// reads, and the device backend's kind of tracking (a box made on an
/// array's first use, so an array never used has none). Its arrays take
/// the device arena's path: the arena core is the same, only the backend's
/// answers differ. Like a device buffer, it may grow up to a maximum and
/// never gives memory back.
pub struct StandIn {
    base: u64,
    len: usize,
    /// What it may grow to (as a growing device arena maps chunks).
    max: usize,
}

impl StandIn {
    /// A buffer of `len` bytes at `base`, which never grows.
    pub fn at(base: u64, len: usize) -> StandIn {
        StandIn {
            base,
            len,
            max: len,
        }
    }

    /// A buffer of `len` bytes that grows up to `max`.
    pub fn growing(len: usize, max: usize) -> StandIn {
        StandIn {
            base: 1 << 40,
            len,
            max: max.max(len),
        }
    }
}

/// The stand-in moves no bytes.
#[derive(Debug, PartialEq)]
pub struct NoBytes;

impl std::fmt::Display for NoBytes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("the stand-in device has no bytes")
    }
}

/// What the device backend keeps per array: empty until first use.
pub type Events = std::sync::OnceLock<Box<[u64; 8]>>;

// SAFETY: nothing dereferences the made-up addresses: every byte-moving
// method refuses, and its users ask the arena only for offsets, addresses,
// copy parameters and the blocks' comings and goings.
unsafe impl Buffer for StandIn {
    type Error = NoBytes;

    fn len(&self) -> usize {
        self.len
    }

    fn base_address(&self) -> u64 {
        self.base
    }
}

// SAFETY: every byte-moving method refuses.
unsafe impl MoveBytes for StandIn {
    type Stream = ();

    fn stream(&self) -> &() {
        &()
    }

    unsafe fn write(&self, _: &mut Events, _: Span, _: Span, _: &[u8]) -> Result<(), NoBytes> {
        Err(NoBytes)
    }

    unsafe fn read(&self, _: &Events, _: Span, _: Span, _: &mut [u8]) -> Result<(), NoBytes> {
        Err(NoBytes)
    }

    unsafe fn zero(&self, _: &mut Events, _: Span, _: Span) -> Result<(), NoBytes> {
        Err(NoBytes)
    }

    unsafe fn copy(&self, _: &Events, _: Span, _: &mut Events, _: Span) -> Result<(), NoBytes> {
        Err(NoBytes)
    }

    unsafe fn write_rows(&self, _: &mut Events, _: Span, _: Rows, _: &[u8]) -> Result<(), NoBytes> {
        Err(NoBytes)
    }

    unsafe fn read_rows(&self, _: &Events, _: Span, _: Rows, _: &mut [u8]) -> Result<(), NoBytes> {
        Err(NoBytes)
    }
}

// SAFETY: nothing is queued: no fence is ever made.
unsafe impl StreamOrder for StandIn {
    type Tracking = Events;

    type Fence = std::convert::Infallible;

    #[inline]
    fn needs_retire(&self, tracking: &Events) -> bool {
        tracking.get().is_some()
    }

    #[inline]
    fn never_used(tracking: &Events) -> bool {
        tracking.get().is_none()
    }

    fn retire(&mut self, tracking: &mut Events) -> Result<(), NoBytes> {
        tracking.take();
        Ok(())
    }

    fn fence_passed(&self, fence: &std::convert::Infallible) -> Result<bool, NoBytes> {
        match *fence {}
    }

    fn wait_fence(&self, fence: &std::convert::Infallible) -> Result<(), NoBytes> {
        match *fence {}
    }

    fn quiesce(&mut self) -> Result<(), NoBytes> {
        Ok(())
    }
}

// SAFETY: the buffer never grows nor gives memory back.
unsafe impl Grow for StandIn {
    fn max_len(&self) -> usize {
        self.max
    }

    /// Grows at once: no bytes to map. Like a device buffer, it never
    /// gives memory back (no `release`).
    fn grow_to(&mut self, len: usize) -> Result<usize, NoBytes> {
        self.len = len.clamp(self.len, self.max);
        Ok(self.len)
    }
}
