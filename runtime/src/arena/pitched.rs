//! Pitched 2D arrays, laid out like `cudaMallocPitch`; a range of one counts rows.

use core::fmt;
use core::marker::PhantomData;
use core::mem::{align_of, size_of};

use crate::align::{offset_of, round_up};

use super::handle::{ArenaArray, ArenaHandle, OnePlace, Place, Places, Sealed, Shape, Shaped};
use super::{Arena, ArenaError, ArenaResult, TypedArray};
use crate::alloc::AllocError;
use crate::backend::{Backend, Rows, Span};
use crate::sanitizer::{ArrayInfo, RegionShape};
use crate::GpuWords;

/// A 2D array in an [`Arena`]: `height` rows of `width` elements of `T`, `pitch` bytes apart.
///
/// ```
/// # let mut arena = gpu_aligned::arena::Arena::host(1 << 16)?;
/// let image = arena.alloc_pitched::<f32>(100, 3)?;
/// assert_eq!((image.width(), image.height(), image.pitch()), (100, 3, 512));
/// assert_eq!(image.padding_bytes(), 3 * (512 - 400));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct Pitched<T, B: Backend = crate::backend::HostBuffer> {
    pub(super) place: Place<B>,
    pub(super) width: usize,
    pub(super) height: usize,
    pub(super) pitch: usize,
    _element: PhantomData<T>,
}

impl<T, B: Backend> Pitched<T, B> {
    pub(super) fn new(place: Place<B>, width: usize, height: usize, pitch: usize) -> Self
    where
        T: GpuWords,
    {
        crate::layout::require_layout::<T>();
        Pitched {
            place,
            width,
            height,
            pitch,
            _element: PhantomData,
        }
    }

    /// Elements per row.
    ///
    /// ```
    /// # let mut arena = gpu_aligned::arena::Arena::host(1 << 16)?;
    /// assert_eq!(arena.alloc_pitched::<u8>(7, 2)?.width(), 7);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn width(&self) -> usize {
        self.width
    }

    /// Number of rows.
    ///
    /// ```
    /// # let mut arena = gpu_aligned::arena::Arena::host(1 << 16)?;
    /// assert_eq!(arena.alloc_pitched::<u8>(7, 2)?.height(), 2);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn height(&self) -> usize {
        self.height
    }

    /// Bytes from one row's start to the next.
    ///
    /// ```
    /// # let mut arena = gpu_aligned::arena::Arena::host(1 << 16)?;
    /// assert_eq!(arena.alloc_pitched::<u8>(513, 2)?.pitch(), 1024);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn pitch(&self) -> usize {
        self.pitch
    }

    /// Bytes of elements in one row (`width * size_of::<T>()`).
    ///
    /// ```
    /// # let mut arena = gpu_aligned::arena::Arena::host(1 << 16)?;
    /// assert_eq!(arena.alloc_pitched::<u16>(7, 2)?.row_bytes(), 14);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn row_bytes(&self) -> usize {
        self.width.saturating_mul(size_of::<T>())
    }

    /// Bytes reserved in total (`pitch * height`).
    ///
    /// ```
    /// # let mut arena = gpu_aligned::arena::Arena::host(1 << 16)?;
    /// assert_eq!(arena.alloc_pitched::<u16>(7, 2)?.size_bytes(), 1024);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn size_bytes(&self) -> usize {
        self.place.bytes
    }

    /// Bytes spent on row padding: `(pitch - row_bytes) * height`.
    ///
    /// ```
    /// # let mut arena = gpu_aligned::arena::Arena::host(1 << 16)?;
    /// assert_eq!(arena.alloc_pitched::<u8>(500, 2)?.padding_bytes(), 24);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn padding_bytes(&self) -> usize {
        self.pitch()
            .saturating_sub(self.row_bytes())
            .saturating_mul(self.height)
    }
}

super::handle::typed_array!(Pitched);

impl<T, B: Backend> Shaped for Pitched<T, B> {
    fn shape(&self, _: Sealed) -> Shape {
        Shape::Rows {
            width: self.width,
            height: self.height,
            pitch: self.pitch,
        }
    }
}

impl<T, B: Backend> fmt::Debug for Pitched<T, B> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Pitched")
            .field("type", &core::any::type_name::<T>())
            .field("offset", &self.place.allocation.offset())
            .field("width", &self.width)
            .field("height", &self.height)
            .field("pitch", &self.pitch)
            .finish()
    }
}

/// What one array needs from the allocator.
#[derive(Clone, Copy, Debug)]
pub(super) struct Footprint {
    pub(super) bytes: usize,
    /// Row pitch in bytes; 0 for a flat array.
    pub(super) pitch: usize,
    pub(super) align: usize,
}

/// The footprint of `height` rows of `width` elements of `(size, align)`.
pub(super) fn pitched_layout(
    (size, align): (usize, usize),
    (width, height): (usize, usize),
    (min_align, pitch_align): (usize, usize),
) -> Result<Footprint, AllocError> {
    let row_bytes = width.checked_mul(size).ok_or(AllocError::SizeOverflow)?;
    // Rows stay whole multiples of the element under a small pitch alignment.
    let row_align = pitch_align.max(align);
    let pitch = round_up(row_bytes, row_align).ok_or(AllocError::SizeOverflow)?;
    let bytes = pitch.checked_mul(height).ok_or(AllocError::SizeOverflow)?;
    Ok(Footprint {
        bytes,
        pitch,
        align: min_align.max(row_align),
    })
}

impl<B: Backend> Arena<B> {
    /// Allocates `height` rows of `width` elements of `T`, each padded to the pitch alignment.
    ///
    /// ```
    /// # let mut arena = gpu_aligned::arena::Arena::host(1 << 16)?;
    /// assert_eq!(arena.alloc_pitched::<f32>(640, 4)?.pitch(), 2560);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`alloc`](Arena::alloc); [`ArenaError::MisalignedBase`] for a
    /// buffer not aligned to the pitch alignment.
    pub fn alloc_pitched<T: GpuWords>(
        &mut self,
        width: usize,
        height: usize,
    ) -> ArenaResult<Pitched<T, B>, B> {
        let element = (size_of::<T>(), align_of::<T>());
        let alignments = (self.min_align, self.pitch_align);
        let footprint = pitched_layout(element, (width, height), alignments)?;
        let pitch = footprint.pitch;
        let shape = RegionShape::Rows {
            width,
            height,
            pitch,
        };
        let array = ArrayInfo::of::<T>(shape);
        let place = self.reserve((footprint.bytes, footprint.align), array, true)?;
        Ok(Pitched::new(place, width, height, pitch))
    }

    /// Rows `first .. first + count` (at least one) at `place`, checked.
    pub(super) fn rows_span(
        &self,
        place: &Place<B>,
        (width, height, pitch): (usize, usize, usize),
        (size, align): (usize, usize),
        first: usize,
        count: usize,
    ) -> ArenaResult<Rows, B> {
        let allocation = &place.allocation;
        self.check_place(place)?;
        match first.checked_add(count) {
            Some(end) if end <= height && count > 0 => {}
            _ => {
                return Err(ArenaError::OutOfRange {
                    start: first,
                    end: first.saturating_add(count),
                    array_len: height,
                })
            }
        }
        let row_bytes = width.checked_mul(size).ok_or(ArenaError::OutsideBuffer)?;
        let fits = row_bytes <= pitch
            && pitch % align == 0
            && height
                .checked_mul(pitch)
                .is_some_and(|bytes| bytes <= allocation.size());
        if !fits {
            return Err(ArenaError::OutsideBuffer);
        }
        let offset = allocation.offset() + offset_of(first * pitch);
        let reach = (count - 1) * pitch + row_bytes;
        self.aligned_span(Span { offset, len: reach }, align)?;
        Ok(Rows {
            offset,
            pitch,
            row_bytes,
            rows: count,
        })
    }
}
