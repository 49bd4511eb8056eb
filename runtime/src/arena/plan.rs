//! Plan then carve: describe every array a computation needs (element types,
//! lengths, pitched 2D shapes), then reserve them all in one step that either
//! succeeds for every array or leaves the arena untouched.

use alloc_crate::vec::Vec;
use core::any::type_name;
use core::marker::PhantomData;
use core::mem::{align_of, size_of};
use core::sync::atomic::{AtomicU64, Ordering};

use super::pitched::{pitched_layout, Footprint, Pitched};
use super::{Arena, ArenaError, ArenaSlice};
use crate::alloc::{AllocError, Allocation};
use crate::backend::Backend;
use crate::GpuAligned;

fn next_plan_id() -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

#[derive(Clone, Copy, Debug)]
enum Shape {
    Array { len: u64 },
    Pitched { width: u64, height: u64 },
}

#[derive(Clone, Copy, Debug)]
struct Entry {
    shape: Shape,
    element: &'static str,
    element_size: u64,
    /// Byte size, pitch (0 for flat arrays) and alignment, computed when the
    /// carving arena's alignments are known.
    layout: fn(Shape, u64, u64) -> Result<Footprint, AllocError>,
}

fn array_layout<T: GpuAligned>(
    shape: Shape,
    min_align: u64,
    pitch_align: u64,
) -> Result<Footprint, AllocError> {
    match shape {
        Shape::Array { len } => {
            if len == 0 {
                return Err(AllocError::ZeroSize);
            }
            let bytes = len
                .checked_mul(size_of::<T>() as u64)
                .ok_or(AllocError::SizeOverflow)?;
            Ok(Footprint {
                bytes,
                pitch: 0,
                align: min_align.max(align_of::<T>() as u64),
            })
        }
        Shape::Pitched { width, height } => {
            if width == 0 || height == 0 {
                return Err(AllocError::ZeroSize);
            }
            pitched_layout::<T>(width, height, min_align, pitch_align)
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
/// let positions = carving.take(positions).expect("from this plan");
/// let flags = carving.take(flags).expect("from this plan");
/// let image = carving.take_pitched(image).expect("from this plan");
/// assert_eq!(arena.offset(&flags)? % 256, 0);
/// assert_eq!(image.pitch() % 512, 0);
/// println!("{} bytes, {} spent on alignment", carving.total_bytes(), carving.alignment_bytes());
/// # arena.free(positions)?; arena.free(flags)?; arena.free_pitched(image)?;
/// # Ok::<(), gpu_aligned::arena::ArenaError>(())
/// ```
#[derive(Clone, Debug)]
pub struct Plan {
    id: u64,
    entries: Vec<Entry>,
}

impl Default for Plan {
    fn default() -> Self {
        Plan::new()
    }
}

/// Names a flat array of a [`Plan`]; redeem it with [`Carving::take`].
#[derive(Debug)]
pub struct ArrayKey<T> {
    plan: u64,
    index: usize,
    _element: PhantomData<fn() -> T>,
}

/// Names a pitched array of a [`Plan`]; redeem it with
/// [`Carving::take_pitched`].
#[derive(Debug)]
pub struct PitchedKey<T> {
    plan: u64,
    index: usize,
    _element: PhantomData<fn() -> T>,
}

// Keys are names, not resources: copying one cannot duplicate an array,
// since a carving gives each array out once.
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
        Plan {
            id: next_plan_id(),
            entries: Vec::new(),
        }
    }

    /// Adds an array of `len` elements of `T`.
    pub fn array<T: GpuAligned>(&mut self, len: u64) -> ArrayKey<T> {
        let index = self.push::<T>(Shape::Array { len });
        ArrayKey {
            plan: self.id,
            index,
            _element: PhantomData,
        }
    }

    /// Adds a pitched array of `height` rows of `width` elements of `T`.
    pub fn pitched<T: GpuAligned>(&mut self, width: u64, height: u64) -> PitchedKey<T> {
        let index = self.push::<T>(Shape::Pitched { width, height });
        PitchedKey {
            plan: self.id,
            index,
            _element: PhantomData,
        }
    }

    fn push<T: GpuAligned>(&mut self, shape: Shape) -> usize {
        self.entries.push(Entry {
            shape,
            element: type_name::<T>(),
            element_size: size_of::<T>() as u64,
            layout: array_layout::<T>,
        });
        self.entries.len() - 1
    }

    /// Number of arrays planned.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether nothing is planned.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
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
    pub bytes: u64,
    /// The alignment the array's start got.
    pub align: u64,
    /// Row pitch in bytes, 0 for a flat array.
    pub pitch: u64,
    /// Row padding bytes, 0 for a flat array.
    pub padding: u64,
}

/// The arrays of a [`Plan`], reserved in an arena. Take each typed handle
/// out with [`take`](Carving::take) / [`take_pitched`](Carving::take_pitched);
/// give back what is left with [`Arena::free_carving`].
#[derive(Debug)]
pub struct Carving {
    plan: u64,
    arrays: Vec<CarvedArray>,
    handles: Vec<Option<(Allocation, Shape)>>,
    alignment_bytes: u64,
}

impl Carving {
    /// Every array, in plan order.
    pub fn arrays(&self) -> &[CarvedArray] {
        &self.arrays
    }

    /// Bytes reserved for all arrays together (row padding included).
    pub fn total_bytes(&self) -> u64 {
        self.arrays.iter().map(|array| array.bytes).sum()
    }

    /// Bytes spent on alignment: after each array, the bytes up to the next
    /// multiple of its alignment, where the next array of that alignment
    /// can start. A fresh arena carves a plan of equally aligned arrays back
    /// to back, so these are the gaps between them (and the tail after the
    /// last). The arena rounds each array's block up to its minimum
    /// alignment, so these bytes count as used in its [`Stats`](crate::alloc::Stats)
    /// (`used - requested`).
    pub fn alignment_bytes(&self) -> u64 {
        self.alignment_bytes
    }

    /// Bytes of row padding in the pitched arrays.
    pub fn padding_bytes(&self) -> u64 {
        self.arrays.iter().map(|array| array.padding).sum()
    }

    /// The typed handle of a flat array, once; `None` for a key of another
    /// plan or one already taken.
    pub fn take<T: GpuAligned>(&mut self, key: ArrayKey<T>) -> Option<ArenaSlice<T>> {
        if key.plan != self.plan {
            return None;
        }
        match self.handles.get_mut(key.index)?.take()? {
            (allocation, Shape::Array { len }) => Some(ArenaSlice {
                allocation,
                len,
                _element: PhantomData,
            }),
            other => {
                self.handles[key.index] = Some(other);
                None
            }
        }
    }

    /// The typed handle of a pitched array, once; `None` for a key of
    /// another plan or one already taken.
    pub fn take_pitched<T: GpuAligned>(&mut self, key: PitchedKey<T>) -> Option<Pitched<T>> {
        if key.plan != self.plan {
            return None;
        }
        let pitch = self.arrays.get(key.index)?.pitch;
        match self.handles.get_mut(key.index)?.take()? {
            (allocation, Shape::Pitched { width, height }) => Some(Pitched {
                allocation,
                width,
                height,
                pitch,
                _element: PhantomData,
            }),
            other => {
                self.handles[key.index] = Some(other);
                None
            }
        }
    }
}

impl<B: Backend> Arena<B> {
    /// Reserves every array of `plan`, or none: if one cannot be placed, the
    /// ones already placed are freed and the error is returned.
    ///
    /// # Errors
    ///
    /// The first array's error, as [`Arena::alloc`] or
    /// [`Arena::alloc_pitched`] would give it. Sizes are all computed before
    /// anything is reserved.
    pub fn carve(&mut self, plan: &Plan) -> Result<Carving, ArenaError> {
        let mut layouts = Vec::with_capacity(plan.entries.len());
        for entry in &plan.entries {
            layouts.push((entry.layout)(
                entry.shape,
                self.min_align,
                self.pitch_align,
            )?);
        }
        let mut carving = Carving {
            plan: plan.id,
            arrays: Vec::with_capacity(layouts.len()),
            handles: Vec::with_capacity(layouts.len()),
            alignment_bytes: 0,
        };
        for (entry, footprint) in plan.entries.iter().zip(&layouts) {
            let Footprint {
                bytes,
                pitch,
                align,
            } = *footprint;
            let allocation = match self.reserve(bytes, align) {
                Ok(allocation) => allocation,
                Err(error) => {
                    // Every handle in `carving` is live and ours, so this
                    // cannot fail; if it did, the first error is the news.
                    let _rolled_back = self.free_carving(carving);
                    return Err(error);
                }
            };
            let padding = match entry.shape {
                // The layout checked `width * element_size <= pitch` and
                // `pitch * height == bytes`, so neither step overflows.
                Shape::Pitched { width, height } => (pitch - width * entry.element_size) * height,
                Shape::Array { .. } => 0,
            };
            // Rounding the end up overflows only for a buffer ending within
            // `align` of `u64::MAX`; nothing can follow the array there.
            let end = allocation.end();
            let skipped = end
                .checked_add(align - 1)
                .map_or(0, |bumped| (bumped & !(align - 1)) - end);
            carving.alignment_bytes += skipped;
            carving.arrays.push(CarvedArray {
                element: entry.element,
                offset: allocation.offset(),
                bytes,
                align,
                pitch,
                padding,
            });
            carving.handles.push(Some((allocation, entry.shape)));
        }
        Ok(carving)
    }

    /// Frees the arrays of a carving that were not taken out of it.
    ///
    /// # Errors
    ///
    /// [`ArenaError::Handle`] if the carving came from another arena or was
    /// invalidated by [`reset`](Arena::reset); the other arrays are still
    /// freed.
    pub fn free_carving(&mut self, carving: Carving) -> Result<(), ArenaError> {
        let mut outcome = Ok(());
        for (allocation, _) in carving.handles.into_iter().flatten() {
            if let Err(error) = self.allocator.free(allocation) {
                outcome = outcome.and(Err(error.into()));
            }
        }
        outcome
    }
}
