//! The watch layer: while regions are kept, blocks get red zones and regions; off, one branch.
//! While the history records the branch is taken too: blocks placed and given back are recorded,
//! and dropped arrays' blocks are kept here (the kept layer passes them down).

use super::{Ask, Fate, Offsets, Pool, Reuse};
use crate::align::offset_of;
use crate::alloc::{AllocError, Allocation};
use crate::arena::{tuning::LARGE, ArenaResult};
use crate::backend::{Grow, StreamOrder};
use crate::history::{Event, Kind};
use crate::sanitizer::{ArrayInfo, Regions};

pub(in crate::arena) struct Watch<L> {
    pub(in crate::arena) regions: Regions,
    /// The granule of a red zone.
    min_align: usize,
    /// The blocks of dropped arrays while the history records (and no tool watches).
    pub(in crate::arena) kept: Option<Reuse>,
    pub(super) lower: L,
}

impl<L> Watch<L> {
    pub(super) fn new(lower: L, regions: Regions, min_align: usize) -> Self {
        Watch {
            regions,
            min_align,
            kept: None,
            lower,
        }
    }

    /// [`Pool::reserve`] while the history records and no tool watches: a kept block, else the
    /// layer below's (a large array first frees the large kept ones), recorded.
    #[inline(never)]
    fn reserve_recorded<B: StreamOrder + Grow>(
        &mut self,
        backend: &mut B,
        ask: Ask,
        array: ArrayInfo,
    ) -> ArenaResult<Allocation, B>
    where
        L: Pool<B>,
    {
        let kept = self.kept.as_mut();
        let block = match kept.and_then(|kept| kept.take(ask.bytes, ask.align)) {
            Some(block) => block,
            None => self.reserve_unkept(backend, ask, array)?,
        };
        let offsets = self.lower.offsets_mut();
        offsets.noted(Some(&block), |record| record.alloc(&array, ask.align, 0));
        Ok(block)
    }

    #[cold]
    #[inline(never)]
    fn reserve_unkept<B: StreamOrder + Grow>(
        &mut self,
        backend: &mut B,
        ask: Ask,
        array: ArrayInfo,
    ) -> ArenaResult<Allocation, B>
    where
        L: Pool<B>,
    {
        if let (Some(kept), true) = (self.kept.as_mut(), ask.bytes >= LARGE) {
            kept.drain_large(|large| free_recorded(self.lower.offsets_mut(), large));
        }
        self.lower.reserve(backend, ask, || array)
    }

    /// [`Pool::reserve`] while regions are kept.
    #[cold]
    #[inline(never)]
    fn reserve_watched<B: StreamOrder + Grow>(
        &mut self,
        backend: &mut B,
        mut ask: Ask,
        array: ArrayInfo,
    ) -> ArenaResult<Allocation, B>
    where
        L: Pool<B>,
    {
        let bytes = ask.bytes;
        let red_zone = self.regions.red_zone(array.stride(), self.min_align);
        ask.bytes = match red_zone {
            0 => bytes,
            // A red zone alone is no array.
            _ if bytes == 0 => return Err(AllocError::ZeroSize.into()),
            _ => bytes
                .checked_add(red_zone)
                .ok_or(AllocError::SizeOverflow)?,
        };
        let allocation = self.lower.reserve(backend, ask, || array)?;
        backend.enter_for_tools();
        let base = backend.base_address();
        // The heap is all the buffer may grow to, one allocation to a tool.
        let end = offset_of(backend.max_len());
        let offset = allocation.offset();
        self.regions.reserved(base, end, offset, bytes, red_zone);
        self.regions.named(base, offset, array.element, array.shape);
        let offsets = self.lower.offsets_mut();
        offsets.noted(Some(&allocation), |r| r.alloc(&array, ask.align, red_zone));
        Ok(allocation)
    }

    /// [`Pool::release`] while regions are kept or the history records.
    #[cold]
    #[inline(never)]
    fn release_watched<B: StreamOrder + Grow>(
        &mut self,
        backend: &mut B,
        block: Allocation,
        tracking: &mut B::Tracking,
        fate: Fate,
    ) -> ArenaResult<(), B>
    where
        L: Pool<B>,
    {
        let block = match (&mut self.kept, fate, self.regions.watching()) {
            (Some(kept), Fate::Keep, false) => match keep(kept, self.lower.offsets_mut(), block) {
                Ok(()) => return Ok(()),
                Err(unkept) => unkept,
            },
            _ => block,
        };
        let offset = block.offset();
        self.lower.release(backend, block, tracking, Fate::Free)?;
        let offsets = self.lower.offsets_mut();
        offsets.noted(Some(&block), |_| Event::new(Kind::Freed)); // (taken back and) freed
        if self.regions.watching() {
            backend.enter_for_tools();
            self.regions.released(backend.base_address(), offset);
        }
        Ok(())
    }

    /// [`Pool::release_unused`] while regions are kept or the history records.
    #[cold]
    #[inline(never)]
    fn release_unused_watched<B: StreamOrder + Grow>(
        &mut self,
        backend: &mut B,
        blocks: &[Allocation],
    ) where
        L: Pool<B>,
    {
        // Refused only for a stale block, which is nobody's.
        let (Some(kept), false) = (&mut self.kept, self.regions.watching()) else {
            for &block in blocks {
                let _ = self.release_watched(backend, block, &mut Default::default(), Fate::Free);
            }
            return;
        };
        for &block in blocks {
            let Err(unkept) = keep(kept, self.lower.offsets_mut(), block) else {
                continue;
            };
            if let Ok(()) = self
                .lower
                .release(backend, unkept, &mut Default::default(), Fate::Free)
            {
                let offsets = self.lower.offsets_mut();
                offsets.noted(Some(&unkept), |_| Event::new(Kind::Freed));
            }
        }
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
            return match self.regions.watching() {
                true => self.reserve_watched(backend, ask, array()),
                false => self.reserve_recorded(backend, ask, array()),
            };
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
            return self.release_watched(backend, block, tracking, fate);
        }
        self.lower.release(backend, block, tracking, fate)
    }

    fn release_unused(&mut self, backend: &mut B, blocks: &[Allocation]) {
        if !self.regions.is_active() {
            return self.lower.release_unused(backend, blocks);
        }
        self.release_unused_watched(backend, blocks);
    }

    fn reclaim(&mut self, backend: &mut B, wait: bool) -> ArenaResult<bool, B> {
        let any = self.kept.as_ref().is_some_and(|kept| kept.len() != 0);
        if let Some(kept) = &mut self.kept {
            kept.drain(|block| free_recorded(self.lower.offsets_mut(), block));
        }
        Ok(self.lower.reclaim(backend, wait)? | any)
    }

    fn held(&self, each: &mut dyn FnMut(&Allocation)) {
        self.kept.iter().for_each(|kept| kept.each(each));
        self.lower.held(each);
    }

    fn watching(&self) -> bool {
        self.regions.is_active()
    }

    pass_down!(offsets);
}

/// Keeps a dropped array's block while the history records, recorded; hands back one it cannot.
#[inline(always)]
fn keep(kept: &mut Reuse, offsets: &mut Offsets, block: Allocation) -> Result<(), Allocation> {
    let Some(renewed) = offsets.allocator.renew(&block) else {
        return Ok(()); // stale: nobody's
    };
    offsets.noted(Some(&renewed), |_| Event::new(Kind::FreeRequested));
    kept.keep(renewed, |evicted| free_recorded(offsets, evicted))
}

/// Frees a block kept while recording, recorded.
fn free_recorded(offsets: &mut Offsets, block: Allocation) {
    let freed = offsets.allocator.free(block);
    debug_assert!(freed.is_ok(), "a kept block is live");
    offsets.noted(Some(&block), |_| Event::new(Kind::Freed));
}
