//! The arena's side of its history (`crate::history`): turning it on, a
//! copy, and the hook of the offsets layer. Off, no fast path changes:
//! recording takes the watch layer's branch (see `pool::watch`), which
//! records every block placed and given back and, while no tool watches,
//! keeps dropped arrays' blocks itself; growth, trims and memory given back
//! are cold paths of the offsets layer, which holds the ring. A dropped
//! array is recorded when the arena takes it back (its drop only queues it).

use alloc_crate::boxed::Box;
use alloc_crate::vec::Vec;

use super::pool::{Offsets, Pool, Reuse};
use super::{Arena, ArenaResult};
use crate::alloc::Allocation;
use crate::backend::Backend;
use crate::history::{Event, Frame, History, Kind, Recorder};

impl<B: Backend> Arena<B> {
    /// Records what the arena does with its bytes in a ring of the last
    /// `events` events (64 bytes each, made now; 0 stops), after taking
    /// back every dropped array so each block's state is known. Start it
    /// before sharing the arena in a [`ThreadArena`](super::ThreadArena)
    /// (whose threads then keep no blocks, so every array is seen).
    ///
    /// ```
    /// # let mut arena = gpu_aligned::arena::Arena::host(1 << 16)?;
    /// arena.record_history(1 << 16)?;
    /// let a = arena.alloc::<f32>(10)?;
    /// arena.label(&a, "weights")?;
    /// let ledger = arena.history().unwrap().ledger();
    /// assert_eq!(ledger.last().unwrap().payload, 40);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`ArenaError::Backend`](super::ArenaError::Backend) if waiting for
    /// dropped arrays' last uses fails.
    pub fn record_history(&mut self, events: usize) -> ArenaResult<(), B> {
        self.drain_pending()?;
        let (base, len) = (self.backend.base_address(), self.backend.max_len());
        let frame = Frame::new(base, len, self.min_align, self.growth().grows());
        let recorder = (events > 0).then(|| Box::new(Recorder::new(events, frame)));
        let watch = self.pool.watch_mut();
        watch.regions.set_recording(events > 0);
        watch.kept = (events > 0).then(Reuse::default);
        self.pool.offsets_mut().history = recorder;
        Ok(())
    }

    /// A copy of the history recorded, with the arena's blocks now; `None`
    /// when it does not record.
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
    /// Records an event of `kind` (for `block`) while recording; one branch.
    #[inline(always)]
    pub(in crate::arena) fn note(&mut self, kind: Kind, block: Option<&Allocation>) {
        if self.history.is_some() {
            self.noted(block, |_| Event::new(kind));
        }
    }

    /// Records the event `make` makes, for `block` (its place and size: the
    /// handle may be freed), with the span after it.
    #[cold]
    #[inline(never)]
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
