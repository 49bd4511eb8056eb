//! [`ThreadArena`]: a cache per thread in front of one shared [`Arena`]. A slot lends a kept block
//! under its dropped array's stamp, sound as only that array's one handle could bring it back. Lock
//! order: the shared arena, the slots, one slot, a list of returns; no slot is held across a wait
//! for the shared arena or a backend call.

use core::mem::{align_of, size_of};
use core::ops::Deref;
use std::any::Any;
use std::cell::RefCell;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, Weak};
use std::vec::Vec;

use super::handle::Place;
use super::pool::{does_not_fit, Pool, Reuse};
use super::returns::{Returned, ReturnsOwner, Taken};
use super::tuning::{LARGE, RETURN_BATCH, SPILL_BATCH};
use super::{Arena, ArenaError, ArenaResult, ArenaSlice};
use crate::align::offset_of;
use crate::alloc::{AllocError, Allocation, Stats};
use crate::backend::Backend;
use crate::sanitizer::{ArrayInfo, RegionShape};
use crate::spin::{SpinGuard, SpinLock};
use crate::GpuWords;

/// An [`Arena`] many threads allocate from and drop into at once: each thread's slot keeps the
/// blocks its dropped arrays held for its next array of their size, so the shared arena (whose
/// verbs [`lock`](ThreadArena::lock) lends) is locked only on a miss. Blocks a stream used, or
/// watched for red zones, go back to the shared arena, and an array that does not fit takes back
/// what every slot keeps first.
///
/// ```
/// use gpu_aligned::arena::{Arena, ThreadArena};
///
/// let arena = ThreadArena::new(Arena::host(1 << 20)?);
/// let kept = std::thread::scope(|scope| {
///     for _ in 0..4 {
///         // Each thread's next array of a size reuses the one it dropped.
///         scope.spawn(|| (0..100).for_each(|_| drop(arena.alloc::<f32>(256).unwrap())));
///     }
///     // An array made on one thread and dropped on another.
///     scope.spawn(|| arena.alloc_from(&[1u32, 2, 3]).unwrap()).join().unwrap()
/// });
/// assert_eq!(arena.lock().to_vec(&kept)?, [1, 2, 3]);
/// assert_eq!(arena.live(), 1);
/// drop(kept);
/// arena.flush()?; // every thread's kept blocks back to the shared arena
/// assert_eq!((arena.live(), arena.stats().free), (0, 1 << 20));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct ThreadArena<B: Backend> {
    shared: Arc<Shared<B>>,
}

impl<B: Backend> core::fmt::Debug for ThreadArena<B> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("ThreadArena")
            .field("id", &self.shared.id)
            .finish_non_exhaustive()
    }
}

/// The shared arena, locked ([`ThreadArena::lock`]).
pub struct ArenaLock<'a, B: Backend>(MutexGuard<'a, Arena<B>>);

impl<B: Backend> Deref for ArenaLock<'_, B> {
    type Target = Arena<B>;

    fn deref(&self) -> &Arena<B> {
        &self.0
    }
}

impl<B: Backend> core::fmt::Debug for ArenaLock<'_, B> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        core::fmt::Debug::fmt(&*self.0, f)
    }
}

struct Shared<B: Backend> {
    id: u64,
    /// The arena's alignments, so a cache hit needs no lock.
    min_align: usize,
    base_align: u64,
    core: Mutex<Arena<B>>,
    slots: Mutex<Vec<Arc<Slot<B>>>>,
}

/// One thread's cache, on cache lines of its own.
#[repr(align(128))]
struct Slot<B: Backend> {
    claimed: AtomicBool,
    shared: Weak<Shared<B>>,
    cache: SpinLock<Cache<B>>,
}

struct Cache<B: Backend> {
    returns: ReturnsOwner<B>,
    returned: Taken<B>,
    kept: Reuse<true>,
    /// What goes to the shared arena at the next occasion.
    spill: Vec<Returned<B>>,
}

static NEXT_ID: AtomicU64 = AtomicU64::new(0);

std::thread_local! {
    static CLAIMS: RefCell<Vec<Claim>> = const { RefCell::new(Vec::new()) };
}

/// A thread's claim on one slot, released at thread exit.
struct Claim {
    arena: u64,
    slot: Arc<dyn Claimed>,
}

/// A slot of any backend, as a thread-local holds it.
trait Claimed: Any + Send + Sync {
    fn as_any(&self) -> &dyn Any;
    /// The thread is gone: the slot's blocks go to the shared arena.
    fn release(&self);
    fn arena_lives(&self) -> bool;
}

impl Drop for Claim {
    fn drop(&mut self) {
        self.slot.release();
    }
}

trait Shareable: Backend<Tracking: Send, Fence: Send> + Send + 'static {}

impl<B: Backend<Tracking: Send, Fence: Send> + Send + 'static> Shareable for B {}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    // No method of ours panics halfway through a change.
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

impl<B> ThreadArena<B>
where
    B: Backend + Send + 'static,
    B::Tracking: Send,
    B::Fence: Send,
{
    /// Shares `arena` between threads, each with a cache of its own.
    pub fn new(arena: Arena<B>) -> Self {
        ThreadArena {
            shared: Arc::new(Shared {
                id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
                min_align: arena.min_align,
                base_align: arena.base_align,
                core: Mutex::new(arena),
                slots: Mutex::new(Vec::new()),
            }),
        }
    }

    /// As [`Arena::alloc`], from this thread's cache when it can.
    ///
    /// # Errors
    ///
    /// As [`Arena::alloc`].
    pub fn alloc<T: GpuWords>(&self, len: usize) -> ArenaResult<ArenaSlice<T, B>, B> {
        let shared = &self.shared;
        let align = shared.min_align.max(align_of::<T>());
        let Some(bytes) = len.checked_mul(size_of::<T>()) else {
            return Err(AllocError::SizeOverflow.into());
        };
        if bytes == 0 {
            return Ok(ArenaSlice::new(Place::empty(), len));
        }
        // The array's description is made only on a miss.
        let describe = ArrayInfo::of::<T>;
        let place = match with_slot(shared, |slot| {
            slot.reserve(shared, bytes, align, len, describe)
        }) {
            Some(place) => place?,
            // This thread is exiting: the shared arena's own array.
            None => {
                let array = describe(RegionShape::Array { len });
                shared.reserve(&mut lock(&shared.core), (bytes, align), array)?
            }
        };
        Ok(ArenaSlice::new(place, len))
    }

    /// As [`Arena::alloc_zeros`].
    ///
    /// # Errors
    ///
    /// As [`Arena::alloc_zeros`].
    pub fn alloc_zeros<T: GpuWords>(&self, len: usize) -> ArenaResult<ArenaSlice<T, B>, B> {
        let mut array = self.alloc::<T>(len)?;
        self.lock().zero(&mut array)?;
        Ok(array)
    }

    /// As [`Arena::alloc_from`].
    ///
    /// # Errors
    ///
    /// As [`Arena::alloc_from`].
    pub fn alloc_from<T: GpuWords>(&self, src: &[T]) -> ArenaResult<ArenaSlice<T, B>, B> {
        let mut array = self.alloc::<T>(src.len())?;
        self.lock().write(&mut array, .., src)?;
        Ok(array)
    }

    /// Locks the shared arena for its `&self` verbs (reads, writes, offsets).
    ///
    /// ```
    /// # let arena = gpu_aligned::arena::ThreadArena::new(gpu_aligned::arena::Arena::host(4096)?);
    /// let mut a = arena.alloc::<u8>(2)?;
    /// let shared = arena.lock();
    /// shared.write(&mut a, .., &[7, 8])?;
    /// assert_eq!(shared.get(&a)?, &[7, 8]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Deadlocks
    ///
    /// While a thread holds the lock it must not call this `ThreadArena`'s
    /// other verbs (dropping arrays is fine): they may lock it again.
    pub fn lock(&self) -> ArenaLock<'_, B> {
        ArenaLock(lock(&self.shared.core))
    }

    /// How many arrays are live (a moment old while other threads work).
    pub fn live(&self) -> usize {
        let core = lock(&self.shared.core);
        let live = |block: &Allocation| core.allocator().check_handle(block).is_ok();
        let mut cached = 0;
        for slot in lock(&self.shared.slots).iter() {
            let cache = slot.cache.lock();
            cached += cache.kept.len() + cache.spill.len() + cache.returns.count_held(live);
        }
        core.live().saturating_sub(cached)
    }

    /// The shared allocator's counters (kept blocks count as allocated).
    pub fn stats(&self) -> Stats {
        lock(&self.shared.core).allocator().stats()
    }

    /// Gives back every block the threads keep, and waits until the shared arena took them.
    ///
    /// # Errors
    ///
    /// [`ArenaError::Backend`] if the backend cannot wait; what it had not
    /// waited for stays pending.
    pub fn flush(&self) -> ArenaResult<(), B> {
        let mut core = lock(&self.shared.core);
        self.shared.drain_slots(&mut core);
        core.drain_pending()
    }

    /// Gives back every block the threads keep, then [`Arena::trim`]s the shared arena.
    ///
    /// # Errors
    ///
    /// As [`Arena::trim`].
    pub fn trim(&self) -> ArenaResult<usize, B> {
        let mut core = lock(&self.shared.core);
        self.shared.drain_slots(&mut core);
        core.trim()
    }
}

/// Runs `each` on this thread's slot of `shared`, claimed if need be (`None` at exit).
fn with_slot<B: Shareable, R>(
    shared: &Arc<Shared<B>>,
    each: impl FnOnce(&Slot<B>) -> R,
) -> Option<R> {
    CLAIMS
        .try_with(|claims| {
            let mut claims = claims.try_borrow_mut().ok()?;
            let found = claims.iter().position(|claim| claim.arena == shared.id);
            let index = found.unwrap_or_else(|| {
                claims.retain(|claim| claim.slot.arena_lives());
                let (arena, slot) = (shared.id, shared.claim());
                claims.push(Claim { arena, slot });
                claims.len() - 1
            });
            let slot = claims[index].slot.as_any().downcast_ref::<Slot<B>>()?;
            Some(each(slot))
        })
        .ok()
        .flatten()
}

impl<B: Shareable> Shared<B> {
    /// A slot no live thread uses, or a new one.
    fn claim(self: &Arc<Self>) -> Arc<Slot<B>> {
        let mut slots = lock(&self.slots);
        let free = slots.iter().find(|slot| {
            slot.claimed
                .compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed)
                .is_ok()
        });
        if let Some(slot) = free {
            return Arc::clone(slot);
        }
        let slot = Arc::new(Slot {
            claimed: AtomicBool::new(true),
            shared: Arc::downgrade(self),
            cache: SpinLock::new(Cache {
                returns: ReturnsOwner::new(),
                returned: Taken::default(),
                kept: Reuse::default(),
                spill: Vec::new(),
            }),
        });
        slots.push(Arc::clone(&slot));
        slot
    }

    /// The shared arena's array, every slot drained before it grows.
    fn reserve(
        &self,
        core: &mut Arena<B>,
        ask: (usize, usize),
        array: ArrayInfo,
    ) -> ArenaResult<Place<B>, B> {
        match core.reserve(ask, array, false) {
            Err(refused) if does_not_fit(&refused) => {
                self.drain_slots(core);
                core.reserve(ask, array, true)
            }
            other => other,
        }
    }

    fn drain_slots(&self, core: &mut Arena<B>) {
        for slot in lock(&self.slots).iter() {
            slot.drain(core);
        }
    }
}

impl<B: Shareable> Slot<B> {
    /// Gives the slot's blocks to the shared arena, not holding the slot.
    fn drain(&self, core: &mut Arena<B>) {
        let mut spill = {
            let mut cache = self.cache.lock();
            cache.take_returns();
            let Cache { kept, spill, .. } = &mut *cache;
            kept.drain(|block| spill.push((block, B::Tracking::default())));
            core::mem::take(spill)
        };
        give_back(core, &mut spill);
        self.cache.lock().restore_spill(spill);
    }

    #[inline]
    fn reserve(
        &self,
        shared: &Shared<B>,
        bytes: usize,
        align: usize,
        len: usize,
        describe: fn(RegionShape) -> ArrayInfo,
    ) -> ArenaResult<Place<B>, B> {
        // The shared arena refuses an alignment past the buffer's.
        let cacheable = offset_of(align) <= shared.base_align;
        let mut cache = self.cache.lock();
        if cacheable {
            if cache.returns.queued() >= RETURN_BATCH {
                cache.take_returns();
            }
            let mut hit = cache.lend(bytes, align);
            if hit.is_none() && cache.returns.queued() != 0 {
                cache.take_returns();
                hit = cache.lend(bytes, align);
            }
            if let Some(place) = hit {
                if cache.spill.len() >= SPILL_BATCH {
                    let mut spill = core::mem::take(&mut cache.spill);
                    drop(cache);
                    give_back(&mut lock(&shared.core), &mut spill);
                    self.cache.lock().restore_spill(spill);
                }
                return Ok(place);
            }
        }
        let array = describe(RegionShape::Array { len });
        self.reserve_missed(shared, cache, (bytes, align), array)
    }

    /// [`reserve`](Self::reserve) on a miss, out of line.
    #[inline(never)]
    fn reserve_missed(
        &self,
        shared: &Shared<B>,
        mut cache: SpinGuard<'_, Cache<B>>,
        ask: (usize, usize),
        array: ArrayInfo,
    ) -> ArenaResult<Place<B>, B> {
        // The large kept blocks go back first, as the kept layer's do.
        if ask.0 >= LARGE {
            let Cache { kept, spill, .. } = &mut *cache;
            kept.drain_large(|block| spill.push((block, B::Tracking::default())));
        }
        let mut spill = core::mem::take(&mut cache.spill);
        drop(cache);
        let mut core = lock(&shared.core);
        give_back(&mut core, &mut spill);
        let reserved = shared.reserve(&mut core, ask, array);
        let mut place = match reserved {
            // Watched arrays stay the shared arena's, and so do errors.
            Ok(place) if !core.pool.watching() => place,
            other => {
                drop(core);
                self.cache.lock().restore_spill(spill);
                return other;
            }
        };
        // The array comes back to this slot, not to the shared arena.
        core.returns.ended_by_hand(&mut place);
        drop(core);
        let mut cache = self.cache.lock();
        cache.restore_spill(spill);
        let way_back = cache.returns.lend();
        Ok(Place::new(place.allocation, place.bytes, way_back))
    }
}

impl<B: Shareable> Claimed for Slot<B> {
    fn as_any(&self) -> &dyn Any {
        self
    }

    fn release(&self) {
        if let Some(shared) = self.shared.upgrade() {
            self.drain(&mut lock(&shared.core));
        }
        // The slot and its list wait for the next thread.
        self.claimed.store(false, Ordering::Release);
    }

    fn arena_lives(&self) -> bool {
        self.shared.strong_count() != 0
    }
}

impl<B: Backend> Cache<B> {
    #[inline]
    fn lend(&mut self, bytes: usize, align: usize) -> Option<Place<B>> {
        let allocation = self.kept.take(bytes, align)?;
        Some(Place::new(allocation, bytes, self.returns.lend()))
    }

    /// Takes the dropped arrays off the list: unused ones kept (or spilled), used ones spilled.
    fn take_returns(&mut self) {
        let mut returned = core::mem::take(&mut self.returned);
        self.returns.take(&mut returned);
        let spill = &mut self.spill;
        spill.append(&mut returned.used);
        for allocation in returned.unused.drain(..) {
            let evict = |block| spill.push((block, B::Tracking::default()));
            if let Err(block) = self.kept.keep(allocation, evict) {
                spill.push((block, B::Tracking::default()));
            }
        }
        self.returned = returned;
    }

    /// Puts back a spill taken out to hand over.
    fn restore_spill(&mut self, mut spill: Vec<Returned<B>>) {
        spill.append(&mut self.spill);
        self.spill = spill;
    }
}

/// Gives `spill` to the shared arena, keeping what the backend failed to retire.
fn give_back<B: Backend>(core: &mut Arena<B>, spill: &mut Vec<Returned<B>>) {
    spill.retain_mut(|(allocation, tracking)| {
        let given = core.give_back(*allocation, tracking);
        matches!(given, Err(ArenaError::Backend(_)))
    });
}
