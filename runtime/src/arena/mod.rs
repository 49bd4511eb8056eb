//! Typed, aligned arrays carved out of one buffer: the [`Arena`] puts the
//! offsets-only [`Allocator`] over a [`Backend`] and hands out
//! [`ArenaSlice<T, B>`] handles whose byte offset is a multiple of
//! `max(align_of::<T>(), min_align)`. The minimum alignment defaults to
//! [`ARRAY_ALIGN`](crate::align::ARRAY_ALIGN) (256 bytes): what `cudaMalloc` guarantees for a whole
//! buffer, and the start offset that gave full write bandwidth on an H100
//! (in the repository's GPU benchmark, an in-place float read-modify-write
//! of a 1 GiB array starting 4 bytes past a 256-byte boundary ran at 81.2%
//! of the copy peak, at the boundary 99.9%).
//!
//! Arrays behave like the buffers users know: dropping one gives its bytes
//! back, as dropping a `Vec` or a cudarc `CudaSlice` does. On a device the
//! bytes are handed out again only after the array's last recorded use on
//! any stream has finished. A handle does not borrow its arena, so it can
//! live in a struct of its own; the drop queues its block on a list the
//! arena shares with its handles, and the arena takes the blocks back when
//! it allocates: as soon as an array would not fit without them, and
//! otherwise a few at a time. No lock is taken on the arena's calls, and a
//! drop costs an uncontended lock of that list and a push. A handle outlived by its
//! arena, or made stale by a [`reset`](Arena::reset), drops harmlessly.
//! An array of no elements is made like any other, flat, pitched, planned
//! or a column, and takes no bytes (see [`alloc`](Arena::alloc)).
//!
//! An array holds GPU elements ([`GpuAligned`](crate::GpuAligned): one
//! load or store each) or whole structs aligned to 16 bytes
//! (`#[derive(GpuData)]` with `align(16)`, or `#[gpu_aligned::padded]`
//! above 16 bytes), which a kernel moves as 16-byte words through the
//! header's `T_aos16` view: the bound of every verb is
//! [`GpuWords`]. A struct whose fields kernels read apart
//! is better stored as columns ([`alloc_soa`](Arena::alloc_soa)).
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
//! One API for every backend: [`alloc`](Arena::alloc) and its zeroed and
//! filled forms, [`carve`](Arena::carve), [`write`](Arena::write),
//! [`read`](Arena::read), [`to_vec`](Arena::to_vec), [`zero`](Arena::zero),
//! [`copy`](Arena::copy) and [`offset`](Arena::offset) mean the same on the
//! host and on a CUDA device, so code written once over `B: Backend` runs
//! on both. `write` and `read` take a range (`..`, `2..4`), of elements for
//! a flat array and of rows for a pitched one ([`TypedArray`]). They run on
//! the backend's stream; on a device, `Arena::view` and `Arena::view_mut`
//! lend part of an array to a kernel or to cudarc's own verbs on any
//! stream, ordered against it as cudarc orders its own slices.
//!
//! Content operations borrow the arena shared and the array as they need
//! it: writing array `a` takes `&mut a`, reading it `&a`. So one array can
//! be read or written while a view of another is alive; allocating,
//! [`reset`](Arena::reset) and growth take the arena `&mut`, so no view
//! outlives the bytes it shows. On a [`HostAccess`] backend the arena also
//! lends `&[T]` / `&mut [T]` ([`get`](Arena::get),
//! [`get_mut`](Arena::get_mut)). A [`Plan`] reserves several arrays at once
//! or none ([`Arena::carve`]), and [`Arena::alloc_pitched`] lays out 2D
//! arrays the way `cudaMallocPitch` does. [`ArenaOptions`] makes every kind
//! of arena: host or device, other alignments, growing, or sized exactly
//! for a plan.
//!
//! [`free`](Arena::free) gives an array back by hand; it is never needed,
//! but it says when the handle is not this arena's.
//!
//! The byte path is a stack of small pools (the `pool` module), each one
//! policy over the layer below, as RMM's memory resources are. From the
//! top: `graphs` (arrays a captured CUDA graph may replay over, held while
//! it lives), `kept` (blocks of dropped arrays, for the next array of their
//! size), `watch` (the sanitizer's red zones and regions), `offsets` (the
//! allocator, growth, and the chunks of memory given back). Why this
//! order: a graph's holds come first, so no layer below hands out a block
//! a replay may still use; kept blocks sit above the watch, so a kept
//! block is no region (a kernel still using a dropped array is reported)
//! and a reused one is registered anew; the watch sits on the offsets, so
//! a red zone is part of the placed block. A block a stream used is
//! retired by the backend (its stream waits for the uses on the device)
//! and freed, not kept. What the arena holds back
//! ([`pending_frees`](Arena::pending_frees), [`live`](Arena::live),
//! [`leaks`](Arena::leaks)) is the list of returns plus what each layer
//! reports. [`ThreadArena`]'s slot reuses the kept layer's cache over the
//! locked shared arena.
//!
//! The files: `handle` (the one place every handle holds), `returns` (the
//! list dropped arrays wait on), `reserve` (the arena's face of the byte
//! path: the one way bytes are reserved and the one way they come back),
//! `pool` (the layers, and `Arena::capture` with its graph holds), `access` (checked typed ranges and the
//! verbs that move bytes), `options` (constructors), `regions` (the
//! sanitizer's face), `view` (the device views and their adaptors), and
//! one file each for pitched arrays, plans, growth, host and device views,
//! errors, and the arena with a cache per thread (`threads`,
//! [`ThreadArena`]).

mod access;
mod error;
mod growth;
mod handle;
mod host;
mod options;
mod pitched;
mod plan;
mod pool;
mod regions;
mod reserve;
mod returns;
mod spin;
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

use alloc_crate::vec::Vec;
use core::fmt;
use core::mem::align_of;

use crate::alloc::{Allocator, HandleError};
use crate::backend::{Backend, HostAccess, HostBuffer};
use crate::GpuWords;
use pool::Pool;
use returns::{ReturnsOwner, Taken};

/// Allocator + buffer + alignments: see the [module docs](self). Made by
/// [`Arena::host`], `Arena::device` (feature `cuda`) or [`ArenaOptions`].
pub struct Arena<B: Backend = HostBuffer> {
    /// First, so that the arrays still queued on it are given up before
    /// the buffer goes.
    returns: ReturnsOwner<B>,
    /// The stack of pools the bytes come from and go back to (see `pool`).
    /// Declared before the backend so that it drops first: no graph
    /// launches once the buffer starts going (the top layer stops them
    /// first), and the watch layer's heaps are unregistered while the
    /// buffer still exists.
    pool: pool::Stack<B>,
    backend: B,
    min_align: usize,
    pitch_align: usize,
    /// The largest power of two dividing the buffer's address (which never
    /// changes): an alignment up to it is one an offset can give.
    base_align: u64,
    /// Dropped arrays taken off the shared list, being given back; kept
    /// between calls so taking them never allocates.
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

    /// The buffer, giving up the arena (every handle into it becomes stale
    /// and drops harmlessly).
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

    /// The bookkeeping, for statistics and invariant checks.
    ///
    /// ```
    /// # let arena = gpu_aligned::arena::Arena::host(4096)?;
    /// assert_eq!(arena.allocator().capacity(), 4096);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn allocator(&self) -> &Allocator {
        &self.pool.offsets().allocator
    }

    /// How many arrays are live: allocated (or taken out of a carving, or
    /// still inside one) and neither dropped nor freed. Empty arrays hold
    /// no bytes and are not counted.
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
        // Every queued or pending array is one the allocator still counts.
        let count = self.allocator().live_count();
        count.saturating_sub(self.pending_frees())
    }

    /// Where every live array is, `(offset, bytes)` in address order: the
    /// report to print when [`live`](Arena::live) is not 0 where it should
    /// be. It walks the allocator's blocks, so it is for reports, not for a
    /// hot loop.
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
        // What the list of returns and each layer hold is no leak.
        let mut held = self.queued_offsets();
        self.pool.held(&mut |block| held.push(block.offset()));
        held.sort_unstable();
        let mut leaks: Vec<(u64, usize)> = self
            .allocator()
            .live()
            .filter(|(offset, _)| held.binary_search(offset).is_err())
            .collect();
        // The allocator walks its blocks in the order it made them, which
        // is not address order once a freed block has been reused.
        leaks.sort_unstable_by_key(|&(offset, _)| offset);
        leaks
    }

    /// Arrays given back (dropped or freed) whose bytes the arena has not
    /// taken back yet: on a device, those whose last uses on another stream
    /// may still run; anywhere, dropped ones the arena has not needed yet
    /// (it takes them back when an array would not fit without them, and
    /// otherwise a few at a time), and blocks of dropped arrays it keeps for
    /// the next array of the same size (it gives them to the allocator when
    /// an array would not fit without them, and when a growing arena is
    /// [trimmed](Arena::trim)), and dropped arrays a captured CUDA graph may
    /// still use (held until its last replay has finished). Counting
    /// allocates nothing.
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
        // What each layer holds, counted where it sits; no count allocates.
        let allocator = self.allocator();
        let queued = self
            .returns
            .count_held(|allocation| allocator.check_handle(allocation).is_ok());
        queued + self.pool.holds()
    }

    /// Where the dropped arrays not taken back yet are (a stale handle's
    /// drop is not one: its bytes were freed by a reset).
    fn queued_offsets(&self) -> Vec<u64> {
        let allocator = self.allocator();
        self.returns
            .held(|allocation| allocator.check_handle(allocation).is_ok())
    }

    /// The alignment an array of `T` gets in this arena.
    pub(super) fn align_for<T: GpuWords>(&self) -> usize {
        self.min_align.max(align_of::<T>())
    }

    /// The array's byte offset from the start of the buffer (flat or
    /// pitched): its address is the buffer's
    /// [`base_address`](crate::backend::Buffer::base_address) plus this.
    /// An empty array's is 0: it holds no bytes.
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

    /// Checks that `place` is live in this arena, as the allocator checks
    /// a handle. An empty array holds no bytes of any arena, so every arena
    /// takes it (as every `Vec` would take an empty slice).
    #[inline(always)]
    pub(super) fn check_place(&self, place: &Place<B>) -> Result<(), HandleError> {
        if place.is_empty() {
            return Ok(());
        }
        self.allocator().check_handle(&place.allocation)
    }
}

impl<B: HostAccess> Arena<B> {
    /// The `T`s of a checked span as a raw pointer.
    fn host_elements<T>(&self, span: crate::backend::Span) -> *mut T {
        if span.len == 0 {
            // A slice of no elements needs a pointer aligned for `T` and no
            // bytes: an empty array's offset (0, the buffer's start) need
            // not be aligned for a type aligned past the buffer.
            return core::ptr::NonNull::<T>::dangling().as_ptr();
        }
        // `span` lies inside the buffer (checked by the caller), whose size
        // fits `isize`, so the offset fits `usize`.
        let offset = span.offset as usize;
        // SAFETY: `offset <= len` of the buffer `host_ptr` starts.
        unsafe { self.backend.host_ptr().as_ptr().add(offset) }.cast()
    }
}
