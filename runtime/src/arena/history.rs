//! The arena's side of its history (`crate::history`): turning it on, a copy, and the offsets
//! layer's hook. Recording takes the watch layer's branch (`pool::watch`): no fast path changes.

use alloc_crate::boxed::Box;
use alloc_crate::vec::Vec;

use super::pool::{Offsets, Pool, Reuse};
use super::{Arena, ArenaResult};
use crate::align::offset_of;
use crate::alloc::Allocation;
use crate::backend::Backend;
use crate::history::{Event, Frame, History, Recorder};

impl<B: Backend> Arena<B> {
    /// Records the last `events` events (64 bytes each; 0 stops), after taking back every dropped
    /// array. Start it before sharing the arena in a [`ThreadArena`](super::ThreadArena).
    ///
    /// ```
    /// # let mut arena = gpu_aligned::arena::Arena::host(1 << 16)?;
    /// arena.record_history(1 << 16)?;
    /// let a = arena.alloc::<f32>(10)?;
    /// arena.label(&a, "weights")?;
    /// assert_eq!(arena.history().unwrap().ledger().last().unwrap().payload, 40);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`ArenaError::Backend`](super::ArenaError::Backend) if waiting for a last use fails.
    pub fn record_history(&mut self, events: usize) -> ArenaResult<(), B> {
        self.drain_pending()?;
        let frame = Frame {
            reserved: offset_of(self.backend.max_len()),
            min_align: offset_of(self.min_align),
            grows: self.growth().grows(),
            base: self.backend.base_address(),
        };
        let recorder = (events > 0).then(|| Box::new(Recorder::new(events, frame)));
        let watch = self.pool.watch_mut();
        watch.regions.set_recording(events > 0);
        watch.kept = (events > 0).then(Reuse::default);
        self.pool.offsets_mut().history = recorder;
        Ok(())
    }

    /// A copy of the history, with the arena's blocks now; `None` when it does not record.
    ///
    /// ```
    /// # let mut arena = gpu_aligned::arena::Arena::host(4096)?;
    /// assert!(arena.history().is_none());
    /// arena.record_history(10)?;
    /// assert!(arena.history().is_some());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn history(&self) -> Option<History> {
        let offsets = self.pool.offsets();
        let mut pending = Vec::new();
        self.pool.held(&mut |block| pending.push(block.offset()));
        let recorder = offsets.history.as_deref()?;
        Some(recorder.snapshot(&offsets.allocator, offsets.released_bytes(), pending))
    }
}

impl Offsets {
    /// Records the event `make` makes for `block` (which may be freed) and the span after it.
    #[inline(always)]
    pub(in crate::arena) fn noted(
        &mut self,
        block: Option<&Allocation>,
        make: impl FnOnce(&mut Recorder) -> Event,
    ) {
        let released = self.released_bytes();
        if let Some(recorder) = self.history.as_deref_mut() {
            let event = make(recorder);
            recorder.push(event, block, &self.allocator, released);
        }
    }
}
