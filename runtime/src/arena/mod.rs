//! Typed, aligned arrays carved out of one buffer: the [`Arena`] puts the
//! offsets-only [`Allocator`] over a [`Backend`] and hands out
//! [`ArenaSlice<T, B>`] handles whose byte offset is a multiple of
//! `max(align_of::<T>(), min_align)`. The minimum alignment defaults to 256
//! bytes: what `cudaMalloc` guarantees for a whole buffer, and the start
//! offset that gave full write bandwidth on an H100 (in the repository's GPU
//! benchmark, an in-place float read-modify-write of a 1 GiB array starting 4
//! bytes past a 256-byte boundary ran at 81.2% of the copy peak, at the
//! boundary 99.9%; one-off kernels measured 68.7% and 98.2%).
//!
//! One API for every backend: [`alloc`](Arena::alloc),
//! [`free`](Arena::free), [`carve`](Arena::carve), [`write`](Arena::write)
//! (a host slice into an array), [`read`](Arena::read) and
//! [`to_vec`](Arena::to_vec), [`zero`](Arena::zero), their `_range`
//! variants, pitched rows ([`write_rows`](Arena::write_rows),
//! [`read_rows`](Arena::read_rows)), [`offset`](Arena::offset) and
//! [`address`](Arena::address) mean the same on the host and on a CUDA
//! device, so code written once over `B: Backend` runs on both. Work runs on
//! the backend's stream unless [`on`](Arena::on) names another.
//!
//! Content operations borrow the arena shared and the array as they need
//! it: writing array `a` takes `&mut a`, reading it `&a`. So one array can
//! be read or written while a view of another is alive; allocating,
//! freeing and [`reset`](Arena::reset) take the arena `&mut`, so no view
//! outlives the bytes it shows. On a [`HostAccess`] backend the arena also
//! lends `&[T]` / `&mut [T]` ([`get`](Arena::get),
//! [`get_mut`](Arena::get_mut)). A [`Plan`] reserves several arrays at once
//! or none ([`Arena::carve`]), and [`Arena::alloc_pitched`] lays out 2D
//! arrays the way `cudaMallocPitch` does.
//!
//! ```
//! use gpu_aligned::arena::Arena;
//! use gpu_aligned::vector::float4;
//!
//! let mut arena = Arena::host(1 << 20)?;
//! let mut counts = arena.alloc::<u32>(3)?;
//! let points = arena.alloc::<float4>(100)?;
//! assert_eq!(arena.offset(&points)? % 256, 0);
//! let view = arena.get(&points)?;          // a view of one array ...
//! arena.write(&mut counts, &[1, 2, 3])?;   // ... while another is written
//! assert_eq!(view.len(), 100);
//! assert_eq!(arena.to_vec(&counts)?, [1, 2, 3]);
//! arena.free(points)?;
//! arena.free(counts)?;
//! assert_eq!(arena.live(), 0);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! Dropping a handle without freeing it keeps its bytes in use until
//! [`reset`](Arena::reset); dropping the arena with live handles frees the
//! buffer and makes them stale. Neither says anything by itself (the crate
//! does no logging): ask [`live`](Arena::live) before dropping or resetting
//! to find arrays that were never freed.

mod error;
mod growth;
mod host;
mod pitched;
mod plan;
mod regions;
#[cfg(feature = "std")]
mod sync;

#[cfg(feature = "cuda")]
mod device;
#[cfg(feature = "cuda")]
mod kernel_array;
#[cfg(feature = "cuda")]
mod read_only;

pub use error::{ArenaError, FreeFailed};
pub use growth::{GrowthError, GrowthPolicy, DEFAULT_CHUNK};
#[cfg(feature = "cuda")]
pub use kernel_array::KernelArray;
pub use pitched::{Copy2d, Pitched};
pub use plan::{ArrayKey, CarvedArray, Carving, PitchedKey, Plan};
#[cfg(feature = "cuda")]
pub use read_only::ReadOnlyView;
#[cfg(feature = "std")]
pub use sync::SyncArena;

use alloc_crate::collections::VecDeque;
use alloc_crate::vec::Vec;
use core::fmt;
use core::marker::PhantomData;
use core::mem::{align_of, size_of};

use crate::alloc::{AllocError, Allocation, Allocator, Stats};
use crate::backend::{Backend, HostAccess, HostBuffer, Span};
use crate::GpuAligned;

/// The default minimum alignment of every array's start: 256 bytes.
pub const DEFAULT_MIN_ALIGN: u64 = 256;

/// The default alignment of a pitched array's row pitch.
///
/// 512 bytes: what `cuMemAllocPitch` does on an H100, measured
/// by the CUDA backend for widths of 1 to 65,536 bytes and elements of 4, 8
/// and 16 bytes: the pitch is always the row width rounded up to a multiple
/// of 512.
pub const DEFAULT_PITCH_ALIGN: u64 = 512;

/// A typed array in an [`Arena`]: `len` elements of `T`. Move-only; give it
/// back with [`Arena::free`]. The handle checks itself against the arena on
/// every use, so one from another arena, or one outlived by an
/// [`Arena::reset`], is an error rather than a view of the wrong bytes.
///
/// It also holds what the backend tracks for this array alone (on a CUDA
/// device: its read and write events), so work on different arrays is
/// ordered independently.
///
/// ```
/// use gpu_aligned::arena::Arena;
///
/// let mut arena = Arena::host(4096)?;
/// let a = arena.alloc::<f32>(10)?;
/// assert_eq!((a.len(), a.size_bytes()), (10, 40));
/// arena.free(a)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[must_use = "an array dropped without `Arena::free` stays allocated until the arena is reset"]
pub struct ArenaSlice<T, B: Backend = HostBuffer> {
    allocation: Allocation,
    len: usize,
    tracking: B::Tracking,
    _element: PhantomData<T>,
}

impl<T, B: Backend> ArenaSlice<T, B> {
    fn new(allocation: Allocation, len: usize) -> Self {
        ArenaSlice {
            allocation,
            len,
            tracking: B::Tracking::default(),
            _element: PhantomData,
        }
    }

    /// Number of elements.
    ///
    /// ```
    /// # let mut arena = gpu_aligned::arena::Arena::host(4096)?;
    /// let a = arena.alloc::<u8>(3)?;
    /// assert_eq!(a.len(), 3);
    /// # arena.free(a)?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the array has no elements (never true: zero-length arrays are
    /// refused).
    ///
    /// ```
    /// # let mut arena = gpu_aligned::arena::Arena::host(4096)?;
    /// let a = arena.alloc::<u8>(3)?;
    /// assert!(!a.is_empty());
    /// # arena.free(a)?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Size in bytes.
    ///
    /// ```
    /// # let mut arena = gpu_aligned::arena::Arena::host(4096)?;
    /// let a = arena.alloc::<u64>(3)?;
    /// assert_eq!(a.size_bytes(), 24);
    /// # arena.free(a)?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn size_bytes(&self) -> u64 {
        // Not the allocation's size, which includes a red zone when the
        // arena keeps them (see `crate::sanitizer`).
        self.len as u64 * size_of::<T>() as u64
    }

    /// The array's bytes.
    fn span(&self) -> Span {
        Span {
            offset: self.allocation.offset(),
            len: self.size_bytes(),
        }
    }
}

impl<T, B: Backend> fmt::Debug for ArenaSlice<T, B> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ArenaSlice")
            .field("type", &core::any::type_name::<T>())
            .field("offset", &self.allocation.offset())
            .field("len", &self.len)
            .finish()
    }
}

/// Allocator + buffer + minimum alignment. See the [module docs](self).
pub struct Arena<B: Backend> {
    allocator: Allocator,
    /// Red zones and what the tools watching kernels are told (see
    /// `crate::sanitizer`). Declared before the backend so that it drops
    /// first: its heaps are unregistered while the buffer still exists.
    regions: crate::sanitizer::Regions,
    backend: B,
    min_align: u64,
    pitch_align: u64,
    /// The largest power of two dividing the buffer's address (which never
    /// changes): an alignment up to it is one an offset can give.
    base_align: u64,
    /// Freed arrays whose bytes wait for the backend's work on them to
    /// finish, oldest first.
    pending: VecDeque<(Allocation, B::Fence)>,
    /// Whether and how far the buffer grows when an array does not fit.
    growth: GrowthPolicy,
}

impl<B: Backend> fmt::Debug for Arena<B> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Arena")
            .field("base_address", &self.backend.base_address())
            .field("min_align", &self.min_align)
            .field("pitch_align", &self.pitch_align)
            .field("allocator", &self.allocator)
            .field("pending_frees", &self.pending.len())
            .finish_non_exhaustive()
    }
}

fn check_power_of_two<E>(align: u64) -> Result<(), ArenaError<E>> {
    if align.is_power_of_two() {
        Ok(())
    } else {
        Err(ArenaError::AlignNotPowerOfTwo { align })
    }
}

/// The result type of arena operations on backend `B`.
pub type ArenaResult<T, B> = Result<T, ArenaError<<B as Backend>::Error>>;

impl<B: Backend> Arena<B> {
    /// An arena over `backend` with the default alignments (256 for array
    /// starts, 512 for row pitches).
    ///
    /// ```
    /// use gpu_aligned::arena::Arena;
    /// use gpu_aligned::backend::HostBuffer;
    ///
    /// let arena = Arena::new(HostBuffer::new(4096, 256)?)?;
    /// assert_eq!(arena.min_align(), 256);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`ArenaError::MisalignedBase`] if the buffer's address is not a
    /// multiple of 256.
    pub fn new(backend: B) -> ArenaResult<Self, B> {
        Arena::with_alignment(backend, DEFAULT_MIN_ALIGN, DEFAULT_PITCH_ALIGN)
    }

    /// An arena over `backend` whose arrays start on multiples of
    /// `min_align` and whose pitched rows are multiples of `pitch_align`
    /// bytes long.
    ///
    /// ```
    /// use gpu_aligned::arena::Arena;
    /// use gpu_aligned::backend::HostBuffer;
    ///
    /// let arena = Arena::with_alignment(HostBuffer::new(4096, 256)?, 64, 128)?;
    /// assert_eq!((arena.min_align(), arena.pitch_align()), (64, 128));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`ArenaError::AlignNotPowerOfTwo`] for a bad alignment;
    /// [`ArenaError::MisalignedBase`] if the buffer's address is not a
    /// multiple of `min_align`.
    pub fn with_alignment(backend: B, min_align: u64, pitch_align: u64) -> ArenaResult<Self, B> {
        check_power_of_two(min_align)?;
        check_power_of_two(pitch_align)?;
        let base = backend.base_address();
        if base % min_align != 0 {
            return Err(ArenaError::MisalignedBase {
                base,
                align: min_align,
            });
        }
        // Every array starts on a multiple of `min_align`, so the bytes after
        // one array up to the next multiple could never start another: the
        // allocator rounds blocks up to it instead of keeping those slivers
        // in its free lists.
        let allocator = Allocator::with_granularity(backend.len(), min_align)?;
        let base_align = match base {
            0 => 1 << 63,
            _ => 1 << base.trailing_zeros(),
        };
        let growth = GrowthPolicy::fixed().with_initial(backend.len());
        let regions = crate::sanitizer::Regions::new(backend.watched_by_tools());
        Ok(Arena {
            allocator,
            backend,
            min_align,
            pitch_align,
            base_align,
            pending: VecDeque::new(),
            growth,
            regions,
        })
    }

    /// The alignment every array start gets at least.
    ///
    /// ```
    /// # let arena = gpu_aligned::arena::Arena::host(4096)?;
    /// assert_eq!(arena.min_align(), 256);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn min_align(&self) -> u64 {
        self.min_align
    }

    /// The alignment of pitched rows.
    ///
    /// ```
    /// # let arena = gpu_aligned::arena::Arena::host(4096)?;
    /// assert_eq!(arena.pitch_align(), 512);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn pitch_align(&self) -> u64 {
        self.pitch_align
    }

    /// The buffer.
    ///
    /// ```
    /// use gpu_aligned::backend::Backend;
    /// # let arena = gpu_aligned::arena::Arena::host(4096)?;
    /// assert_eq!(arena.backend().len(), 4096);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn backend(&self) -> &B {
        &self.backend
    }

    /// The buffer, giving up the arena (and every handle into it).
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
        &self.allocator
    }

    /// The allocator's counters; see [`Stats`]. Arrays freed while the
    /// device may still use them count as allocated until their bytes are
    /// handed back (see [`free`](Arena::free)).
    ///
    /// ```
    /// # let mut arena = gpu_aligned::arena::Arena::host(4096)?;
    /// let a = arena.alloc::<u8>(10)?;
    /// assert_eq!(arena.stats().requested, 10);
    /// # arena.free(a)?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn stats(&self) -> Stats {
        self.allocator.stats()
    }

    /// How many arrays are live: allocated (or taken out of a carving, or
    /// still inside one) and not freed. A non-zero count before a
    /// [`reset`](Arena::reset) or a drop means arrays that were never given
    /// back.
    ///
    /// ```
    /// # let mut arena = gpu_aligned::arena::Arena::host(4096)?;
    /// let a = arena.alloc::<u8>(10)?;
    /// assert_eq!(arena.live(), 1);
    /// arena.free(a)?;
    /// assert_eq!(arena.live(), 0);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn live(&self) -> u64 {
        self.allocator.live_count() - self.pending.len() as u64
    }

    /// Where every live array is, `(offset, bytes)` in address order: the
    /// leak report to print when [`live`](Arena::live) is not 0 before a
    /// reset or a drop. It walks the allocator's blocks, so it is for
    /// reports, not for a hot loop.
    ///
    /// ```
    /// # let mut arena = gpu_aligned::arena::Arena::host(4096)?;
    /// let kept = arena.alloc::<u32>(10)?;
    /// let lost = arena.alloc::<u8>(3)?;
    /// drop(lost); // never freed
    /// arena.free(kept)?;
    /// assert_eq!(arena.leaks(), [(256, 3)]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn leaks(&self) -> Vec<(u64, u64)> {
        self.allocator
            .live()
            .filter(|(offset, _)| {
                !self
                    .pending
                    .iter()
                    .any(|(freed, _)| freed.offset() == *offset)
            })
            .collect()
    }

    /// Freed arrays whose bytes still wait for work on another stream to
    /// finish (always 0 on the host).
    ///
    /// ```
    /// # let mut arena = gpu_aligned::arena::Arena::host(4096)?;
    /// let a = arena.alloc::<u8>(10)?;
    /// arena.free(a)?;
    /// assert_eq!(arena.pending_frees(), 0);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn pending_frees(&self) -> usize {
        self.pending.len()
    }

    /// Frees every array at once; every handle made before becomes stale.
    /// On a device it first waits until no work that may use the buffer is
    /// pending, since arrays still in use on a stream cannot be told apart
    /// from the others.
    ///
    /// ```
    /// # let mut arena = gpu_aligned::arena::Arena::host(4096)?;
    /// let a = arena.alloc::<u8>(10)?;
    /// assert_eq!(arena.live(), 1); // `a` was never freed
    /// arena.reset()?;
    /// assert_eq!(arena.live(), 0);
    /// assert!(arena.offset(&a).is_err()); // stale
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`ArenaError::Backend`] if the backend cannot wait; the arena is then
    /// left as it was.
    pub fn reset(&mut self) -> ArenaResult<(), B> {
        self.backend.quiesce().map_err(ArenaError::Backend)?;
        self.pending.clear();
        self.allocator.reset();
        self.regions_cleared(); // sanitizer hook: every region goes
        Ok(())
    }

    /// The alignment an array of `T` gets in this arena.
    ///
    /// ```
    /// use gpu_aligned::vector::float4;
    /// # let arena = gpu_aligned::arena::Arena::host_with_alignment(4096, 4, 512)?;
    /// assert_eq!(arena.align_for::<float4>(), 16);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn align_for<T: GpuAligned>(&self) -> u64 {
        self.min_align.max(align_of::<T>() as u64)
    }

    /// Hands the bytes of freed arrays whose fences have passed back to the
    /// allocator, oldest first, without waiting.
    fn reclaim(&mut self) -> ArenaResult<(), B> {
        while let Some((_, fence)) = self.pending.front() {
            if !self
                .backend
                .fence_passed(fence)
                .map_err(ArenaError::Backend)?
            {
                break;
            }
            if let Some((allocation, _)) = self.pending.pop_front() {
                // Checked live when it was freed, and nothing else frees it.
                self.give_back(allocation)?;
            }
        }
        Ok(())
    }

    /// Waits for every pending free and hands its bytes back.
    fn drain_pending(&mut self) -> ArenaResult<(), B> {
        while let Some((_, fence)) = self.pending.front() {
            self.backend
                .wait_fence(fence)
                .map_err(ArenaError::Backend)?;
            if let Some((allocation, _)) = self.pending.pop_front() {
                self.give_back(allocation)?;
            }
        }
        Ok(())
    }

    /// Reserves `bytes` at `align` for the array `array` describes.
    ///
    /// Sanitizer hook (the one place arrays are reserved): while regions
    /// are kept (a tool is attached or red zones are on) the allocation
    /// also holds the array's red zone, and the array is registered and
    /// named (see `crate::sanitizer`). Otherwise this is one branch.
    #[inline]
    fn reserve(
        &mut self,
        bytes: u64,
        align: u64,
        array: impl FnOnce() -> crate::sanitizer::ArrayInfo,
    ) -> ArenaResult<Allocation, B> {
        if self.regions.is_active() {
            return self.reserve_watched(bytes, align, array());
        }
        self.reserve_block(bytes, align)
    }

    /// Gives a live allocation's bytes back to the allocator.
    ///
    /// Sanitizer hook (the one place bytes go back, but for a reset): the
    /// array stops being a region, so a kernel still using it is reported.
    #[inline]
    fn give_back(&mut self, allocation: Allocation) -> Result<(), crate::alloc::FreeError> {
        if self.regions.is_active() {
            return self.give_back_watched(allocation);
        }
        self.allocator.free(allocation)
    }

    /// Reserves `bytes` at `align` (relative to the buffer's address, which
    /// is checked to be aligned as well). Bytes of freed arrays come back
    /// first when their fences have passed; when nothing fits, a growing
    /// arena grows, and only then are the pending ones waited for.
    #[inline(always)]
    pub(super) fn reserve_block(&mut self, bytes: u64, align: u64) -> ArenaResult<Allocation, B> {
        // `align` is a power of two (the allocator refuses others), so a
        // compare replaces a division.
        if align > self.base_align && align.is_power_of_two() {
            return Err(ArenaError::MisalignedBase {
                base: self.backend.base_address(),
                align,
            });
        }
        if !self.pending.is_empty() {
            self.reclaim()?;
        }
        let refused = match self.allocator.alloc(bytes, align) {
            Err(
                error @ (AllocError::OutOfMemory { .. } | AllocError::SizeExceedsCapacity { .. }),
            ) => ArenaError::Alloc(error),
            other => return Ok(other?),
        };
        // Nothing fits. Growing waits for no stream, waiting for the pending
        // frees may, so a growing arena grows first.
        let refused = match self.grow_for(bytes, align) {
            Ok(true) => return Ok(self.allocator.alloc(bytes, align)?),
            Ok(false) => refused,
            Err(error) => error,
        };
        if self.pending.is_empty() {
            return Err(refused);
        }
        self.drain_pending()?;
        match self.allocator.alloc(bytes, align) {
            Err(AllocError::OutOfMemory { .. }) => Err(refused),
            other => Ok(other?),
        }
    }

    /// Gives back the bytes of a live allocation whose handle the caller has
    /// taken apart: at once, or once the backend's fence has passed.
    fn release(&mut self, allocation: Allocation, fence: Option<B::Fence>) -> ArenaResult<(), B> {
        match fence {
            None => Ok(self.give_back(allocation)?),
            Some(fence) => {
                self.pending.push_back((allocation, fence));
                Ok(())
            }
        }
    }

    /// Allocates an array of `len` elements of `T`, starting at a multiple of
    /// [`align_for::<T>()`](Arena::align_for). The bytes are whatever the
    /// buffer held (zeros for a fresh buffer).
    ///
    /// ```
    /// # let mut arena = gpu_aligned::arena::Arena::host(4096)?;
    /// let data = vec![1.0f32; 100];
    /// let a = arena.alloc::<f32>(data.len())?;
    /// assert_eq!(a.len(), 100);
    /// # arena.free(a)?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`ArenaError::Alloc`] with [`AllocError::ZeroSize`] for `len == 0`,
    /// [`AllocError::SizeOverflow`] when `len * size_of::<T>()` overflows,
    /// or the allocator's other errors (out of memory among them).
    pub fn alloc<T: GpuAligned>(&mut self, len: usize) -> ArenaResult<ArenaSlice<T, B>, B> {
        let bytes = (len as u64)
            .checked_mul(size_of::<T>() as u64)
            .ok_or(AllocError::SizeOverflow)?;
        let array =
            || crate::sanitizer::ArrayInfo::of::<T>(crate::sanitizer::RegionShape::Array { len });
        let allocation = self.reserve(bytes, self.align_for::<T>(), array)?;
        Ok(ArenaSlice::new(allocation, len))
    }

    /// Frees an array. On a device, if another stream may still use it, its
    /// bytes are handed out again only once that work has passed an event
    /// recorded now; the host never waits here.
    ///
    /// ```
    /// # let mut arena = gpu_aligned::arena::Arena::host(4096)?;
    /// let a = arena.alloc::<u8>(10)?;
    /// arena.free(a)?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`FreeFailed`] with the handle itself when it belongs to another
    /// arena or was invalidated by [`reset`](Arena::reset)
    /// ([`ArenaError::Handle`]), or when the backend failed
    /// ([`ArenaError::Backend`]): the array is still live and can be freed
    /// where it belongs.
    pub fn free<T>(
        &mut self,
        mut slice: ArenaSlice<T, B>,
    ) -> Result<(), FreeFailed<ArenaSlice<T, B>, B::Error>> {
        self.free_parts(slice.allocation, &mut slice.tracking)
            .map_err(|error| FreeFailed {
                handle: slice,
                error,
            })
    }

    /// Frees what a handle holds: the allocation goes back to the allocator
    /// at once when no stream can still use it, otherwise once the fence
    /// that the backend recorded at the free has passed. The caller keeps
    /// the handle, to hand it back on an error.
    fn free_parts(
        &mut self,
        allocation: Allocation,
        tracking: &mut B::Tracking,
    ) -> ArenaResult<(), B> {
        if !self.backend.needs_retire(tracking) {
            // The allocator checks the handle itself.
            return Ok(self.give_back(allocation)?);
        }
        self.allocator.check_handle(&allocation)?;
        let fence = self.backend.retire(tracking).map_err(ArenaError::Backend)?;
        self.release(allocation, fence)
    }

    /// The array's byte offset from the start of the buffer.
    ///
    /// ```
    /// # let mut arena = gpu_aligned::arena::Arena::host(4096)?;
    /// let a = arena.alloc::<u8>(10)?;
    /// let b = arena.alloc::<u8>(10)?;
    /// assert_eq!(arena.offset(&b)? - arena.offset(&a)?, 256);
    /// # arena.free(a)?; arena.free(b)?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`ArenaError::Handle`] for a handle this arena does not hold.
    pub fn offset<T>(&self, slice: &ArenaSlice<T, B>) -> ArenaResult<u64, B> {
        self.allocator.check_handle(&slice.allocation)?;
        Ok(slice.allocation.offset())
    }

    /// The array's address in the buffer's address space (a device pointer
    /// for a device backend): what a kernel is handed.
    ///
    /// ```
    /// use gpu_aligned::backend::Backend;
    /// # let mut arena = gpu_aligned::arena::Arena::host(4096)?;
    /// let a = arena.alloc::<u8>(10)?;
    /// assert_eq!(arena.address(&a)?, arena.backend().base_address() + arena.offset(&a)?);
    /// # arena.free(a)?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`ArenaError::Handle`] for a handle this arena does not hold.
    pub fn address<T>(&self, slice: &ArenaSlice<T, B>) -> ArenaResult<u64, B> {
        let offset = self.offset(slice)?;
        self.backend
            .base_address()
            .checked_add(offset)
            .ok_or(ArenaError::AddressOverflow)
    }

    /// The bytes of elements `start .. start + count` of `slice`, checked:
    /// the handle is live here, its elements fit the bytes its allocation
    /// holds, the range lies inside it and inside the buffer, and its first
    /// address is aligned for `T`. Every typed view and copy of a flat array
    /// goes through this one check, in release builds too.
    fn element_span<T>(
        &self,
        slice: &ArenaSlice<T, B>,
        start: usize,
        count: usize,
    ) -> ArenaResult<Span, B> {
        let allocation = &slice.allocation;
        self.allocator.check_handle(allocation)?;
        let out_of_range = ArenaError::OutOfRange {
            start,
            len: count,
            array_len: slice.len,
        };
        match start.checked_add(count) {
            Some(end) if end <= slice.len => {}
            _ => return Err(out_of_range),
        }
        let size = size_of::<T>() as u64;
        match (slice.len as u64).checked_mul(size) {
            Some(bytes) if bytes <= allocation.size() => {}
            _ => return Err(ArenaError::OutsideBuffer),
        }
        // Both below the allocation's size (checked just above).
        let span = Span {
            offset: allocation.offset() + start as u64 * size,
            len: count as u64 * size,
        };
        self.checked_start::<T>(span)
    }

    /// `span` if it lies inside the buffer and starts on an address aligned
    /// for `T`.
    fn checked_start<T>(&self, span: Span) -> ArenaResult<Span, B> {
        if !span.within(self.backend.len()) {
            return Err(ArenaError::OutsideBuffer);
        }
        let address = self
            .backend
            .base_address()
            .checked_add(span.offset)
            .ok_or(ArenaError::AddressOverflow)?;
        let align = align_of::<T>() as u64;
        if address % align != 0 {
            return Err(ArenaError::Misaligned { address, align });
        }
        Ok(span)
    }

    /// A view of the arena that runs copies and zero-fill on `stream`
    /// instead of the backend's own (on the host, where there are no
    /// streams, the same as the arena).
    ///
    /// ```
    /// # let mut arena = gpu_aligned::arena::Arena::host(4096)?;
    /// let mut a = arena.alloc::<u32>(2)?;
    /// arena.on(&()).write(&mut a, &[4, 5])?;
    /// assert_eq!(arena.to_vec(&a)?, [4, 5]);
    /// # arena.free(a)?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn on<'a>(&'a self, stream: &'a B::Stream) -> OnStream<'a, B> {
        OnStream {
            arena: self,
            stream,
        }
    }

    fn here(&self) -> OnStream<'_, B> {
        self.on(self.backend.stream())
    }

    /// Copies `src` into the array (`src.len()` must equal its length).
    ///
    /// ```
    /// # let mut arena = gpu_aligned::arena::Arena::host(4096)?;
    /// let mut a = arena.alloc::<u32>(3)?;
    /// arena.write(&mut a, &[1, 2, 3])?;
    /// assert_eq!(arena.to_vec(&a)?, [1, 2, 3]);
    /// # arena.free(a)?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`ArenaError::LengthMismatch`], [`ArenaError::Handle`] for a handle
    /// this arena does not hold, [`ArenaError::Backend`].
    pub fn write<T: GpuAligned>(
        &self,
        slice: &mut ArenaSlice<T, B>,
        src: &[T],
    ) -> ArenaResult<(), B> {
        self.here().write(slice, src)
    }

    /// Copies `src` into elements `start .. start + src.len()` of the array.
    ///
    /// ```
    /// # let mut arena = gpu_aligned::arena::Arena::host(4096)?;
    /// let mut a = arena.alloc::<u32>(4)?;
    /// arena.write_range(&mut a, 2, &[7, 8])?;
    /// assert_eq!(arena.to_vec(&a)?, [0, 0, 7, 8]);
    /// # arena.free(a)?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`write`](Arena::write), and [`ArenaError::OutOfRange`].
    pub fn write_range<T: GpuAligned>(
        &self,
        slice: &mut ArenaSlice<T, B>,
        start: usize,
        src: &[T],
    ) -> ArenaResult<(), B> {
        self.here().write_range(slice, start, src)
    }

    /// Copies the array into `dst` (`dst.len()` must equal its length); on a
    /// device, waits for the copy.
    ///
    /// ```
    /// # let mut arena = gpu_aligned::arena::Arena::host(4096)?;
    /// let mut a = arena.alloc::<u32>(2)?;
    /// arena.write(&mut a, &[1, 2])?;
    /// let mut out = [0; 2];
    /// arena.read(&a, &mut out)?;
    /// assert_eq!(out, [1, 2]);
    /// # arena.free(a)?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`write`](Arena::write).
    pub fn read<T: GpuAligned>(
        &self,
        slice: &ArenaSlice<T, B>,
        dst: &mut [T],
    ) -> ArenaResult<(), B> {
        self.here().read(slice, dst)
    }

    /// Copies elements `start .. start + dst.len()` of the array into `dst`.
    ///
    /// ```
    /// # let mut arena = gpu_aligned::arena::Arena::host(4096)?;
    /// let mut a = arena.alloc::<u32>(4)?;
    /// arena.write(&mut a, &[1, 2, 3, 4])?;
    /// let mut middle = [0; 2];
    /// arena.read_range(&a, 1, &mut middle)?;
    /// assert_eq!(middle, [2, 3]);
    /// # arena.free(a)?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`write_range`](Arena::write_range).
    pub fn read_range<T: GpuAligned>(
        &self,
        slice: &ArenaSlice<T, B>,
        start: usize,
        dst: &mut [T],
    ) -> ArenaResult<(), B> {
        self.here().read_range(slice, start, dst)
    }

    /// The array, copied into a new `Vec`.
    ///
    /// ```
    /// # let mut arena = gpu_aligned::arena::Arena::host(4096)?;
    /// let a = arena.alloc::<u16>(3)?;
    /// assert_eq!(arena.to_vec(&a)?, [0, 0, 0]); // a fresh buffer is zeroed
    /// # arena.free(a)?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`read`](Arena::read).
    pub fn to_vec<T: GpuAligned>(&self, slice: &ArenaSlice<T, B>) -> ArenaResult<Vec<T>, B> {
        self.here().to_vec(slice)
    }

    /// Sets every byte of the array to zero.
    ///
    /// ```
    /// # let mut arena = gpu_aligned::arena::Arena::host(4096)?;
    /// let mut a = arena.alloc::<u32>(2)?;
    /// arena.write(&mut a, &[1, 2])?;
    /// arena.zero(&mut a)?;
    /// assert_eq!(arena.to_vec(&a)?, [0, 0]);
    /// # arena.free(a)?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`ArenaError::Handle`] for a handle this arena does not hold,
    /// [`ArenaError::Backend`].
    pub fn zero<T: GpuAligned>(&self, slice: &mut ArenaSlice<T, B>) -> ArenaResult<(), B> {
        self.here().zero(slice)
    }
}

/// An [`Arena`] whose copies and zero-fill run on a stream the caller named
/// (see [`Arena::on`]): the same verbs, the same checks.
///
/// ```
/// # let mut arena = gpu_aligned::arena::Arena::host(4096)?;
/// let mut a = arena.alloc::<u8>(2)?;
/// let on = arena.on(&());
/// on.write(&mut a, &[1, 2])?;
/// assert_eq!(on.to_vec(&a)?, [1, 2]);
/// # arena.free(a)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct OnStream<'a, B: Backend> {
    arena: &'a Arena<B>,
    stream: &'a B::Stream,
}

impl<B: Backend> fmt::Debug for OnStream<'_, B> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OnStream")
            .field("arena", self.arena)
            .finish_non_exhaustive()
    }
}

impl<B: Backend> Clone for OnStream<'_, B> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<B: Backend> Copy for OnStream<'_, B> {}

fn check_len<E>(expected: usize, found: usize) -> Result<(), ArenaError<E>> {
    if expected == found {
        Ok(())
    } else {
        Err(ArenaError::LengthMismatch { expected, found })
    }
}

impl<'a, B: Backend> OnStream<'a, B> {
    /// The arena.
    ///
    /// ```
    /// # let arena = gpu_aligned::arena::Arena::host(4096)?;
    /// assert_eq!(arena.on(&()).arena().min_align(), 256);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn arena(&self) -> &'a Arena<B> {
        self.arena
    }

    /// [`Arena::write`] on this stream.
    ///
    /// ```
    /// # let mut arena = gpu_aligned::arena::Arena::host(4096)?;
    /// let mut a = arena.alloc::<u8>(1)?;
    /// arena.on(&()).write(&mut a, &[9])?;
    /// # arena.free(a)?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`Arena::write`].
    pub fn write<T: GpuAligned>(
        self,
        slice: &mut ArenaSlice<T, B>,
        src: &[T],
    ) -> ArenaResult<(), B> {
        check_len(slice.len, src.len())?;
        self.write_range(slice, 0, src)
    }

    /// [`Arena::write_range`] on this stream.
    ///
    /// ```
    /// # let mut arena = gpu_aligned::arena::Arena::host(4096)?;
    /// let mut a = arena.alloc::<u8>(3)?;
    /// arena.on(&()).write_range(&mut a, 1, &[9])?;
    /// # arena.free(a)?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`Arena::write_range`].
    pub fn write_range<T: GpuAligned>(
        self,
        slice: &mut ArenaSlice<T, B>,
        start: usize,
        src: &[T],
    ) -> ArenaResult<(), B> {
        let dst = self.arena.element_span(slice, start, src.len())?;
        let array = slice.span();
        // SAFETY: `dst` lies inside the buffer and inside the live array
        // `slice` names (checked by `element_span`), which `&mut` gives us
        // alone; `src` holds exactly `dst.len` bytes.
        unsafe {
            self.arena.backend.write(
                self.stream,
                &mut slice.tracking,
                array,
                dst,
                bytemuck::cast_slice(src),
            )
        }
        .map_err(ArenaError::Backend)
    }

    /// [`Arena::read`] on this stream.
    ///
    /// ```
    /// # let mut arena = gpu_aligned::arena::Arena::host(4096)?;
    /// let a = arena.alloc::<u8>(1)?;
    /// let mut out = [7];
    /// arena.on(&()).read(&a, &mut out)?;
    /// assert_eq!(out, [0]);
    /// # arena.free(a)?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`Arena::read`].
    pub fn read<T: GpuAligned>(
        self,
        slice: &ArenaSlice<T, B>,
        dst: &mut [T],
    ) -> ArenaResult<(), B> {
        check_len(slice.len, dst.len())?;
        self.read_range(slice, 0, dst)
    }

    /// [`Arena::read_range`] on this stream.
    ///
    /// ```
    /// # let mut arena = gpu_aligned::arena::Arena::host(4096)?;
    /// let a = arena.alloc::<u8>(3)?;
    /// let mut out = [7];
    /// arena.on(&()).read_range(&a, 2, &mut out)?;
    /// # arena.free(a)?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`Arena::read_range`].
    pub fn read_range<T: GpuAligned>(
        self,
        slice: &ArenaSlice<T, B>,
        start: usize,
        dst: &mut [T],
    ) -> ArenaResult<(), B> {
        let src = self.arena.element_span(slice, start, dst.len())?;
        // SAFETY: `src` lies inside the buffer and inside the live array
        // `slice` names, which `&` keeps from being written meanwhile; `dst`
        // holds exactly `src.len` bytes.
        unsafe {
            self.arena.backend.read(
                self.stream,
                &slice.tracking,
                slice.span(),
                src,
                bytemuck::cast_slice_mut(dst),
            )
        }
        .map_err(ArenaError::Backend)
    }

    /// [`Arena::to_vec`] on this stream.
    ///
    /// ```
    /// # let mut arena = gpu_aligned::arena::Arena::host(4096)?;
    /// let a = arena.alloc::<u8>(2)?;
    /// assert_eq!(arena.on(&()).to_vec(&a)?, [0, 0]);
    /// # arena.free(a)?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`Arena::to_vec`].
    pub fn to_vec<T: GpuAligned>(self, slice: &ArenaSlice<T, B>) -> ArenaResult<Vec<T>, B> {
        // Checked before the `Vec` is made, so a forged length cannot ask for
        // a huge allocation.
        self.arena.element_span(slice, 0, slice.len)?;
        let mut out = alloc_crate::vec![T::zeroed(); slice.len];
        self.read(slice, &mut out)?;
        Ok(out)
    }

    /// [`Arena::zero`] on this stream.
    ///
    /// ```
    /// # let mut arena = gpu_aligned::arena::Arena::host(4096)?;
    /// let mut a = arena.alloc::<u8>(2)?;
    /// arena.on(&()).zero(&mut a)?;
    /// # arena.free(a)?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`Arena::zero`].
    pub fn zero<T: GpuAligned>(self, slice: &mut ArenaSlice<T, B>) -> ArenaResult<(), B> {
        let dst = self.arena.element_span(slice, 0, slice.len)?;
        let array = slice.span();
        // SAFETY: as in `write_range`.
        unsafe {
            self.arena
                .backend
                .zero(self.stream, &mut slice.tracking, array, dst)
        }
        .map_err(ArenaError::Backend)
    }
}

impl<B: HostAccess> Arena<B> {
    /// The `T`s of a checked span as a raw pointer.
    fn host_elements<T>(&self, span: Span) -> *mut T {
        // `span` lies inside the buffer (checked by the caller), whose size
        // fits `isize`, so the offset fits `usize`.
        let offset = span.offset as usize;
        // SAFETY: `offset <= len` of the buffer `host_ptr` starts.
        unsafe { self.backend.host_ptr().as_ptr().add(offset) }.cast()
    }
}
