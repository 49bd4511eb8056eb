//! Structure of arrays: a struct stored as one column per field, each an
//! [`ArenaSlice`](crate::arena::ArenaSlice), so every element moves in one
//! instruction. `#[derive(GpuSoa)]` generates `<Name>Columns` and the
//! primitives of [`GpuSoa`]; every verb is written once, here, over them.
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
//! let mut soa = arena.alloc_soa::<Particle>(particles.len())?; // all or nothing
//! assert_eq!(arena.offset(&soa.columns().kind)? % 256, 0); // every column aligned
//! arena.write_soa(&mut soa, &particles)?;
//! assert_eq!(arena.get(&soa.columns().mass)?[7], 2.0);
//! assert_eq!(arena.read_soa(&soa)?, particles);
//! assert!(arena.write_soa(&mut soa, &particles[1..]).is_err()); // one short
//! drop(soa); // every column gives its bytes back
//! assert_eq!(arena.live(), 0);
//! # Ok::<(), gpu_aligned::arena::ArenaError>(())
//! ```
//!
//! **One column order, the fields' declaration order**, for the arena, the [`SoaView`] and the
//! header's `P_soa` ([`CudaHeader::add_soa`]); only [`GpuSoa::LAYOUT`] is in offset order.

#[doc(hidden)]
pub mod derive;
mod ops;

pub use ops::SoaKey;

use crate::arena::{ArenaArray, ArenaHandle, Place, Places, Plan, Sealed, SEALED};
use crate::backend::{Backend, HostBuffer};
use crate::header::{CudaHeader, HeaderError};
use crate::layout::{GpuField, GpuLayout};
use alloc_crate::vec::Vec;
use core::fmt;

/// A struct stored as one column per field: the primitives every
/// structure-of-arrays verb is built from. Derive it with `#[derive(GpuSoa)]`.
///
/// # Safety
///
/// `LAYOUT` describes `Self`; `COLUMNS` lists every field once, in declaration order; column `j` of
/// every hidden primitive is the field `COLUMNS[j]` describes, as an array of exactly its type.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a structure-of-arrays type (`GpuSoa`)",
    label = "not `GpuSoa`",
    note = "derive it: `#[derive(gpu_aligned::GpuSoa)]` on a struct with named fields whose types are GPU elements"
)]
pub unsafe trait GpuSoa: Copy + 'static {
    /// The struct as laid out, fields in offset order.
    const LAYOUT: GpuLayout;
    /// The columns, one per field, in declaration order.
    const COLUMNS: &'static [GpuField];
    /// The generated `<Name>Columns`: one `pub` [`ArenaSlice`](crate::arena::ArenaSlice) per field,
    /// in an arena on the backend `B`.
    type Columns<B: Backend>: fmt::Debug;
    /// The kernel's view: [`SoaView`] with one address per column.
    type View: Copy + fmt::Debug + FromAddresses;

    /// Appends field `j` of `self` to `columns[j]`, as bytes.
    #[doc(hidden)]
    fn push_fields(&self, _columns: &mut [Vec<u8>]) {}
    /// An element from its fields' bytes, in column order; `None` if one
    /// is missing or of the wrong length.
    #[doc(hidden)]
    fn from_field_bytes(_fields: &mut dyn Iterator<Item = &[u8]>) -> Option<Self> {
        None
    }
    /// Every column, in column order.
    #[doc(hidden)]
    fn columns<B: Backend>(_columns: &Self::Columns<B>) -> Vec<&dyn ArenaArray<B>> {
        Vec::new()
    }
    /// Every column, writable, in column order.
    #[doc(hidden)]
    fn columns_mut<B: Backend>(_columns: &mut Self::Columns<B>) -> Vec<&mut dyn ArenaArray<B>> {
        Vec::new()
    }
    /// Adds one array of `len` elements per column to `plan`, in column order.
    #[doc(hidden)]
    fn plan_columns(_plan: &mut Plan, _len: usize) {}
    /// The typed columns from their places, in column order.
    #[doc(hidden)]
    fn from_places<B: Backend>(_places: &mut derive::ColumnPlaces<B>) -> Option<Self::Columns<B>> {
        None
    }
}

/// `len` elements of `T` as columns in an arena; dropping it gives every column back.
pub struct Soa<T: GpuSoa, B: Backend = HostBuffer> {
    columns: T::Columns<B>,
    len: usize,
}

impl<T: GpuSoa, B: Backend> Places<B> for Soa<T, B> {
    fn places(&mut self, _: Sealed, each: &mut dyn FnMut(&mut Place<B>)) {
        for column in T::columns_mut(&mut self.columns) {
            column.places(SEALED, each);
        }
    }
}

impl<T: GpuSoa, B: Backend> ArenaHandle<B> for Soa<T, B> {}

impl<T: GpuSoa, B: Backend> Soa<T, B> {
    /// The columns: one `pub` typed array per field, named like the field.
    pub fn columns(&self) -> &T::Columns<B> {
        &self.columns
    }

    /// The columns, for a verb that needs one alone (a write, say).
    pub fn columns_mut(&mut self) -> &mut T::Columns<B> {
        &mut self.columns
    }

    /// The number of elements (every column's length).
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether it has no elements.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

impl<T: GpuSoa, B: Backend> fmt::Debug for Soa<T, B> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Soa")
            .field("len", &self.len)
            .field("columns", &self.columns)
            .finish()
    }
}

impl CudaHeader {
    /// Declares `T`, the structs it contains, and its views over columns
    /// (in [`GpuSoa::COLUMNS`]' order) and over an array of structs.
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
    /// As for [`CudaHeader::add_soa_layout`].
    pub fn add_soa<T: GpuSoa>(&mut self) -> Result<&mut Self, HeaderError> {
        self.add_soa_layout(&T::LAYOUT, T::COLUMNS)
    }
}

/// What a kernel is handed for a structure of arrays: one address per column, in
/// [`GpuSoa::COLUMNS`]' order, then the length, laid out as the header's `P_soa` (which
/// `static_assert`s it); a launch argument by value (cudarc's `DeviceRepr`) with the `cuda`
/// feature, lent to one launch by `Arena::soa_view`.
///
/// ```
/// use gpu_aligned::soa::GpuSoa;
///
/// #[derive(Clone, Copy, gpu_aligned::GpuSoa)]
/// struct Hit { id: u32, x: f64 }
///
/// let size = core::mem::size_of::<<Hit as GpuSoa>::View>();
/// assert_eq!(size, 8 * (Hit::COLUMNS.len() + 1));
/// // Declaration order (`id` first), though rustc put `x` at offset 0:
/// assert_eq!(Hit::COLUMNS[0].name, "id");
/// assert_eq!(Hit::LAYOUT.fields[0].name, "x");
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
        let columns = columns.try_into().ok()?;
        Some(SoaView { columns, len })
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
