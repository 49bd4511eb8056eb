//! Structure of arrays: a struct of any size stored as one column per field,
//! each column an ordinary typed array of the arena, so every column element
//! is one GPU word and moves in one instruction.
//!
//! `#[derive(GpuSoa)]` accepts a struct with named fields whose types are GPU
//! elements ([`GpuAligned`](crate::GpuAligned)); the struct itself may be any size and needs no
//! `repr`. It generates `<Name>Columns`, one `pub` [`ArenaSlice`](crate::arena::ArenaSlice) per field
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
//! **One column order: the fields' declaration order.** The arena carves the
//! columns in it, [`SoaView`] lists their addresses in it, and the CUDA
//! header's `P_soa` (members, `bytes`, `carve`) follows it, whatever order
//! rustc gave the fields in memory: a struct without `repr(C)` is reordered,
//! and a kernel must not depend on that. Only the header's declaration of
//! the struct itself ([`GpuSoa::LAYOUT`]) is in offset order, since it must
//! reproduce the bytes.
//!
//! The CUDA side is [`CudaHeader::add_soa`]: views with the same members
//! over columns or over an array of structs.
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

mod column;
#[cfg(feature = "cuda")]
mod cuda;
#[doc(hidden)]
pub mod derive;
mod ops;
mod view;

pub use column::Column;
#[cfg(feature = "cuda")]
pub use column::{DeviceColumn, WritableView};
pub use ops::SoaKey;
pub use view::SoaView;

use crate::arena::{ArenaHandle, ArenaResult, Carving, Place, Places, Plan};
use crate::backend::{Backend, HostBuffer};
use crate::header::{CudaHeader, HeaderError};
use crate::layout::{GpuField, GpuLayout};
use alloc_crate::vec::Vec;
use core::fmt;

/// A struct stored as one column per field: the primitives the runtime
/// builds every structure-of-arrays operation from. Derive it with
/// `#[derive(GpuSoa)]`; every field's type must be [`GpuAligned`](crate::GpuAligned).
///
/// ```
/// use gpu_aligned::soa::GpuSoa;
///
/// #[derive(Clone, Copy, gpu_aligned::GpuSoa)]
/// struct Hit { flags: u8, x: f32, id: u64 }
///
/// // The columns, in declaration order.
/// let names: Vec<&str> = Hit::COLUMNS.iter().map(|c| c.name).collect();
/// assert_eq!(names, ["flags", "x", "id"]);
/// // The struct as rustc laid it out, fields in offset order.
/// assert_eq!(Hit::LAYOUT.size, core::mem::size_of::<Hit>());
/// let offsets: Vec<usize> = Hit::LAYOUT.fields.iter().map(|f| f.offset).collect();
/// assert!(offsets.windows(2).all(|w| w[0] < w[1]));
/// ```
///
/// # Safety
///
/// An implementation promises that [`LAYOUT`](GpuSoa::LAYOUT) describes
/// `Self` (size, alignment, every field's offset, size and type, in offset
/// order); that [`COLUMNS`](GpuSoa::COLUMNS) lists every field once, in
/// declaration order, with the same descriptions; that column `j` of every
/// other method is the field `COLUMNS[j]` describes, so [`columns`](GpuSoa::columns)
/// yields arrays of exactly that type (a kernel reads them as the header's
/// `P_soa` declares them). The derive proves all of it: the runtime's macro
/// builds every item from one list of the struct's fields, and a list that
/// is not exactly the struct's does not compile.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a structure-of-arrays type (`GpuSoa`)",
    label = "not `GpuSoa`",
    note = "derive it: `#[derive(gpu_aligned::GpuSoa)]` on a struct with named fields whose types are GPU elements"
)]
pub unsafe trait GpuSoa: Copy + 'static {
    /// The struct as laid out, fields in offset order (what the header
    /// declares, so C++ reproduces its bytes).
    const LAYOUT: GpuLayout;
    /// The columns, one per field, in declaration order: each column's
    /// element layout and name.
    const COLUMNS: &'static [GpuField];
    /// The generated `<Name>Columns`: one `pub` [`ArenaSlice`](crate::arena::ArenaSlice) per field,
    /// in an arena on the backend `B`.
    type Columns<B: Backend>: fmt::Debug;
    /// The kernel's view: [`SoaView`] with one address per column.
    type View: Copy + fmt::Debug + view::FromAddresses;
    /// The typed plan keys of the columns.
    #[doc(hidden)]
    type Keys;

    /// Appends the bytes of each field of `self` to its column's buffer,
    /// field `j` to `columns[j]` (fields past the buffers are skipped).
    fn push_fields(&self, columns: &mut [Vec<u8>]);
    /// An element from each field's bytes, taken from `fields` in column
    /// order; `None` if a field's bytes are missing or of the wrong length.
    fn from_field_bytes(fields: &mut dyn Iterator<Item = &[u8]>) -> Option<Self>;
    /// Every column, in column order, whatever its element type.
    fn columns<B: Backend>(columns: &Self::Columns<B>) -> Vec<&dyn Column<B>>;
    /// Every column, writable, in column order.
    fn columns_mut<B: Backend>(columns: &mut Self::Columns<B>) -> Vec<&mut dyn Column<B>>;
    /// Every column on a CUDA device, writable, in column order.
    #[cfg(feature = "cuda")]
    fn device_columns(
        columns: &mut Self::Columns<crate::backend::cuda::CudaBackend>,
    ) -> Vec<&mut dyn DeviceColumn>;
    /// Adds one array of `len` elements per column to `plan`.
    #[doc(hidden)]
    fn plan(plan: &mut Plan, len: usize) -> Self::Keys;
    /// The columns planned under `keys`, taken out of `carving`.
    #[doc(hidden)]
    fn take<B: Backend>(
        carving: &mut Carving<B>,
        keys: Self::Keys,
    ) -> ArenaResult<Self::Columns<B>, B>;
}

/// `len` elements of `T` as columns in an arena: the generated
/// `<Name>Columns`, each an ordinary [`ArenaSlice`](crate::arena::ArenaSlice),
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
