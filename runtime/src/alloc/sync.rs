//! A thread-safe [`Allocator`]: the same allocator behind a mutex, for
//! buffers that several threads carve arrays out of now and then; its docs
//! say when one allocator per thread is the better model.

use std::sync::{Mutex, MutexGuard, PoisonError};

use super::{AllocError, Allocation, Allocator, FreeError, Stats};

/// An [`Allocator`] that can be shared between threads (`Sync`): every call
/// takes a lock for the duration of one allocator operation, and
/// [`lock`](SyncAllocator::lock) holds it for a batch.
///
/// # Which model for several threads
///
/// An allocator operation takes tens of nanoseconds; handing a lock and the
/// allocator's cache lines from one core to another takes about as long or
/// longer. So when two threads allocate and free in a tight loop through one
/// shared allocator, each operation waits for the other thread's, and two
/// threads get less done than one alone: the cost is the sharing, not the
/// lock's implementation, and no lock removes it.
///
/// The model that scales is **one allocator per thread**: give each thread
/// (or each stream, or each worker) its own [`Allocator`] over its own part
/// of the buffer (an allocator manages offsets from 0, so a thread's
/// offsets are relative to the start of its part). Nothing is shared, and
/// two threads do twice the work of one. The benchmark `alloc` measures
/// both (group `threads`).
///
/// Where one buffer must be shared, take the lock once for a batch of
/// operations with [`lock`](SyncAllocator::lock) rather than once per operation:
/// the hand-off is paid once per batch.
///
/// ```
/// use gpu_aligned::alloc::SyncAllocator;
///
/// let shared = SyncAllocator::new(1 << 20);
/// std::thread::scope(|scope| {
///     for _ in 0..2 {
///         scope.spawn(|| {
///             // One lock for the whole batch.
///             let mut allocator = shared.lock();
///             let batch: Vec<_> = (0..16).map(|_| allocator.alloc(256, 256)).collect();
///             for allocation in batch {
///                 allocator.free(allocation.unwrap()).unwrap();
///             }
///         });
///     }
/// });
/// assert_eq!(shared.stats().allocations, 0);
/// ```
#[derive(Debug)]
pub struct SyncAllocator {
    inner: Mutex<Allocator>,
}

impl SyncAllocator {
    /// A shared allocator for a buffer of `capacity` bytes, as
    /// [`Allocator::new`] makes it.
    ///
    /// ```
    /// let shared = gpu_aligned::alloc::SyncAllocator::new(4096);
    /// assert_eq!(shared.stats().capacity, 4096);
    /// ```
    pub fn new(capacity: usize) -> SyncAllocator {
        SyncAllocator::from(Allocator::new(capacity))
    }

    /// Locks the allocator for a sequence of operations.
    ///
    /// A panic in another thread while it held the lock does not poison it
    /// for good: no allocator method can panic halfway through a change, so
    /// the allocator is consistent whenever the lock is free.
    ///
    /// ```
    /// let shared = gpu_aligned::alloc::SyncAllocator::new(4096);
    /// let mut allocator = shared.lock();
    /// let a = allocator.alloc(64, 64)?;
    /// let b = allocator.alloc(64, 64)?;
    /// allocator.free(a)?;
    /// allocator.free(b)?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn lock(&self) -> MutexGuard<'_, Allocator> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// [`Allocator::alloc`] under the lock.
    ///
    /// ```
    /// let shared = gpu_aligned::alloc::SyncAllocator::new(4096);
    /// let a = shared.alloc(100, 256)?;
    /// assert_eq!(a.offset() % 256, 0);
    /// shared.free(a)?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`Allocator::alloc`].
    pub fn alloc(&self, size: usize, align: usize) -> Result<Allocation, AllocError> {
        self.lock().alloc(size, align)
    }

    /// [`Allocator::free`] under the lock.
    ///
    /// ```
    /// let shared = gpu_aligned::alloc::SyncAllocator::new(4096);
    /// let a = shared.alloc(100, 1)?;
    /// shared.free(a)?;
    /// assert!(shared.free(a).is_err());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`Allocator::free`].
    pub fn free(&self, allocation: Allocation) -> Result<(), FreeError> {
        self.lock().free(allocation)
    }

    /// [`Allocator::stats`] under the lock.
    ///
    /// ```
    /// let shared = gpu_aligned::alloc::SyncAllocator::new(4096);
    /// let _a = shared.alloc(100, 1)?;
    /// assert_eq!(shared.stats().allocations, 1);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn stats(&self) -> Stats {
        self.lock().stats()
    }

    /// [`Allocator::reset`] under the lock.
    ///
    /// ```
    /// let shared = gpu_aligned::alloc::SyncAllocator::new(4096);
    /// let _a = shared.alloc(100, 1)?;
    /// shared.reset();
    /// assert_eq!(shared.stats().allocations, 0);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn reset(&self) {
        self.lock().reset();
    }

    /// The allocator, no longer shared.
    ///
    /// ```
    /// let shared = gpu_aligned::alloc::SyncAllocator::new(4096);
    /// assert_eq!(shared.into_inner().capacity(), 4096);
    /// ```
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
