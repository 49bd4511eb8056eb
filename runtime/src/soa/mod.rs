//! Structure of arrays: a struct of any size stored as one column per field,
//! each column an ordinary typed array of the arena, so every column element
//! is one GPU word and moves in one instruction.
//!
//! `#[derive(GpuSoa)]` accepts a struct with named fields whose types are GPU
//! elements ([`GpuAligned`]); the struct itself may be any size and needs no
//! `repr`. It generates `<Name>Columns`, one `pub` [`ArenaSlice`] per field
//! named like the field, and the few primitives of [`GpuSoa`]: the columns'
//! element layouts and names, and one element's fields as bytes. Everything
//! else (allocation in one all-or-nothing reservation, plans, reads, writes,
//! the kernel's view) is written once, here, over those primitives. A
//! [`Soa`] is dropped like any array: each column gives its bytes back.
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
//! drop(soa); // every column gives its bytes back
//! assert_eq!(arena.live(), 0);
//! # Ok::<(), gpu_aligned::arena::ArenaError>(())
//! ```
//!
//! **One column order: the fields' declaration order**, whatever order
//! rustc gave them in memory: the arena carves the columns in it,
//! [`SoaView`] lists their addresses in it, and the CUDA header's `P_soa`
//! ([`CudaHeader::add_soa`]) declares its members in it. Only
//! [`GpuSoa::LAYOUT`], the struct itself, is in offset order: it must
//! reproduce the bytes. The derive refuses what has no fixed set of named
//! columns (tuple structs, enums, unions, generic structs, padding fields);
//! the ui-tests show each message.

#[cfg(feature = "cuda")]
mod cuda;
#[doc(hidden)]
pub mod derive;
mod ops;

#[cfg(feature = "cuda")]
pub use cuda::{DeviceBackend, WritableView};
pub use ops::SoaKey;

use crate::arena::{Arena, ArenaError, ArenaHandle, ArenaResult, ArenaSlice, Place, Places, Plan};
use crate::backend::{Backend, HostBuffer};
use crate::header::{CudaHeader, HeaderError};
use crate::layout::GpuAligned;
use crate::layout::{GpuField, GpuLayout};
use alloc_crate::vec::Vec;
use core::fmt;

/// A struct stored as one column per field: the primitives the runtime
/// builds every structure-of-arrays verb from. Derive it with
/// `#[derive(GpuSoa)]`; every field's type must be [`GpuAligned`].
///
/// ```
/// use gpu_aligned::soa::GpuSoa;
///
/// #[derive(Clone, Copy, gpu_aligned::GpuSoa)]
/// struct Hit { flags: u8, x: f32, id: u64 }
///
/// let names: Vec<&str> = Hit::COLUMNS.iter().map(|c| c.name).collect();
/// assert_eq!(names, ["flags", "x", "id"]); // declaration order
/// let offsets: Vec<usize> = Hit::LAYOUT.fields.iter().map(|f| f.offset).collect();
/// assert!(offsets.windows(2).all(|w| w[0] < w[1])); // offset order
/// ```
///
/// # Safety
///
/// [`LAYOUT`](GpuSoa::LAYOUT) describes `Self`, fields in offset order;
/// [`COLUMNS`](GpuSoa::COLUMNS) lists every field once, in declaration
/// order, with the same descriptions; column `j` of every other item is the
/// field `COLUMNS[j]` describes, as an array of exactly its type. The
/// derive's macro builds every item from one list of the struct's fields,
/// and a list that is not exactly the struct's does not compile.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a structure-of-arrays type (`GpuSoa`)",
    label = "not `GpuSoa`",
    note = "derive it: `#[derive(gpu_aligned::GpuSoa)]` on a struct with named fields whose types are GPU elements"
)]
pub unsafe trait GpuSoa: Copy + 'static {
    /// The struct as laid out, fields in offset order (the header's
    /// declaration of it).
    const LAYOUT: GpuLayout;
    /// The columns, one per field, in declaration order.
    const COLUMNS: &'static [GpuField];
    /// The generated `<Name>Columns`: one `pub` [`ArenaSlice`]
    /// per field, in an arena on the backend `B`.
    type Columns<B: Backend>: fmt::Debug;
    /// The kernel's view: [`SoaView`] with one address per column.
    type View: Copy + fmt::Debug + FromAddresses;

    /// Appends field `j` of `self` to `columns[j]`, as bytes.
    #[doc(hidden)]
    fn push_fields(&self, columns: &mut [Vec<u8>]);
    /// An element from its fields' bytes, in column order; `None` if one
    /// is missing or of the wrong length.
    #[doc(hidden)]
    fn from_field_bytes(fields: &mut dyn Iterator<Item = &[u8]>) -> Option<Self>;
    /// Every column, in column order.
    #[doc(hidden)]
    fn columns<B: Backend>(columns: &Self::Columns<B>) -> Vec<&dyn Column<B>>;
    /// Every column, writable, in column order.
    #[doc(hidden)]
    fn columns_mut<B: Backend>(columns: &mut Self::Columns<B>) -> Vec<&mut dyn Column<B>>;
    /// Adds one array of `len` elements per column to `plan`, in column order.
    #[doc(hidden)]
    fn plan_columns(plan: &mut Plan, len: usize);
    /// The typed columns from their places, in column order; `None` if
    /// one is missing.
    #[doc(hidden)]
    fn from_places<B: Backend>(places: &mut derive::ColumnPlaces<B>) -> Option<Self::Columns<B>>;
}

/// `len` elements of `T` as columns in an arena: the generated
/// `<Name>Columns`, each an ordinary [`ArenaSlice`],
/// and their common length. Dropping it gives every column back; so does
/// [`Arena::free`](crate::arena::Arena::free), which also says when a column
/// is not that arena's. The module's example shows the verbs.
pub struct Soa<T: GpuSoa, B: Backend = HostBuffer> {
    columns: T::Columns<B>,
    len: usize,
}

impl<T: GpuSoa, B: Backend> Places<B> for Soa<T, B> {
    fn places(&mut self, each: &mut dyn FnMut(&mut Place<B>)) {
        for column in T::columns_mut(&mut self.columns) {
            column.places(each);
        }
    }
}

impl<T: GpuSoa, B: Backend> ArenaHandle<B> for Soa<T, B> {}

impl<T: GpuSoa, B: Backend> Soa<T, B> {
    /// The columns: one `pub` typed array per field, named like the field.
    pub fn columns(&self) -> &T::Columns<B> {
        &self.columns
    }

    /// The columns, for writing one of them (a writable view or a copy
    /// needs its column alone).
    pub fn columns_mut(&mut self) -> &mut T::Columns<B> {
        &mut self.columns
    }

    /// The number of elements (every column's length).
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether it has no elements (never true: zero-length columns are
    /// refused).
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

impl CudaHeader {
    /// Declares the structure-of-arrays type `T` (`#[derive(GpuSoa)]`),
    /// the structs it contains, and its views over columns and over an array
    /// of structs, with the columns in `T`'s declaration order
    /// ([`GpuSoa::COLUMNS`]), as the arena carves them.
    ///
    /// ```
    /// use gpu_aligned::header::CudaHeader;
    ///
    /// #[derive(Clone, Copy, gpu_aligned::GpuSoa)]
    /// struct Body { kind: u8, mass: f32, id: u64 }
    ///
    /// let mut header = CudaHeader::new();
    /// header.add_soa::<Body>()?;
    /// let text = header.render();
    /// assert!(text.contains("struct Body_soa {\n    gpu_aligned_column<uint8_t, 1> kind;"));
    /// # Ok::<(), gpu_aligned::header::HeaderError>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As for [`CudaHeader::add_soa_columns`].
    pub fn add_soa<T: GpuSoa>(&mut self) -> Result<&mut Self, HeaderError> {
        self.add_soa_columns(&T::LAYOUT, T::COLUMNS)
    }
}

/// What a kernel is handed for a structure of arrays: one device address
/// per column, in the columns' declaration order ([`GpuSoa::COLUMNS`]),
/// then the length. It is laid out as the CUDA header's `P_soa` view (8
/// bytes a column, then `len`; the header `static_assert`s it), and with the
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
/// assert_eq!(core::mem::size_of_val(&view), 8 * (Hit::COLUMNS.len() + 1));
/// assert_eq!(view.len, 10);
/// // Declaration order: `id` first, though rustc put `x` at offset 0.
/// assert_eq!(view.columns[0], arena.address(&soa.columns().id)?);
/// assert_eq!(view.columns[1], arena.address(&soa.columns().x)?);
/// # Ok::<(), gpu_aligned::arena::ArenaError>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(C)]
pub struct SoaView<const N: usize> {
    /// Each column's address, in column order.
    pub columns: [u64; N],
    /// The number of elements.
    pub len: u64,
}

/// Builds a kernel view from its columns' addresses.
#[doc(hidden)]
pub trait FromAddresses: Sized {
    /// `None` unless `columns` holds one address per column.
    fn from_addresses(columns: &[u64], len: u64) -> Option<Self>;
}

impl<const N: usize> FromAddresses for SoaView<N> {
    fn from_addresses(columns: &[u64], len: u64) -> Option<Self> {
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

/// A column seen through its bytes: implemented for every [`ArenaSlice<F,
/// B>`](ArenaSlice) of a [`GpuAligned`] `F`, and only for them (a structure
/// of arrays gives its columns' places back as one handle).
#[doc(hidden)]
pub trait Column<B: Backend>: fmt::Debug + Places<B> {
    /// The number of elements.
    fn len(&self) -> usize;
    /// Whether it has no elements.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// [`Arena::address`], which also checks that `arena` holds it.
    fn address(&self, arena: &Arena<B>) -> ArenaResult<u64, B>;
    /// Copies `bytes` (as many whole elements as the column holds) into it.
    fn write_bytes(&mut self, arena: &Arena<B>, bytes: &[u8]) -> ArenaResult<(), B>;
    /// The column's bytes.
    fn read_bytes(&self, arena: &Arena<B>) -> ArenaResult<Vec<u8>, B>;
    /// The column as a writable device view, to track a kernel that writes it.
    #[cfg(feature = "cuda")]
    fn view_mut<'a>(
        &'a mut self,
        arena: &'a Arena<B>,
    ) -> ArenaResult<alloc_crate::boxed::Box<dyn cuda::WritableView + 'a>, B>
    where
        B: cuda::DeviceBackend;
}

impl<F: GpuAligned, B: Backend> Column<B> for ArenaSlice<F, B> {
    fn len(&self) -> usize {
        ArenaSlice::len(self)
    }

    fn address(&self, arena: &Arena<B>) -> ArenaResult<u64, B> {
        arena.address(self)
    }

    fn write_bytes(&mut self, arena: &Arena<B>, bytes: &[u8]) -> ArenaResult<(), B> {
        let size = core::mem::size_of::<F>();
        if bytes.len() != size * ArenaSlice::len(self) {
            return Err(ArenaError::LengthMismatch {
                expected: ArenaSlice::len(self),
                found: bytes.len() / size,
            });
        }
        // A copy, not a cast: `bytes` need not be aligned for `F`.
        let mut values = alloc_crate::vec![F::zeroed(); bytes.len() / size];
        bytemuck::cast_slice_mut::<F, u8>(&mut values).copy_from_slice(bytes);
        arena.write(self, &values)
    }

    fn read_bytes(&self, arena: &Arena<B>) -> ArenaResult<Vec<u8>, B> {
        Ok(bytemuck::cast_slice(&arena.to_vec(self)?).to_vec())
    }

    #[cfg(feature = "cuda")]
    fn view_mut<'a>(
        &'a mut self,
        arena: &'a Arena<B>,
    ) -> ArenaResult<alloc_crate::boxed::Box<dyn cuda::WritableView + 'a>, B>
    where
        B: cuda::DeviceBackend,
    {
        B::view_mut(arena, self)
    }
}
