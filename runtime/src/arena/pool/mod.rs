//! The byte path as a stack of pools, as RMM's memory resources: each layer holds one piece of
//! state and one policy ([`Pool`]); the `arena` module docs say why [`Stack`] is in this order.
//! Fast checks are inline and slow paths cold, so the stack inlines as one function.

use crate::alloc::{AllocError, Allocation};
use crate::backend::StreamOrder;
use crate::sanitizer::{ArrayInfo, Regions};

use super::{ArenaError, ArenaResult};

/// The queries a layer passes down unchanged.
macro_rules! pass_down {
    () => {
        fn watching(&self) -> bool {
            self.lower.watching()
        }

        pass_down!(offsets);
    };
    (offsets) => {
        fn offsets(&self) -> &Offsets {
            self.lower.offsets()
        }

        fn offsets_mut(&mut self) -> &mut Offsets {
            self.lower.offsets_mut()
        }
    };
}

mod graphs;
mod kept;
mod offsets;
mod watch;

#[cfg(feature = "cuda")]
pub use graphs::CapturedGraph;
pub(super) use graphs::Graphs;
pub(super) use kept::{Kept, Reuse};
pub(super) use offsets::Offsets;
pub(super) use watch::Watch;

/// The arena's stack of pools, top to bottom.
pub(super) type Stack<B> = Graphs<B, Kept<Watch<Offsets>>>;

#[derive(Clone, Copy, Debug)]
pub(super) struct Ask {
    pub(super) bytes: usize,
    pub(super) align: usize,
    /// Whether a growing arena may grow for it.
    pub(super) grow: bool,
}

/// What a released block may become once nothing uses it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Fate {
    /// Kept for the next array of its size.
    Keep,
    Free,
}

/// One layer of the byte path.
pub(super) trait Pool<B: StreamOrder> {
    /// The fast check alone: a block at once (a kept block), or `None`.
    #[inline(always)]
    fn take(&mut self, _: Ask) -> Option<Allocation> {
        None
    }

    /// A block; `array` is asked only by a layer that watches.
    fn reserve(
        &mut self,
        backend: &mut B,
        ask: Ask,
        array: impl Fn() -> ArrayInfo,
    ) -> ArenaResult<Allocation, B>;

    /// Takes back an array's block; on an error nothing changed.
    fn release(
        &mut self,
        backend: &mut B,
        block: Allocation,
        tracking: &mut B::Tracking,
        fate: Fate,
    ) -> ArenaResult<(), B>;

    /// [`release`](Self::release) for a batch of arrays no stream used.
    fn release_unused(&mut self, backend: &mut B, blocks: &[Allocation]);

    /// Gives what the layers hold to the allocator (`wait`: for graphs); whether any went.
    fn reclaim(&mut self, backend: &mut B, wait: bool) -> ArenaResult<bool, B>;

    /// Gives `each` every block the layers hold, allocating nothing.
    fn held(&self, each: &mut dyn FnMut(&Allocation));

    /// Whether the layers below watch arrays for the tools.
    fn watching(&self) -> bool;

    fn offsets(&self) -> &Offsets;

    fn offsets_mut(&mut self) -> &mut Offsets;
}

/// Whether `error` says the block does not fit.
pub(super) fn does_not_fit<E>(error: &ArenaError<E>) -> bool {
    matches!(
        error,
        ArenaError::Alloc(AllocError::OutOfMemory { .. } | AllocError::SizeExceedsCapacity { .. })
    )
}

impl<B: crate::backend::Backend> Stack<B> {
    pub(super) fn stack(offsets: Offsets, regions: Regions, min_align: usize) -> Self {
        Graphs::new(Kept::new(Watch::new(offsets, regions, min_align)))
    }

    pub(super) fn watch(&self) -> &Watch<Offsets> {
        &self.lower.lower
    }

    pub(super) fn watch_mut(&mut self) -> &mut Watch<Offsets> {
        &mut self.lower.lower
    }

    pub(super) fn kept_mut(&mut self) -> &mut Kept<Watch<Offsets>> {
        &mut self.lower
    }

    /// How many blocks of given-back arrays the layers hold.
    pub(super) fn holds(&self) -> usize {
        let mut count = 0;
        self.held(&mut |_| count += 1);
        count
    }

    /// A reset: forgets every block the layers hold.
    pub(super) fn forget(&mut self) {
        self.orphan_all();
        self.lower.reuse.drain(|_| {});
        if let Some(kept) = &mut self.watch_mut().kept {
            kept.drain(|_| {});
        }
    }
}
