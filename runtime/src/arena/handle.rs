//! What every handle holds, a [`Place`] whose drop gives the bytes back; the sealed traits.

use core::fmt;
use core::marker::PhantomData;
use core::mem::ManuallyDrop;

use super::returns::ReturnsRef;
use crate::alloc::Allocation;
use crate::backend::{Backend, HostBuffer, Span};
use crate::GpuWords;

/// One array's place in its arena. Not nameable outside the crate.
pub struct Place<B: Backend> {
    pub(super) allocation: Allocation,
    /// The array's own bytes (the allocation's less any red zone).
    pub(super) bytes: usize,
    /// Dropped by hand (see `Drop`), so an inlined drop holds no backend's drop code.
    pub(super) tracking: ManuallyDrop<B::Tracking>,
    /// `None` once the bytes were given back by hand.
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

    /// The place of an array with no elements: no bytes, nothing to give back.
    pub(super) fn empty() -> Self {
        Place {
            allocation: Allocation::NONE,
            bytes: 0,
            tracking: ManuallyDrop::new(B::Tracking::default()),
            returns: None,
        }
    }

    /// Whether the array holds no bytes (see [`empty`](Self::empty)).
    #[inline(always)]
    pub(super) fn is_empty(&self) -> bool {
        self.bytes == 0
    }

    pub(super) fn span(&self) -> Span {
        Span::new(self.allocation.offset(), self.bytes)
    }

    pub(super) fn is_held(&self) -> bool {
        self.returns.is_some()
    }

    /// The way back, used up by a free by hand.
    pub(super) fn given_back(&mut self) -> Option<ReturnsRef<B>> {
        self.returns.take()
    }
}

impl<B: Backend> Drop for Place<B> {
    // Inlined into the drop glue every handle's glue calls: one call a drop.
    #[inline(always)]
    fn drop(&mut self) {
        if let Some(returns) = self.returns.take() {
            returns.give_back(&self.allocation, &mut self.tracking);
        }
        // A used tracking was taken above and left empty, which holds
        // nothing; one `never_used` cannot tell is dropped out of line.
        if !B::never_used(&self.tracking) {
            drop_tracking::<B>(&mut self.tracking);
        }
    }
}

#[inline(never)]
fn drop_tracking<B: Backend>(tracking: &mut B::Tracking) {
    drop(core::mem::take(tracking));
}

/// A typed array in an [`Arena`](super::Arena): `len` elements of `T`, given back when
/// dropped; it does not borrow the arena, which checks it on every use.
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
    /// assert_eq!(arena.alloc::<u8>(3)?.len(), 3);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the array has no elements (then it takes no bytes).
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
    /// assert_eq!(arena.alloc::<u64>(3)?.size_bytes(), 24);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn size_bytes(&self) -> usize {
        self.place.bytes
    }

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

    /// Proof that the caller is this crate: through `dyn ArenaArray` code
    /// outside could reach the supertraits' methods and swap places.
    #[derive(Clone, Copy, Debug)]
    pub struct Sealed(());

    /// The one [`Sealed`] there is, for the crate's own calls.
    pub(crate) const SEALED: Sealed = Sealed(());

    pub trait Places<B: Backend> {
        fn places(&mut self, _: Sealed, each: &mut dyn FnMut(&mut Place<B>));

        /// The place of a one-array handle, for a faster free.
        fn only_place(&mut self, _: Sealed) -> Option<&mut Place<B>> {
            None
        }
    }

    pub trait OnePlace<B: Backend> {
        fn place(&self, _: Sealed) -> &Place<B>;
        fn place_mut(&mut self, _: Sealed) -> &mut Place<B>;
    }

    pub trait Shaped {
        fn shape(&self, _: Sealed) -> Shape;
    }

    /// What a range counts: elements of a flat array, rows of a pitched one.
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

/// A handle of arrays that [`Arena::free`](super::Arena::free) takes. Sealed.
pub trait ArenaHandle<B: Backend>: Places<B> {}

/// A handle of one array, as [`Arena::offset`](super::Arena::offset) takes. Sealed.
pub trait ArenaArray<B: Backend>: ArenaHandle<B> + OnePlace<B> {}

/// A flat or pitched array of one element type, as the range verbs take. Sealed.
pub trait TypedArray<B: Backend>: ArenaArray<B> + Shaped {
    /// The element type.
    type Element: GpuWords;
}

impl<T, B: Backend> Shaped for ArenaSlice<T, B> {
    fn shape(&self, _: Sealed) -> Shape {
        Shape::Flat { len: self.len }
    }
}

/// The handle traits of `$handle<T, B>`, whose place is `self.place`.
macro_rules! typed_array {
    ($handle:ident) => {
        impl<T, B: Backend> Places<B> for $handle<T, B> {
            fn places(&mut self, _: Sealed, each: &mut dyn FnMut(&mut Place<B>)) {
                each(&mut self.place);
            }

            fn only_place(&mut self, _: Sealed) -> Option<&mut Place<B>> {
                Some(&mut self.place)
            }
        }

        impl<T, B: Backend> OnePlace<B> for $handle<T, B> {
            fn place(&self, _: Sealed) -> &Place<B> {
                &self.place
            }

            fn place_mut(&mut self, _: Sealed) -> &mut Place<B> {
                &mut self.place
            }
        }

        impl<T, B: Backend> ArenaHandle<B> for $handle<T, B> {}
        impl<T, B: Backend> ArenaArray<B> for $handle<T, B> {}
        impl<T: GpuWords, B: Backend> TypedArray<B> for $handle<T, B> {
            type Element = T;
        }
    };
}
pub(super) use typed_array;

typed_array!(ArenaSlice);
