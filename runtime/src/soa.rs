//! Structure of arrays: a struct of any size stored as one column per field,
//! each column an ordinary typed array of the arena, so every column element
//! is one GPU word and moves in one instruction.
//!
//! `#[derive(GpuSoa)]` accepts a struct with named fields whose types are GPU
//! elements ([`GpuAligned`]); the struct itself may be any size and needs no
//! `repr`. It generates `<Name>Columns`, one `pub` [`ArenaSlice`] per field
//! named like the field. The arena allocates all columns in one
//! all-or-nothing reservation, each on the arena's minimum alignment, and
//! moves whole elements in and out ([`Arena::write_soa`],
//! [`Arena::read_soa`]); each column is usable with every arena verb.
//!
//! ```
//! use gpu_aligned::arena::Arena;
//! use gpu_aligned::vector::float4;
//! use gpu_aligned::GpuSoa;
//!
//! #[derive(Clone, Copy, Debug, PartialEq, GpuSoa)]
//! struct Particle {
//!     position: float4,
//!     mass: f32,
//!     kind: u8,
//! }
//!
//! let mut arena = Arena::host(1 << 16)?;
//! let particles: Vec<Particle> = (0..100)
//!     .map(|i| Particle { position: float4::new(i as f32, 0.0, 0.0, 1.0), mass: 2.0, kind: (i % 3) as u8 })
//!     .collect();
//! let mut soa = arena.alloc_soa::<Particle>(particles.len())?;
//! arena.write_soa(&mut soa, &particles)?;
//! assert_eq!(arena.get(&soa.columns().mass)?[7], 2.0);
//! assert_eq!(arena.read_soa(&soa)?, particles);
//! arena.free_soa(soa)?;
//! # Ok::<(), gpu_aligned::arena::ArenaError>(())
//! ```
//!
//! The CUDA side is [`CudaHeader::add_soa`](crate::header::CudaHeader::add_soa):
//! views with the same members over columns or over an array of structs.
//!
//! The derive refuses what has no fixed set of named columns: tuple
//! structs, enums, unions and generic structs, and fields marked
//! `#[gpu_aligned(padding)]` (every field becomes a column, so a pad field
//! would only waste one):
//!
//! ```compile_fail
//! #[derive(Clone, Copy, gpu_aligned::GpuSoa)]
//! union Bits { x: f32, id: u32 }
//! ```
//!
//! ```compile_fail
//! #[derive(Clone, Copy, gpu_aligned::GpuSoa)]
//! struct Hit { x: f32, #[gpu_aligned(padding)] pad: u32 }
//! ```

use crate::arena::{Arena, ArenaError, ArenaResult, ArenaSlice, Carving, FreeFailed, Plan};
use crate::backend::{Backend, HostBuffer};
use crate::layout::{GpuAligned, GpuLayout};
use alloc_crate::boxed::Box;
use alloc_crate::vec::Vec;
use core::any::Any;
use core::fmt;
use core::marker::PhantomData;

/// A struct stored as one column per field. Derive it with
/// `#[derive(GpuSoa)]`; every field's type must be [`GpuAligned`].
///
/// ```
/// use gpu_aligned::soa::GpuSoa;
///
/// #[derive(Clone, Copy, gpu_aligned::GpuSoa)]
/// struct Hit { x: f32, y: f32, id: u32, flags: u8 }
///
/// assert_eq!(Hit::COLUMNS, 4);
/// assert_eq!(Hit::LAYOUT.size, core::mem::size_of::<Hit>());
/// // Fields in offset order, whatever order Rust chose.
/// let offsets: Vec<usize> = Hit::LAYOUT.fields.iter().map(|f| f.offset).collect();
/// assert!(offsets.windows(2).all(|w| w[0] < w[1]));
/// ```
///
/// # Safety
///
/// An implementation promises that [`GpuSoa::LAYOUT`] describes `Self` (its
/// size, alignment and every field's offset, size and type, in offset
/// order), that every field type is [`GpuAligned`], and that each hook names
/// every field once, in declaration order. The derive proves all three.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a structure-of-arrays type (`GpuSoa`)",
    label = "not `GpuSoa`",
    note = "derive it: `#[derive(gpu_aligned::GpuSoa)]` on a struct with named fields whose types are GPU elements"
)]
pub unsafe trait GpuSoa: Sized + 'static {
    /// The struct's layout, fields in offset order.
    const LAYOUT: GpuLayout;
    /// The number of columns (fields).
    const COLUMNS: usize;
    /// The generated `<Name>Columns`: one `pub` [`ArenaSlice`] per field,
    /// in an arena on the backend `B`.
    type Columns<B: Backend>: fmt::Debug;
    /// The kernel's view: [`SoaView`] with one pointer per column.
    type View: __derive::ViewParts;

    #[doc(hidden)]
    fn __plan<P: __derive::Planner>(planner: &mut P);
    #[doc(hidden)]
    fn __columns<B: Backend, S: __derive::Source<B>>(
        source: &mut S,
    ) -> Result<Self::Columns<B>, S::Error>;
    #[doc(hidden)]
    fn __visit<B: Backend, V: __derive::Visitor<B>>(
        columns: &Self::Columns<B>,
        visitor: &mut V,
    ) -> Result<(), V::Error>;
    #[doc(hidden)]
    fn __visit_mut<'a, B: Backend, V: __derive::VisitorMut<'a, B>>(
        columns: &'a mut Self::Columns<B>,
        visitor: &mut V,
    ) -> Result<(), V::Error>;
    #[doc(hidden)]
    fn __consume<B: Backend, C: __derive::Consumer<B>>(columns: Self::Columns<B>, consumer: &mut C);
    #[doc(hidden)]
    fn __scatter<B: Backend, W: __derive::Writer<B>>(
        items: &[Self],
        columns: &mut Self::Columns<B>,
        writer: &mut W,
    ) -> Result<(), W::Error>;
    #[doc(hidden)]
    fn __gather<B: Backend, R: __derive::Reader<B>>(
        columns: &Self::Columns<B>,
        len: usize,
        reader: &mut R,
    ) -> Result<Vec<Self>, R::Error>;
}

/// `len` elements of `T` as columns in an arena. Move-only; give it back
/// with [`Arena::free_soa`].
///
/// ```
/// use gpu_aligned::arena::Arena;
///
/// #[derive(Clone, Copy, gpu_aligned::GpuSoa)]
/// struct Pair { a: u64, b: u16 }
///
/// let mut arena = Arena::host(1 << 12)?;
/// let soa = arena.alloc_soa::<Pair>(10)?;
/// assert_eq!(soa.len(), 10);
/// assert_eq!(soa.columns().a.len(), 10);
/// arena.free_soa(soa)?;
/// # Ok::<(), gpu_aligned::arena::ArenaError>(())
/// ```
#[must_use = "an Soa holds arena memory: give it back with `Arena::free_soa`"]
pub struct Soa<T: GpuSoa, B: Backend = HostBuffer> {
    columns: T::Columns<B>,
    len: usize,
}

impl<T: GpuSoa, B: Backend> Soa<T, B> {
    /// The columns: one `pub` typed array per field, named like the field.
    ///
    /// ```
    /// use gpu_aligned::arena::Arena;
    ///
    /// #[derive(Clone, Copy, gpu_aligned::GpuSoa)]
    /// struct Pair { a: u64, b: u16 }
    ///
    /// let mut arena = Arena::host(1 << 12)?;
    /// let soa = arena.alloc_soa::<Pair>(3)?;
    /// assert_eq!(arena.get(&soa.columns().b)?, &[0, 0, 0]);
    /// # arena.free_soa(soa)?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn columns(&self) -> &T::Columns<B> {
        &self.columns
    }

    /// The columns, for writing one of them (a writable view or a copy
    /// needs its column alone).
    ///
    /// ```
    /// use gpu_aligned::arena::Arena;
    ///
    /// #[derive(Clone, Copy, gpu_aligned::GpuSoa)]
    /// struct Pair { a: u64, b: u16 }
    ///
    /// let mut arena = Arena::host(1 << 12)?;
    /// let mut soa = arena.alloc_soa::<Pair>(3)?;
    /// arena.get_mut(&mut soa.columns_mut().b)?.copy_from_slice(&[1, 2, 3]);
    /// assert_eq!(arena.read_soa(&soa)?[2].b, 3);
    /// # arena.free_soa(soa)?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn columns_mut(&mut self) -> &mut T::Columns<B> {
        &mut self.columns
    }

    /// The number of elements (every column's length).
    ///
    /// ```
    /// use gpu_aligned::arena::Arena;
    ///
    /// #[derive(Clone, Copy, gpu_aligned::GpuSoa)]
    /// struct One { v: f32 }
    ///
    /// let mut arena = Arena::host(1 << 12)?;
    /// let soa = arena.alloc_soa::<One>(5)?;
    /// assert_eq!(soa.len(), 5);
    /// # arena.free_soa(soa)?;
    /// # Ok::<(), gpu_aligned::arena::ArenaError>(())
    /// ```
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether it has no elements (never true: zero-length columns are
    /// refused).
    ///
    /// ```
    /// use gpu_aligned::arena::Arena;
    ///
    /// #[derive(Clone, Copy, gpu_aligned::GpuSoa)]
    /// struct One { v: f32 }
    ///
    /// let mut arena = Arena::host(1 << 12)?;
    /// let soa = arena.alloc_soa::<One>(1)?;
    /// assert!(!soa.is_empty());
    /// # arena.free_soa(soa)?;
    /// # Ok::<(), gpu_aligned::arena::ArenaError>(())
    /// ```
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

impl<T: GpuSoa, B: Backend> fmt::Debug for Soa<T, B> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Soa")
            .field("type", &core::any::type_name::<T>())
            .field("len", &self.len)
            .field("columns", &self.columns)
            .finish()
    }
}

/// What a kernel is handed for a structure of arrays: one device address
/// per column, in the order of [`GpuSoa::LAYOUT`]'s fields (offset order),
/// then the length. It is laid out as the CUDA header's `P_soa` view (8 bytes
/// a column, then `len`; the header `static_assert`s it), and with the
/// `cuda` feature it is cudarc's `DeviceRepr`, so it passes to a launch by
/// value.
///
/// ```
/// use gpu_aligned::arena::Arena;
/// use gpu_aligned::soa::GpuSoa;
///
/// #[derive(Clone, Copy, gpu_aligned::GpuSoa)]
/// struct Hit { id: u32, x: f64 }
///
/// let mut arena = Arena::host(1 << 14)?;
/// let soa = arena.alloc_soa::<Hit>(10)?;
/// let view = arena.soa_view(&soa)?;
/// assert_eq!(core::mem::size_of_val(&view), 8 * (Hit::COLUMNS + 1));
/// assert_eq!(view.len, 10);
/// // Column order is the layout's: `x` (offset 0) before `id` (offset 8).
/// assert_eq!(Hit::LAYOUT.fields[0].name, "x");
/// assert_eq!(view.columns[0], arena.address(&soa.columns().x)?);
/// arena.free_soa(soa)?;
/// # Ok::<(), gpu_aligned::arena::ArenaError>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(C)]
pub struct SoaView<const N: usize> {
    /// Each column's address, in layout order.
    pub columns: [u64; N],
    /// The number of elements.
    pub len: u64,
}

impl<const N: usize> __derive::ViewParts for SoaView<N> {
    fn from_parts(columns: &[u64], len: u64) -> Option<Self> {
        Some(SoaView {
            columns: columns.try_into().ok()?,
            len,
        })
    }
}

#[cfg(feature = "cuda")]
// SAFETY: `repr(C)` plain integers with no padding (N u64s then a u64):
// every bit pattern, all zeroes included, is a valid value, and its bytes
// are what the header's view struct expects, as they are.
unsafe impl<const N: usize> cudarc::driver::DeviceRepr for SoaView<N> {}
#[cfg(feature = "cuda")]
// SAFETY: as above: all zeroes is a valid `SoaView`.
unsafe impl<const N: usize> cudarc::driver::ValidAsZeroBits for SoaView<N> {}

/// Collects each column's address under its field name, checking that the
/// column holds the `len` elements the view will promise a kernel.
struct Addressing<'a, B: Backend> {
    arena: &'a Arena<B>,
    layout: &'static GpuLayout,
    len: usize,
    columns: Vec<u64>,
}

impl<B: Backend> __derive::Visitor<B> for Addressing<'_, B> {
    type Error = ArenaError<B::Error>;

    fn column<F: GpuAligned>(
        &mut self,
        name: &'static str,
        column: &ArenaSlice<F, B>,
    ) -> ArenaResult<(), B> {
        let address = self.arena.address(column)?;
        // `columns_mut` lets a column be swapped for another array of the
        // same type: a shorter one would send the kernel past its end.
        if column.len() != self.len {
            return Err(ArenaError::LengthMismatch {
                expected: self.len,
                found: column.len(),
            });
        }
        let index = self
            .layout
            .fields
            .iter()
            .position(|field| field.name == name)
            .ok_or(ArenaError::OutsideBuffer)?;
        if let Some(slot) = self.columns.get_mut(index) {
            *slot = address;
        }
        Ok(())
    }
}

/// The key of a structure of arrays in a [`Plan`]: redeem it with
/// [`Carving::take_soa`].
///
/// ```
/// use gpu_aligned::arena::{Arena, Plan};
///
/// #[derive(Clone, Copy, gpu_aligned::GpuSoa)]
/// struct Hit { x: f32, id: u32 }
///
/// let mut arena = Arena::host(1 << 14)?;
/// let mut plan = Plan::new();
/// let weights = plan.array::<f32>(64);
/// let hits = plan.soa::<Hit>(64);
/// let mut carving = arena.carve(&plan)?;
/// let hits = carving.take_soa(hits).expect("planned here");
/// let weights = carving.take(weights).expect("planned here");
/// assert_eq!(hits.len(), 64);
/// arena.free_soa(hits)?;
/// arena.free(weights)?;
/// arena.free(carving)?;
/// # Ok::<(), gpu_aligned::arena::ArenaError>(())
/// ```
pub struct SoaKey<T: GpuSoa> {
    keys: Vec<Box<dyn Any>>,
    len: usize,
    _element: PhantomData<fn() -> T>,
}

impl<T: GpuSoa> fmt::Debug for SoaKey<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SoaKey")
            .field("type", &core::any::type_name::<T>())
            .field("len", &self.len)
            .finish()
    }
}

/// Adds one flat array per column to a plan, keeping the typed keys.
struct Planning<'p> {
    plan: &'p mut Plan,
    len: usize,
    keys: Vec<Box<dyn Any>>,
}

impl __derive::Planner for Planning<'_> {
    fn column<F: GpuAligned>(&mut self, _name: &'static str) {
        self.keys.push(Box::new(self.plan.array::<F>(self.len)));
    }
}

/// Redeems the keys of a plan, in the order they were planned.
struct Taking<'c, B: Backend> {
    carving: &'c mut Carving<B>,
    keys: alloc_crate::vec::IntoIter<Box<dyn Any>>,
}

/// A column that a carving could not hand out (a key of another plan, or
/// one already taken).
struct NotInCarving;

impl<B: Backend> __derive::Source<B> for Taking<'_, B> {
    type Error = NotInCarving;

    fn column<F: GpuAligned>(
        &mut self,
        _name: &'static str,
    ) -> Result<ArenaSlice<F, B>, NotInCarving> {
        let key = self.keys.next().ok_or(NotInCarving)?;
        let key = *key
            .downcast::<crate::arena::ArrayKey<F>>()
            .map_err(|_| NotInCarving)?;
        self.carving.take(key).map_err(|_| NotInCarving)
    }
}

impl Plan {
    /// Adds a structure of arrays of `len` elements of `T`: one flat array
    /// per field, carved with the plan's other arrays. A zero `len` is
    /// refused when the plan is carved.
    ///
    /// ```
    /// use gpu_aligned::arena::Plan;
    ///
    /// #[derive(Clone, Copy, gpu_aligned::GpuSoa)]
    /// struct Hit { x: f32, id: u32 }
    ///
    /// let mut plan = Plan::new();
    /// let _key = plan.soa::<Hit>(16);
    /// assert_eq!(plan.len(), 2); // one array per column
    /// ```
    pub fn soa<T: GpuSoa>(&mut self, len: usize) -> SoaKey<T> {
        let mut planning = Planning {
            plan: self,
            len,
            keys: Vec::with_capacity(T::COLUMNS),
        };
        T::__plan(&mut planning);
        SoaKey {
            keys: planning.keys,
            len,
            _element: PhantomData,
        }
    }
}

impl<B: Backend> Carving<B> {
    /// The structure of arrays planned under `key`, once; `None` for a key
    /// of another plan. A key is taken by value and its columns' keys all
    /// come from one plan, so either every column is taken or none is.
    ///
    /// ```
    /// use gpu_aligned::arena::{Arena, Plan};
    ///
    /// #[derive(Clone, Copy, gpu_aligned::GpuSoa)]
    /// struct Hit { x: f32, id: u32 }
    ///
    /// let mut arena = Arena::host(1 << 14)?;
    /// let mut plan = Plan::new();
    /// let key = plan.soa::<Hit>(8);
    /// let mut carving = arena.carve(&plan)?;
    /// let hits = carving.take_soa(key).expect("planned here");
    /// arena.free_soa(hits)?;
    /// arena.free(carving)?;
    /// # Ok::<(), gpu_aligned::arena::ArenaError>(())
    /// ```
    pub fn take_soa<T: GpuSoa>(&mut self, key: SoaKey<T>) -> Option<Soa<T, B>> {
        let len = key.len;
        let mut taking = Taking {
            carving: self,
            keys: key.keys.into_iter(),
        };
        let columns = T::__columns(&mut taking).ok()?;
        Some(Soa { columns, len })
    }
}

/// Why [`Arena::free_soa`] refused or failed: the `Soa` itself when nothing
/// was freed (a column of another arena), `None` when a backend failure
/// left one column allocated after the others were freed.
///
/// ```
/// use gpu_aligned::arena::Arena;
///
/// #[derive(Clone, Copy, gpu_aligned::GpuSoa)]
/// struct One { v: f32 }
///
/// let mut mine = Arena::host(1 << 12)?;
/// let mut theirs = Arena::host(1 << 12)?;
/// let soa = mine.alloc_soa::<One>(4)?;
/// let refused = theirs.free_soa(soa).unwrap_err();
/// mine.free_soa(refused.handle.expect("nothing was freed"))?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub type SoaFreeFailed<T, B> = FreeFailed<Option<Soa<T, B>>, <B as Backend>::Error>;

/// Frees every column, keeping the first error.
struct Freeing<'a, B: Backend> {
    arena: &'a mut Arena<B>,
    outcome: ArenaResult<(), B>,
}

impl<B: Backend> __derive::Consumer<B> for Freeing<'_, B> {
    fn column<F: GpuAligned>(&mut self, _name: &'static str, column: ArenaSlice<F, B>) {
        let freed = self.arena.free(column).map_err(ArenaError::from);
        if self.outcome.is_ok() {
            self.outcome = freed;
        }
    }
}

/// Writes host values into the columns.
struct Writing<'a, B: Backend> {
    arena: &'a Arena<B>,
}

impl<B: Backend> __derive::Writer<B> for Writing<'_, B> {
    type Error = ArenaError<B::Error>;

    fn column<F: GpuAligned>(
        &mut self,
        column: &mut ArenaSlice<F, B>,
        values: &[F],
    ) -> ArenaResult<(), B> {
        self.arena.write(column, values)
    }
}

/// Reads the columns into host vectors.
struct Reading<'a, B: Backend> {
    arena: &'a Arena<B>,
}

impl<B: Backend> __derive::Reader<B> for Reading<'_, B> {
    type Error = ArenaError<B::Error>;

    fn column<F: GpuAligned>(
        &mut self,
        column: &ArenaSlice<F, B>,
        len: usize,
    ) -> ArenaResult<Vec<F>, B> {
        let values = self.arena.to_vec(column)?;
        if values.len() != len {
            return Err(ArenaError::LengthMismatch {
                expected: len,
                found: values.len(),
            });
        }
        Ok(values)
    }

    fn short(_column: &'static str) -> ArenaError<B::Error> {
        ArenaError::OutsideBuffer
    }
}

/// Checks that every column is a live handle of the arena.
struct Checking<'a, B: Backend> {
    arena: &'a Arena<B>,
}

impl<B: Backend> __derive::Visitor<B> for Checking<'_, B> {
    type Error = ArenaError<B::Error>;

    fn column<F: GpuAligned>(
        &mut self,
        _name: &'static str,
        column: &ArenaSlice<F, B>,
    ) -> ArenaResult<(), B> {
        self.arena.offset(column).map(|_| ())
    }
}

impl<B: Backend> Arena<B> {
    /// Allocates `len` elements of `T` as one column per field, in one
    /// all-or-nothing reservation; each column starts on the arena's
    /// minimum alignment. On host and device arenas alike.
    ///
    /// ```
    /// use gpu_aligned::arena::Arena;
    ///
    /// #[derive(Clone, Copy, gpu_aligned::GpuSoa)]
    /// struct Hit { x: f32, id: u32, flags: u8 }
    ///
    /// let mut arena = Arena::host(1 << 14)?;
    /// let soa = arena.alloc_soa::<Hit>(100)?;
    /// let columns = soa.columns();
    /// for offset in [arena.offset(&columns.x)?, arena.offset(&columns.id)?, arena.offset(&columns.flags)?] {
    ///     assert_eq!(offset % arena.min_align() as u64, 0);
    /// }
    /// arena.free_soa(soa)?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`Arena::carve`]: a zero `len`, a size that overflows, or no room
    /// for every column; nothing is reserved then.
    pub fn alloc_soa<T: GpuSoa>(&mut self, len: usize) -> ArenaResult<Soa<T, B>, B> {
        let mut plan = Plan::new();
        let key = plan.soa::<T>(len);
        let mut carving = self.carve(&plan)?;
        let soa = carving.take_soa(key);
        // Every column was taken, so this frees nothing; it would give the
        // columns back if one were missing.
        self.free(carving).map_err(ArenaError::from)?;
        soa.ok_or(ArenaError::OutsideBuffer)
    }

    /// Frees every column of `soa`. The columns are checked first: if one
    /// is not this arena's, nothing is freed and `soa` comes back in the
    /// error (`handle: Some(soa)`).
    ///
    /// ```
    /// use gpu_aligned::arena::Arena;
    ///
    /// #[derive(Clone, Copy, gpu_aligned::GpuSoa)]
    /// struct Hit { x: f32, id: u32 }
    ///
    /// let mut arena = Arena::host(1 << 14)?;
    /// let soa = arena.alloc_soa::<Hit>(100)?;
    /// arena.free_soa(soa)?;
    /// assert_eq!(arena.stats().allocations, 0);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`FreeFailed`] with `handle: Some(soa)` when a column is not this
    /// arena's ([`ArenaError::Handle`]): nothing was freed. With `handle:
    /// None` for a backend failure while freeing ([`ArenaError::Backend`]):
    /// the other columns are freed, the one that failed stays allocated
    /// until the arena is reset.
    pub fn free_soa<T: GpuSoa>(&mut self, soa: Soa<T, B>) -> Result<(), SoaFreeFailed<T, B>> {
        if let Err(error) = T::__visit(&soa.columns, &mut Checking { arena: self }) {
            return Err(FreeFailed {
                handle: Some(soa),
                error,
            });
        }
        let mut freeing = Freeing {
            arena: self,
            outcome: Ok(()),
        };
        T::__consume(soa.columns, &mut freeing);
        freeing.outcome.map_err(|error| FreeFailed {
            handle: None,
            error,
        })
    }

    /// The kernel's view of `soa`: each column's address, in layout order,
    /// and the length. It records no stream use: on a device arena, launch
    /// it on the arena's stream, or synchronize around other streams.
    ///
    /// ```
    /// use gpu_aligned::arena::Arena;
    ///
    /// #[derive(Clone, Copy, gpu_aligned::GpuSoa)]
    /// struct One { v: f32 }
    ///
    /// let mut arena = Arena::host(1 << 12)?;
    /// let soa = arena.alloc_soa::<One>(4)?;
    /// let view = arena.soa_view(&soa)?;
    /// assert_eq!(view.columns, [arena.address(&soa.columns().v)?]);
    /// arena.free_soa(soa)?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`ArenaError::Handle`] if the columns are not this arena's;
    /// [`ArenaError::LengthMismatch`] if a column was swapped (through
    /// [`columns_mut`](Soa::columns_mut)) for one of another length.
    pub fn soa_view<T: GpuSoa>(&self, soa: &Soa<T, B>) -> ArenaResult<T::View, B> {
        let mut addressing = Addressing {
            arena: self,
            layout: &T::LAYOUT,
            len: soa.len,
            columns: alloc_crate::vec![0; T::COLUMNS],
        };
        T::__visit(&soa.columns, &mut addressing)?;
        <T::View as __derive::ViewParts>::from_parts(&addressing.columns, soa.len as u64)
            .ok_or(ArenaError::OutsideBuffer)
    }

    /// Copies `items` into the columns of `soa`, field by field, on host
    /// and device arenas alike.
    ///
    /// ```
    /// use gpu_aligned::arena::Arena;
    ///
    /// #[derive(Clone, Copy, gpu_aligned::GpuSoa)]
    /// struct Hit { x: f32, id: u32 }
    ///
    /// let mut arena = Arena::host(1 << 14)?;
    /// let mut soa = arena.alloc_soa::<Hit>(2)?;
    /// arena.write_soa(&mut soa, &[Hit { x: 1.0, id: 7 }, Hit { x: 2.0, id: 9 }])?;
    /// assert_eq!(arena.get(&soa.columns().id)?, &[7, 9]);
    /// assert!(arena.write_soa(&mut soa, &[Hit { x: 1.0, id: 7 }]).is_err());
    /// # arena.free_soa(soa)?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`ArenaError::LengthMismatch`] if `items.len()` is not `soa.len()` or
    /// a column was swapped (through [`columns_mut`](Soa::columns_mut)) for
    /// one of another length, [`ArenaError::Handle`] if a column is not this
    /// arena's (nothing is written in any of these cases);
    /// [`ArenaError::Backend`] if a copy fails.
    pub fn write_soa<T: GpuSoa>(&self, soa: &mut Soa<T, B>, items: &[T]) -> ArenaResult<(), B> {
        if items.len() != soa.len {
            return Err(ArenaError::LengthMismatch {
                expected: soa.len,
                found: items.len(),
            });
        }
        // Check every column, its handle and its length, before writing any:
        // a column refused halfway would leave the others written.
        self.soa_view(soa)?;
        T::__scatter(items, &mut soa.columns, &mut Writing { arena: self })
    }

    /// The elements of `soa`, rebuilt from its columns (on a device, after
    /// the copies finish).
    ///
    /// ```
    /// use gpu_aligned::arena::Arena;
    ///
    /// #[derive(Clone, Copy, Debug, PartialEq, gpu_aligned::GpuSoa)]
    /// struct Hit { x: f32, id: u32 }
    ///
    /// let mut arena = Arena::host(1 << 14)?;
    /// let mut soa = arena.alloc_soa::<Hit>(1)?;
    /// arena.write_soa(&mut soa, &[Hit { x: 0.5, id: 3 }])?;
    /// assert_eq!(arena.read_soa(&soa)?, [Hit { x: 0.5, id: 3 }]);
    /// # arena.free_soa(soa)?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`ArenaError::Handle`] if a column is not this arena's;
    /// [`ArenaError::Backend`] if a copy fails.
    pub fn read_soa<T: GpuSoa>(&self, soa: &Soa<T, B>) -> ArenaResult<Vec<T>, B> {
        T::__gather(&soa.columns, soa.len, &mut Reading { arena: self })
    }
}

#[cfg(feature = "cuda")]
mod cuda_launch {
    use super::{__derive, GpuSoa, Soa};
    use crate::arena::{Arena, ArenaError, ArenaResult, ArenaSlice};
    use crate::backend::cuda::CudaBackend;
    use crate::backend::Backend;
    use crate::layout::GpuAligned;
    use alloc_crate::boxed::Box;
    use alloc_crate::vec::Vec;
    use cudarc::driver::{CudaStream, CudaViewMut, DevicePtrMut, SyncOnDrop};

    /// One column's writable device view, whatever its element type.
    trait Column<'c> {
        /// Makes `stream` wait for the column's earlier reads and writes;
        /// the guard records a write of it on `stream` when dropped.
        fn begin_write<'s>(&'s mut self, stream: &'s CudaStream) -> SyncOnDrop<'s>;
    }

    impl<'c, F> Column<'c> for CudaViewMut<'c, F> {
        fn begin_write<'s>(&'s mut self, stream: &'s CudaStream) -> SyncOnDrop<'s> {
            self.device_ptr_mut(stream).1
        }
    }

    /// Takes a writable view of each column.
    struct Viewing<'c> {
        arena: &'c Arena<CudaBackend>,
        columns: Vec<Box<dyn Column<'c> + 'c>>,
    }

    impl<'c> __derive::VisitorMut<'c, CudaBackend> for Viewing<'c> {
        type Error = ArenaError<<CudaBackend as Backend>::Error>;

        fn column<F: GpuAligned>(
            &mut self,
            _name: &'static str,
            column: &'c mut ArenaSlice<F, CudaBackend>,
        ) -> Result<(), Self::Error> {
            self.columns.push(Box::new(self.arena.view_mut(column)?));
            Ok(())
        }
    }

    impl Arena<CudaBackend> {
        /// Runs `launch` with the kernel's view of `soa` ([`GpuSoa::View`]),
        /// tracking every column as a kernel argument that writes it would
        /// be: `stream` first waits for the columns' earlier reads and
        /// writes on any stream, and after `launch` a write of each column
        /// is recorded on `stream`. A read on another stream then waits for
        /// the kernel, and a freed column is not reused before it ends.
        /// `launch` must enqueue its work on `stream`.
        ///
        /// ```no_run
        /// use gpu_aligned::arena::Arena;
        /// use gpu_aligned::backend::cuda::cudarc::driver::{CudaContext, LaunchConfig, PushKernelArg};
        /// use gpu_aligned::backend::cuda::cudarc::nvrtc::compile_ptx;
        /// use gpu_aligned::header::CudaHeader;
        ///
        /// #[derive(Clone, Copy, gpu_aligned::GpuSoa)]
        /// struct Hit { x: f32, id: u32 }
        ///
        /// let context = CudaContext::new(0)?;
        /// let (s1, s2) = (context.new_stream()?, context.new_stream()?);
        /// let mut header = CudaHeader::new();
        /// header.add_soa::<Hit>()?;
        /// let source = format!(
        ///     "{}\nextern \"C\" __global__ void bump(Hit_soa v) {{ \
        ///      unsigned long long i = blockIdx.x * blockDim.x + threadIdx.x; \
        ///      if (i < v.len) v.x[i] += 1.0f; }}",
        ///     header.render()
        /// );
        /// let module = context.load_module(compile_ptx(source)?)?;
        /// let bump = module.load_function("bump")?;
        ///
        /// let mut arena = Arena::device(&s1, 1 << 20)?;
        /// let mut hits = arena.alloc_soa::<Hit>(1000)?;
        /// arena.launch_soa(&mut hits, &s2, |view| {
        ///     let mut launch = s2.launch_builder(&bump); // not the arena's stream
        ///     launch.arg(view);
        ///     // SAFETY: `bump` takes one `Hit_soa`, laid out as the view.
        ///     unsafe { launch.launch(LaunchConfig::for_num_elems(1000)) }.map(|_| ())
        /// })??;
        /// let after = arena.read_soa(&hits)?; // on s1: waits for the kernel on s2
        /// assert!(after.iter().all(|hit| hit.x == 1.0));
        /// # Ok::<(), Box<dyn std::error::Error>>(())
        /// ```
        ///
        /// # Errors
        ///
        /// [`ArenaError::Handle`] if a column is not this arena's;
        /// [`CudaError::ForeignStream`](crate::backend::cuda::CudaError::ForeignStream)
        /// for a stream of another context; a backend error after a sticky
        /// fault. `launch` is not called then. Its own result is returned
        /// inside.
        pub fn launch_soa<T: GpuSoa, R>(
            &self,
            soa: &mut Soa<T, CudaBackend>,
            stream: &CudaStream,
            launch: impl FnOnce(&T::View) -> R,
        ) -> ArenaResult<R, CudaBackend> {
            // cudarc records a write event only on a stream of the event's
            // own context, and reports a failure to that stream's context,
            // not ours: on a foreign stream the kernel would go untracked,
            // and the columns could be read or handed out again under it.
            self.backend()
                .same_context(stream)
                .map_err(ArenaError::Backend)?;
            let view = self.soa_view(soa)?;
            let mut viewing = Viewing {
                arena: self,
                columns: Vec::with_capacity(T::COLUMNS),
            };
            T::__visit_mut(&mut soa.columns, &mut viewing)?;
            let mut columns = viewing.columns;
            let writes: Vec<SyncOnDrop<'_>> = columns
                .iter_mut()
                .map(|column| column.begin_write(stream))
                .collect();
            let result = launch(&view);
            // Dropping the guards records each column's write on `stream`,
            // after what `launch` enqueued.
            drop(writes);
            Ok(result)
        }
    }
}

/// The body of `#[derive(GpuSoa)]`: the `<Name>Columns` struct, a check per
/// field whose error names the fix, and the `unsafe impl GpuSoa`. It lives
/// here, not in the derive, so the `unsafe` is this crate's: a caller that
/// redirects the derive's crate path reaches this macro or writes its own.
///
/// Why the impl is sound: `LAYOUT` is built from `size_of`, `align_of` and
/// `offset_of!` of the struct and of each listed field type; `__gather`
/// builds the struct from one value of each listed type per listed field, so
/// the list is the struct's own (every field once, with its exact type) or
/// the expansion does not compile; each field type is `GpuAligned` (the
/// where-clause); every hook walks the same list in the same order.
///
/// Its generic parameters have names like `__Backend`: unlike local
/// variables, they are not hygienic, so a one-letter name would capture a
/// user's field type or struct of that name.
#[doc(hidden)]
#[macro_export]
macro_rules! __gpu_soa_derive {
    (
        vis: $vis:vis,
        type: $ty:ident;
        name: $name:literal;
        count: $count:literal;
        columns: $columns:ident;
        fields: [$({ $member:ident: $fty:ty, $fname:literal })*];
    ) => {
        #[doc = concat!(
            "The columns of a structure of arrays of [`", $name, "`]: one typed array per ",
            "field, named like the field, each usable with every arena verb."
        )]
        #[must_use = "columns hold arena memory: give them back with `Arena::free_soa`"]
        $vis struct $columns<__Backend: $crate::backend::Backend = $crate::backend::HostBuffer> {
            $(
                #[doc = concat!("The column of `", $fname, "`.")]
                pub $member: $crate::arena::ArenaSlice<$fty, __Backend>,
            )*
        }

        #[allow(unused_qualifications, clippy::all)]
        impl<__Backend: $crate::backend::Backend> ::core::fmt::Debug for $columns<__Backend> {
            fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                f.debug_struct(::core::stringify!($columns))
                    $( .field($fname, &self.$member) )*
                    .finish()
            }
        }

        #[doc(hidden)]
        #[allow(unused_qualifications, clippy::all)]
        const _: () = {
            #[allow(dead_code)]
            fn checks() {
                $( $crate::soa::__derive::column_check::<$fty>(); )*
            }
        };

        // SAFETY: see the macro's documentation.
        #[allow(unused_qualifications, clippy::all)]
        unsafe impl<'__gpu_soa> $crate::soa::GpuSoa for $ty
        where
            $( $fty: $crate::soa::__derive::Column<'__gpu_soa>, )*
        {
            const LAYOUT: $crate::GpuLayout = $crate::__private::layout(
                $name,
                $crate::__private::core::mem::size_of::<$ty>(),
                $crate::__private::core::mem::align_of::<$ty>(),
                0,
                &const {
                    $crate::soa::__derive::by_offset([$(
                        $crate::__private::field(
                            $fname,
                            $crate::__private::core::mem::offset_of!($ty, $member),
                            $crate::__private::core::mem::size_of::<$fty>(),
                            $crate::__private::core::mem::align_of::<$fty>(),
                            false,
                            <$fty as $crate::GpuData>::TYPE,
                        )
                    ),*])
                },
            );
            const COLUMNS: usize = $count;
            type Columns<__Backend: $crate::backend::Backend> = $columns<__Backend>;
            type View = $crate::soa::SoaView<$count>;

            fn __plan<__Planner: $crate::soa::__derive::Planner>(planner: &mut __Planner) {
                $( planner.column::<$fty>($fname); )*
            }

            fn __columns<
                __Backend: $crate::backend::Backend,
                __Source: $crate::soa::__derive::Source<__Backend>,
            >(
                source: &mut __Source,
            ) -> ::core::result::Result<$columns<__Backend>, __Source::Error> {
                ::core::result::Result::Ok($columns {
                    $( $member: source.column::<$fty>($fname)?, )*
                })
            }

            fn __visit<
                __Backend: $crate::backend::Backend,
                __Visitor: $crate::soa::__derive::Visitor<__Backend>,
            >(
                columns: &$columns<__Backend>,
                visitor: &mut __Visitor,
            ) -> ::core::result::Result<(), __Visitor::Error> {
                $( visitor.column::<$fty>($fname, &columns.$member)?; )*
                ::core::result::Result::Ok(())
            }

            fn __visit_mut<
                '__a,
                __Backend: $crate::backend::Backend,
                __Visitor: $crate::soa::__derive::VisitorMut<'__a, __Backend>,
            >(
                columns: &'__a mut $columns<__Backend>,
                visitor: &mut __Visitor,
            ) -> ::core::result::Result<(), __Visitor::Error> {
                $( visitor.column::<$fty>($fname, &mut columns.$member)?; )*
                ::core::result::Result::Ok(())
            }

            fn __consume<
                __Backend: $crate::backend::Backend,
                __Consumer: $crate::soa::__derive::Consumer<__Backend>,
            >(
                columns: $columns<__Backend>,
                consumer: &mut __Consumer,
            ) {
                $( consumer.column::<$fty>($fname, columns.$member); )*
            }

            fn __scatter<
                __Backend: $crate::backend::Backend,
                __Writer: $crate::soa::__derive::Writer<__Backend>,
            >(
                items: &[Self],
                columns: &mut $columns<__Backend>,
                writer: &mut __Writer,
            ) -> ::core::result::Result<(), __Writer::Error> {
                $({
                    let values: $crate::soa::__derive::Vec<$fty> =
                        items.iter().map(|item| item.$member).collect();
                    writer.column::<$fty>(&mut columns.$member, &values)?;
                })*
                ::core::result::Result::Ok(())
            }

            fn __gather<
                __Backend: $crate::backend::Backend,
                __Reader: $crate::soa::__derive::Reader<__Backend>,
            >(
                columns: &$columns<__Backend>,
                len: usize,
                reader: &mut __Reader,
            ) -> ::core::result::Result<$crate::soa::__derive::Vec<Self>, __Reader::Error> {
                $(
                    let $member: $crate::soa::__derive::Vec<$fty> =
                        reader.column::<$fty>(&columns.$member, len)?;
                )*
                let mut items = $crate::soa::__derive::Vec::with_capacity(len);
                for index in 0..len {
                    items.push($ty {
                        $( $member: match $member.get(index) {
                            ::core::option::Option::Some(value) => *value,
                            ::core::option::Option::None => {
                                return ::core::result::Result::Err(__Reader::short($fname))
                            }
                        }, )*
                    });
                }
                ::core::result::Result::Ok(items)
            }
        }
    };
}

/// What `#[derive(GpuSoa)]` expands to uses these; not public API.
#[doc(hidden)]
pub mod __derive {
    use crate::arena::ArenaSlice;
    use crate::backend::Backend;
    use crate::layout::{GpuAligned, GpuField};
    pub use alloc_crate::vec::Vec;

    /// A type that can be a column: one GPU word, moved in one instruction.
    #[diagnostic::on_unimplemented(
        message = "`{Self}` cannot be a column of a structure of arrays",
        label = "not a GPU element",
        note = "each column element must be one GPU word (`GpuAligned`: 1, 2, 4, 8 or 16 bytes, aligned to its size), so that it moves in one instruction",
        note = "a `float3` (12 bytes): use `float3_16_t`, or split it into three `f32` fields; a `bool`: use `u8`; an array: one field per element"
    )]
    pub trait Column<'a>: GpuAligned {}

    impl<T: GpuAligned> Column<'_> for T {}

    /// Fails to compile unless `F` can be a column.
    pub const fn column_check<F: for<'a> Column<'a>>() {}

    /// `fields` sorted by offset (stable), for the layout of a struct whose
    /// fields Rust may have reordered.
    pub const fn by_offset<const N: usize>(mut fields: [GpuField; N]) -> [GpuField; N] {
        let mut i = 1;
        while i < N {
            let mut j = i;
            while j > 0 && fields[j - 1].offset > fields[j].offset {
                let swapped = fields[j - 1];
                fields[j - 1] = fields[j];
                fields[j] = swapped;
                j -= 1;
            }
            i += 1;
        }
        fields
    }

    /// Builds a kernel view from column addresses in layout order.
    pub trait ViewParts: Sized {
        /// `None` if `columns` has the wrong count.
        fn from_parts(columns: &[u64], len: u64) -> Option<Self>;
    }

    /// Sees each column's type, in declaration order.
    pub trait Planner {
        /// One column of `F`.
        fn column<F: GpuAligned>(&mut self, name: &'static str);
    }

    /// Hands out each column, in declaration order.
    pub trait Source<B: Backend> {
        /// Why a column could not be handed out.
        type Error;
        /// The next column.
        fn column<F: GpuAligned>(
            &mut self,
            name: &'static str,
        ) -> Result<ArenaSlice<F, B>, Self::Error>;
    }

    /// Sees each column.
    pub trait Visitor<B: Backend> {
        /// Why the visit stopped.
        type Error;
        /// One column.
        fn column<F: GpuAligned>(
            &mut self,
            name: &'static str,
            column: &ArenaSlice<F, B>,
        ) -> Result<(), Self::Error>;
    }

    /// Sees each column mutably, for as long as `'a`.
    pub trait VisitorMut<'a, B: Backend> {
        /// Why the visit stopped.
        type Error;
        /// One column.
        fn column<F: GpuAligned>(
            &mut self,
            name: &'static str,
            column: &'a mut ArenaSlice<F, B>,
        ) -> Result<(), Self::Error>;
    }

    /// Takes each column by value.
    pub trait Consumer<B: Backend> {
        /// One column.
        fn column<F: GpuAligned>(&mut self, name: &'static str, column: ArenaSlice<F, B>);
    }

    /// Stores one field's values into its column.
    pub trait Writer<B: Backend> {
        /// Why a write failed.
        type Error;
        /// `values` into `column`.
        fn column<F: GpuAligned>(
            &mut self,
            column: &mut ArenaSlice<F, B>,
            values: &[F],
        ) -> Result<(), Self::Error>;
    }

    /// Loads one field's values from its column.
    pub trait Reader<B: Backend> {
        /// Why a read failed.
        type Error;
        /// The first `len` values of `column`.
        fn column<F: GpuAligned>(
            &mut self,
            column: &ArenaSlice<F, B>,
            len: usize,
        ) -> Result<Vec<F>, Self::Error>;
        /// The error for a column that came back shorter than asked.
        fn short(column: &'static str) -> Self::Error;
    }
}
