//! Pitched 2D arrays, laid out like `cudaMallocPitch`: every row starts on a
//! multiple of the pitch alignment, so each row is as aligned as the array,
//! at the cost of `pitch - width * size_of::<T>()` padding bytes per row.
//! [`Copy2d`] gives the parameters `cudaMemcpy2D` takes to move such an array
//! to or from a packed host array.

use core::fmt;
use core::marker::PhantomData;
use core::mem::size_of;

use super::{host_range, Arena, ArenaError};
use crate::alloc::{AllocError, Allocation};
use crate::backend::{Backend, HostAccess};
use crate::GpuAligned;

/// A 2D array in an [`Arena`]: `height` rows of `width` elements of `T`,
/// each row starting `pitch` bytes after the previous one. Move-only; give
/// it back with [`Arena::free_pitched`].
pub struct Pitched<T> {
    pub(super) allocation: Allocation,
    pub(super) width: u64,
    pub(super) height: u64,
    pub(super) pitch: u64,
    pub(super) _element: PhantomData<T>,
}

impl<T> Pitched<T> {
    /// Elements per row.
    pub fn width(&self) -> u64 {
        self.width
    }

    /// Number of rows.
    pub fn height(&self) -> u64 {
        self.height
    }

    /// Bytes from one row's start to the next: a multiple of the arena's
    /// pitch alignment.
    pub fn pitch(&self) -> u64 {
        self.pitch
    }

    /// Bytes of elements in one row (`width * size_of::<T>()`).
    pub fn row_bytes(&self) -> u64 {
        // Checked at allocation.
        self.width * size_of::<T>() as u64
    }

    /// Bytes reserved in total (`pitch * height`).
    pub fn size_bytes(&self) -> u64 {
        self.allocation.size()
    }

    /// Bytes spent on row padding: `(pitch - row_bytes) * height`.
    pub fn padding_bytes(&self) -> u64 {
        (self.pitch - self.row_bytes()) * self.height
    }
}

impl<T> fmt::Debug for Pitched<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Pitched")
            .field("type", &core::any::type_name::<T>())
            .field("offset", &self.allocation.offset())
            .field("width", &self.width)
            .field("height", &self.height)
            .field("pitch", &self.pitch)
            .finish()
    }
}

/// The arguments of `cudaMemcpy2D(dst, dpitch, src, spitch, width, height,
/// kind)` for one pitched array: addresses as numbers, `width` in bytes,
/// `height` in rows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Copy2d {
    /// Destination address.
    pub dst: u64,
    /// Bytes between destination rows.
    pub dpitch: u64,
    /// Source address.
    pub src: u64,
    /// Bytes between source rows.
    pub spitch: u64,
    /// Bytes copied per row.
    pub width: u64,
    /// Rows copied.
    pub height: u64,
}

/// The row pitch for rows of `row_bytes` bytes: the next multiple of
/// `pitch_align` (a power of two).
///
/// # Errors
///
/// [`AllocError::SizeOverflow`] if rounding up overflows.
pub(super) fn pitch_for(row_bytes: u64, pitch_align: u64) -> Result<u64, AllocError> {
    let mask = pitch_align - 1;
    row_bytes
        .checked_add(mask)
        .map(|bumped| bumped & !mask)
        .ok_or(AllocError::SizeOverflow)
}

/// What one array needs from the allocator.
#[derive(Clone, Copy, Debug)]
pub(super) struct Footprint {
    pub(super) bytes: u64,
    /// Row pitch in bytes; 0 for a flat array.
    pub(super) pitch: u64,
    pub(super) align: u64,
}

/// The footprint of a `width x height` pitched array of `T`.
pub(super) fn pitched_layout<T: GpuAligned>(
    width: u64,
    height: u64,
    min_align: u64,
    pitch_align: u64,
) -> Result<Footprint, AllocError> {
    let row_bytes = width
        .checked_mul(size_of::<T>() as u64)
        .ok_or(AllocError::SizeOverflow)?;
    // Rows must also stay whole multiples of the element (always true for
    // pitch alignments of 16 and up; smaller ones are rounded to the
    // element's alignment).
    let row_align = pitch_align.max(core::mem::align_of::<T>() as u64);
    let pitch = pitch_for(row_bytes, row_align)?;
    let bytes = pitch.checked_mul(height).ok_or(AllocError::SizeOverflow)?;
    Ok(Footprint {
        bytes,
        pitch,
        align: min_align.max(row_align),
    })
}

impl<B: Backend> Arena<B> {
    /// Allocates `height` rows of `width` elements of `T`, each row padded to
    /// a multiple of the arena's [pitch alignment](Arena::pitch_align), the
    /// array itself aligned to the larger of that and the minimum alignment.
    ///
    /// # Errors
    ///
    /// [`AllocError::ZeroSize`] if `width` or `height` is 0,
    /// [`AllocError::SizeOverflow`] when the byte size overflows, or the
    /// allocator's other errors; [`ArenaError::MisalignedBase`] when the
    /// buffer's address is not aligned to the pitch alignment.
    pub fn alloc_pitched<T: GpuAligned>(
        &mut self,
        width: u64,
        height: u64,
    ) -> Result<Pitched<T>, ArenaError> {
        if width == 0 || height == 0 {
            return Err(AllocError::ZeroSize.into());
        }
        let footprint = pitched_layout::<T>(width, height, self.min_align, self.pitch_align)?;
        let allocation = self.reserve(footprint.bytes, footprint.align)?;
        Ok(Pitched {
            allocation,
            width,
            height,
            pitch: footprint.pitch,
            _element: PhantomData,
        })
    }

    /// Frees a pitched array.
    ///
    /// # Errors
    ///
    /// [`ArenaError::Handle`] for a handle this arena does not hold.
    pub fn free_pitched<T>(&mut self, array: Pitched<T>) -> Result<(), ArenaError> {
        Ok(self.allocator.free(array.allocation)?)
    }

    /// The pitched array's byte offset from the start of the buffer.
    ///
    /// # Errors
    ///
    /// [`ArenaError::Handle`] for a handle this arena does not hold.
    pub fn pitched_offset<T>(&self, array: &Pitched<T>) -> Result<u64, ArenaError> {
        self.allocator.check_handle(&array.allocation)?;
        Ok(array.allocation.offset())
    }

    fn pitched_address<T>(&self, array: &Pitched<T>) -> Result<u64, ArenaError> {
        let offset = self.pitched_offset(array)?;
        self.backend
            .base_address()
            .checked_add(offset)
            .ok_or(ArenaError::AddressOverflow)
    }

    /// `cudaMemcpy2D` parameters that copy a packed host array (rows of
    /// `width` elements back to back, starting at address `src`) into the
    /// pitched array.
    ///
    /// # Errors
    ///
    /// [`ArenaError::Handle`] for a handle this arena does not hold.
    pub fn copy_in_params<T>(&self, array: &Pitched<T>, src: u64) -> Result<Copy2d, ArenaError> {
        Ok(Copy2d {
            dst: self.pitched_address(array)?,
            dpitch: array.pitch,
            src,
            spitch: array.row_bytes(),
            width: array.row_bytes(),
            height: array.height,
        })
    }

    /// `cudaMemcpy2D` parameters that copy the pitched array out into a
    /// packed host array starting at address `dst`.
    ///
    /// # Errors
    ///
    /// [`ArenaError::Handle`] for a handle this arena does not hold.
    pub fn copy_out_params<T>(&self, array: &Pitched<T>, dst: u64) -> Result<Copy2d, ArenaError> {
        Ok(Copy2d {
            dst,
            dpitch: array.row_bytes(),
            src: self.pitched_address(array)?,
            spitch: array.pitch,
            width: array.row_bytes(),
            height: array.height,
        })
    }
}

impl<B: HostAccess> Arena<B> {
    fn row_range<T>(
        &self,
        array: &Pitched<T>,
        row: u64,
    ) -> Result<core::ops::Range<usize>, ArenaError> {
        self.allocator.check_handle(&array.allocation)?;
        if row >= array.height {
            return Err(ArenaError::RowOutOfRange {
                row,
                height: array.height,
            });
        }
        // Both stay below the allocation's end, which is below the capacity.
        let start = array.allocation.offset() + row * array.pitch;
        host_range(start, array.row_bytes())
    }

    /// The `width` elements of one row (the padding after them is not
    /// included).
    ///
    /// # Errors
    ///
    /// [`ArenaError::RowOutOfRange`], or as [`Arena::get`].
    pub fn row<T: GpuAligned>(&self, array: &Pitched<T>, row: u64) -> Result<&[T], ArenaError> {
        let range = self.row_range(array, row)?;
        let bytes = self
            .backend
            .bytes()
            .get(range)
            .ok_or(ArenaError::OutsideBuffer)?;
        bytemuck::try_cast_slice(bytes).map_err(ArenaError::View)
    }

    /// One row, mutably.
    ///
    /// # Errors
    ///
    /// As [`row`](Arena::row).
    pub fn row_mut<T: GpuAligned>(
        &mut self,
        array: &Pitched<T>,
        row: u64,
    ) -> Result<&mut [T], ArenaError> {
        let range = self.row_range(array, row)?;
        let bytes = self
            .backend
            .bytes_mut()
            .get_mut(range)
            .ok_or(ArenaError::OutsideBuffer)?;
        bytemuck::try_cast_slice_mut(bytes).map_err(ArenaError::View)
    }

    /// Copies a packed array (`height` rows of `width` elements back to back)
    /// into the pitched array, as `cudaMemcpy2D` with
    /// [`copy_in_params`](Arena::copy_in_params) would.
    ///
    /// # Errors
    ///
    /// [`ArenaError::LengthMismatch`] unless `packed.len() == width * height`;
    /// otherwise as [`row_mut`](Arena::row_mut).
    pub fn write_rows<T: GpuAligned>(
        &mut self,
        array: &Pitched<T>,
        packed: &[T],
    ) -> Result<(), ArenaError> {
        // `width * height` elements fit in the allocation, so no overflow.
        let expected = array.width * array.height;
        if packed.len() as u64 != expected {
            return Err(ArenaError::LengthMismatch {
                expected,
                found: packed.len() as u64,
            });
        }
        let width = usize::try_from(array.width).map_err(|_| ArenaError::OutsideBuffer)?;
        for (row, source) in (0..array.height).zip(packed.chunks_exact(width)) {
            self.row_mut(array, row)?.copy_from_slice(source);
        }
        Ok(())
    }

    /// Copies the pitched array out into a packed array, dropping the row
    /// padding.
    ///
    /// # Errors
    ///
    /// As [`write_rows`](Arena::write_rows).
    pub fn read_rows<T: GpuAligned>(
        &self,
        array: &Pitched<T>,
        packed: &mut [T],
    ) -> Result<(), ArenaError> {
        let expected = array.width * array.height;
        if packed.len() as u64 != expected {
            return Err(ArenaError::LengthMismatch {
                expected,
                found: packed.len() as u64,
            });
        }
        let width = usize::try_from(array.width).map_err(|_| ArenaError::OutsideBuffer)?;
        for (row, target) in (0..array.height).zip(packed.chunks_exact_mut(width)) {
            target.copy_from_slice(self.row(array, row)?);
        }
        Ok(())
    }
}
