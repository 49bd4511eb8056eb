//! The arena's face of the byte path (the `pool` module holds the layers
//! below it): the one way an array's bytes are reserved
//! ([`Arena::reserve`]) and the one way they come back
//! ([`Arena::give_back`]), and the verbs built on them: allocating,
//! freeing by hand, taking dropped arrays back, resetting.
//!
//! Dropped arrays wait on the shared list (the `returns` module) until an
//! allocation takes them back: at once when it would not fit without them,
//! otherwise once [`RETURN_BATCH`] wait, so the list's lock is taken once
//! per batch. Their bytes are never lost: they come back before the arena
//! grows or reports out of memory, and on [`trim`](Arena::trim) and
//! [`reset`](Arena::reset).

use core::mem::size_of;

use super::handle::{ArenaHandle, Place, SEALED};
use super::pool::{does_not_fit, Ask, Fate, Pool};
use super::tuning::{LARGE, LARGE_TAKE_BACK, RETURN_BATCH};
use super::{Arena, ArenaError, ArenaResult, ArenaSlice, FreeFailed};
use crate::align::offset_of;
use crate::alloc::{AllocError, Allocation};
use crate::backend::Backend;
use crate::sanitizer::{ArrayInfo, RegionShape};
use crate::GpuWords;

/// What one array asks of [`Arena::reserve`].
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
    /// pitched, carved or a column, is reserved here. A request for no
    /// bytes (an empty array) gets an empty place: no layer is asked.
    #[inline(always)]
    pub(super) fn reserve(&mut self, request: Request) -> ArenaResult<Place<B>, B> {
        self.reserve_place(request, true)
    }

    /// [`reserve`](Self::reserve) for `ThreadArena`'s shared arena: the
    /// layers give back what they hold, but the arena does not grow (the
    /// threads' slots give back theirs first).
    #[cfg(feature = "std")]
    pub(super) fn reserve_without_growing(&mut self, request: Request) -> ArenaResult<Place<B>, B> {
        self.reserve_place(request, false)
    }

    #[inline(always)]
    fn reserve_place(&mut self, request: Request, grow: bool) -> ArenaResult<Place<B>, B> {
        if request.bytes == 0 {
            return Ok(Place::empty());
        }
        let array = || request.array;
        let allocation = self.reserve_block(request.bytes, request.align, grow, array)?;
        Ok(Place::new(allocation, request.bytes, self.returns.lend()))
    }

    /// [`reserve`](Self::reserve)'s block: the alignment checked against the
    /// buffer's address, a batch of dropped arrays taken back, then the
    /// stack (a large array first takes back the dropped arrays if they
    /// span [`LARGE_TAKE_BACK`] times its bytes), and when nothing fits,
    /// [`reserve_refused`](Self::reserve_refused). `array` is asked only
    /// while regions are watched, so a flat array passes what makes its
    /// description, not the nine words of it. Always inline, the stack's
    /// fast paths with it (`docs/RESULTS.md`, "The hot path").
    #[inline(always)]
    fn reserve_block(
        &mut self,
        bytes: usize,
        align: usize,
        grow: bool,
        array: impl Fn() -> ArrayInfo,
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
        let ask = Ask {
            bytes,
            align,
            grow: false,
        };
        if bytes >= LARGE && self.large_returns_wait(bytes) {
            if let Some(kept) = self.take_back_large(ask) {
                return Ok(kept);
            }
        }
        match self.pool.reserve(&mut self.backend, ask, &array) {
            Err(refused) if does_not_fit(&refused) => {
                self.reserve_refused(Ask { grow, ..ask }, array(), refused)
            }
            other => other,
        }
    }

    /// [`reserve_block`](Self::reserve_block) when a kept block serves, after
    /// a waiting batch of dropped arrays is taken back: the allocation of an
    /// allocate-and-drop loop, small enough to inline where the array is
    /// allocated; `None` for anything else.
    #[inline(always)]
    fn take_kept(&mut self, bytes: usize, align: usize) -> Option<Allocation> {
        // An alignment past the base's is `reserve_block`'s error to report.
        if offset_of(align) > self.base_align {
            return None;
        }
        if self.returns.queued() >= RETURN_BATCH {
            self.take_returns();
        }
        let grow = false;
        self.pool.take(Ask { bytes, align, grow })
    }

    /// Whether the dropped arrays waiting span enough for a large array of
    /// `bytes` to take them back first (see [`LARGE_TAKE_BACK`]).
    #[inline(always)]
    fn large_returns_wait(&self, bytes: usize) -> bool {
        self.returns.queued_bytes() >= bytes.saturating_mul(LARGE_TAKE_BACK)
    }

    /// For a large array while enough dropped arrays wait: a kept block, or
    /// one of the dropped arrays' blocks once they came back. `None`: the
    /// stack reserves it (the kept layer frees its large blocks first).
    #[inline(never)]
    fn take_back_large(&mut self, ask: Ask) -> Option<Allocation> {
        if let Some(kept) = self.pool.take(ask) {
            return Some(kept);
        }
        match self.take_returns() {
            true => self.pool.take(ask),
            false => None,
        }
    }

    /// [`reserve_block`](Self::reserve_block) once nothing fits, asking again
    /// after each step: the layers give back what they hold (with the
    /// dropped arrays), then a growing arena grows (if `grow`), and only
    /// then are dropped graphs' last replays waited for.
    #[cold]
    #[inline(never)]
    fn reserve_refused(
        &mut self,
        growing: Ask,
        array: ArrayInfo,
        refused: ArenaError<B::Error>,
    ) -> ArenaResult<Allocation, B> {
        let array = || array;
        let ask = Ask {
            grow: false,
            ..growing
        };
        let taken = self.take_returns();
        if self.pool.reclaim(&mut self.backend, false)? | taken {
            if let Ok(allocation) = self.pool.reserve(&mut self.backend, ask, array) {
                return Ok(allocation);
            }
        }
        let refused = match growing.grow {
            false => refused,
            true => match self.pool.reserve(&mut self.backend, growing, array) {
                Ok(allocation) => return Ok(allocation),
                Err(error) if does_not_fit(&error) => refused,
                Err(error) => error,
            },
        };
        // Dropped graphs' arrays waiting for their last replay.
        if !self.pool.dropped() {
            return Err(refused);
        }
        self.drain_pending()?;
        match self.pool.reserve(&mut self.backend, ask, array) {
            Err(ArenaError::Alloc(AllocError::OutOfMemory { .. })) => Err(refused),
            other => other,
        }
    }

    /// Gives back the bytes of a live array, freed by hand (one a captured
    /// graph may use waits for the graph). On an error `tracking` is as it
    /// was and the bytes are still the array's. Inline: each layer's check
    /// and the allocator's free are a free by hand's whole path.
    #[inline(always)]
    pub(super) fn give_back(
        &mut self,
        allocation: Allocation,
        tracking: &mut B::Tracking,
    ) -> ArenaResult<(), B> {
        self.pool
            .release(&mut self.backend, allocation, tracking, Fate::Free)
    }

    /// Gives back the arrays dropped since the last call (taking the list's
    /// lock even when its count says it is empty: a drop on another thread
    /// may not show yet). Returns whether any came back. An array dropped
    /// after a reset is refused by the allocator's stamp, so it never frees
    /// a newer array in its slot; one the backend failed to retire goes back
    /// on the list. Out of line: [`alloc`](Arena::alloc) calls it from code
    /// inlined where arrays are allocated.
    #[inline(never)]
    pub(super) fn take_returns(&mut self) -> bool {
        self.returns.take(&mut self.returned);
        let any = !self.returned.is_empty();
        // Moved out (three words) while `self` keeps them.
        let mut unused = core::mem::take(&mut self.returned.unused);
        // The loop of an allocate-and-drop cycle (see the kept layer).
        self.pool.release_unused(&mut self.backend, &unused);
        unused.clear();
        self.returned.unused = unused;
        if !self.returned.used.is_empty() {
            self.return_used();
        }
        // The arrays of dropped graphs whose last replay finished too.
        if !self.pool.idle() {
            self.release_graphs(false);
        }
        any
    }

    /// Gives back the arrays of dropped graphs whose last replay finished
    /// (after waiting for it if `wait`; see `pool::graphs`); once no graph
    /// is left, drops tell the tool again (see [`rewatch`](Self::rewatch)).
    #[inline(never)]
    fn release_graphs(&mut self, wait: bool) {
        if self.pool.release_finished(&mut self.backend, wait) && self.pool.idle() {
            self.rewatch();
        }
    }

    /// Gives back the dropped arrays the backend's work used. Out of line:
    /// the allocate-and-drop loop of arrays never used never gets here.
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

    /// Gives back one dropped array to the stack; put back on the list if
    /// the backend failed to retire it.
    fn return_one(&mut self, allocation: Allocation, mut tracking: B::Tracking) {
        let released = self
            .pool
            .release(&mut self.backend, allocation, &mut tracking, Fate::Keep);
        if let Err(ArenaError::Backend(_)) = released {
            self.returns.requeue((allocation, tracking));
        }
    }

    /// Takes back every dropped array, waits for every pending free and
    /// hands its bytes back.
    pub(super) fn drain_pending(&mut self) -> ArenaResult<(), B> {
        self.take_returns();
        let graphs = !self.pool.idle();
        self.pool.reclaim(&mut self.backend, true)?;
        if graphs && self.pool.idle() {
            self.rewatch();
        }
        Ok(())
    }

    /// Frees every array at once; every handle made before becomes stale
    /// (and drops harmlessly). Every captured graph of the arena stops
    /// launching first; on a device it then waits until no work that may
    /// use the buffer is pending (arrays in use cannot be told apart).
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
        if !self.pool.capturing() {
            self.pool.stop_launches();
        }
        self.backend.quiesce().map_err(ArenaError::Backend)?;
        // Nothing can use the queued arrays any more: their trackings go.
        self.returns.take(&mut self.returned);
        self.forget_dropped_regions();
        self.returned.clear();
        self.pool.forget(); // and no graph launches again
        self.pool.offsets_mut().allocator.reset();
        self.regions_cleared(); // sanitizer hook: every region goes
        self.rewatch(); // a handle dropped from now on is stale if older
        Ok(())
    }

    /// Allocates an array of `len` elements of `T`, starting at a multiple of
    /// the larger of `align_of::<T>()` and the arena's
    /// [minimum alignment](Arena::min_align). The bytes are whatever the
    /// buffer held (zeros for a fresh buffer, an earlier array's elements
    /// for reused bytes): [`alloc_zeros`](Arena::alloc_zeros) and
    /// [`alloc_from`](Arena::alloc_from) set them.
    ///
    /// An array of no elements (`len == 0`) is accepted, as `Vec` and
    /// cudarc accept one: it takes no bytes (the allocator is not asked,
    /// no red zone or sanitizer region is made, [`live`](Arena::live) does
    /// not count it), reads back empty, its views are empty (at the
    /// buffer's base address, never to be dereferenced), and dropping or
    /// [freeing](Arena::free) it does nothing.
    ///
    /// # Errors
    ///
    /// [`ArenaError::Alloc`] with [`AllocError::SizeOverflow`] when
    /// `len * size_of::<T>()` overflows, or the allocator's other errors
    /// (out of memory among them).
    #[inline(always)]
    pub fn alloc<T: GpuWords>(&mut self, len: usize) -> ArenaResult<ArenaSlice<T, B>, B> {
        let align = self.align_for::<T>();
        let Some(bytes) = len.checked_mul(size_of::<T>()) else {
            return Err(AllocError::SizeOverflow.into());
        };
        if let Some(kept) = self.take_kept(bytes, align) {
            let place = Place::new(kept, bytes, self.returns.lend());
            return Ok(ArenaSlice::new(place, len));
        }
        // After the kept blocks, which never hold an empty array: the
        // allocate-and-drop loop pays nothing for this test.
        if bytes == 0 {
            return Ok(ArenaSlice::new(Place::empty(), len));
        }
        // The element type comes as the function that describes it, so the
        // cold paths are one copy per backend, not one per element type.
        let describe: fn(RegionShape) -> ArrayInfo = ArrayInfo::of::<T>;
        let array = || describe(RegionShape::Array { len });
        let allocation = self.reserve_block(bytes, align, true, array)?;
        let place = Place::new(allocation, bytes, self.returns.lend());
        Ok(ArenaSlice::new(place, len))
    }

    /// Allocates an array of `len` elements of `T`, every byte zero (on a
    /// device, zeroed on the arena's stream).
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
    /// # Errors
    ///
    /// As [`alloc`](Arena::alloc) (an empty `src` makes an empty array),
    /// and [`ArenaError::Backend`] if the copy fails (the array is given
    /// back then).
    pub fn alloc_from<T: GpuWords>(&mut self, src: &[T]) -> ArenaResult<ArenaSlice<T, B>, B> {
        let mut array = self.alloc::<T>(src.len())?;
        self.write(&mut array, .., src)?;
        Ok(array)
    }

    /// Gives an array (or every array a handle holds) back now, as dropping
    /// it would, but says when the handle is not this arena's. Never needed:
    /// dropping is enough.
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
                checked = self.allocator().check_handle(&place.allocation);
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
