//! The arena's face of [`crate::sanitizer`]: red zones on or off, the map
//! from addresses to arrays, labels, and naming each array's region as it
//! is made.

use core::any::type_name;

use super::{Arena, ArenaResult, ArenaSlice, Pitched};
use crate::alloc::Allocation;
use crate::backend::Backend;
use crate::sanitizer::{RegionMap, RegionShape};

impl<B: Backend> Arena<B> {
    /// Whether arrays allocated from now on get red zones: unregistered
    /// bytes after each array (at least the minimum alignment, and at least
    /// one element or row), so that a kernel overrunning an array is
    /// reported by compute-sanitizer as an access past that array rather
    /// than going unseen inside its neighbour. On by default for a device
    /// arena made under compute-sanitizer; `GPU_ALIGNED_RED_ZONES=1`/`0`
    /// sets the default for arenas made afterwards.
    ///
    /// ```
    /// # let mut arena = gpu_aligned::arena::Arena::host(4096)?;
    /// arena.set_red_zones(true);
    /// let a = arena.alloc::<f32>(64)?; // 256 bytes, then a 256-byte red zone
    /// let b = arena.alloc::<f32>(64)?;
    /// assert_eq!(arena.offset(&b)? - arena.offset(&a)?, 512);
    /// # arena.free(a)?; arena.free(b)?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn set_red_zones(&mut self, on: bool) {
        self.regions.set_red_zones(on);
    }

    /// Whether arrays allocated now get red zones (see
    /// [`set_red_zones`](Arena::set_red_zones)).
    ///
    /// ```
    /// # let arena = gpu_aligned::arena::Arena::host(4096)?;
    /// assert!(!arena.red_zones() || std::env::var_os("GPU_ALIGNED_RED_ZONES").is_some());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn red_zones(&self) -> bool {
        self.regions.red_zones()
    }

    /// The live arrays by address, each with its size, red zone, element
    /// type, shape and label: what turns the allocation a compute-sanitizer
    /// report names into an array. Kept while a tool is attached or red
    /// zones are on; empty otherwise.
    ///
    /// ```
    /// # let mut arena = gpu_aligned::arena::Arena::host(4096)?;
    /// arena.set_red_zones(true);
    /// let weights = arena.alloc::<f32>(256)?;
    /// arena.label(&weights, "weights")?;
    /// let map = arena.regions();
    /// let region = map.starting_at(arena.address(&weights)?).unwrap();
    /// assert_eq!(region.name().to_string(), r#"f32[256] "weights""#);
    /// assert_eq!(region.bytes, 1024);
    /// # arena.free(weights)?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn regions(&self) -> RegionMap {
        self.regions.map(self.backend.base_address())
    }

    /// Labels an array, for [`regions`](Arena::regions) and for the tools
    /// that print region names. Does nothing while no regions are kept.
    ///
    /// # Errors
    ///
    /// [`ArenaError::Handle`](super::ArenaError::Handle) for a handle this
    /// arena does not hold.
    pub fn label<T>(&mut self, array: &ArenaSlice<T, B>, label: &str) -> ArenaResult<(), B> {
        self.label_allocation(&array.allocation, label)
    }

    /// Labels a pitched array (see [`label`](Arena::label)).
    ///
    /// # Errors
    ///
    /// As [`label`](Arena::label).
    pub fn label_pitched<T>(&mut self, array: &Pitched<T, B>, label: &str) -> ArenaResult<(), B> {
        self.label_allocation(&array.allocation, label)
    }

    fn label_allocation(&mut self, allocation: &Allocation, label: &str) -> ArenaResult<(), B> {
        self.allocator.check_handle(allocation)?;
        self.backend.enter_for_tools();
        let base = self.backend.base_address();
        self.regions.labelled(base, allocation.offset(), label);
        Ok(())
    }

    /// Names the region of an array of `T` just reserved.
    #[inline(always)]
    pub(super) fn name_region<T>(&mut self, allocation: &Allocation, shape: RegionShape) {
        self.name_region_as(allocation, type_name::<T>(), shape);
    }

    /// Names the region of an array of the type called `element`.
    #[inline(always)]
    pub(super) fn name_region_as(
        &mut self,
        allocation: &Allocation,
        element: &'static str,
        shape: RegionShape,
    ) {
        if self.regions.is_active() {
            self.region_named(allocation.offset(), element, shape);
        }
    }

    // The hooks' work, out of line: the arena calls them only while
    // regions are kept, after making the backend's context current for the
    // tool.

    #[cold]
    #[inline(never)]
    fn region_named(&mut self, offset: u64, element: &'static str, shape: RegionShape) {
        self.backend.enter_for_tools();
        let base = self.backend.base_address();
        self.regions.named(base, offset, element, shape);
    }

    #[cold]
    #[inline(never)]
    pub(super) fn region_reserved(&mut self, allocation: &Allocation, bytes: u64, red_zone: u64) {
        self.backend.enter_for_tools();
        let (base, capacity) = (self.backend.base_address(), self.allocator.capacity());
        self.regions
            .reserved(base, capacity, allocation.offset(), bytes, red_zone);
    }

    #[cold]
    #[inline(never)]
    pub(super) fn region_released(&mut self, offset: u64) {
        self.backend.enter_for_tools();
        let base = self.backend.base_address();
        self.regions.released(base, offset);
    }

    /// Every region goes (a reset).
    pub(super) fn regions_cleared(&mut self) {
        if self.regions.is_active() {
            self.backend.enter_for_tools();
            self.regions.cleared();
        }
    }

    /// The buffer was trimmed to `capacity`.
    pub(super) fn regions_trimmed(&mut self, capacity: u64) {
        self.backend.enter_for_tools();
        let base = self.backend.base_address();
        self.regions.trimmed(base, capacity);
    }
}
