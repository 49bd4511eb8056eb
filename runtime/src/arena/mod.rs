//! Typed, aligned arrays carved out of one buffer: the [`Arena`] puts the offsets-only
//! [`Allocator`] over a [`Backend`] and hands out [`ArenaSlice<T, B>`] handles whose offset is a
//! multiple of `max(align_of::<T>(), min_align)` ([`ARRAY_ALIGN`](crate::align::ARRAY_ALIGN) by
//! default). Dropping an array gives its bytes back, as dropping a `Vec` does (on a device, reused
//! only after its last use on any stream); a handle does not borrow its arena, and one outlived by
//! it drops harmlessly. The verbs mean the same on every backend.
//!
//! ```
//! use gpu_aligned::arena::Arena;
//! use gpu_aligned::vector::float4;
//!
//! let mut arena = Arena::host(1 << 20)?;
//! let mut counts = arena.alloc_from(&[1u32, 2, 3])?;
//! let points = arena.alloc_zeros::<float4>(100)?;
//! assert_eq!(arena.offset(&points)? % 256, 0);
//! let view = arena.get(&points)?;          // a view of one array ...
//! arena.write(&mut counts, .., &[4, 5, 6])?; // ... while another is written
//! assert_eq!(view.len(), 100);
//! assert_eq!(arena.to_vec(&counts)?, [4, 5, 6]);
//! drop((points, counts));                  // both given back
//! assert_eq!(arena.live(), 0);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! The byte path is a stack of pools (`pool`), from the top: `graphs` (arrays a captured graph may
//! replay over), `kept` (dropped arrays' blocks, for the next array of their size), `watch` (red
//! zones and regions, and the history while it records), `offsets` (the allocator and growth).
//! Graph holds come first, so no layer below hands out a block a replay may use; kept blocks sit
//! above the watch, so a kept block is no region; a red zone is part of its placed block. A block a
//! stream used is retired (the arena's stream waits for its uses) and freed, not kept.

mod access;
mod error;
mod growth;
mod handle;
mod history;
mod host;
mod options;
mod pitched;
mod plan;
mod pool;
mod regions;
mod reserve;
mod returns;
#[cfg(feature = "std")]
mod threads;
mod tuning;

#[cfg(feature = "cuda")]
mod device;
#[cfg(feature = "cuda")]
mod view;

pub use error::{ArenaError, FreeFailed};
pub use growth::{GrowthError, GrowthPolicy, DEFAULT_CHUNK};
pub use handle::{ArenaArray, ArenaHandle, ArenaSlice, TypedArray};
#[cfg(feature = "cuda")]
pub use pool::CapturedGraph;
// The structure of arrays is a handle too.
pub(crate) use handle::{Place, Places, Sealed, SEALED};
pub use options::ArenaOptions;
pub use pitched::Pitched;
pub use plan::{ArrayKey, CarvedArray, Carving, PitchedKey, Plan};
#[cfg(feature = "std")]
pub use threads::{ArenaLock, ThreadArena};
#[cfg(feature = "cuda")]
pub use view::{KernelArg, KernelArray, ReadOnly, View, ViewMut};
#[cfg(feature = "cuda")]
pub(crate) use {access::bounds, view::Lent};

use alloc_crate::vec::Vec;
use core::fmt;

use crate::alloc::{Allocation, Allocator, HandleError};
use crate::backend::{Backend, HostAccess, HostBuffer};
use pool::Pool;
use returns::{ReturnsOwner, Taken};

/// Typed arrays of one buffer (see the [module docs](self)), made by [`ArenaOptions`].
pub struct Arena<B: Backend = HostBuffer> {
    /// Dropped before the buffer, as is `pool` (stopping graphs' launches).
    returns: ReturnsOwner<B>,
    pool: pool::Stack<B>,
    backend: B,
    min_align: usize,
    pitch_align: usize,
    /// The largest power of two dividing the buffer's address.
    base_align: u64,
    returned: Taken<B>,
}

impl<B: Backend> fmt::Debug for Arena<B> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Arena")
            .field("base_address", &self.backend.base_address())
            .field("min_align", &self.min_align)
            .field("pitch_align", &self.pitch_align)
            .field("allocator", self.allocator())
            .field("pending_frees", &self.pending_frees())
            .finish_non_exhaustive()
    }
}

/// The result type of arena operations on backend `B`.
pub type ArenaResult<T, B> = Result<T, ArenaError<<B as crate::backend::Buffer>::Error>>;

impl<B: Backend> Arena<B> {
    /// The alignment every array start gets at least.
    ///
    /// ```
    /// # let arena = gpu_aligned::arena::Arena::host(4096)?;
    /// assert_eq!(arena.min_align(), 256);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn min_align(&self) -> usize {
        self.min_align
    }

    /// The alignment of pitched rows.
    ///
    /// ```
    /// # let arena = gpu_aligned::arena::Arena::host(4096)?;
    /// assert_eq!(arena.pitch_align(), 512);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn pitch_align(&self) -> usize {
        self.pitch_align
    }

    /// The buffer.
    ///
    /// ```
    /// use gpu_aligned::backend::Buffer;
    /// # let arena = gpu_aligned::arena::Arena::host(4096)?;
    /// assert_eq!(arena.backend().len(), 4096);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn backend(&self) -> &B {
        &self.backend
    }

    /// The buffer, giving up the arena (its handles become stale).
    ///
    /// ```
    /// # let arena = gpu_aligned::arena::Arena::host(4096)?;
    /// let mut buffer = arena.into_backend();
    /// assert_eq!(buffer.bytes().len(), 4096);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn into_backend(self) -> B {
        self.backend
    }

    /// The allocator, for statistics and invariant checks.
    ///
    /// ```
    /// # let arena = gpu_aligned::arena::Arena::host(4096)?;
    /// assert_eq!(arena.allocator().capacity(), 4096);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn allocator(&self) -> &Allocator {
        &self.pool.offsets().allocator
    }

    /// How many arrays (not empty ones) are neither dropped nor freed.
    ///
    /// ```
    /// # let mut arena = gpu_aligned::arena::Arena::host(4096)?;
    /// let a = arena.alloc::<u8>(10)?;
    /// assert_eq!(arena.live(), 1);
    /// drop(a);
    /// assert_eq!(arena.live(), 0);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn live(&self) -> usize {
        let count = self.allocator().live_count();
        count.saturating_sub(self.pending_frees())
    }

    /// Every live array's `(offset, bytes)`, in address order.
    ///
    /// ```
    /// # let mut arena = gpu_aligned::arena::Arena::host(4096)?;
    /// let kept = arena.alloc::<u32>(10)?;
    /// let other = arena.alloc::<u8>(3)?;
    /// drop(kept);
    /// assert_eq!(arena.leaks(), [(256, 3)]);
    /// # drop(other);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn leaks(&self) -> Vec<(u64, usize)> {
        let mut held = self.queued_offsets();
        self.pool.held(&mut |block| held.push(block.offset()));
        held.sort_unstable();
        let mut leaks: Vec<(u64, usize)> = self
            .allocator()
            .live()
            .filter(|(offset, _)| held.binary_search(offset).is_err())
            .collect();
        leaks.sort_unstable_by_key(|&(offset, _)| offset);
        leaks
    }

    /// Arrays given back that the allocator still counts (queued, kept, or held for a graph).
    ///
    /// ```
    /// # let mut arena = gpu_aligned::arena::Arena::host(256)?;
    /// let a = arena.alloc::<u8>(10)?;
    /// drop(a);
    /// assert_eq!(arena.pending_frees(), 1);
    /// let b = arena.alloc::<u8>(10)?; // only `a`'s bytes fit: taken back
    /// assert_eq!(arena.pending_frees(), 0);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn pending_frees(&self) -> usize {
        let allocator = self.allocator();
        let live = |block: &Allocation| allocator.check_handle(block).is_ok();
        self.returns.count_held(live) + self.pool.holds()
    }

    pub(super) fn queued_offsets(&self) -> Vec<u64> {
        let allocator = self.allocator();
        self.returns
            .held(|block| allocator.check_handle(block).is_ok())
    }

    /// The array's offset from the buffer's [`base_address`](crate::backend::Buffer::base_address).
    ///
    /// ```
    /// # let mut arena = gpu_aligned::arena::Arena::host(1 << 16)?;
    /// let a = arena.alloc::<u8>(10)?;
    /// let b = arena.alloc::<u8>(10)?;
    /// assert_eq!(arena.offset(&b)? - arena.offset(&a)?, 256);
    /// let image = arena.alloc_pitched::<f32>(10, 4)?;
    /// assert_eq!(arena.offset(&image)? % 512, 0);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`ArenaError::Handle`] for a handle this arena does not hold.
    pub fn offset(&self, array: &impl ArenaArray<B>) -> ArenaResult<u64, B> {
        let place = array.place(SEALED);
        self.check_place(place)?;
        Ok(place.allocation.offset())
    }

    /// Checks that `place` is live here (an empty one is every arena's).
    #[inline(always)]
    pub(super) fn check_place(&self, place: &Place<B>) -> Result<(), HandleError> {
        if place.is_empty() {
            return Ok(());
        }
        self.allocator().check_handle(&place.allocation)
    }
}

impl<B: HostAccess> Arena<B> {
    fn host_elements<T>(&self, span: crate::backend::Span) -> *mut T {
        if span.len == 0 {
            // Offset 0 need not be aligned for `T`.
            return core::ptr::NonNull::<T>::dangling().as_ptr();
        }
        // Inside the buffer (checked by the caller), so it fits `usize`.
        let offset = span.offset as usize;
        // SAFETY: `offset <= len` of the buffer `host_ptr` starts.
        unsafe { self.backend.host_ptr().as_ptr().add(offset) }.cast()
    }
}
