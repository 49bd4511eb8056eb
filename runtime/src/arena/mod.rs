//! Typed, aligned arrays carved out of one buffer: the [`Arena`] puts the
//! offsets-only [`Allocator`] over a [`Backend`] and hands out
//! [`ArenaSlice<T>`] handles whose byte offset is a multiple of
//! `max(align_of::<T>(), min_align)`. The minimum alignment defaults to 256
//! bytes: what `cudaMalloc` guarantees for a whole buffer, and the start
//! offset that measured full write bandwidth on an H100 (an array starting 4
//! bytes past it wrote at 68.7% of peak, see `GPU-FACTS.md`).
//!
//! On a [`HostAccess`] backend the arena also gives safe `&[T]` / `&mut [T]`
//! views of its arrays. Beyond single arrays: a [`Plan`] reserves several
//! arrays at once or none ([`Arena::carve`]), and [`Arena::alloc_pitched`]
//! lays out 2D arrays the way `cudaMallocPitch` does.
//!
//! ```
//! use gpu_aligned::arena::Arena;
//! use gpu_aligned::vector::float4;
//!
//! let mut arena = Arena::host(1 << 20)?;
//! let counts = arena.alloc::<u32>(3)?;
//! let points = arena.alloc::<float4>(100)?;
//! assert_eq!(arena.offset(&points)? % 256, 0);
//! arena.get_mut(&counts)?.copy_from_slice(&[1, 2, 3]);
//! assert_eq!(arena.get(&counts)?, &[1, 2, 3]);
//! arena.free(points)?;
//! arena.free(counts)?;
//! # Ok::<(), gpu_aligned::arena::ArenaError>(())
//! ```

mod error;
mod growth;
mod pitched;
mod plan;
#[cfg(feature = "std")]
mod sync;

pub use error::ArenaError;
pub use growth::{GrowthError, GrowthPolicy, DEFAULT_CHUNK};
pub use pitched::{Copy2d, Pitched};
pub use plan::{ArrayKey, CarvedArray, Carving, PitchedKey, Plan};
#[cfg(feature = "std")]
pub use sync::SyncArena;

use core::fmt;
use core::marker::PhantomData;
use core::mem::{align_of, size_of};

use crate::alloc::{AllocError, Allocation, Allocator, Stats};
use crate::backend::{Backend, HostAccess, HostBuffer};
use crate::GpuAligned;

/// The default minimum alignment of every array's start: 256 bytes.
pub const DEFAULT_MIN_ALIGN: u64 = 256;

/// The default alignment of a pitched array's row pitch.
///
/// 512 bytes: what `cuMemAllocPitch` does on an H100 (and an H200), measured
/// by the CUDA backend for widths of 1 to 65,536 bytes and elements of 4, 8
/// and 16 bytes: the pitch is always the row width rounded up to a multiple
/// of 512 (see `backend::cuda::DRIVER_PITCH_ALIGN`).
pub const DEFAULT_PITCH_ALIGN: u64 = 512;

/// A typed array in an [`Arena`]: `len` elements of `T`. Move-only; give it
/// back with [`Arena::free`]. The handle checks itself against the arena on
/// every use, so one from another arena, or one outlived by an
/// [`Arena::reset`], is an error rather than a view of the wrong bytes.
pub struct ArenaSlice<T> {
    allocation: Allocation,
    len: u64,
    _element: PhantomData<T>,
}

impl<T> ArenaSlice<T> {
    /// Number of elements.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Whether the array has no elements (never true: zero-length arrays are
    /// refused).
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Size in bytes.
    pub fn size_bytes(&self) -> u64 {
        self.allocation.size()
    }
}

impl<T> fmt::Debug for ArenaSlice<T> {
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
    backend: B,
    min_align: u64,
    pitch_align: u64,
}

impl<B: Backend> fmt::Debug for Arena<B> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Arena")
            .field("base_address", &self.backend.base_address())
            .field("min_align", &self.min_align)
            .field("pitch_align", &self.pitch_align)
            .field("allocator", &self.allocator)
            .finish_non_exhaustive()
    }
}

impl Arena<HostBuffer> {
    /// An arena over a fresh zeroed host buffer of `len` bytes, with the
    /// default alignments.
    ///
    /// # Errors
    ///
    /// [`ArenaError::Host`] if the buffer cannot be made.
    pub fn host(len: u64) -> Result<Self, ArenaError> {
        Self::host_with_alignment(len, DEFAULT_MIN_ALIGN, DEFAULT_PITCH_ALIGN)
    }

    /// An arena over a fresh zeroed host buffer of `len` bytes, aligned to
    /// both given alignments (and at least 256).
    ///
    /// # Errors
    ///
    /// [`ArenaError::AlignNotPowerOfTwo`] for a bad alignment,
    /// [`ArenaError::Host`] if the buffer cannot be made.
    pub fn host_with_alignment(
        len: u64,
        min_align: u64,
        pitch_align: u64,
    ) -> Result<Self, ArenaError> {
        check_power_of_two(min_align)?;
        check_power_of_two(pitch_align)?;
        let buffer = HostBuffer::new(len, min_align.max(pitch_align))?;
        Arena::with_alignment(buffer, min_align, pitch_align)
    }
}

fn check_power_of_two(align: u64) -> Result<(), ArenaError> {
    if align.is_power_of_two() {
        Ok(())
    } else {
        Err(ArenaError::AlignNotPowerOfTwo { align })
    }
}

impl<B: Backend> Arena<B> {
    /// An arena over `backend` with the default alignments (256 for array
    /// starts, 512 for row pitches).
    ///
    /// # Errors
    ///
    /// [`ArenaError::MisalignedBase`] if the buffer's address is not a
    /// multiple of 256.
    pub fn new(backend: B) -> Result<Self, ArenaError> {
        Arena::with_alignment(backend, DEFAULT_MIN_ALIGN, DEFAULT_PITCH_ALIGN)
    }

    /// An arena over `backend` whose arrays start on multiples of
    /// `min_align` and whose pitched rows are multiples of `pitch_align`
    /// bytes long.
    ///
    /// # Errors
    ///
    /// [`ArenaError::AlignNotPowerOfTwo`] for a bad alignment;
    /// [`ArenaError::MisalignedBase`] if the buffer's address is not a
    /// multiple of `min_align`.
    pub fn with_alignment(
        backend: B,
        min_align: u64,
        pitch_align: u64,
    ) -> Result<Self, ArenaError> {
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
        Ok(Arena {
            allocator,
            backend,
            min_align,
            pitch_align,
        })
    }

    /// The alignment every array start gets at least.
    pub fn min_align(&self) -> u64 {
        self.min_align
    }

    /// The alignment of pitched rows.
    pub fn pitch_align(&self) -> u64 {
        self.pitch_align
    }

    /// The buffer.
    pub fn backend(&self) -> &B {
        &self.backend
    }

    /// The buffer, mutably, for backends that copy into it (the CUDA one).
    /// Crate-private: swapping the buffer out from under the allocator would
    /// break the base-alignment check made at construction.
    #[cfg_attr(not(feature = "cuda"), allow(dead_code))]
    pub(crate) fn backend_mut(&mut self) -> &mut B {
        &mut self.backend
    }

    /// The buffer, giving up the arena (and every handle into it).
    pub fn into_backend(self) -> B {
        self.backend
    }

    /// The bookkeeping, for statistics and invariant checks.
    pub fn allocator(&self) -> &Allocator {
        &self.allocator
    }

    /// The allocator's counters; see [`Stats`].
    pub fn stats(&self) -> Stats {
        self.allocator.stats()
    }

    /// Frees every array at once; every handle made before becomes stale.
    pub fn reset(&mut self) {
        self.allocator.reset();
    }

    /// The alignment an array of `T` gets in this arena.
    pub fn align_for<T: GpuAligned>(&self) -> u64 {
        self.min_align.max(align_of::<T>() as u64)
    }

    /// Reserves `bytes` at `align` (relative to the buffer's address, which
    /// is checked to be aligned as well).
    fn reserve(&mut self, bytes: u64, align: u64) -> Result<Allocation, ArenaError> {
        let base = self.backend.base_address();
        if base % align != 0 {
            return Err(ArenaError::MisalignedBase { base, align });
        }
        Ok(self.allocator.alloc(bytes, align)?)
    }

    /// Allocates an array of `len` elements of `T`, starting at a multiple of
    /// [`align_for::<T>()`](Arena::align_for). The bytes are whatever the
    /// buffer held (zeros for a fresh [`HostBuffer`]).
    ///
    /// # Errors
    ///
    /// [`ArenaError::Alloc`] with [`AllocError::ZeroSize`] for `len == 0`,
    /// [`AllocError::SizeOverflow`] when `len * size_of::<T>()` overflows,
    /// or the allocator's other errors (out of memory among them).
    pub fn alloc<T: GpuAligned>(&mut self, len: u64) -> Result<ArenaSlice<T>, ArenaError> {
        let bytes = len
            .checked_mul(size_of::<T>() as u64)
            .ok_or(AllocError::SizeOverflow)?;
        let allocation = self.reserve(bytes, self.align_for::<T>())?;
        Ok(ArenaSlice {
            allocation,
            len,
            _element: PhantomData,
        })
    }

    /// Frees an array.
    ///
    /// # Errors
    ///
    /// [`ArenaError::Handle`] if the handle belongs to another arena or was
    /// invalidated by [`reset`](Arena::reset).
    pub fn free<T>(&mut self, slice: ArenaSlice<T>) -> Result<(), ArenaError> {
        Ok(self.allocator.free(slice.allocation)?)
    }

    /// The array's byte offset from the start of the buffer.
    ///
    /// # Errors
    ///
    /// [`ArenaError::Handle`] for a handle this arena does not hold.
    pub fn offset<T>(&self, slice: &ArenaSlice<T>) -> Result<u64, ArenaError> {
        self.allocator.check_handle(&slice.allocation)?;
        Ok(slice.allocation.offset())
    }

    /// The array's address in the buffer's address space (a device pointer
    /// for a device backend): what a kernel is handed.
    ///
    /// # Errors
    ///
    /// [`ArenaError::Handle`] for a handle this arena does not hold.
    pub fn address<T>(&self, slice: &ArenaSlice<T>) -> Result<u64, ArenaError> {
        let offset = self.offset(slice)?;
        self.backend
            .base_address()
            .checked_add(offset)
            .ok_or(ArenaError::AddressOverflow)
    }
}

impl<B: HostAccess> Arena<B> {
    /// The bytes of a live allocation.
    fn bytes_of(&self, allocation: &Allocation) -> Result<&[u8], ArenaError> {
        self.allocator.check_handle(allocation)?;
        let range = host_range(allocation.offset(), allocation.size())?;
        self.backend
            .bytes()
            .get(range)
            .ok_or(ArenaError::OutsideBuffer)
    }

    fn bytes_of_mut(&mut self, allocation: &Allocation) -> Result<&mut [u8], ArenaError> {
        self.allocator.check_handle(allocation)?;
        let range = host_range(allocation.offset(), allocation.size())?;
        self.backend
            .bytes_mut()
            .get_mut(range)
            .ok_or(ArenaError::OutsideBuffer)
    }

    /// The array's elements.
    ///
    /// # Errors
    ///
    /// [`ArenaError::Handle`] for a handle this arena does not hold;
    /// [`ArenaError::View`] if the backend's bytes are not where it said.
    pub fn get<T: GpuAligned>(&self, slice: &ArenaSlice<T>) -> Result<&[T], ArenaError> {
        let bytes = self.bytes_of(&slice.allocation)?;
        bytemuck::try_cast_slice(bytes).map_err(ArenaError::View)
    }

    /// The array's elements, mutably.
    ///
    /// # Errors
    ///
    /// As [`get`](Arena::get).
    pub fn get_mut<T: GpuAligned>(
        &mut self,
        slice: &ArenaSlice<T>,
    ) -> Result<&mut [T], ArenaError> {
        let bytes = self.bytes_of_mut(&slice.allocation)?;
        bytemuck::try_cast_slice_mut(bytes).map_err(ArenaError::View)
    }
}

/// `offset .. offset + len` as host indices.
fn host_range(offset: u64, len: u64) -> Result<core::ops::Range<usize>, ArenaError> {
    let start = usize::try_from(offset).map_err(|_| ArenaError::OutsideBuffer)?;
    let len = usize::try_from(len).map_err(|_| ArenaError::OutsideBuffer)?;
    let end = start.checked_add(len).ok_or(ArenaError::OutsideBuffer)?;
    Ok(start..end)
}
