//! What every array of an arena is made of: a [`Place`] (its block of the
//! buffer, what the backend tracks for it, and the arena's list of
//! returns), under a typed wrapper: [`ArenaSlice`] for a
//! flat array, [`Pitched`](super::Pitched) for a 2D one, a structure of
//! arrays' columns, a carving's arrays not taken yet. Dropping a place gives
//! its bytes back (see [`returns`](super::returns) for how), so every
//! wrapper frees on drop through the same code.

use core::fmt;
use core::marker::PhantomData;
use core::mem::ManuallyDrop;

use super::returns::ReturnsRef;
use crate::alloc::Allocation;
use crate::backend::{Backend, HostBuffer, Span};
use crate::GpuWords;

/// One array's place in its arena. Not nameable outside the crate; every
/// handle holds one (or several).
pub struct Place<B: Backend> {
    pub(super) allocation: Allocation,
    /// The array's own bytes: the allocation's, less a red zone after them
    /// when the arena keeps them (see `crate::sanitizer`).
    pub(super) bytes: usize,
    /// Dropped by hand (see `Drop`), so that a place's drop, inlined
    /// wherever a handle goes, holds no backend's drop code.
    pub(super) tracking: ManuallyDrop<B::Tracking>,
    /// `None` once the bytes were given back by hand: dropping then does
    /// nothing.
    returns: Option<ReturnsRef<B>>,
}

impl<B: Backend> Place<B> {
    pub(super) fn new(allocation: Allocation, bytes: usize, returns: ReturnsRef<B>) -> Self {
        Place {
            allocation,
            bytes,
            tracking: ManuallyDrop::new(B::Tracking::default()),
            returns: Some(returns),
        }
    }

    /// The place of an array with no elements: it holds no bytes of any
    /// arena (no allocator call, no region), sits at offset 0, and has
    /// nothing to give back, so dropping or freeing it does nothing.
    pub(super) fn empty() -> Self {
        Place {
            allocation: Allocation::NONE,
            bytes: 0,
            tracking: ManuallyDrop::new(B::Tracking::default()),
            returns: None,
        }
    }

    /// Whether the array holds no bytes (see [`empty`](Self::empty)): every
    /// array that holds some was reserved with at least one byte.
    #[inline(always)]
    pub(super) fn is_empty(&self) -> bool {
        self.bytes == 0
    }

    /// The array's bytes.
    pub(super) fn span(&self) -> Span {
        Span {
            offset: self.allocation.offset(),
            len: self.bytes,
        }
    }

    /// Whether the bytes are still this place's to give back.
    pub(super) fn is_held(&self) -> bool {
        self.returns.is_some()
    }

    /// The bytes were given back by hand: the way back is the arena's to
    /// count, and dropping the place does nothing.
    pub(super) fn given_back(&mut self) -> Option<ReturnsRef<B>> {
        self.returns.take()
    }
}

impl<B: Backend> Drop for Place<B> {
    // Always inline into the place's drop glue (one function, which every
    // handle's glue calls): otherwise a backend whose places many handle
    // types hold paid a second call per drop.
    #[inline(always)]
    fn drop(&mut self) {
        if let Some(returns) = self.returns.take() {
            returns.give_back(&self.allocation, &mut self.tracking);
        }
        // The list, or the backend's `retire` on a free by hand, took the
        // tracking of an array the backend's work used, and left it empty;
        // one that may not be (a backend whose `never_used` cannot tell)
        // is dropped out of line. An empty tracking holds nothing
        // (`StreamOrder::Tracking`), so the one left in the field is forgotten.
        if !B::never_used(&self.tracking) {
            drop_tracking::<B>(&mut self.tracking);
        }
    }
}

/// Drops what `tracking` holds, leaving it empty.
#[inline(never)]
fn drop_tracking<B: Backend>(tracking: &mut B::Tracking) {
    drop(core::mem::take(tracking));
}

impl<B: Backend> fmt::Debug for Place<B> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Place")
            .field("offset", &self.allocation.offset())
            .field("bytes", &self.bytes)
            .finish()
    }
}

/// A typed array in an [`Arena`](super::Arena): `len` elements of `T`.
/// Dropping it gives its bytes back, as dropping a `Vec` or a `CudaSlice`
/// does (on a device, once the work recorded on it on any stream has
/// finished). It does not borrow the arena, so it can be kept in a struct of
/// its own; it checks itself against the arena on every use, so one from
/// another arena, or one outlived by an [`Arena::reset`](super::Arena::reset),
/// is an error rather than a view of the wrong bytes.
///
/// It also holds what the backend tracks for this array alone (on a CUDA
/// device: its read and write events), so work on different arrays is
/// ordered independently.
///
/// ```
/// use gpu_aligned::arena::Arena;
///
/// let mut arena = Arena::host(4096)?;
/// for _ in 0..100 {
///     let a = arena.alloc::<f32>(256)?; // 1 KiB of a 4 KiB arena
///     assert_eq!((a.len(), a.size_bytes()), (256, 1024));
/// } // dropped: its bytes are the next one's
/// assert_eq!(arena.live(), 0);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct ArenaSlice<T, B: Backend = HostBuffer> {
    pub(super) place: Place<B>,
    pub(super) len: usize,
    _element: PhantomData<T>,
}

impl<T, B: Backend> ArenaSlice<T, B> {
    pub(crate) fn new(place: Place<B>, len: usize) -> Self
    where
        T: GpuWords,
    {
        crate::layout::require_layout::<T>();
        ArenaSlice {
            place,
            len,
            _element: PhantomData,
        }
    }

    /// Number of elements.
    ///
    /// ```
    /// # let mut arena = gpu_aligned::arena::Arena::host(4096)?;
    /// let a = arena.alloc::<u8>(3)?;
    /// assert_eq!(a.len(), 3);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the array has no elements. An empty array takes no bytes
    /// (see [`Arena::alloc`](super::Arena::alloc)).
    ///
    /// ```
    /// # let mut arena = gpu_aligned::arena::Arena::host(4096)?;
    /// let a = arena.alloc::<u8>(3)?;
    /// let none = arena.alloc::<u8>(0)?;
    /// assert!(!a.is_empty() && none.is_empty());
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
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn size_bytes(&self) -> usize {
        self.place.bytes
    }

    /// The array's bytes.
    pub(super) fn span(&self) -> Span {
        self.place.span()
    }
}

impl<T, B: Backend> fmt::Debug for ArenaSlice<T, B> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ArenaSlice")
            .field("type", &core::any::type_name::<T>())
            .field("offset", &self.place.allocation.offset())
            .field("len", &self.len)
            .finish()
    }
}

mod sealed {
    use super::{Backend, Place};

    /// Proof that the caller is this crate. The sealed traits' methods take
    /// one because a trait object makes its supertraits' methods callable
    /// without importing them: without it, code outside could reach a
    /// handle's place through `dyn ArenaArray` and swap the places of two
    /// handles of different element types.
    #[derive(Clone, Copy, Debug)]
    pub struct Sealed(());

    /// The one [`Sealed`] there is, for the crate's own calls.
    pub(crate) const SEALED: Sealed = Sealed(());

    /// Visits the places of a handle.
    pub trait Places<B: Backend> {
        fn places(&mut self, _: Sealed, each: &mut dyn FnMut(&mut Place<B>));

        /// The place of a one-array handle, for the short way through
        /// [`Arena::free`](crate::arena::Arena::free).
        fn only_place(&mut self, _: Sealed) -> Option<&mut Place<B>> {
            None
        }
    }

    /// The place of a one-array handle.
    pub trait OnePlace<B: Backend> {
        fn place(&self, _: Sealed) -> &Place<B>;
        fn place_mut(&mut self, _: Sealed) -> &mut Place<B>;
    }

    /// How a typed array's elements lie in its bytes.
    pub trait Shaped {
        fn shape(&self, _: Sealed) -> Shape;
    }

    /// What a range of a typed array counts: elements of a flat array,
    /// rows of a pitched one.
    #[derive(Clone, Copy, Debug)]
    pub enum Shape {
        Flat {
            len: usize,
        },
        Rows {
            width: usize,
            height: usize,
            pitch: usize,
        },
    }
}

pub(super) use sealed::{OnePlace, Shape, Shaped};
pub(crate) use sealed::{Places, Sealed, SEALED};

/// Something that holds arrays of an arena on backend `B`, which
/// [`Arena::free`](super::Arena::free) gives back: an [`ArenaSlice`], a
/// [`Pitched`](super::Pitched) array, a [`Carving`](super::Carving), a
/// structure of arrays' columns. Sealed: the crate's handles only.
pub trait ArenaHandle<B: Backend>: Places<B> {}

impl<T, B: Backend> Places<B> for ArenaSlice<T, B> {
    fn places(&mut self, _: Sealed, each: &mut dyn FnMut(&mut Place<B>)) {
        each(&mut self.place);
    }

    fn only_place(&mut self, _: Sealed) -> Option<&mut Place<B>> {
        Some(&mut self.place)
    }
}

impl<T, B: Backend> ArenaHandle<B> for ArenaSlice<T, B> {}

/// A handle of one array, flat or pitched, whose place in the buffer
/// [`Arena::offset`](super::Arena::offset) tells. Sealed.
pub trait ArenaArray<B: Backend>: ArenaHandle<B> + OnePlace<B> {}

impl<T, B: Backend> OnePlace<B> for ArenaSlice<T, B> {
    fn place(&self, _: Sealed) -> &Place<B> {
        &self.place
    }

    fn place_mut(&mut self, _: Sealed) -> &mut Place<B> {
        &mut self.place
    }
}

impl<T, B: Backend> ArenaArray<B> for ArenaSlice<T, B> {}

/// An array of one element type, flat ([`ArenaSlice`]) or pitched
/// ([`Pitched`](super::Pitched)): what the verbs that take a range move or
/// lend ([`Arena::write`](super::Arena::write),
/// [`Arena::read`](super::Arena::read), and on a device `Arena::view` and
/// `Arena::view_mut`). A range counts elements of a flat array and rows of
/// a pitched one. Sealed.
pub trait TypedArray<B: Backend>: ArenaArray<B> + Shaped {
    /// The element type.
    type Element: GpuWords;
}

impl<T, B: Backend> Shaped for ArenaSlice<T, B> {
    fn shape(&self, _: Sealed) -> Shape {
        Shape::Flat { len: self.len }
    }
}

impl<T: GpuWords, B: Backend> TypedArray<B> for ArenaSlice<T, B> {
    type Element = T;
}
