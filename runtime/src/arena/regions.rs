//! The arena's face of [`crate::sanitizer`]: red zones on or off, the map
//! from addresses to arrays, labels, and telling the tool of drops. The
//! regions themselves are the watch layer's (see the `pool` module), which
//! registers each array as its block is placed and forgets it as it is
//! freed.

use super::pool::Pool;
use super::{Arena, ArenaArray, ArenaResult, SEALED};
use crate::align::offset_of;
use crate::alloc::Allocation;
use crate::backend::Backend;
use crate::sanitizer::RegionMap;

impl<B: Backend> Arena<B> {
    /// Whether arrays allocated from now on get red zones: unregistered
    /// bytes after each array (at least the minimum alignment, and at least
    /// one element or row), so that a kernel overrunning an array is
    /// reported by compute-sanitizer as an access past that array rather
    /// than going unseen inside its neighbour. On by default for a device
    /// arena made under compute-sanitizer; `GPU_ALIGNED_RED_ZONES=1`/`0`
    /// sets the default for arenas made afterwards.
    pub fn set_red_zones(&mut self, on: bool) {
        self.pool.watch_mut().regions.set_red_zones(on);
        if self.pool.watching() {
            // No block is kept while arrays are watched: each needs its red
            // zone and region. (Nothing fails while nothing is waited for.)
            let _ = self.pool.kept_mut().reclaim(&mut self.backend, false);
        }
    }

    /// Whether arrays allocated now get red zones (see
    /// [`set_red_zones`](Arena::set_red_zones)).
    pub fn red_zones(&self) -> bool {
        self.pool.watch().regions.red_zones()
    }

    /// The live arrays by address, each with its size, red zone, element
    /// type, shape and label: what turns the allocation a compute-sanitizer
    /// report names into an array. Kept while a tool is attached or red
    /// zones are on; empty otherwise.
    pub fn regions(&self) -> RegionMap {
        // Arrays dropped but not yet taken back are no regions (their drop
        // told the tool, if one watches).
        let dropped = self
            .returns
            .held(|allocation| self.allocator().check_handle(allocation).is_ok());
        self.pool
            .watch()
            .regions
            .map(self.backend.base_address(), &dropped)
    }

    /// Labels an array (flat or pitched), for [`regions`](Arena::regions)
    /// and for the tools that print region names. Does nothing while no
    /// regions are kept, nor for an empty array (it has no region).
    ///
    /// # Errors
    ///
    /// [`ArenaError::Handle`](super::ArenaError::Handle) for a handle this
    /// arena does not hold.
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
        let base = self.backend.base_address();
        self.pool
            .watch_mut()
            .regions
            .labelled(base, allocation.offset(), label);
        Ok(())
    }

    /// Arms a handle's drop to tell the tool at once that its array is no
    /// region ([`DropWatch`](crate::sanitizer::DropWatch)) while a tool
    /// watches and no captured graph may replay a dropped array; disarms it
    /// otherwise. Called where either changes.
    pub(super) fn rewatch(&mut self) {
        if !self.pool.watch().regions.is_active() {
            return;
        }
        let watch = match self.pool.idle() {
            true => self
                .pool
                .watch()
                .regions
                .drop_watch(self.backend.base_address(), self.allocator().reset_stamp()),
            false => None,
        };
        self.returns.watch(watch);
    }

    /// The regions of the arrays taken back whose drops told the tool
    /// already are forgotten without telling it again.
    #[cold]
    #[inline(never)]
    pub(super) fn forget_dropped_regions(&mut self) {
        for offset in self.returned.unregistered.drain(..) {
            self.pool.watch_mut().regions.forget(offset);
        }
    }

    /// Every region goes (a reset).
    pub(super) fn regions_cleared(&mut self) {
        if self.pool.watch().regions.is_active() {
            self.backend.enter_for_tools();
            self.pool.watch_mut().regions.cleared();
        }
    }

    /// The buffer was trimmed to `capacity`: heaps past what the backend
    /// can still hold go (the heaps cover [`Grow::max_len`](crate::backend::Grow::max_len), which a
    /// backend may lower as it trims).
    pub(super) fn regions_trimmed(&mut self, capacity: usize) {
        self.backend.enter_for_tools();
        let base = self.backend.base_address();
        let extent = capacity.max(self.backend.max_len());
        self.pool
            .watch_mut()
            .regions
            .trimmed(base, offset_of(extent));
    }
}
