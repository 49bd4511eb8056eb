//! The one way an array's bytes are reserved ([`Arena::reserve`]) and the one
//! way they come back ([`Arena::give_back`]), and the verbs built on them:
//! allocating (plain, zeroed, filled from a slice), freeing by hand, taking
//! dropped arrays back, waiting for the device, resetting.
//!
//! A dropped array's block sits on the shared list (see the `returns`
//! module) until [`reserve`](Arena::reserve) takes the list back: as soon as
//! an array does not fit without it, and otherwise once [`RETURN_BATCH`]
//! arrays wait, so that the lock the list needs is taken once for several
//! drops rather than once per allocation (allocating and dropping one array
//! in a loop costs little more than allocating and freeing it). Bytes of a
//! dropped array are never lost: the arena takes them back before it would
//! grow or report out of memory, and on [`trim`](Arena::trim) and
//! [`reset`](Arena::reset). On a device the bytes are then handed out again
//! only once the fence the backend recorded at that point has passed: every
//! use recorded on the array, on any stream, has finished. A dropped
//! array's block that nothing can use any more is kept for the next array
//! of its size (see the `reuse` module), which is how a loop that allocates
//! and drops arrays of a few sizes stays out of the allocator.

use core::mem::size_of;

use super::handle::{ArenaHandle, Place, SEALED};
use super::tuning::{LARGE, LARGE_TAKE_BACK, RETURN_BATCH};
use super::{Arena, ArenaError, ArenaResult, ArenaSlice, FreeFailed};
use crate::align::offset_of;
use crate::alloc::{AllocError, Allocation, Allocator};
use crate::backend::Backend;
use crate::sanitizer::{ArrayInfo, RegionShape};
use crate::GpuWords;

/// What one array asks of [`Arena::reserve`]: its bytes and alignment, and,
/// for whatever watches arrays come and go, its element type.
#[derive(Clone, Copy, Debug)]
pub(super) struct Request {
    pub(super) bytes: usize,
    pub(super) align: usize,
    /// The element type and shape: the array's name for the tools that
    /// watch kernels (see `crate::sanitizer`), and its red zone's size.
    pub(super) array: ArrayInfo,
}

impl Request {
    /// A flat array of `len` elements, `bytes` at `align`, whose element
    /// type `describe` names. (`Arena`'s own flat arrays pass `describe`
    /// down instead, so only `ThreadArena`, which needs `std`, builds one.)
    #[cfg(feature = "std")]
    pub(super) fn flat(
        bytes: usize,
        align: usize,
        len: usize,
        describe: fn(RegionShape) -> ArrayInfo,
    ) -> Request {
        Request {
            bytes,
            align,
            array: describe(RegionShape::Array { len }),
        }
    }
}

impl<B: Backend> Arena<B> {
    /// Reserves the bytes of one array: every array of the arena, flat,
    /// pitched, carved or a column, is reserved here. Dropped arrays come
    /// back first once a batch of them waits, then freed ones whose fences
    /// have passed; a kept block of the exact size is taken first; when
    /// nothing fits, every dropped array and kept block comes back, then
    /// a growing arena grows, and only then are pending frees waited for. `align` is relative to the buffer's address, which is checked to
    /// be aligned as well.
    ///
    /// Always inline (its slow paths are out of line): a program that
    /// allocates arrays of several element types from one arena made LLVM
    /// keep it out of line, one copy called from each `alloc::<T>`, which
    /// cost every allocation a call and a copy of the place it returns (the
    /// device benchmark's arena did; the host one, of one type, did not).
    ///
    /// A request for no bytes (an empty array) gets an empty place: no
    /// allocator call, no red zone, no region.
    #[inline(always)]
    pub(super) fn reserve(&mut self, request: Request) -> ArenaResult<Place<B>, B> {
        if request.bytes == 0 {
            return Ok(Place::empty());
        }
        let allocation = self.reserve_block(request.bytes, request.align, || request.array)?;
        Ok(Place::new(allocation, request.bytes, self.returns.lend()))
    }

    /// [`reserve`](Self::reserve)'s block, before it becomes a place.
    /// `array` is asked only while regions are watched: a flat array's
    /// allocation passes what makes it (see [`alloc`](Arena::alloc))
    /// rather than the description itself, nine words it would copy on
    /// every allocation.
    #[inline(always)]
    fn reserve_block(
        &mut self,
        bytes: usize,
        align: usize,
        array: impl FnOnce() -> ArrayInfo,
    ) -> ArenaResult<Allocation, B> {
        // `align` is a power of two (the allocator refuses others), so a
        // compare replaces a division.
        if offset_of(align) > self.base_align && align.is_power_of_two() {
            return Err(ArenaError::MisalignedBase {
                base: self.backend.base_address(),
                align,
            });
        }
        if self.returns.queued() >= RETURN_BATCH {
            self.take_returns();
        }
        if !self.pending.is_empty() {
            self.reclaim()?;
        }
        // Sanitizer hook (the one place arrays are reserved): while regions
        // are kept, the array also gets its red zone and is registered and
        // named, out of line, and no block is reused without that.
        let allocation = if self.regions.is_active() {
            self.allocate_watched(bytes, align, array())?
        } else {
            match self.reuse.take(bytes, align) {
                Some(kept) => kept,
                None => {
                    // See `take_back_large`.
                    let large = bytes >= LARGE
                        && (self.large_returns_wait(bytes) || self.reuse.may_hold_large());
                    let taken = if large {
                        self.take_back_large(bytes, align)
                    } else {
                        None
                    };
                    match taken {
                        Some(kept) => kept,
                        None => self.allocate(bytes, align)?,
                    }
                }
            }
        };
        Ok(allocation)
    }

    /// For a large array (see the `reuse` module) that no kept block
    /// served: a dropped array of its size not taken back yet, if enough
    /// wait (see [`LARGE_TAKE_BACK`]); otherwise `None`, once the large kept
    /// blocks went back to the allocator, so that the holes they sat in
    /// merge before the array is placed. An allocate-and-drop loop of one
    /// large size takes the first branch every fourth pair. Out of line: a
    /// large array freed by hand (nothing waits, nothing large is kept)
    /// pays two compares for it.
    #[inline(never)]
    fn take_back_large(&mut self, bytes: usize, align: usize) -> Option<Allocation> {
        if self.large_returns_wait(bytes) && self.take_returns() {
            if let Some(kept) = self.reuse.take(bytes, align) {
                return Some(kept);
            }
        }
        let allocator = &mut self.allocator;
        self.reuse
            .drain_large(|block| free_kept_block(allocator, block));
        None
    }

    /// Whether the dropped arrays waiting span enough for a large array of
    /// `bytes` to take them back first (see [`LARGE_TAKE_BACK`]).
    #[inline(always)]
    fn large_returns_wait(&self, bytes: usize) -> bool {
        self.returns.queued_bytes() >= bytes.saturating_mul(LARGE_TAKE_BACK)
    }

    /// The allocator's block for `bytes` at `align`, growing the arena or
    /// waiting for pending frees when nothing fits.
    ///
    /// The first try inlines the allocator's lookup; what follows a refusal
    /// is out of line. Always inline: left to LLVM it stayed a call of its
    /// own from every reservation, its registers saved and its result
    /// copied through memory (`docs/RESULTS.md`, "The hot path", has the
    /// cost).
    #[inline(always)]
    pub(super) fn allocate(&mut self, bytes: usize, align: usize) -> ArenaResult<Allocation, B> {
        match self.place(bytes, align) {
            Err(
                error @ (AllocError::OutOfMemory { .. } | AllocError::SizeExceedsCapacity { .. }),
            ) => self.allocate_refused(bytes, align, ArenaError::Alloc(error)),
            other => Ok(other?),
        }
    }

    /// [`allocate`](Self::allocate) once the allocator refused: takes back
    /// dropped arrays and kept blocks, grows, or waits for pending frees,
    /// trying again after each.
    #[inline(never)]
    fn allocate_refused(
        &mut self,
        bytes: usize,
        align: usize,
        refused: ArenaError<B::Error>,
    ) -> ArenaResult<Allocation, B> {
        // The dropped arrays not taken back yet (on any thread), and the
        // blocks kept for other sizes.
        let taken = self.take_returns();
        if self.free_kept() | taken {
            if let Ok(allocation) = self.place_again(bytes, align) {
                return Ok(allocation);
            }
        }
        // Nothing fits. Growing waits for no stream, waiting for the pending
        // frees may, so a growing arena grows first.
        let refused = match self.grow_for(bytes, align) {
            Ok(true) => return Ok(self.place_again(bytes, align)?),
            Ok(false) => refused,
            Err(error) => error,
        };
        // Graph hook: or dropped graphs' arrays wait for their last replay.
        if self.pending.is_empty() && !self.graphs_dropped() {
            return Err(refused);
        }
        self.drain_pending()?;
        match self.place_again(bytes, align) {
            Err(AllocError::OutOfMemory { .. }) => Err(refused),
            other => Ok(other?),
        }
    }

    /// Gives back the bytes of a live array: every array's bytes come back
    /// here, dropped or freed. At once when no stream can still use them,
    /// otherwise once the fence the backend records now has passed.
    ///
    /// On an error `tracking` is as it was (the backend's promise) and the
    /// bytes are still the array's.
    ///
    /// Inline, for an array no graph holds, no region watches and no stream
    /// used: the allocator's free, which checks the handle itself, inlines
    /// here (a free by hand's whole path); the rest is out of line.
    #[inline(always)]
    pub(super) fn give_back(
        &mut self,
        allocation: Allocation,
        tracking: &mut B::Tracking,
    ) -> ArenaResult<(), B> {
        if self.graphs.idle() && !self.regions.is_active() && !self.backend.needs_retire(tracking) {
            return Ok(self.free_offsets_inline(allocation)?);
        }
        self.give_back_slowly(allocation, tracking)
    }

    /// [`give_back`](Self::give_back) for an array a graph may hold, a
    /// region watches or a stream used.
    #[inline(never)]
    fn give_back_slowly(
        &mut self,
        allocation: Allocation,
        tracking: &mut B::Tracking,
    ) -> ArenaResult<(), B> {
        // Graph hook: an array a captured graph may use waits for it.
        if self.held_by_graph(allocation, tracking) {
            return Ok(());
        }
        if !self.backend.needs_retire(tracking) {
            // The sanitizer hook is in `free_block`.
            return Ok(self.free_block(allocation)?);
        }
        self.allocator.check_handle(&allocation)?;
        match self.backend.retire(tracking).map_err(ArenaError::Backend)? {
            None => Ok(self.free_block(allocation)?),
            Some(fence) => {
                self.pending.push_back((allocation, fence));
                Ok(())
            }
        }
    }

    /// Gives back the arrays dropped since the last call (taking the list's
    /// lock even when its count says it is empty: a drop on another thread
    /// may not show yet). Returns whether any came back.
    ///
    /// An array of another generation (dropped after a reset) is refused by
    /// the allocator's stamp and only its tracking is dropped, so a stale
    /// entry never frees a newer array in the same slot. One the backend
    /// failed to retire goes back on the list, for the next call.
    ///
    /// Out of line: [`alloc`](Arena::alloc) calls it once a batch waits,
    /// from code inlined where arrays are allocated.
    #[inline(never)]
    pub(super) fn take_returns(&mut self) -> bool {
        self.returns.take(&mut self.returned);
        let any = !self.returned.is_empty();
        // Moved out (three words) while `self` keeps them.
        let mut unused = core::mem::take(&mut self.returned.unused);
        self.return_unused(&unused);
        unused.clear();
        self.returned.unused = unused;
        if !self.returned.used.is_empty() {
            self.return_used();
        }
        // Graph hook: the arrays of dropped graphs come back here too.
        if !self.graphs.idle() {
            self.release_graphs(false);
        }
        any
    }

    /// Gives back dropped arrays that the backend's work never used (see
    /// the `returns` module): kept for reuse at once, as on the host,
    /// unless a captured graph may use them (used inside a capture, an
    /// array gets no tracking of its own). The loop of an allocate-and-drop
    /// cycle: while no graph is held and no region watched (which it asks
    /// once for all), each block costs a renewal and a push.
    #[inline]
    fn return_unused(&mut self, unused: &[Allocation]) {
        if !self.graphs.idle() || self.regions.is_active() {
            return self.return_unused_slowly(unused);
        }
        for &allocation in unused {
            let Some(renewed) = self.allocator.renew(&allocation) else {
                self.unkept(allocation);
                continue;
            };
            let allocator = &mut self.allocator;
            if let Err(unkept) = self
                .reuse
                .keep(renewed, |evicted| free_kept_block(allocator, evicted))
            {
                self.unkept(unkept);
            }
        }
    }

    /// [`return_unused`](Self::return_unused) while a graph may hold
    /// arrays or regions are watched, one array at a time.
    #[inline(never)]
    fn return_unused_slowly(&mut self, unused: &[Allocation]) {
        for &allocation in unused {
            if !self.held_by_graph(allocation, &mut B::Tracking::default()) {
                self.keep(allocation);
            }
        }
    }

    /// Gives back the dropped arrays the backend's work used (see
    /// [`take_returns`](Self::take_returns)). Out of line: the
    /// allocate-and-drop loop of arrays never used never gets here.
    #[inline(never)]
    fn return_used(&mut self) {
        // Drops that told the tool are on this list (see `returns`).
        if !self.returned.unregistered.is_empty() {
            self.forget_dropped_regions();
        }
        let mut used = core::mem::take(&mut self.returned.used);
        for (allocation, tracking) in used.drain(..) {
            self.return_one(allocation, tracking);
        }
        self.returned.used = used;
    }

    /// Gives back one dropped array (see [`take_returns`](Self::take_returns)).
    #[inline]
    pub(super) fn return_one(&mut self, allocation: Allocation, mut tracking: B::Tracking) {
        if self.held_by_graph(allocation, &mut tracking) {
            // Graph hook: kept for a captured graph (see `graphs`).
        } else if !self.backend.needs_retire(&tracking) {
            self.keep(allocation);
        } else {
            self.retire_returned(allocation, tracking);
        }
    }

    /// Gives back a dropped array that was used on the device (its bytes
    /// wait for a fence), or puts it back on the list if the backend
    /// failed to retire it. Out of line: arrays that need no fence, which
    /// [`return_one`](Self::return_one) keeps, are the ones a fast
    /// allocate-and-drop loop makes.
    #[inline(never)]
    fn retire_returned(&mut self, allocation: Allocation, mut tracking: B::Tracking) {
        if let Err(ArenaError::Backend(_)) = self.give_back(allocation, &mut tracking) {
            self.returns.requeue((allocation, tracking));
        }
    }

    /// Keeps the block of an array given back that nothing uses any more
    /// for the next array of its size, under a new stamp, or frees it. A
    /// stale block (dropped after a reset) is neither: the allocator refuses
    /// it, and it frees nothing.
    #[inline]
    fn keep(&mut self, allocation: Allocation) {
        if self.regions.is_active() {
            // Watched arrays are registered one by one: the block goes back
            // (and stops being a region), refused only if stale.
            let _ = self.free_block(allocation);
            return;
        }
        let Some(renewed) = self.allocator.renew(&allocation) else {
            return self.unkept(allocation);
        };
        let allocator = &mut self.allocator;
        if let Err(unkept) = self
            .reuse
            .keep(renewed, |evicted| free_kept_block(allocator, evicted))
        {
            self.unkept(unkept);
        }
    }

    /// Frees a block that is not kept: its size's stack is full, or the
    /// allocator would not renew it (stale, dropped after a reset, or the
    /// stamps are spent). Out of line: a loop over a few sizes keeps every
    /// block it drops.
    #[cold]
    #[inline(never)]
    fn unkept(&mut self, block: Allocation) {
        // Refused only for a stale block, which is nobody's.
        let _ = self.free_offsets(block);
    }

    /// Gives every kept block to the allocator. Returns whether any was.
    fn free_kept(&mut self) -> bool {
        let allocator = &mut self.allocator;
        let any = self.reuse.len() != 0;
        self.reuse.drain(|block| free_kept_block(allocator, block));
        any
    }

    /// Keeps (or frees) the bytes of given-back arrays whose fences have
    /// passed, oldest first, without waiting. Out of line, so that
    /// [`reserve`](Arena::reserve) stays small enough to inline.
    #[inline(never)]
    fn reclaim(&mut self) -> ArenaResult<(), B> {
        while let Some((_, fence)) = self.pending.front() {
            if !self
                .backend
                .fence_passed(fence)
                .map_err(ArenaError::Backend)?
            {
                break;
            }
            if let Some((allocation, _)) = self.pending.pop_front() {
                self.keep(allocation);
            }
        }
        Ok(())
    }

    /// Takes back every dropped array, waits for every pending free and
    /// hands its bytes back.
    pub(super) fn drain_pending(&mut self) -> ArenaResult<(), B> {
        self.take_returns();
        self.release_graphs(true); // graph hook
        self.free_kept();
        while let Some((_, fence)) = self.pending.front() {
            self.backend
                .wait_fence(fence)
                .map_err(ArenaError::Backend)?;
            if let Some((allocation, _)) = self.pending.pop_front() {
                self.free_block(allocation)?;
            }
        }
        Ok(())
    }

    /// Frees every array at once; every handle made before becomes stale
    /// (and drops harmlessly). Every captured graph
    /// of the arena stops launching first; on a device it then waits until
    /// no work that may use the buffer is pending, since arrays still in use
    /// on a stream cannot be told apart from the others.
    ///
    /// ```
    /// # let mut arena = gpu_aligned::arena::Arena::host(4096)?;
    /// let a = arena.alloc::<u8>(10)?;
    /// arena.reset()?;
    /// assert_eq!(arena.live(), 0);
    /// assert!(arena.offset(&a).is_err()); // stale
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`ArenaError::Backend`] if the backend cannot wait; the arena is then
    /// left as it was, but for its graphs, which launch no more.
    pub fn reset(&mut self) -> ArenaResult<(), B> {
        // Forbid new work, then wait, then free (the order the arena's drop
        // follows): a graph launched from another thread while the device
        // is waited on would run after the wait, over bytes handed out again.
        // Not during a capture, which the wait refuses: the arena stays as it
        // was.
        if !self.graphs.capturing() {
            self.graphs.stop_launches();
        }
        self.backend.quiesce().map_err(ArenaError::Backend)?;
        // Nothing can use the queued arrays any more: their trackings go.
        self.returns.take(&mut self.returned);
        self.forget_dropped_regions();
        self.returned.clear();
        self.pending.clear();
        self.reuse.clear();
        self.graphs.orphan_all(); // graph hook: no graph launches again
        self.allocator.reset();
        self.regions_cleared(); // sanitizer hook: every region goes
        self.rewatch(); // a handle dropped from now on is stale if older
        Ok(())
    }

    /// Allocates an array of `len` elements of `T`, starting at a multiple of
    /// [`align_for::<T>()`](Arena::align_for). The bytes are whatever the
    /// buffer held (zeros for a fresh buffer, an earlier array's elements
    /// for reused bytes): [`alloc_zeros`](Arena::alloc_zeros) and
    /// [`alloc_from`](Arena::alloc_from) set them.
    ///
    /// ```
    /// # let mut arena = gpu_aligned::arena::Arena::host(4096)?;
    /// let a = arena.alloc::<f32>(100)?;
    /// assert_eq!(a.len(), 100);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// An array of no elements (`len == 0`) is accepted, as `Vec` and
    /// cudarc accept one: it takes no bytes (the allocator is not asked,
    /// no red zone or sanitizer region is made, [`live`](Arena::live) does
    /// not count it), reads back empty, its views are empty, its
    /// [`address`](Arena::address) is the buffer's base, and dropping or
    /// [freeing](Arena::free) it does nothing.
    ///
    /// ```
    /// # let mut arena = gpu_aligned::arena::Arena::host(4096)?;
    /// let none = arena.alloc::<f32>(0)?;
    /// assert_eq!((none.len(), none.size_bytes(), arena.live()), (0, 0, 0));
    /// assert_eq!(arena.to_vec(&none)?, []);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`ArenaError::Alloc`] with [`AllocError::SizeOverflow`] when
    /// `len * size_of::<T>()` overflows, or the allocator's other errors
    /// (out of memory among them).
    #[inline(always)]
    pub fn alloc<T: GpuWords>(&mut self, len: usize) -> ArenaResult<ArenaSlice<T, B>, B> {
        // Always inline, a kept block's path and a call for the rest: out
        // of line, every allocation paid a call, the saving of six
        // registers and its result written through memory (the cost is in
        // `docs/RESULTS.md`, "The hot path").
        let align = self.align_for::<T>();
        let Some(bytes) = len.checked_mul(size_of::<T>()) else {
            return Err(AllocError::SizeOverflow.into());
        };
        if let Some(place) = self.reserve_kept(bytes, align) {
            return Ok(ArenaSlice::new(place, len));
        }
        // After the kept blocks, which never hold an empty array: the
        // allocate-and-drop loop pays nothing for this test.
        if bytes == 0 {
            return Ok(ArenaSlice::new(Place::empty(), len));
        }
        let allocation = self.reserve_slowly(bytes, align, len, ArrayInfo::of::<T>)?;
        let place = Place::new(allocation, bytes, self.returns.lend());
        Ok(ArenaSlice::new(place, len))
    }

    /// What [`reserve`](Self::reserve) does when it would do no more than
    /// take a kept block, after taking back a batch of dropped arrays if
    /// one waits: no pending frees to look at, no regions watched. The
    /// allocation of an allocate-and-drop loop, small enough to inline
    /// where the array is allocated; anything else is `None`, and
    /// `reserve` does it.
    #[inline(always)]
    fn reserve_kept(&mut self, bytes: usize, align: usize) -> Option<Place<B>> {
        // An alignment past the base's is `reserve`'s error to report.
        if offset_of(align) > self.base_align || self.regions.is_active() {
            return None;
        }
        if self.returns.queued() >= RETURN_BATCH {
            self.take_returns();
        }
        // Arrays used on a stream wait for their fences (`reserve` looks).
        if !self.pending.is_empty() {
            return None;
        }
        let kept = self.reuse.take(bytes, align)?;
        Some(Place::new(kept, bytes, self.returns.lend()))
    }

    /// [`reserve`](Self::reserve)'s block, out of line: for a flat array
    /// of `len` elements that [`reserve_kept`](Self::reserve_kept) could
    /// not serve, one copy per backend rather than one inlined per element
    /// type (so the element type comes as the function that describes it).
    /// The block alone comes back through memory, and becomes a place where
    /// it is used (a place is twice its size).
    #[inline(never)]
    fn reserve_slowly(
        &mut self,
        bytes: usize,
        align: usize,
        len: usize,
        describe: fn(RegionShape) -> ArrayInfo,
    ) -> ArenaResult<Allocation, B> {
        self.reserve_block(bytes, align, || describe(RegionShape::Array { len }))
    }

    /// Allocates an array of `len` elements of `T`, every byte zero (on a
    /// device, zeroed on the arena's stream).
    ///
    /// ```
    /// # let mut arena = gpu_aligned::arena::Arena::host(256)?;
    /// let mut a = arena.alloc::<u32>(4)?;
    /// arena.write(&mut a, &[1, 2, 3, 4])?;
    /// drop(a);
    /// let b = arena.alloc_zeros::<u32>(4)?; // the same bytes, zeroed
    /// assert_eq!(arena.offset(&b)?, 0);
    /// assert_eq!(arena.to_vec(&b)?, [0, 0, 0, 0]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`alloc`](Arena::alloc), and [`ArenaError::Backend`] if the
    /// zero-fill fails (the array is given back then).
    pub fn alloc_zeros<T: GpuWords>(&mut self, len: usize) -> ArenaResult<ArenaSlice<T, B>, B> {
        let mut array = self.alloc::<T>(len)?;
        self.zero(&mut array)?;
        Ok(array)
    }

    /// Allocates an array holding a copy of `src` (on a device, copied on
    /// the arena's stream), as cudarc's `clone_htod` does.
    ///
    /// ```
    /// # let mut arena = gpu_aligned::arena::Arena::host(4096)?;
    /// let a = arena.alloc_from(&[1.0f32, 2.0, 3.0])?;
    /// assert_eq!((a.len(), arena.to_vec(&a)?), (3, vec![1.0, 2.0, 3.0]));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`alloc`](Arena::alloc) (an empty `src` makes an empty array),
    /// and [`ArenaError::Backend`] if the copy fails (the array is given
    /// back then).
    pub fn alloc_from<T: GpuWords>(&mut self, src: &[T]) -> ArenaResult<ArenaSlice<T, B>, B> {
        let mut array = self.alloc::<T>(src.len())?;
        self.write(&mut array, src)?;
        Ok(array)
    }

    /// Gives an array (or every array a handle holds) back now, as dropping
    /// it would, but says when the handle is not this arena's. Never needed:
    /// dropping is enough.
    ///
    /// ```
    /// use gpu_aligned::arena::Arena;
    ///
    /// let mut mine = Arena::host(4096)?;
    /// let mut theirs = Arena::host(4096)?;
    /// let a = mine.alloc::<u32>(4)?;
    /// let refused = theirs.free(a).unwrap_err(); // not `theirs`'s
    /// mine.free(refused.handle)?;               // still live where it belongs
    /// assert_eq!(mine.live(), 0);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`FreeFailed`] with the handle itself when it is another arena's or
    /// stale ([`ArenaError::Handle`]: nothing was given back), or when the
    /// backend failed ([`ArenaError::Backend`]): the arrays given back
    /// before the failure are gone from the handle, the others still live.
    #[inline]
    pub fn free<H: ArenaHandle<B>>(
        &mut self,
        mut handle: H,
    ) -> Result<(), FreeFailed<H, B::Error>> {
        // Inline for one array (`give_back` checks it before anything
        // changes), which a loop freeing arrays by hand then pays no call
        // for; a handle of several arrays is out of line.
        if let Some(place) = handle.only_place(SEALED) {
            if place.is_held() {
                match self.give_back(place.allocation, &mut place.tracking) {
                    Ok(()) => self.returns.ended_by_hand(place),
                    Err(error) => return Err(FreeFailed { handle, error }),
                }
            }
            return Ok(());
        }
        self.free_each(handle)
    }

    /// [`free`](Self::free) for a handle of several arrays: every array is
    /// checked before any is given back.
    #[inline(never)]
    fn free_each<H: ArenaHandle<B>>(
        &mut self,
        mut handle: H,
    ) -> Result<(), FreeFailed<H, B::Error>> {
        let mut checked = Ok(());
        handle.places(SEALED, &mut |place| {
            if place.is_held() && checked.is_ok() {
                checked = self.allocator.check_handle(&place.allocation);
            }
        });
        if let Err(error) = checked {
            return Err(FreeFailed {
                handle,
                error: error.into(),
            });
        }
        let mut given = Ok(());
        handle.places(SEALED, &mut |place| {
            if !place.is_held() || given.is_err() {
                return;
            }
            given = self.give_back(place.allocation, &mut place.tracking);
            if given.is_ok() {
                self.returns.ended_by_hand(place);
            }
        });
        given.map_err(|error| FreeFailed { handle, error })
    }
}

/// Frees a block the arena kept for reuse: renewed when it was kept, and
/// held by nothing else, so the allocator takes it.
fn free_kept_block(allocator: &mut Allocator, block: Allocation) {
    let freed = allocator.free(block);
    debug_assert!(freed.is_ok(), "a kept block is live");
}
