//! The arena's face of [`crate::sanitizer`]; the regions are the watch layer's.

use super::pool::Pool;
use super::{Arena, ArenaArray, ArenaResult, SEALED};
use crate::align::offset_of;
use crate::alloc::Allocation;
use crate::backend::Backend;
use crate::sanitizer::RegionMap;

impl<B: Backend> Arena<B> {
    /// Whether arrays allocated from now on get red zones, so compute-sanitizer reports an overrun
    /// (default: on under the tool, or `GPU_ALIGNED_RED_ZONES=1`/`0`).
    pub fn set_red_zones(&mut self, on: bool) {
        self.pool.watch_mut().regions.set_red_zones(on);
        if self.pool.watching() {
            // Nothing is kept while arrays are watched.
            let _ = self.pool.kept_mut().reclaim(&mut self.backend, false);
        }
    }

    /// Whether arrays allocated now get [red zones](Arena::set_red_zones).
    pub fn red_zones(&self) -> bool {
        self.pool.watch().regions.red_zones()
    }

    /// The live arrays by address, to read a compute-sanitizer report by (while regions are kept).
    pub fn regions(&self) -> RegionMap {
        let (base, dropped) = (self.backend.base_address(), self.queued_offsets());
        self.pool.watch().regions.map(base, &dropped)
    }

    /// Labels an array for [`regions`](Arena::regions) and the tools.
    ///
    /// # Errors
    ///
    /// [`ArenaError::Handle`](super::ArenaError::Handle) for a handle this arena does not hold.
    pub fn label(&mut self, array: &impl ArenaArray<B>, label: &str) -> ArenaResult<(), B> {
        let place = array.place(SEALED);
        if place.is_empty() {
            return Ok(());
        }
        self.label_allocation(&place.allocation, label)
    }

    /// [`label`](Self::label)'s work, one copy for every kind of array.
    fn label_allocation(&mut self, allocation: &Allocation, label: &str) -> ArenaResult<(), B> {
        self.allocator().check_handle(allocation)?;
        self.backend.enter_for_tools();
        let (base, offset) = (self.backend.base_address(), allocation.offset());
        self.pool.watch_mut().regions.labelled(base, offset, label);
        let offsets = self.pool.offsets_mut();
        offsets.noted(Some(allocation), |recorder| recorder.label(label));
        Ok(())
    }

    /// Arms drops to tell the tool at once ([`DropWatch`](crate::sanitizer::DropWatch)).
    pub(super) fn rewatch(&mut self) {
        let regions = &self.pool.watch().regions;
        if !regions.watching() {
            return;
        }
        let (base, stamp) = (self.backend.base_address(), self.allocator().reset_stamp());
        let watch = self.pool.idle().then(|| regions.drop_watch(base, stamp));
        self.returns.watch(watch.flatten());
    }

    /// Forgets the regions whose drops told the tool already.
    #[cold]
    #[inline(never)]
    pub(super) fn forget_dropped_regions(&mut self) {
        for offset in self.returned.unregistered.drain(..) {
            self.pool.watch_mut().regions.forget(offset);
        }
    }

    pub(super) fn regions_cleared(&mut self) {
        if self.pool.watch().regions.watching() {
            self.backend.enter_for_tools();
            self.pool.watch_mut().regions.cleared();
        }
    }

    /// The buffer was trimmed to `capacity`.
    pub(super) fn regions_trimmed(&mut self, capacity: usize) {
        self.backend.enter_for_tools();
        let base = self.backend.base_address();
        let extent = offset_of(capacity.max(self.backend.max_len()));
        self.pool.watch_mut().regions.trimmed(base, extent);
    }
}
