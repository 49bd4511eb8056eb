//! The fences layer: blocks of arrays given back while a stream may still
//! use them. The backend records a fence when such a block comes back
//! (`StreamOrder::retire`); the block waits here, oldest first, until every
//! use recorded on the array, on any stream, has finished, then goes down
//! to be kept or freed. A block no stream used passes straight down.

use alloc_crate::collections::VecDeque;

use super::{Ask, Fate, Offsets, Pool};
use crate::alloc::Allocation;
use crate::arena::{ArenaError, ArenaResult};
use crate::backend::StreamOrder;
use crate::sanitizer::ArrayInfo;

/// Blocks waiting for their fences, over the layer below. See the [module
/// docs](self).
pub(in crate::arena) struct Fences<B: StreamOrder, L> {
    /// Oldest first.
    pending: VecDeque<(Allocation, B::Fence)>,
    pub(super) lower: L,
}

impl<B: StreamOrder, L: Pool<B>> Fences<B, L> {
    pub(super) fn new(lower: L) -> Self {
        Fences {
            pending: VecDeque::new(),
            lower,
        }
    }

    /// Whether blocks wait for fences.
    pub(in crate::arena) fn waits(&self) -> bool {
        !self.pending.is_empty()
    }

    /// Forgets every waiting block (a reset freed them).
    pub(super) fn forget_pending(&mut self) {
        self.pending.clear();
    }

    /// Passes down, to be kept, the blocks whose fences have passed, oldest
    /// first, without waiting. Returns whether any did.
    #[inline(never)]
    fn reclaim_passed(&mut self, backend: &mut B) -> ArenaResult<bool, B> {
        let mut any = false;
        while let Some((_, fence)) = self.pending.front() {
            if !backend.fence_passed(fence).map_err(ArenaError::Backend)? {
                break;
            }
            if let Some((block, _)) = self.pending.pop_front() {
                // Refused only for a stale block, which is nobody's.
                let tracking = &mut B::Tracking::default();
                let _ = self.lower.release(backend, block, tracking, Fate::Keep);
                any = true;
            }
        }
        Ok(any)
    }

    /// [`Pool::release`] for a block a stream used: the fence the backend
    /// records now, and the block waits for it (or goes down at once when
    /// the backend says nothing can still use it).
    #[inline(never)]
    fn retire(
        &mut self,
        backend: &mut B,
        block: Allocation,
        tracking: &mut B::Tracking,
    ) -> ArenaResult<(), B> {
        self.lower.offsets().allocator.check_handle(&block)?;
        match backend.retire(tracking).map_err(ArenaError::Backend)? {
            None => self.lower.release(backend, block, tracking, Fate::Free),
            Some(fence) => {
                self.pending.push_back((block, fence));
                Ok(())
            }
        }
    }
}

impl<B: StreamOrder, L: Pool<B>> Pool<B> for Fences<B, L> {
    /// Nothing at once while blocks wait for fences (`reserve` looks).
    #[inline(always)]
    fn take(&mut self, ask: Ask) -> Option<Allocation> {
        if !self.pending.is_empty() {
            return None;
        }
        self.lower.take(ask)
    }

    /// The blocks whose fences have passed go down first, so the layers
    /// below may hand them out.
    #[inline(always)]
    fn reserve(
        &mut self,
        backend: &mut B,
        ask: Ask,
        array: impl Fn() -> ArrayInfo,
    ) -> ArenaResult<Allocation, B> {
        if !self.pending.is_empty() {
            self.reclaim_passed(backend)?;
        }
        self.lower.reserve(backend, ask, array)
    }

    #[inline(always)]
    fn release(
        &mut self,
        backend: &mut B,
        block: Allocation,
        tracking: &mut B::Tracking,
        fate: Fate,
    ) -> ArenaResult<(), B> {
        if backend.needs_retire(tracking) {
            return self.retire(backend, block, tracking);
        }
        self.lower.release(backend, block, tracking, fate)
    }

    #[inline(always)]
    fn release_unused(&mut self, backend: &mut B, blocks: &[Allocation]) {
        self.lower.release_unused(backend, blocks);
    }

    /// Without `wait`, the blocks whose fences have passed go down to be
    /// kept; with it, every fence is waited for and its block freed.
    fn reclaim(&mut self, backend: &mut B, wait: bool) -> ArenaResult<bool, B> {
        let mut any = false;
        if !wait {
            any = self.reclaim_passed(backend)?;
        }
        while let Some((_, fence)) = self.pending.front().filter(|_| wait) {
            backend.wait_fence(fence).map_err(ArenaError::Backend)?;
            if let Some((block, _)) = self.pending.pop_front() {
                let tracking = &mut B::Tracking::default();
                self.lower.release(backend, block, tracking, Fate::Free)?;
                any = true;
            }
        }
        Ok(self.lower.reclaim(backend, wait)? | any)
    }

    fn held(&self, each: &mut dyn FnMut(&Allocation)) {
        self.pending.iter().for_each(|(block, _)| each(block));
        self.lower.held(each);
    }

    pass_down!();
}
