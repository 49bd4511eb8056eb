//! Where dropped arrays wait for their arena: a list shared by the arena and
//! every handle it made, which a handle's drop pushes its block onto and the
//! arena drains when it allocates (the `reserve` module says when).
//!
//! A shared list, not a lock on the arena: a handle must be storable apart
//! from its arena (in a user's struct, on another thread, past the arena's
//! end), as a `CudaSlice` is, and a lock on every arena call would cost
//! every call, not only drops. A drop costs one uncontended lock of this
//! list and a push; the arena reads a count first and takes the lock once
//! per batch.
//!
//! No reference count per handle (an `Arc` would cost two more atomic
//! read-modify-writes per array): the arena counts the handles it lends and
//! those that came back, in plain integers under its `&mut`. When the arena
//! goes, the list stays for the handles still out; each of their drops
//! counts down under the lock and keeps nothing (the buffer went with the
//! arena), and the last one frees the list. A handle leaked with
//! `mem::forget` keeps the list allocated, never freed early.
//!
//! The lock is a spin lock (the `spin` module), held for a push or a swap
//! of two vectors, never across a call out but one: while a tool watches
//! the arena's arrays, a drop tells it under the lock.

use alloc_crate::boxed::Box;
use alloc_crate::vec::Vec;
use core::ptr::NonNull;
use core::sync::atomic::{AtomicUsize, Ordering};

use super::handle::Place;
use super::spin::{SpinGuard, SpinLock};
use crate::alloc::Allocation;
use crate::backend::Backend;
use crate::sanitizer::DropWatch;

/// A dropped array: its block, and what the backend tracked for it.
pub(super) type Returned<B> = (Allocation, <B as crate::backend::StreamOrder>::Tracking);

/// Dropped arrays, in two lists: the blocks alone of those the backend's
/// work never used (a drop then costs what a host array's costs: no
/// tracking moved, dropped or asked about), and the others with their
/// tracking.
pub(super) struct Taken<B: Backend> {
    pub(super) unused: Vec<Allocation>,
    pub(super) used: Vec<Returned<B>>,
    /// Offsets of the arrays in the two lists whose drop told the tool
    /// (see [`DropWatch`]): no region any more.
    pub(super) unregistered: Vec<u64>,
}

impl<B: Backend> Default for Taken<B> {
    fn default() -> Self {
        Taken {
            unused: Vec::new(),
            used: Vec::new(),
            unregistered: Vec::new(),
        }
    }
}

impl<B: Backend> Taken<B> {
    /// How many arrays, in both lists.
    #[inline]
    pub(super) fn len(&self) -> usize {
        self.unused.len() + self.used.len()
    }

    /// Whether both lists are empty.
    #[inline]
    pub(super) fn is_empty(&self) -> bool {
        self.unused.is_empty() && self.used.is_empty()
    }

    /// Every block in both lists.
    fn blocks(&self) -> impl Iterator<Item = &Allocation> {
        let used = self.used.iter().map(|(block, _)| block);
        self.unused.iter().chain(used)
    }

    /// Forgets both lists' arrays (dropping the trackings).
    pub(super) fn clear(&mut self) {
        self.unused.clear();
        self.used.clear();
        self.unregistered.clear();
    }
}

/// The list of dropped arrays of one arena (or of one thread's slot of a
/// `ThreadArena`), on cache lines of its own: its lock is taken on every
/// drop, and a neighbour's writes must not make that lock miss.
#[repr(align(128))]
struct Returns<B: Backend> {
    /// How many arrays are queued: read without the lock, so an arena with
    /// nothing queued never takes it.
    queued: AtomicUsize,
    /// How many bytes the queued arrays' blocks span, read the same way;
    /// written only under the lock, so a load there is exact.
    queued_bytes: AtomicUsize,
    shared: SpinLock<Shared<B>>,
}

/// What the lock guards.
struct Shared<B: Backend> {
    list: Taken<B>,
    /// Set when the arena is gone: drops then count down `outstanding`.
    closed: bool,
    /// Handles still out once the arena is gone.
    outstanding: usize,
    /// Set while a tool watches the arena's arrays: a drop then tells it.
    watch: Option<DropWatch>,
    /// Neither closed nor watched: a drop of an array never used may take
    /// the fast path (one flag for the two, as a drop asks on every call).
    plain: bool,
}

impl<B: Backend> Returns<B> {
    #[inline]
    fn lock(&self) -> SpinGuard<'_, Shared<B>> {
        self.shared.lock()
    }

    /// Queues `returned` while the arena lives.
    fn push(&self, returned: Returned<B>) {
        let mut locked = self.lock();
        let bytes = returned.0.size();
        locked.list.used.push(returned);
        self.queued_one(&locked, bytes);
    }

    /// Publishes the counts once an array of `bytes` joined the list.
    #[inline(always)]
    fn queued_one(&self, shared: &Shared<B>, bytes: usize) {
        self.queued.store(shared.list.len(), Ordering::Relaxed);
        // Saturating: handles outliving a reset may name the same bytes twice.
        let total = self
            .queued_bytes
            .load(Ordering::Relaxed)
            .saturating_add(bytes);
        self.queued_bytes.store(total, Ordering::Relaxed);
    }
}

/// A handle's way back to its arena's list: made only by
/// [`ReturnsOwner::lend`], never copied, used up by
/// [`give_back`](ReturnsRef::give_back) or by
/// [`ReturnsOwner::ended_by_hand`], so the count of handles out is exact.
pub(super) struct ReturnsRef<B: Backend>(NonNull<Returns<B>>);

// SAFETY: the list is only reached through its lock, which gives one thread
// at a time access to it, and what it holds moves between threads, hence
// `Tracking: Send`; the list stays allocated while this reference is out
// (see the module docs).
unsafe impl<B: Backend> Send for ReturnsRef<B> where B::Tracking: Send {}
// SAFETY: as above; `&ReturnsRef` gives no access at all.
unsafe impl<B: Backend> Sync for ReturnsRef<B> where B::Tracking: Send {}

impl<B: Backend> ReturnsRef<B> {
    /// Gives a dropped array back: queued for the arena (as a block alone
    /// when the backend's work never used it), or, once the arena is gone,
    /// dropped here (freeing the list if this was the last handle out).
    /// Never blocks on the device, never panics.
    #[inline(always)]
    pub(super) fn give_back(self, allocation: &Allocation, tracking: &mut B::Tracking) {
        if B::never_used(tracking) {
            // SAFETY: as in `give_back_slowly`.
            let returns = unsafe { self.0.as_ref() };
            let mut locked = returns.lock();
            let shared = &mut *locked;
            let list = &mut shared.list;
            // Room without growing: the list keeps its capacity between
            // batches, so this is every drop but the first few.
            if shared.plain && list.unused.len() < list.unused.capacity() {
                list.unused.push(*allocation);
                returns.queued_one(shared, allocation.size());
                return;
            }
        }
        self.give_back_slowly(*allocation, tracking);
    }

    /// [`give_back`](Self::give_back) for an array the backend's work used,
    /// one whose list must grow, or one outlived by its arena. Out of line:
    /// a handle's drop, inlined wherever it goes, holds the common case.
    #[inline(never)]
    fn give_back_slowly(self, allocation: Allocation, tracking: &mut B::Tracking) {
        // SAFETY: the list is freed only once the arena is gone and every
        // handle lent has come back; this one has not yet (it is used up
        // here, by value), so the list is alive.
        let returns = unsafe { self.0.as_ref() };
        let unused = B::never_used(tracking);
        let mut locked = returns.lock();
        let shared = &mut *locked;
        if !shared.closed {
            let list = &mut shared.list;
            let watch = shared.watch.filter(|watch| watch.covers(&allocation));
            if let Some(watch) = watch {
                // Told under the lock: until the arena takes the list, the
                // block is not freed, so no newer array can be at this
                // address and lose its region to this call. On the list of
                // used arrays, whose out-of-line path forgets the regions
                // the drops told, so the common path never looks.
                watch.dropped(allocation.offset());
                list.unregistered.push(allocation.offset());
                list.used.push((allocation, core::mem::take(tracking)));
            } else if unused {
                list.unused.push(allocation);
            } else {
                list.used.push((allocation, core::mem::take(tracking)));
            }
            returns.queued_one(shared, allocation.size());
            return;
        }
        drop(locked);
        self.closed_drop(tracking);
    }

    /// A handle's drop once the arena is gone: its tracking goes, and the
    /// last handle out frees the list. Out of line: rare.
    #[inline(never)]
    fn closed_drop(self, tracking: &mut B::Tracking) {
        // SAFETY: as in `give_back`.
        let returns = unsafe { self.0.as_ref() };
        let mut locked = returns.lock();
        let shared = &mut *locked;
        shared.outstanding -= 1;
        let last = shared.outstanding == 0;
        drop(locked);
        drop(core::mem::take(tracking));
        if last {
            // SAFETY: the arena is gone and no other handle is out, so
            // nothing else can reach the list; it came from `Box::leak` in
            // `ReturnsOwner::new`, and only the last handle frees it.
            drop(unsafe { Box::from_raw(self.0.as_ptr()) });
        }
    }
}

/// The arena's end of the list: lends handles their way back, counts them
/// out and in, and closes the list when the arena is dropped.
pub(super) struct ReturnsOwner<B: Backend> {
    returns: NonNull<Returns<B>>,
    /// Handles lent.
    lent: usize,
    /// Handles that came back: taken off the list, or given back by hand.
    ended: usize,
}

// SAFETY: the owner reaches the list through its lock, or through `&mut`
// for its counts, which are its own.
unsafe impl<B: Backend> Send for ReturnsOwner<B> where B::Tracking: Send {}
// SAFETY: `&ReturnsOwner` reaches the list only through its lock.
unsafe impl<B: Backend> Sync for ReturnsOwner<B> where B::Tracking: Send {}

impl<B: Backend> ReturnsOwner<B> {
    pub(super) fn new() -> Self {
        let returns = Box::new(Returns {
            queued: AtomicUsize::new(0),
            queued_bytes: AtomicUsize::new(0),
            shared: SpinLock::new(Shared {
                list: Taken::default(),
                closed: false,
                outstanding: 0,
                watch: None,
                plain: true,
            }),
        });
        ReturnsOwner {
            returns: NonNull::from(Box::leak(returns)),
            lent: 0,
            ended: 0,
        }
    }

    fn get(&self) -> &Returns<B> {
        // SAFETY: the owner keeps the list alive while it lives: it is freed
        // only after the owner closed it (see `Drop`).
        unsafe { self.returns.as_ref() }
    }

    /// A way back for a new handle.
    #[inline]
    pub(super) fn lend(&mut self) -> ReturnsRef<B> {
        self.lent += 1;
        ReturnsRef(self.returns)
    }

    /// A handle's array was given back by hand: its way back is used up,
    /// and dropping it does nothing.
    #[inline]
    pub(super) fn ended_by_hand(&mut self, place: &mut Place<B>) {
        if let Some(way_back) = place.given_back() {
            // Only this arena's handles get here (their blocks passed its
            // allocator's check), and each way back ends once.
            debug_assert_eq!(way_back.0, self.returns, "a handle of this arena");
            self.ended += 1;
        }
    }

    /// How many dropped arrays wait for the arena (a count that may be a
    /// moment old when other threads drop arrays meanwhile).
    #[inline]
    pub(super) fn queued(&self) -> usize {
        self.get().queued.load(Ordering::Relaxed)
    }

    /// How many bytes the queued arrays span (as fresh as
    /// [`queued`](Self::queued)).
    #[inline]
    pub(super) fn queued_bytes(&self) -> usize {
        self.get().queued_bytes.load(Ordering::Relaxed)
    }

    /// Moves every queued array into `into` (empty), which then holds them;
    /// the list keeps `into`'s old allocations, so neither side allocates
    /// in the steady state.
    pub(super) fn take(&mut self, into: &mut Taken<B>) {
        let returns = self.get();
        let mut locked = returns.lock();
        let list = &mut locked.list;
        core::mem::swap(&mut list.unused, &mut into.unused);
        core::mem::swap(&mut list.used, &mut into.used);
        // Only while a tool watches (a drop then records its offset here).
        if !list.unregistered.is_empty() {
            core::mem::swap(&mut list.unregistered, &mut into.unregistered);
        }
        returns.queued.store(0, Ordering::Relaxed);
        returns.queued_bytes.store(0, Ordering::Relaxed);
        drop(locked);
        self.ended += into.len();
    }

    /// Whether (and how) a drop tells the tool watching the arena's arrays
    /// from now on.
    pub(super) fn watch(&self, watch: Option<DropWatch>) {
        let mut locked = self.get().lock();
        locked.watch = watch;
        locked.plain = !locked.closed && watch.is_none();
    }

    /// Puts a taken array back on the list, for the next call (its handle
    /// is still out as far as the count goes).
    pub(super) fn requeue(&mut self, returned: Returned<B>) {
        self.ended -= 1;
        self.get().push(returned);
    }

    /// How many queued arrays `holds` says are still the arena's (a handle
    /// dropped after a reset is not): a count that allocates nothing.
    pub(super) fn count_held(&self, holds: impl Fn(&Allocation) -> bool) -> usize {
        if self.queued() == 0 {
            return 0;
        }
        let locked = self.get().lock();
        locked.list.blocks().filter(|a| holds(a)).count()
    }

    /// The offsets of the queued arrays [`count_held`](Self::count_held)
    /// counts, for the region map.
    pub(super) fn held(&self, holds: impl Fn(&Allocation) -> bool) -> Vec<u64> {
        if self.queued() == 0 {
            return Vec::new();
        }
        let locked = self.get().lock();
        let held = locked.list.blocks().filter(|a| holds(a));
        held.map(Allocation::offset).collect()
    }
}

impl<B: Backend> Drop for ReturnsOwner<B> {
    fn drop(&mut self) {
        let returns = self.get();
        let mut locked = returns.lock();
        let shared = &mut *locked;
        let dropped = core::mem::take(&mut shared.list);
        returns.queued.store(0, Ordering::Relaxed);
        returns.queued_bytes.store(0, Ordering::Relaxed);
        let ended = self.ended + dropped.len();
        // More handles back than lent would be a counting bug: then keep
        // the list for good rather than free it under a handle.
        let outstanding = self.lent.checked_sub(ended).unwrap_or(usize::MAX);
        shared.closed = true;
        shared.plain = false;
        shared.outstanding = outstanding;
        drop(locked);
        // The arrays' trackings go now, outside the lock.
        drop(dropped);
        if outstanding == 0 {
            // SAFETY: no handle is out and the owner is going, so nothing
            // else can reach the list; it came from `Box::leak` in `new`.
            drop(unsafe { Box::from_raw(self.returns.as_ptr()) });
        }
    }
}
