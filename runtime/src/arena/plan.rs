//! Plan then carve: describe the arrays a computation needs, then reserve all or none.

use alloc_crate::vec::Vec;
use core::any::{type_name, TypeId};
use core::fmt;
use core::marker::PhantomData;
use core::mem::{align_of, size_of};
use core::sync::atomic::{AtomicU64, Ordering};

use super::handle::{ArenaHandle, Place, Places, Sealed};
use super::pitched::{pitched_layout, Footprint, Pitched};
use super::{Arena, ArenaError, ArenaResult, ArenaSlice};
use crate::align::{bytes_of, offset_of, round_up};
use crate::alloc::{AllocError, Allocator};
use crate::backend::{Backend, HostBuffer};
use crate::sanitizer::{red_zone_bytes, ArrayInfo, RegionShape};
use crate::GpuWords;

fn next_plan_id() -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Shape {
    Array { len: usize },
    Pitched { width: usize, height: usize },
}

/// The element type an entry was planned for, which a key must name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Element {
    id: TypeId,
    name: &'static str,
    size: usize,
    align: usize,
    padding: usize,
}

impl Element {
    fn of<T: GpuWords>() -> Element {
        Element {
            id: TypeId::of::<T>(),
            name: type_name::<T>(),
            size: size_of::<T>(),
            align: align_of::<T>(),
            padding: T::TYPE.padding(),
        }
    }
}

#[derive(Clone, Copy, Debug)]
struct Entry {
    shape: Shape,
    element: Element,
}

impl Entry {
    fn footprint(&self, alignments: (usize, usize)) -> Result<Footprint, AllocError> {
        let Element { size, align, .. } = self.element;
        match self.shape {
            Shape::Array { len } => Ok(Footprint {
                bytes: len.checked_mul(size).ok_or(AllocError::SizeOverflow)?,
                pitch: 0,
                align: alignments.0.max(align),
            }),
            Shape::Pitched { width, height } => {
                pitched_layout((size, align), (width, height), alignments)
            }
        }
    }

    fn info(&self, pitch: usize) -> ArrayInfo {
        let shape = match self.shape {
            Shape::Array { len } => RegionShape::Array { len },
            Shape::Pitched { width, height } => RegionShape::Rows {
                width,
                height,
                pitch,
            },
        };
        ArrayInfo {
            element: self.element.name,
            element_size: self.element.size,
            padding: self.element.padding,
            shape,
        }
    }
}

/// A list of arrays to reserve together with [`Arena::carve`].
///
/// ```
/// use gpu_aligned::arena::{Arena, Plan};
/// use gpu_aligned::vector::float4;
///
/// let mut plan = Plan::new();
/// let positions = plan.array::<float4>(1000);
/// let flags = plan.array::<u8>(1000);
/// let image = plan.pitched::<f32>(640, 480);
///
/// let mut arena = Arena::host(8 << 20)?;
/// let mut carving = arena.carve(&plan)?;
/// let positions = carving.take(positions)?;
/// let flags = carving.take(flags)?;
/// let image = carving.take_pitched(image)?;
/// assert_eq!(arena.offset(&flags)? % 256, 0);
/// assert_eq!(image.pitch() % 512, 0);
/// println!("{} bytes, {} spent on alignment", carving.total_bytes(), carving.alignment_bytes());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// A clone is another plan: its keys never redeem the original's arrays.
#[derive(Debug)]
pub struct Plan {
    id: u64,
    entries: Vec<Entry>,
}

impl Clone for Plan {
    fn clone(&self) -> Self {
        let (id, entries) = (next_plan_id(), self.entries.clone());
        Plan { id, entries }
    }
}

impl Default for Plan {
    fn default() -> Self {
        Plan::new()
    }
}

/// Names a flat array of a [`Plan`]; redeem it with [`Carving::take`].
#[derive(Debug)]
#[must_use = "a key is the only way to take its array out of a carving"]
pub struct ArrayKey<T> {
    plan: u64,
    index: usize,
    _element: PhantomData<fn() -> T>,
}

/// Names a pitched array of a [`Plan`]; redeem it with [`Carving::take_pitched`].
#[derive(Debug)]
#[must_use = "a key is the only way to take its array out of a carving"]
pub struct PitchedKey<T> {
    plan: u64,
    index: usize,
    _element: PhantomData<fn() -> T>,
}

// A carving gives each array out once, so a copied key duplicates nothing.
impl<T> Clone for ArrayKey<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for ArrayKey<T> {}
impl<T> Clone for PitchedKey<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for PitchedKey<T> {}

impl Plan {
    /// An empty plan.
    pub fn new() -> Plan {
        let (id, entries) = (next_plan_id(), Vec::new());
        Plan { id, entries }
    }

    /// Adds an array of `len` elements of `T`.
    pub fn array<T: GpuWords>(&mut self, len: usize) -> ArrayKey<T> {
        let index = self.push::<T>(Shape::Array { len });
        ArrayKey {
            plan: self.id,
            index,
            _element: PhantomData,
        }
    }

    /// Adds a pitched array of `height` rows of `width` elements of `T`.
    pub fn pitched<T: GpuWords>(&mut self, width: usize, height: usize) -> PitchedKey<T> {
        let index = self.push::<T>(Shape::Pitched { width, height });
        PitchedKey {
            plan: self.id,
            index,
            _element: PhantomData,
        }
    }

    fn push<T: GpuWords>(&mut self, shape: Shape) -> usize {
        let element = Element::of::<T>();
        self.entries.push(Entry { shape, element });
        self.entries.len() - 1
    }

    pub(crate) fn id(&self) -> u64 {
        self.id
    }

    /// Number of arrays planned.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether nothing is planned.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The bytes a fresh fixed arena needs to [carve](Arena::carve) this plan (no red zones).
    ///
    /// ```
    /// use gpu_aligned::align::{ARRAY_ALIGN, PITCH_ALIGN};
    /// use gpu_aligned::arena::{Arena, Plan};
    /// use gpu_aligned::vector::float4;
    ///
    /// let mut plan = Plan::new();
    /// let _points = plan.array::<float4>(1000);
    /// let _image = plan.pitched::<f32>(640, 480);
    /// let bytes = plan.bytes_needed(ARRAY_ALIGN, PITCH_ALIGN)?;
    ///
    /// let mut exact = Arena::host(bytes)?;
    /// let carving = exact.carve(&plan)?;
    /// assert!(Arena::host(bytes - 1)?.carve(&plan).is_err());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`AllocError::AlignNotPowerOfTwo`] for a bad alignment,
    /// [`AllocError::SizeOverflow`] when the sizes overflow `usize`.
    pub fn bytes_needed(&self, min_align: usize, pitch_align: usize) -> Result<usize, AllocError> {
        self.bytes_with(min_align, pitch_align, false)
    }

    /// [`bytes_needed`](Plan::bytes_needed), with red zones if `red_zones`.
    pub(crate) fn bytes_with(
        &self,
        min_align: usize,
        pitch_align: usize,
        red_zones: bool,
    ) -> Result<usize, AllocError> {
        check_alignments(min_align, pitch_align)?;
        let mut footprints = Vec::with_capacity(self.entries.len());
        // Room for any placement.
        let mut room = 0usize;
        for entry in &self.entries {
            let mut footprint = entry.footprint((min_align, pitch_align))?;
            if footprint.bytes == 0 {
                continue;
            }
            if red_zones {
                let stride = entry.info(footprint.pitch).stride();
                footprint.bytes = footprint
                    .bytes
                    .checked_add(red_zone_bytes(stride, min_align))
                    .ok_or(AllocError::SizeOverflow)?;
            }
            room = footprint
                .bytes
                .checked_add(min_align - 1)
                .and_then(|bytes| bytes.checked_add(footprint.align))
                .and_then(|bytes| room.checked_add(bytes))
                .ok_or(AllocError::SizeOverflow)?;
            footprints.push(footprint);
        }
        if footprints.is_empty() {
            return Ok(0);
        }
        // An allocator of exactly where they end may place them otherwise (a search by size class
        // can pass its last block), so the length is the first from there up that fits them.
        let Some(mut length) = place(&footprints, room, min_align)? else {
            return Err(AllocError::SizeOverflow);
        };
        let mut step = min_align;
        while length < room {
            if place(&footprints, length, min_align)?.is_some() {
                return Ok(length);
            }
            length = length.saturating_add(step).min(room);
            step = step.saturating_mul(2);
        }
        Ok(room)
    }
}

/// [`AllocError::AlignNotPowerOfTwo`] unless both alignments are powers of two.
pub(super) fn check_alignments(min_align: usize, pitch_align: usize) -> Result<(), AllocError> {
    for align in [min_align, pitch_align] {
        if !align.is_power_of_two() {
            return Err(AllocError::AlignNotPowerOfTwo { align });
        }
    }
    Ok(())
}

/// Where `footprints`, placed in order in `capacity` bytes, end, if they fit.
fn place(
    footprints: &[Footprint],
    capacity: usize,
    min_align: usize,
) -> Result<Option<usize>, AllocError> {
    let mut allocator = Allocator::scratch(capacity, min_align)?;
    let mut end = 0;
    for footprint in footprints {
        match allocator.alloc(footprint.bytes, footprint.align) {
            // Inside `capacity`, a `usize`.
            Ok(allocation) => end = end.max(bytes_of(allocation.end()).unwrap_or(usize::MAX)),
            Err(AllocError::OutOfMemory { .. }) => return Ok(None),
            Err(error) => return Err(error),
        }
    }
    Ok(Some(end))
}

/// Where one array of a [`Carving`] went.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct CarvedArray {
    /// The element type's name.
    pub element: &'static str,
    /// Byte offset from the start of the buffer.
    pub offset: u64,
    /// Bytes reserved (for a pitched array, `pitch * height`).
    pub bytes: usize,
    /// The alignment the array's start got.
    pub align: usize,
    /// Row pitch in bytes, 0 for a flat array.
    pub pitch: usize,
    /// Row padding bytes, 0 for a flat array.
    pub padding: usize,
}

/// A [`Plan`]'s arrays, reserved, to [`take`](Carving::take) out; drops those not taken.
pub struct Carving<B: Backend = HostBuffer> {
    plan: u64,
    arrays: Vec<CarvedArray>,
    handles: Vec<Option<(Place<B>, Entry)>>,
    alignment_bytes: usize,
}

impl<B: Backend> Places<B> for Carving<B> {
    fn places(&mut self, _: Sealed, each: &mut dyn FnMut(&mut Place<B>)) {
        for (place, _) in self.handles.iter_mut().flatten() {
            each(place);
        }
    }
}

impl<B: Backend> ArenaHandle<B> for Carving<B> {}

impl<B: Backend> fmt::Debug for Carving<B> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Carving")
            .field("plan", &self.plan)
            .field("arrays", &self.arrays)
            .field("alignment_bytes", &self.alignment_bytes)
            .finish_non_exhaustive()
    }
}

impl<B: Backend> Carving<B> {
    /// Every array, in plan order.
    pub fn arrays(&self) -> &[CarvedArray] {
        &self.arrays
    }

    /// Bytes reserved for all arrays (row padding included).
    pub fn total_bytes(&self) -> usize {
        self.arrays.iter().map(|array| array.bytes).sum()
    }

    /// Bytes spent on alignment after each array (used, in [`Stats`](crate::alloc::Stats)).
    pub fn alignment_bytes(&self) -> usize {
        self.alignment_bytes
    }

    /// Bytes of row padding in the pitched arrays.
    pub fn padding_bytes(&self) -> usize {
        self.arrays.iter().map(|array| array.padding).sum()
    }

    /// Entry `index`'s place, its type unchecked (a structure of arrays').
    pub(crate) fn take_place(&mut self, plan: u64, index: usize) -> ArenaResult<Place<B>, B> {
        let slot = self.slot(plan, index)?;
        let (place, _) = slot.take().ok_or(ArenaError::AlreadyTaken)?;
        Ok(place)
    }

    fn slot(&mut self, plan: u64, index: usize) -> ArenaResult<&mut Option<(Place<B>, Entry)>, B> {
        let slot = self.handles.get_mut(index).filter(|_| plan == self.plan);
        slot.ok_or(ArenaError::ForeignKey)
    }

    /// Entry `index`, if it holds a `T` of a shape `shaped` accepts.
    fn take_entry<T: GpuWords, S>(
        &mut self,
        plan: u64,
        index: usize,
        shaped: impl Fn(Shape) -> Option<S>,
    ) -> ArenaResult<(Place<B>, S), B> {
        let slot = self.slot(plan, index)?;
        let (place, entry) = slot.take().ok_or(ArenaError::AlreadyTaken)?;
        match shaped(entry.shape) {
            Some(shape) if entry.element == Element::of::<T>() => Ok((place, shape)),
            _ => {
                *slot = Some((place, entry));
                let (planned, asked) = (entry.element.name, type_name::<T>());
                Err(ArenaError::KeyMismatch { planned, asked })
            }
        }
    }

    /// The typed handle of a flat array, once.
    ///
    /// # Errors
    ///
    /// [`ArenaError::ForeignKey`], [`ArenaError::AlreadyTaken`] the second
    /// time, [`ArenaError::KeyMismatch`] for another type or shape.
    pub fn take<T: GpuWords>(&mut self, key: ArrayKey<T>) -> ArenaResult<ArenaSlice<T, B>, B> {
        let flat = |shape| match shape {
            Shape::Array { len } => Some(len),
            Shape::Pitched { .. } => None,
        };
        let (place, len) = self.take_entry::<T, _>(key.plan, key.index, flat)?;
        Ok(ArenaSlice::new(place, len))
    }

    /// The typed handle of a pitched array, once.
    ///
    /// # Errors
    ///
    /// As [`take`](Carving::take).
    pub fn take_pitched<T: GpuWords>(
        &mut self,
        key: PitchedKey<T>,
    ) -> ArenaResult<Pitched<T, B>, B> {
        let rows = |shape| match shape {
            Shape::Pitched { width, height } => Some((width, height)),
            Shape::Array { .. } => None,
        };
        let (place, (width, height)) = self.take_entry::<T, _>(key.plan, key.index, rows)?;
        let pitch = self.arrays[key.index].pitch;
        Ok(Pitched::new(place, width, height, pitch))
    }
}

impl<B: Backend> Arena<B> {
    /// Reserves every array of `plan`, or none.
    ///
    /// # Errors
    ///
    /// The first array's error, as [`Arena::alloc`] or [`Arena::alloc_pitched`] would give it.
    pub fn carve(&mut self, plan: &Plan) -> ArenaResult<Carving<B>, B> {
        let layouts = plan
            .entries
            .iter()
            .map(|entry| entry.footprint((self.min_align, self.pitch_align)))
            .collect::<Result<Vec<_>, _>>()?;
        let mut carving = Carving {
            plan: plan.id,
            arrays: Vec::with_capacity(layouts.len()),
            handles: Vec::with_capacity(layouts.len()),
            alignment_bytes: 0,
        };
        for (entry, footprint) in plan.entries.iter().zip(&layouts) {
            let (bytes, pitch, align) = (footprint.bytes, footprint.pitch, footprint.align);
            let place = match self.reserve((bytes, align), entry.info(pitch), true) {
                Ok(place) => place,
                Err(error) => {
                    // Whatever this cannot give back comes back later.
                    let _rolled_back = self.free(carving);
                    return Err(error);
                }
            };
            // The layout checked `width * size <= pitch`.
            let padding = match entry.shape {
                Shape::Pitched { width, height } => (pitch - width * entry.element.size) * height,
                Shape::Array { .. } => 0,
            };
            let end = place.allocation.end();
            let skipped = round_up(end, offset_of(align)).map_or(0, |bumped| bumped - end);
            carving.alignment_bytes += bytes_of(skipped).unwrap_or(0);
            carving.arrays.push(CarvedArray {
                element: entry.element.name,
                offset: place.allocation.offset(),
                bytes,
                align,
                pitch,
                padding,
            });
            carving.handles.push(Some((place, *entry)));
        }
        Ok(carving)
    }
}
