//! The one way an array's bytes are reserved ([`Arena::reserve`]) and come back
//! ([`Arena::give_back`]); dropped arrays come back [`RETURN_BATCH`] at a time.

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

impl<B: Backend> Arena<B> {
    /// Reserves one array's bytes (`array` names it for the tools), growing if `grow` and it can.
    #[inline(always)]
    pub(super) fn reserve(
        &mut self,
        (bytes, align): (usize, usize),
        array: ArrayInfo,
        grow: bool,
    ) -> ArenaResult<Place<B>, B> {
        if bytes == 0 {
            return Ok(Place::empty());
        }
        let allocation = self.reserve_block(bytes, align, grow, || array)?;
        Ok(Place::new(allocation, bytes, self.returns.lend()))
    }

    /// [`reserve`](Self::reserve)'s block; `array` is asked only while
    /// regions are watched. Always inline (`docs/RESULTS.md`, "The hot path").
    #[inline(always)]
    fn reserve_block(
        &mut self,
        bytes: usize,
        align: usize,
        grow: bool,
        array: impl Fn() -> ArrayInfo,
    ) -> ArenaResult<Allocation, B> {
        // A power of two (else the allocator refuses it): a compare suffices.
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
        // A large array takes the waiting dropped arrays back first.
        let waiting = || self.returns.queued_bytes() >= bytes.saturating_mul(LARGE_TAKE_BACK);
        if bytes >= LARGE && waiting() {
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

    /// A kept block: an allocate-and-drop loop's whole allocation, inlined.
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

    /// A kept block for a large array, before or after the returns.
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

    /// Once nothing fits: the layers give back what they hold, the arena grows, then graphs are
    /// waited for.
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

    /// Gives back an array freed by hand (on an error, still the array's); inline, its whole path.
    #[inline(always)]
    pub(super) fn give_back(
        &mut self,
        allocation: Allocation,
        tracking: &mut B::Tracking,
    ) -> ArenaResult<(), B> {
        self.pool
            .release(&mut self.backend, allocation, tracking, Fate::Free)
    }

    /// Gives back the arrays dropped since the last call; whether any came.
    #[inline(never)]
    pub(super) fn take_returns(&mut self) -> bool {
        self.returns.take(&mut self.returned);
        let any = !self.returned.is_empty();
        let mut unused = core::mem::take(&mut self.returned.unused);
        self.pool.release_unused(&mut self.backend, &unused);
        unused.clear();
        self.returned.unused = unused;
        if !self.returned.used.is_empty() {
            self.return_used();
        }
        if !self.pool.idle() {
            self.release_graphs(false);
        }
        any
    }

    /// Gives back the arrays of dropped graphs replayed for the last time.
    #[inline(never)]
    fn release_graphs(&mut self, wait: bool) {
        if self.pool.release_finished(&mut self.backend, wait) && self.pool.idle() {
            self.rewatch();
        }
    }

    #[inline(never)]
    fn return_used(&mut self) {
        if !self.returned.unregistered.is_empty() {
            self.forget_dropped_regions();
        }
        let mut used = core::mem::take(&mut self.returned.used);
        for (block, mut tracking) in used.drain(..) {
            let backend = &mut self.backend;
            let released = self.pool.release(backend, block, &mut tracking, Fate::Keep);
            // One the backend failed to retire waits for the next call.
            if let Err(ArenaError::Backend(_)) = released {
                self.returns.requeue((block, tracking));
            }
        }
        self.returned.used = used;
    }

    /// Takes back every dropped array and waits for dropped graphs' replays.
    pub(super) fn drain_pending(&mut self) -> ArenaResult<(), B> {
        self.take_returns();
        let graphs = !self.pool.idle();
        self.pool.reclaim(&mut self.backend, true)?;
        if graphs && self.pool.idle() {
            self.rewatch();
        }
        Ok(())
    }

    /// Frees every array at once (older handles go stale), after stopping graphs and the device.
    ///
    /// # Errors
    ///
    /// [`ArenaError::Backend`] if the backend cannot wait; the arena is then
    /// left as it was, but for its graphs, which launch no more.
    pub fn reset(&mut self) -> ArenaResult<(), B> {
        // Forbid new work, then wait, then free: a graph launched meanwhile
        // would run over bytes handed out again.
        if !self.pool.capturing() {
            self.pool.stop_launches();
        }
        self.backend.quiesce().map_err(ArenaError::Backend)?;
        self.returns.take(&mut self.returned);
        self.forget_dropped_regions();
        self.returned.clear();
        self.pool.forget(); // and no graph launches again
        self.pool.offsets_mut().allocator.reset();
        let reset = crate::history::Event::new(crate::history::Kind::Reset);
        self.pool.offsets_mut().noted(None, |_| reset);
        self.regions_cleared(); // sanitizer hook: every region goes
        self.rewatch(); // a handle dropped from now on is stale if older
        Ok(())
    }

    /// Allocates `len` elements of `T` (holding what the buffer held) at a multiple of
    /// `align_of::<T>()` and [`min_align`](Arena::min_align).
    ///
    /// # Errors
    ///
    /// [`ArenaError::Alloc`] with [`AllocError::SizeOverflow`] when `len * size_of::<T>()`
    /// overflows, or the allocator's other errors (out of memory among them).
    #[inline(always)]
    pub fn alloc<T: GpuWords>(&mut self, len: usize) -> ArenaResult<ArenaSlice<T, B>, B> {
        let align = self.min_align.max(core::mem::align_of::<T>());
        let Some(bytes) = len.checked_mul(size_of::<T>()) else {
            return Err(AllocError::SizeOverflow.into());
        };
        if let Some(kept) = self.take_kept(bytes, align) {
            let place = Place::new(kept, bytes, self.returns.lend());
            return Ok(ArenaSlice::new(place, len));
        }
        // After the kept blocks, so the allocate-and-drop loop skips it.
        if bytes == 0 {
            return Ok(ArenaSlice::new(Place::empty(), len));
        }
        // A function pointer: the cold paths are one copy per backend.
        let describe: fn(RegionShape) -> ArrayInfo = ArrayInfo::of::<T>;
        let array = || describe(RegionShape::Array { len });
        let allocation = self.reserve_block(bytes, align, true, array)?;
        let place = Place::new(allocation, bytes, self.returns.lend());
        Ok(ArenaSlice::new(place, len))
    }

    /// Allocates `len` zeroed elements of `T`.
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

    /// Allocates a copy of `src`, as cudarc's `clone_htod` does.
    ///
    /// # Errors
    ///
    /// As [`alloc`](Arena::alloc) (an empty `src` makes an empty array), and
    /// [`ArenaError::Backend`] if the copy fails (the array is given back then).
    pub fn alloc_from<T: GpuWords>(&mut self, src: &[T]) -> ArenaResult<ArenaSlice<T, B>, B> {
        let mut array = self.alloc::<T>(src.len())?;
        self.write(&mut array, .., src)?;
        Ok(array)
    }

    /// Gives a handle's arrays back now, as dropping it would, or says why not.
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
        // One array inline; a handle of several out of line.
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

    /// [`free`](Self::free) for several arrays, all checked first.
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
            let error = error.into();
            return Err(FreeFailed { handle, error });
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
