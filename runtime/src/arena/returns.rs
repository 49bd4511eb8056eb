//! Where dropped arrays wait for their arena: a list shared by the arena and
//! every handle it made, which a handle's drop pushes its block onto and the
//! arena drains on its next `&mut` call.
//!
//! Why a shared list and not a lock on the arena: a handle must be storable
//! apart from its arena (in a user's struct, on another thread, past the
//! arena's end), as a `CudaSlice` is, so it cannot borrow the arena, and
//! taking a lock on every arena call would cost every call, not only drops.
//! A drop costs one uncontended lock of this list (a compare-and-swap and a
//! store) and a push; the arena looks at an atomic count first and takes the
//! lock only when something is queued. The list is behind an `Arc`, so it
//! outlives the arena; once the arena is gone, drops are refused at the door
//! and what they held is dropped at once (on a device, the array's events
//! are given up without freeing anything; the buffer went with the arena).
//!
//! The lock is a spin lock because the arena builds without `std`: it is
//! held for a push or a swap of two vectors, never across a call out.

use alloc_crate::sync::Arc;
use alloc_crate::vec::Vec;
use core::cell::UnsafeCell;
use core::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use crate::alloc::Allocation;
use crate::backend::Backend;

/// A dropped array: its block, and what the backend tracked for it.
pub(super) type Returned<B> = (Allocation, <B as Backend>::Tracking);

/// The list of dropped arrays of one arena.
pub(super) struct Returns<B: Backend> {
    /// How many arrays are queued: read without the lock, so an arena with
    /// nothing queued never takes it.
    queued: AtomicUsize,
    /// Set when the arena is dropped: later drops keep nothing.
    closed: AtomicBool,
    locked: AtomicBool,
    list: UnsafeCell<Vec<Returned<B>>>,
}

// SAFETY: `list` is only reached through `lock`, which gives one thread at a
// time access to it; what it holds moves between threads, hence `Send`.
unsafe impl<B: Backend> Sync for Returns<B> where B::Tracking: Send {}
// SAFETY: as above; the atomics are `Send` themselves.
unsafe impl<B: Backend> Send for Returns<B> where B::Tracking: Send {}

/// Exclusive access to the list while it lives.
struct Locked<'a, B: Backend>(&'a Returns<B>);

impl<B: Backend> Drop for Locked<'_, B> {
    fn drop(&mut self) {
        self.0.locked.store(false, Ordering::Release);
    }
}

impl<B: Backend> Locked<'_, B> {
    fn list(&mut self) -> &mut Vec<Returned<B>> {
        // SAFETY: `Locked` exists only while `locked` is held by this
        // thread (see `Returns::lock`), and `&mut self` keeps this the one
        // reference made from it.
        unsafe { &mut *self.0.list.get() }
    }
}

impl<B: Backend> Returns<B> {
    fn new() -> Self {
        Returns {
            queued: AtomicUsize::new(0),
            closed: AtomicBool::new(false),
            locked: AtomicBool::new(false),
            list: UnsafeCell::new(Vec::new()),
        }
    }

    fn lock(&self) -> Locked<'_, B> {
        while self
            .locked
            .compare_exchange_weak(false, true, Ordering::Acquire, Ordering::Relaxed)
            .is_err()
        {
            while self.locked.load(Ordering::Relaxed) {
                core::hint::spin_loop();
            }
        }
        Locked(self)
    }

    /// Queues a dropped array for the arena, or, once the arena is gone,
    /// drops what it held right away. Never blocks on the device, never
    /// panics.
    pub(super) fn push(&self, allocation: Allocation, tracking: B::Tracking) {
        let mut locked = self.lock();
        if self.closed.load(Ordering::Relaxed) {
            drop(locked);
            drop(tracking);
            return;
        }
        let list = locked.list();
        list.push((allocation, tracking));
        self.queued.store(list.len(), Ordering::Relaxed);
    }

    /// How many dropped arrays wait for the arena (a count that may be a
    /// moment old when other threads drop arrays meanwhile).
    pub(super) fn queued(&self) -> usize {
        self.queued.load(Ordering::Relaxed)
    }

    /// The queued arrays that `holds` says are still the arena's (a handle
    /// dropped after a reset is not), for counts and leak reports.
    pub(super) fn held(&self, holds: impl Fn(&Allocation) -> bool) -> Vec<u64> {
        if self.queued() == 0 {
            return Vec::new();
        }
        let mut locked = self.lock();
        locked
            .list()
            .iter()
            .filter(|(allocation, _)| holds(allocation))
            .map(|(allocation, _)| allocation.offset())
            .collect()
    }

    /// Moves every queued array into `into` (empty), which then holds them;
    /// the list keeps `into`'s old allocation, so neither side allocates in
    /// the steady state.
    pub(super) fn take(&self, into: &mut Vec<Returned<B>>) {
        let mut locked = self.lock();
        core::mem::swap(locked.list(), into);
        self.queued.store(0, Ordering::Relaxed);
    }
}

/// The arena's end of the list: made with the arena, and closing the list
/// when the arena is dropped.
pub(super) struct ReturnsOwner<B: Backend>(Arc<Returns<B>>);

impl<B: Backend> ReturnsOwner<B> {
    pub(super) fn new() -> Self {
        ReturnsOwner(Arc::new(Returns::new()))
    }

    /// Another reference to the list, for a new handle.
    #[inline]
    pub(super) fn share(&self) -> Arc<Returns<B>> {
        Arc::clone(&self.0)
    }

    pub(super) fn get(&self) -> &Returns<B> {
        &self.0
    }
}

impl<B: Backend> Drop for ReturnsOwner<B> {
    fn drop(&mut self) {
        let mut locked = self.0.lock();
        self.0.closed.store(true, Ordering::Relaxed);
        let dropped = core::mem::take(locked.list());
        self.0.queued.store(0, Ordering::Relaxed);
        drop(locked);
        // The arrays' trackings go now, outside the lock.
        drop(dropped);
    }
}
