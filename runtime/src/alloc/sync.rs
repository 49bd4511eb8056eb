//! A thread-safe [`Allocator`]: the same allocator behind a mutex, for
//! buffers that several threads carve arrays out of.

use std::sync::{Mutex, MutexGuard, PoisonError};

use super::{AllocError, Allocation, Allocator, FreeError, Stats};

/// An [`Allocator`] that can be shared between threads (`Sync`): every call
/// takes a lock for the duration of one allocator operation.
#[derive(Debug)]
pub struct SyncAllocator {
    inner: Mutex<Allocator>,
}

impl SyncAllocator {
    /// A shared allocator for a buffer of `capacity` bytes.
    pub fn new(capacity: u64) -> SyncAllocator {
        SyncAllocator::from(Allocator::new(capacity))
    }

    /// Locks the allocator for a sequence of operations.
    ///
    /// A panic in another thread while it held the lock does not poison it
    /// for good: no allocator method can panic halfway through a change, so
    /// the allocator is consistent whenever the lock is free.
    pub fn lock(&self) -> MutexGuard<'_, Allocator> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// [`Allocator::alloc`] under the lock.
    ///
    /// # Errors
    ///
    /// As [`Allocator::alloc`].
    pub fn alloc(&self, size: u64, align: u64) -> Result<Allocation, AllocError> {
        self.lock().alloc(size, align)
    }

    /// [`Allocator::free`] under the lock.
    ///
    /// # Errors
    ///
    /// As [`Allocator::free`].
    pub fn free(&self, allocation: Allocation) -> Result<(), FreeError> {
        self.lock().free(allocation)
    }

    /// [`Allocator::stats`] under the lock.
    pub fn stats(&self) -> Stats {
        self.lock().stats()
    }

    /// [`Allocator::reset`] under the lock.
    pub fn reset(&self) {
        self.lock().reset();
    }

    /// The allocator, no longer shared.
    pub fn into_inner(self) -> Allocator {
        self.inner
            .into_inner()
            .unwrap_or_else(PoisonError::into_inner)
    }
}

impl From<Allocator> for SyncAllocator {
    fn from(allocator: Allocator) -> SyncAllocator {
        SyncAllocator {
            inner: Mutex::new(allocator),
        }
    }
}
