//! Where dropped arrays wait for their arena: a list it shares with its handles, so a handle lives
//! apart from its arena (as a `CudaSlice` does) and only a drop pays, a spin lock and a push. No
//! `Arc` per handle: the arena counts handles out and in, and once it is gone the last handle out
//! frees the list.

use alloc_crate::boxed::Box;
use alloc_crate::vec::Vec;
use core::ptr::NonNull;
use core::sync::atomic::{AtomicUsize, Ordering};

use super::handle::Place;
use crate::alloc::Allocation;
use crate::backend::Backend;
use crate::sanitizer::DropWatch;
use crate::spin::SpinLock;

pub(super) type Returned<B> = (Allocation, <B as crate::backend::StreamOrder>::Tracking);

/// Dropped arrays: blocks no stream used alone (as cheap as a host array's), others tracked.
pub(super) struct Taken<B: Backend> {
    pub(super) unused: Vec<Allocation>,
    pub(super) used: Vec<Returned<B>>,
    /// Offsets of the arrays whose drop told the tool ([`DropWatch`]).
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
    #[inline]
    pub(super) fn len(&self) -> usize {
        self.unused.len() + self.used.len()
    }

    #[inline]
    pub(super) fn is_empty(&self) -> bool {
        self.unused.is_empty() && self.used.is_empty()
    }

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

/// The list of one arena (or slot), on cache lines of its own: every drop takes its lock.
#[repr(align(128))]
struct Returns<B: Backend> {
    /// How many arrays are queued, read without the lock.
    queued: AtomicUsize,
    /// How many bytes they span; written only under the lock.
    queued_bytes: AtomicUsize,
    shared: SpinLock<Shared<B>>,
}

struct Shared<B: Backend> {
    list: Taken<B>,
    /// Set when the arena is gone: drops count down `outstanding`.
    closed: bool,
    outstanding: usize,
    /// Set while a tool watches the arena's arrays: a drop then tells it.
    watch: Option<DropWatch>,
    /// Neither closed nor watched: a drop may take the fast path.
    plain: bool,
}

impl<B: Backend> Returns<B> {
    /// Publishes the counts once an array of `bytes` joined the list.
    #[inline(always)]
    fn queued_one(&self, shared: &Shared<B>, bytes: usize) {
        self.queued.store(shared.list.len(), Ordering::Relaxed);
        // Saturating: handles outliving a reset may name the same bytes twice.
        let total = self.queued_bytes.load(Ordering::Relaxed);
        self.queued_bytes
            .store(total.saturating_add(bytes), Ordering::Relaxed);
    }
}

/// A handle's way back to its arena's list, from [`ReturnsOwner::lend`], used up once.
pub(super) struct ReturnsRef<B: Backend>(NonNull<Returns<B>>);

// SAFETY: the list is reached only through its lock, and what it holds moves between threads
// (`Tracking: Send`); it stays allocated while this reference is out.
unsafe impl<B: Backend> Send for ReturnsRef<B> where B::Tracking: Send {}
// SAFETY: as above; `&ReturnsRef` gives no access at all.
unsafe impl<B: Backend> Sync for ReturnsRef<B> where B::Tracking: Send {}

impl<B: Backend> ReturnsRef<B> {
    /// Gives a dropped array back (queued, or dropped once the arena is gone); never blocks.
    #[inline(always)]
    pub(super) fn give_back(self, allocation: &Allocation, tracking: &mut B::Tracking) {
        if B::never_used(tracking) {
            // SAFETY: as in `give_back_slowly`.
            let returns = unsafe { self.0.as_ref() };
            let mut locked = returns.shared.lock();
            let shared = &mut *locked;
            let list = &mut shared.list;
            // The list keeps its capacity: room for all but the first drops.
            if shared.plain && list.unused.len() < list.unused.capacity() {
                list.unused.push(*allocation);
                returns.queued_one(shared, allocation.size());
                return;
            }
        }
        self.give_back_slowly(*allocation, tracking);
    }

    /// [`give_back`](Self::give_back) off the fast path, out of line.
    #[inline(never)]
    fn give_back_slowly(self, allocation: Allocation, tracking: &mut B::Tracking) {
        // SAFETY: the list is freed only once every handle lent came back,
        // and this one (used up here) has not.
        let returns = unsafe { self.0.as_ref() };
        let unused = B::never_used(tracking);
        let mut locked = returns.shared.lock();
        let shared = &mut *locked;
        if !shared.closed {
            let list = &mut shared.list;
            let watch = shared.watch.filter(|watch| watch.covers(&allocation));
            if let Some(watch) = watch {
                // Under the lock, so no newer array there loses its region;
                // on the used list, whose path forgets the regions.
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

    /// A handle's drop once the arena is gone: the last one frees the list.
    #[inline(never)]
    fn closed_drop(self, tracking: &mut B::Tracking) {
        // SAFETY: as in `give_back`.
        let returns = unsafe { self.0.as_ref() };
        let mut locked = returns.shared.lock();
        let shared = &mut *locked;
        shared.outstanding -= 1;
        let last = shared.outstanding == 0;
        drop(locked);
        drop(core::mem::take(tracking));
        if last {
            // SAFETY: the arena is gone and no other handle is out; the
            // list came from `Box::leak` in `ReturnsOwner::new`.
            drop(unsafe { Box::from_raw(self.0.as_ptr()) });
        }
    }
}

/// The arena's end of the list: counts ways back out and in, closes the list when dropped.
pub(super) struct ReturnsOwner<B: Backend> {
    returns: NonNull<Returns<B>>,
    lent: usize,
    /// Handles that came back (taken off the list, or freed by hand).
    ended: usize,
}

// SAFETY: the owner reaches the list through its lock.
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
        // SAFETY: the list is freed only after the owner closed it.
        unsafe { self.returns.as_ref() }
    }

    #[inline]
    pub(super) fn lend(&mut self) -> ReturnsRef<B> {
        self.lent += 1;
        ReturnsRef(self.returns)
    }

    /// A handle's array was given back by hand: its way back is used up.
    #[inline]
    pub(super) fn ended_by_hand(&mut self, place: &mut Place<B>) {
        if let Some(way_back) = place.given_back() {
            debug_assert_eq!(way_back.0, self.returns, "a handle of this arena");
            self.ended += 1;
        }
    }

    /// How many dropped arrays wait (a moment old under other threads).
    #[inline]
    pub(super) fn queued(&self) -> usize {
        self.get().queued.load(Ordering::Relaxed)
    }

    #[inline]
    pub(super) fn queued_bytes(&self) -> usize {
        self.get().queued_bytes.load(Ordering::Relaxed)
    }

    /// Moves every queued array into `into` (empty), swapping allocations.
    pub(super) fn take(&mut self, into: &mut Taken<B>) {
        let returns = self.get();
        let mut locked = returns.shared.lock();
        let list = &mut locked.list;
        core::mem::swap(&mut list.unused, &mut into.unused);
        core::mem::swap(&mut list.used, &mut into.used);
        if !list.unregistered.is_empty() {
            core::mem::swap(&mut list.unregistered, &mut into.unregistered);
        }
        returns.queued.store(0, Ordering::Relaxed);
        returns.queued_bytes.store(0, Ordering::Relaxed);
        drop(locked);
        self.ended += into.len();
    }

    /// Whether (and how) a drop tells the tool from now on.
    pub(super) fn watch(&self, watch: Option<DropWatch>) {
        let mut locked = self.get().shared.lock();
        locked.watch = watch;
        locked.plain = !locked.closed && watch.is_none();
    }

    /// Puts a taken array back on the list, for the next call.
    pub(super) fn requeue(&mut self, returned: Returned<B>) {
        self.ended -= 1;
        let returns = self.get();
        let mut locked = returns.shared.lock();
        let bytes = returned.0.size();
        locked.list.used.push(returned);
        returns.queued_one(&locked, bytes);
    }

    /// How many queued arrays `holds` says are still the arena's.
    pub(super) fn count_held(&self, holds: impl Fn(&Allocation) -> bool) -> usize {
        if self.queued() == 0 {
            return 0;
        }
        let locked = self.get().shared.lock();
        locked.list.blocks().filter(|a| holds(a)).count()
    }

    /// The offsets of the arrays [`count_held`](Self::count_held) counts.
    pub(super) fn held(&self, holds: impl Fn(&Allocation) -> bool) -> Vec<u64> {
        if self.queued() == 0 {
            return Vec::new();
        }
        let locked = self.get().shared.lock();
        let held = locked.list.blocks().filter(|a| holds(a));
        held.map(Allocation::offset).collect()
    }
}

impl<B: Backend> Drop for ReturnsOwner<B> {
    fn drop(&mut self) {
        let returns = self.get();
        let mut locked = returns.shared.lock();
        let shared = &mut *locked;
        let dropped = core::mem::take(&mut shared.list);
        returns.queued.store(0, Ordering::Relaxed);
        returns.queued_bytes.store(0, Ordering::Relaxed);
        let ended = self.ended + dropped.len();
        // On a counting bug, keep the list rather than free it under a handle.
        let outstanding = self.lent.checked_sub(ended).unwrap_or(usize::MAX);
        shared.closed = true;
        shared.plain = false;
        shared.outstanding = outstanding;
        drop(locked);
        drop(dropped); // outside the lock
        if outstanding == 0 {
            // SAFETY: no handle is out and the owner is going, so nothing
            // else can reach the list; it came from `Box::leak` in `new`.
            drop(unsafe { Box::from_raw(self.returns.as_ptr()) });
        }
    }
}
