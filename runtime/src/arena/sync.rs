//! A thread-safe [`Arena`]: the arena behind a mutex, so several threads can
//! carve arrays out of one buffer.

use std::sync::{Mutex, MutexGuard, PoisonError};

use super::{Arena, ArenaHandle, ArenaResult, ArenaSlice, FreeFailed};
use crate::alloc::Stats;
use crate::backend::Backend;
use crate::GpuWords;

/// An [`Arena`] that can be shared between threads (`Sync` when the backend
/// is `Send`). Allocation and freeing take the lock for one operation;
/// dropping an array takes none (it queues the array for the arena's next
/// call); reading or writing an array's elements goes through
/// [`lock`](SyncArena::lock).
///
/// Every allocation takes the one lock, so threads that allocate in a loop
/// wait for each other; [`ThreadArena`](super::ThreadArena) gives each
/// thread a cache of its own in front of the lock.
#[derive(Debug)]
pub struct SyncArena<B: Backend> {
    inner: Mutex<Arena<B>>,
}

impl<B: Backend> SyncArena<B> {
    /// Shares `arena` between threads.
    pub fn new(arena: Arena<B>) -> Self {
        SyncArena {
            inner: Mutex::new(arena),
        }
    }

    /// Locks the arena for a sequence of operations.
    ///
    /// A panic in another thread while it held the lock does not poison it
    /// for good: no arena method can panic halfway through a change, so the
    /// arena is consistent whenever the lock is free.
    pub fn lock(&self) -> MutexGuard<'_, Arena<B>> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// [`Arena::alloc`] under the lock.
    ///
    /// # Errors
    ///
    /// As [`Arena::alloc`].
    pub fn alloc<T: GpuWords>(&self, len: usize) -> ArenaResult<ArenaSlice<T, B>, B> {
        self.lock().alloc(len)
    }

    /// [`Arena::free`] under the lock.
    ///
    /// # Errors
    ///
    /// As [`Arena::free`].
    pub fn free<H: ArenaHandle<B>>(&self, handle: H) -> Result<(), FreeFailed<H, B::Error>> {
        self.lock().free(handle)
    }

    /// [`Arena::stats`] under the lock.
    pub fn stats(&self) -> Stats {
        self.lock().stats()
    }

    /// The arena, no longer shared.
    pub fn into_inner(self) -> Arena<B> {
        self.inner
            .into_inner()
            .unwrap_or_else(PoisonError::into_inner)
    }
}
