#![doc = include_str!("../README.md")]
//!
//! # Where to start
//!
//! [`derive(GpuAligned)`](derive@GpuAligned), [`padded`](macro@padded) and
//! [`derive(GpuData)`](derive@GpuData) check and fix types against [the rule](rules); [`vector`]
//! has CUDA's vector types; [`header::CudaHeader`] writes the CUDA side; [`coalesce`] and
//! [`report::LayoutReport`] price a layout; [`derive(GpuSoa)`](derive@GpuSoa) stores a struct as
//! columns; [`arena::Arena`] carves typed arrays out of one buffer, on the host or, with the `cuda`
//! feature, on a GPU (`backend::cuda` has an example with a kernel). Each has its example.
#![no_std]
#![cfg_attr(docsrs, feature(doc_cfg))]
#![deny(missing_docs)]
#![deny(unsafe_op_in_unsafe_fn)]
#![deny(clippy::undocumented_unsafe_blocks, clippy::missing_safety_doc)]

#[cfg(feature = "alloc")]
extern crate alloc as alloc_crate;
#[cfg(feature = "std")]
extern crate std;

// Lets the derive's absolute `::gpu_aligned::...` paths resolve inside this crate too.
extern crate self as gpu_aligned;

pub mod align;
#[cfg(feature = "alloc")]
pub mod alloc;
#[cfg(feature = "alloc")]
pub mod arena;
pub mod backend;
pub mod coalesce;
pub mod header;
#[cfg(feature = "alloc")]
pub mod history;
mod layout;
#[cfg(all(feature = "nccl-bindings", unix))]
pub mod nccl;
pub mod report;
pub mod rules;
#[cfg(feature = "alloc")]
pub mod sanitizer;
#[cfg(all(feature = "cuda", unix))]
pub mod share;
#[cfg(feature = "alloc")]
pub mod soa;
#[cfg(feature = "alloc")]
mod spin;
pub mod vector;

pub use layout::{GpuAligned, GpuData, GpuField, GpuLayout, GpuType, GpuWords, Scalar, Violations};

/// The bytemuck this crate's elements implement `Pod` and `Zeroable` of:
/// `gpu_aligned::bytemuck::cast_slice` turns an array of elements into the
/// bytes to upload without a dependency of your own.
pub use bytemuck;

/// Checks, at compile time, that a struct is a legal GPU element, and implements [`GpuAligned`],
/// [`GpuData`], `bytemuck::Pod` and `bytemuck::Zeroable` for it (with the `cuda` feature, also
/// cudarc's `DeviceRepr` and `ValidAsZeroBits`, so it can be a kernel argument).
///
/// A legal element is **1, 2, 4, 8 or 16 bytes, aligned to its size, with no holes** ([`rules`]
/// explains why, with measured numbers). The derive emits a `const` that compares `size_of`,
/// `align_of` and every field's `offset_of!` against that rule, so the numbers are the compiler's
/// own, whatever the field types are: aliases, vector types and nested elements included.
///
/// ```
/// use gpu_aligned::vector::float3;
/// use gpu_aligned::GpuAligned;
///
/// #[derive(Clone, Copy, GpuAligned)]
/// #[repr(C, align(16))]
/// struct Particle {
///     position: float3, // 12 bytes, align 4: legal as a field
///     mass: f32,
/// }
///
/// assert_eq!((Particle::LAYOUT.size, Particle::LAYOUT.align), (16, 16));
/// assert_eq!(Particle::LAYOUT.field("mass").map(|f| f.offset), Some(12));
/// let particle = Particle { position: float3::new(1.0, 2.0, 3.0), mass: 0.5 };
/// assert_eq!(gpu_aligned::bytemuck::bytes_of(&particle)[12..], 0.5f32.to_ne_bytes());
/// ```
///
/// # What it accepts
///
/// - A struct with named or tuple fields, `#[repr(C)]`, `#[repr(C, align(N))]`
///   with N = 1, 2, 4, 8 or 16, or `#[repr(transparent)]`.
/// - That derives **`Clone` and `Copy`** too: a GPU element is copied byte
///   for byte. Forgetting `Copy` is one error that says so.
/// - Whose fields are [`GpuData`]: `u8`..`u64`, `i8`..`i64`, `f32`, `f64`, `u128`/`i128` where they
///   are 16-aligned (x86_64, aarch64), arrays of these, the [`vector`] types (the non-word ones
///   such as `float3` as fields), and other derived or [`padded`](macro@padded) types.
/// - Whose every byte belongs to a field. A hole you want is a field marked
///   `#[gpu_aligned(padding)]`: it is listed in [`GpuLayout::fields`] with `is_padding: true`,
///   counted in [`GpuLayout::padding`], and written as a real member by the [`header`] emitter, so
///   every byte uploaded is initialised:
///
/// ```
/// use gpu_aligned::GpuAligned;
///
/// #[derive(Clone, Copy, GpuAligned)]
/// #[repr(C, align(16))]
/// struct Sample {
///     value: f32,
///     #[gpu_aligned(padding)]
///     pad: u32,
///     time: f64,
/// }
///
/// assert_eq!(Sample::LAYOUT.padding, 4);
/// assert!(Sample::LAYOUT.fields[1].is_padding);
/// ```
///
/// # What it rejects, and why
///
/// Each with a compile error that names the type, the size and alignment found, the rule and a fix,
/// pointing at the field or attribute to blame (every syntactic error is reported in one compile):
///
/// - sizes other than 1, 2, 4, 8 or 16 (3, 12, 24, 32, ...), an alignment below the size, interior
///   and trailing holes: [`rules`] says why (bigger structs belong in a structure of arrays);
/// - a missing `repr(C)`, `repr(packed)`, `repr(align(N))` without `C`, and `align(N)` that is not
///   a power of two or exceeds 16: the layout would be the compiler's choice, or unaligned;
/// - fields that are `bool` or `char` (invalid bit patterns), `usize` or
///   `isize` (their width differs between host and device), references,
///   pointers, `Vec` or `Box` (host addresses a GPU cannot follow);
/// - enums, unions, unit and zero-sized structs: no fixed set of fields to check;
/// - generic structs other than the shapes below, with bounds, `where` clauses, lifetimes, const
///   parameters or `align(N)`: their padding would depend on the type arguments;
/// - unknown or repeated `#[gpu_aligned(...)]` keys.
///
/// # Generic structs
///
/// A generic struct is accepted when no instantiation can have padding: `#[repr(transparent)]` or
/// `#[repr(C)]`, every field its one type parameter `T`, an array of `T`, or a `PhantomData`. The
/// derive adds `T: GpuData`; `GpuData`, `Pod` and `Zeroable` then hold for every `T`, and the rest
/// of the rule (1, 2, 4, 8 or 16 bytes, aligned to its size) is checked per instantiation, where
/// its `LAYOUT` is needed: `arena.alloc`, `CudaHeader::add` and every other entry point read it
/// first, so a refused instantiation is a compile error (of `cargo build`; `cargo check` does not
/// evaluate it) where it is used.
///
/// ```
/// use core::marker::PhantomData;
/// use gpu_aligned::{GpuAligned, GpuData};
///
/// #[derive(Clone, Copy, GpuAligned)]
/// #[repr(transparent)]
/// struct Quantity<T, Unit>(T, PhantomData<Unit>);
///
/// #[derive(Clone, Copy)]
/// struct Meters;
///
/// assert_eq!(Quantity::<f32, Meters>::LAYOUT.size, 4);
///
/// // Two or more `T`s are never an element (`Pair<f32>` is 8 bytes aligned
/// // to 4) but always a field: wrap an instantiation to align it.
/// #[derive(Clone, Copy, GpuAligned)]
/// #[repr(C)]
/// struct Pair<T> { a: T, b: T }
///
/// #[derive(Clone, Copy, GpuAligned)]
/// #[repr(C, align(8))]
/// struct PairF32(Pair<f32>);
///
/// assert_eq!(<Pair<u8> as GpuData>::TYPE.size(), 2);
/// assert_eq!(PairF32::LAYOUT.align, 8);
/// ```
///
/// Do not derive `bytemuck::Pod` or `Zeroable` as well: the derive already implements them, and a
/// second impl is `error[E0119]: conflicting implementations`.
///
/// # A renamed dependency
///
/// The generated code names `::gpu_aligned`. When the dependency has another name (`ga = {
/// package = "gpu-aligned", .. }`) or is re-exported by another crate, say where it is with
/// `#[gpu_aligned(crate = "ga")]` next to the `#[derive]`.
///
/// # Errors at compile time
///
/// A 12-byte struct does not compile:
///
/// ```compile_fail,E0080
/// use gpu_aligned::GpuAligned;
///
/// #[derive(Clone, Copy, GpuAligned)]
/// #[repr(C)]
/// struct Float3 { x: f32, y: f32, z: f32 }
/// ```
///
/// and rustc says:
///
/// ```text
/// error[E0080]: evaluation panicked: `Float3` is 12 bytes (align 4): a GPU element must be 1, 2, 4, 8 or 16 bytes
///                 = rule: CUDA loads or stores an element in one instruction only when it is 1, 2, 4, 8 or 16 bytes, aligned to its size, with no holes
///                 = fix: put `#[gpu_aligned::padded]` on the struct to round it up to 16 bytes with explicit zeroed padding, or write `#[repr(C, align(16))]` and add a 4-byte pad field marked `#[gpu_aligned(padding)]`
/// ```
///
/// A hole's error points at the field after it.
pub use gpu_aligned_derive::GpuAligned;

/// Checks, at compile time, that a struct of **any size** is plain GPU data laid out as C lays out
/// its fields, with no holes, and implements [`GpuData`], `bytemuck::Pod` and `bytemuck::Zeroable`
/// for it (with the `cuda` feature, also cudarc's `DeviceRepr` and `ValidAsZeroBits`): a kernel
/// parameter passed by value, a uniform block, a scene table's row, a field of other GPU types.
/// [`CudaHeader::add_data`](header::CudaHeader::add_data) declares it for the `.cu` side with
/// `static_assert`s of its size, alignment and every offset.
///
/// It is [`derive(GpuAligned)`](derive@GpuAligned) without the element's size rule: the same
/// attributes, the same checks of the fields, the `#[repr]`, generics and holes, with the same
/// errors. What the compiler lays out decides what else the struct is:
///
/// | size and alignment | also | stored in an arena |
/// |---|---|---|
/// | 1, 2, 4, 8 or 16 bytes, aligned to its size | [`GpuAligned`] (an element) | yes, one instruction each |
/// | aligned to 16 (so a multiple of 16 bytes) | [`GpuWords`] | yes, whole, as 16-byte words (the header's `P_aos16` view) |
/// | anything else | | no: a kernel parameter or a field (or columns: [`GpuSoa`](derive@GpuSoa)) |
///
/// Derive [`GpuAligned`](derive@GpuAligned) instead where the struct must
/// be an element: it refuses one that is not, with the reason.
///
/// ```
/// use gpu_aligned::vector::{float3, float4};
/// use gpu_aligned::{GpuData, GpuWords};
///
/// // 64 bytes, aligned to 4: passed to a kernel by value.
/// #[derive(Clone, Copy, GpuData)]
/// #[repr(C)]
/// struct Camera { origin: float3, basis: [float3; 3], lens_radius: f32, size: [u32; 2], samples: u32 }
/// assert_eq!((core::mem::size_of::<Camera>(), Camera::TYPE.align()), (64, 4));
///
/// // 32 bytes aligned to 16: stored whole, two 16-byte words per sphere.
/// #[derive(Clone, Copy, GpuData)]
/// #[repr(C)]
/// struct Sphere { center_radius: float4, albedo: float4 }
///
/// fn stored<T: GpuWords>() {}
/// stored::<Sphere>();
/// ```
///
/// A hole is refused, pointing at the field after it. A generic struct is accepted in the shapes [`derive(GpuAligned)`](derive@GpuAligned#generic-structs)
/// accepts (no padding for any type argument), and is GPU data, never an
/// element or an arena array's type, for every instantiation.
pub use gpu_aligned_derive::GpuData;

/// Rewrites a struct into a legal GPU element: the smallest width of 1, 2, 4, 8 or 16 bytes that
/// holds its fields (above 16 bytes, a whole struct of 16-byte words, below), `repr(C)` with that
/// alignment, an explicit zeroed pad field wherever the compiler would leave a hole (inside and at
/// the end), a `const fn new` taking the real fields in order (named like them), `Default` (all
/// zero), a plain struct `<Name>Fields` of the real fields to build one from a struct literal
/// (`From` both ways), and [`GpuAligned`].
///
/// The macro never guesses a size: every pad length and the width are
/// `const fn`s over `size_of` and `align_of` of the field types, so vector
/// types, nested padded types and type aliases all work.
///
/// ```
/// use gpu_aligned::GpuAligned;
///
/// #[gpu_aligned::padded]
/// #[derive(Clone, Copy, Debug, PartialEq)]
/// struct Float3 { x: f32, y: f32, z: f32 }           // CUDA's float3_16_t
///
/// #[gpu_aligned::padded]
/// #[derive(Clone, Copy, Debug, PartialEq)]
/// struct Int8x3 { x: i8, y: i8, z: i8 }              // CUDA's int8_3_4_t
///
/// #[gpu_aligned::padded]
/// #[derive(Clone, Copy, Debug, PartialEq)]
/// struct Tagged { tag: u8, value: u32 }              // the 3-byte hole becomes a field
///
/// assert_eq!((Float3::LAYOUT.size, Float3::LAYOUT.align, Float3::LAYOUT.padding), (16, 16, 4));
/// assert_eq!((Int8x3::LAYOUT.size, Int8x3::LAYOUT.align, Int8x3::LAYOUT.padding), (4, 4, 1));
/// assert_eq!((Tagged::LAYOUT.size, Tagged::LAYOUT.align, Tagged::LAYOUT.padding), (8, 8, 3));
///
/// // `new`, `Default` and `From` zero the pad bytes.
/// let v = Float3::new(1.0, 2.0, 3.0);
/// assert_eq!(&gpu_aligned::bytemuck::bytes_of(&v)[12..], &[0, 0, 0, 0]);
/// assert_eq!(Tagged::default(), Tagged::new(0, 0));
///
/// // A struct literal of the real fields (the pad fields are private, so
/// // `Tagged { .. }` itself cannot be written outside this module).
/// let t = Tagged::from(TaggedFields { tag: 1, value: 2 });
/// assert_eq!(t, Tagged::new(1, 2));
/// assert_eq!(format!("{t:?}"), "Tagged { tag: 1, value: 2 }"); // no pads
/// ```
///
/// Values made by `new`, `Default` or `From` (and their copies) have zero pad bytes; bytes written
/// through `bytemuck` (`bytes_of_mut`, `cast_slice_mut`, `pod_read_unaligned`) or by a kernel may
/// not, and nothing resets them. So that such a value still behaves as its fields, `padded` writes
/// the `Debug`, `PartialEq`, `Hash`, `PartialOrd` and `Ord` you derive itself, over the real fields
/// only (in declaration order).
///
/// `#[gpu_aligned::padded(align = 16)]` forces a width (and
/// `#[gpu_aligned::padded(crate = "path")]` names a renamed dependency, as
/// for the [derive](derive@GpuAligned#a-renamed-dependency)):
///
/// ```
/// use gpu_aligned::GpuAligned;
///
/// #[gpu_aligned::padded(align = 16)]
/// #[derive(Clone, Copy)]
/// struct Index { i: u32 }
///
/// assert_eq!((Index::LAYOUT.size, Index::LAYOUT.padding), (16, 12));
/// ```
///
/// The struct needs named fields and `#[derive(Clone, Copy)]`, and no `#[repr]` of its own (the
/// macro chooses it). The pad fields are private, named `__pad_before_<field>` and `__pad_tail`,
/// and listed in [`GpuLayout::fields`] with `is_padding: true`. Since the macro writes `Default`,
/// do not derive `Default` as well; `<Name>Fields` is a name the macro takes in the struct's
/// module.
///
/// More than 16 bytes of fields are padded to a multiple of 16, aligned to 16: not an element (no
/// one instruction moves it) but a whole struct of 16-byte words, [`GpuData`](derive@GpuData) and
/// [`GpuWords`], which an arena stores whole (see [`GpuWords`]) for kernels that read whole
/// elements:
///
/// ```
/// use gpu_aligned::vector::float4;
///
/// #[gpu_aligned::padded]
/// #[derive(Clone, Copy)]
/// struct Sphere { center_radius: float4, material: u32, roughness: f32 } // 24 bytes of fields
///
/// fn stored<T: gpu_aligned::GpuWords>() {}
/// stored::<Sphere>();
/// assert_eq!((core::mem::size_of::<Sphere>(), core::mem::align_of::<Sphere>()), (32, 16));
/// ```
///
/// A forced width asks for an element of that width, so fields that do not
/// fit it are refused, with the routes for a larger struct.
pub use gpu_aligned_derive::padded;

/// Derives [`soa::GpuSoa`]: a struct of any size, with named fields that are GPU elements and no
/// `repr` needed, stored as one column per field; the [`soa`] module has the whole story.
///
/// It also generates `<Name>Columns`, one public typed [`ArenaSlice`](arena::ArenaSlice) per field,
/// named like the field, which [`Soa::columns`](soa::Soa::columns) hands out.
/// `#[gpu_aligned(crate = "path")]` names a renamed dependency, as for
/// [`GpuAligned`](derive@GpuAligned#a-renamed-dependency).
///
/// ```
/// use gpu_aligned::arena::Arena;
/// use gpu_aligned::vector::float3_16_t;
/// use gpu_aligned::GpuSoa;
///
/// #[derive(Clone, Copy, Debug, PartialEq, GpuSoa)]
/// struct Body { position: float3_16_t, velocity: float3_16_t, mass: f32, kind: u8 }
///
/// let mut arena = Arena::host(1 << 16)?;
/// let mut bodies = arena.alloc_soa::<Body>(100)?;
/// arena.get_mut(&mut bodies.columns_mut().mass)?.fill(2.0); // one column, one instruction each
/// assert_eq!(arena.get(&bodies.columns().mass)?[99], 2.0);
/// assert_eq!(arena.offset(&bodies.columns().kind)? % 256, 0);
/// # Ok::<(), gpu_aligned::arena::ArenaError>(())
/// ```
///
/// A field that is not one GPU word (a `float3`, an array, a `bool`) is a
/// compile error that names the fix (`float3_16_t`, or one field per lane).
#[cfg(feature = "alloc")]
pub use gpu_aligned_derive::GpuSoa;

#[doc(hidden)]
pub mod __private;
