//! The watch layer: while regions are kept, blocks get red zones and regions; off, one branch.

use super::{Ask, Fate, Offsets, Pool};
use crate::align::offset_of;
use crate::alloc::{AllocError, Allocation};
use crate::arena::ArenaResult;
use crate::backend::{Grow, StreamOrder};
use crate::sanitizer::{ArrayInfo, Regions};

pub(in crate::arena) struct Watch<L> {
    pub(in crate::arena) regions: Regions,
    /// The granule of a red zone.
    min_align: usize,
    pub(super) lower: L,
}

impl<L> Watch<L> {
    pub(super) fn new(lower: L, regions: Regions, min_align: usize) -> Self {
        Watch {
            regions,
            min_align,
            lower,
        }
    }

    /// [`Pool::reserve`] while regions are kept.
    #[cold]
    #[inline(never)]
    fn reserve_watched<B: StreamOrder + Grow>(
        &mut self,
        backend: &mut B,
        ask: Ask,
        array: ArrayInfo,
    ) -> ArenaResult<Allocation, B>
    where
        L: Pool<B>,
    {
        let bytes = ask.bytes;
        let red_zone = self.regions.red_zone(array.stride(), self.min_align);
        let padded = match red_zone {
            0 => bytes,
            // A red zone alone is no array.
            _ if bytes == 0 => return Err(AllocError::ZeroSize.into()),
            _ => bytes
                .checked_add(red_zone)
                .ok_or(AllocError::SizeOverflow)?,
        };
        let ask = Ask {
            bytes: padded,
            ..ask
        };
        let allocation = self.lower.reserve(backend, ask, || array)?;
        backend.enter_for_tools();
        let base = backend.base_address();
        // The heap is all the buffer may grow to, one allocation to a tool.
        let end = offset_of(backend.max_len());
        let offset = allocation.offset();
        self.regions.reserved(base, end, offset, bytes, red_zone);
        self.regions.named(base, offset, array.element, array.shape);
        Ok(allocation)
    }

    /// [`Pool::release`] while regions are kept.
    #[cold]
    #[inline(never)]
    fn release_watched<B: StreamOrder + Grow>(
        &mut self,
        backend: &mut B,
        block: Allocation,
        tracking: &mut B::Tracking,
    ) -> ArenaResult<(), B>
    where
        L: Pool<B>,
    {
        let offset = block.offset();
        self.lower.release(backend, block, tracking, Fate::Free)?;
        backend.enter_for_tools();
        self.regions.released(backend.base_address(), offset);
        Ok(())
    }
}

impl<B: StreamOrder + Grow, L: Pool<B>> Pool<B> for Watch<L> {
    #[inline(always)]
    fn reserve(
        &mut self,
        backend: &mut B,
        ask: Ask,
        array: impl Fn() -> ArrayInfo,
    ) -> ArenaResult<Allocation, B> {
        if self.regions.is_active() {
            return self.reserve_watched(backend, ask, array());
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
        if self.regions.is_active() {
            return self.release_watched(backend, block, tracking);
        }
        self.lower.release(backend, block, tracking, fate)
    }

    fn release_unused(&mut self, backend: &mut B, blocks: &[Allocation]) {
        if !self.regions.is_active() {
            return self.lower.release_unused(backend, blocks);
        }
        for &block in blocks {
            // Refused only for a stale block, which is nobody's.
            let _ = self.release_watched(backend, block, &mut B::Tracking::default());
        }
    }

    fn reclaim(&mut self, backend: &mut B, wait: bool) -> ArenaResult<bool, B> {
        self.lower.reclaim(backend, wait)
    }

    fn held(&self, each: &mut dyn FnMut(&Allocation)) {
        self.lower.held(each);
    }

    fn watching(&self) -> bool {
        self.regions.is_active()
    }

    pass_down!(offsets);
}
