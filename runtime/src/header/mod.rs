//! CUDA C++ declarations generated from Rust types, so a struct is written
//! once and a `.cu` file `#include`s it instead of restating it. Each struct
//! comes out with its Rust alignment as `__align__(N)`, its fields in order
//! (padding included, as real members), nested structs declared first, and
//! `static_assert`s of its `sizeof`, `alignof` and every field's offset, so
//! any drift between the two sides stops the CUDA build instead of corrupting
//! data. Element types also get `gpu_load`/`gpu_store` overloads that move a
//! value with exactly one global-memory instruction: nvcc splits a struct
//! copy into per-field loads even when one wide load is legal
//! (`__align__(16) {float; pad; double}` becomes two `LDG.E.64`), while
//! reading one `uint4` word and reinterpreting it cannot be split. A struct
//! of any size can also get structure-of-arrays and array-of-structs views
//! with the same members, so one kernel source runs over either layout (see
//! [the views' members](#structure-of-arrays-and-array-of-structs-views-the-kernel-side)).
//!
//! The module is split by job: [`HeaderError`] and [`LayoutFault`] say why a
//! type cannot be declared, [`Member`] spells Rust names in C++ and knows the
//! names CUDA takes, and the `write_*` functions emit text into any
//! [`core::fmt::Write`], without `alloc`. [`CudaHeader`] (with `alloc`)
//! collects types and declares every struct after the structs it contains.
//!
//! ```
//! use gpu_aligned::header::CudaHeader;
//! use gpu_aligned::vector::float4;
//!
//! let mut header = CudaHeader::new();
//! header.add::<float4>()?; // a CUDA built-in: nothing to declare
//! assert!(header.render().contains("#pragma once"));
//! # Ok::<(), gpu_aligned::header::HeaderError>(())
//! ```
//!
//! # Structure-of-arrays and array-of-structs views: the kernel side
//!
//! [`CudaHeader::add_soa`] (for a `#[derive(GpuSoa)]` type),
//! [`CudaHeader::add_soa_layout`] and [`write_views`] emit, for a struct
//! `P`, three C++ structs with the same members, so one kernel source runs
//! over any of them:
//!
//! | view | storage | one element moves as |
//! |---|---|---|
//! | `P_soa` | one column per data field (what [`Arena::alloc_soa`](crate::arena::Arena::alloc_soa) carves) | one instruction per field |
//! | `P_aos` | the struct whole, `sizeof(P)` bytes apart | words of its alignment (at most 16 bytes) |
//! | `P_aos16` | the struct whole, in 16-aligned slots of `sizeof(P)` rounded up to 16 | 16-byte words |
//!
//! Each view has, in the column order (the fields' declaration order for a
//! `GpuSoa` type, else the layout's order of data fields; padding fields
//! are not members):
//!
//! - one member per data field, `v.field`, which indexes like an array:
//!   `v.field[i]` is a reference (`F&`) to that field of element `i`, so it
//!   reads (`float m = v.mass[i];`) and writes (`v.mass[i] = 0.0f;`) one
//!   field of one element;
//! - `unsigned long long len`, the number of elements;
//! - `P load(unsigned long long i) const`: the whole element `i` (every
//!   field, each with one instruction for `P_soa`, or the struct's words
//!   for the array-of-structs views);
//! - `void store(unsigned long long i, const P& v) const`: writes the whole
//!   element `i` the same way;
//! - `static unsigned long long bytes(unsigned long long len)`: the bytes
//!   `len` elements take in that layout; and to build a view on the C++
//!   side, `static P_soa carve(void* buffer, unsigned long long len)` (the
//!   columns laid out as the arena lays them out) or `static P_aos
//!   over(void* elements, unsigned long long len)` (and `P_aos16::over`).
//!
//! A view is pointers and a length, passed to a kernel by value. From Rust,
//! with the `cuda` feature, `Arena::soa_view` lends a structure of arrays'
//! `P_soa` (a [`SoaView`](crate::soa::SoaView), laid out as the header's
//! `static_assert`s check) to one launch and orders it. No index is
//! checked: test `i < v.len` as below. A kernel templated on the view (or
//! written against a typedef) compiles unchanged for every layout:
//!
//! ```cpp
//! #include "gpu_types.cuh" // header.render(), with Body added by add_soa
//!
//! template <class View>
//! __device__ void step(View v, float dt) {
//!     unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
//!     if (i >= v.len) return;
//!     Body b = v.load(i);          // the whole element
//!     b.x += b.vx * dt;
//!     v.store(i, b);               // written back whole
//!     v.vx[i] *= 0.99f;            // or one field of element i
//! }
//! extern "C" __global__ void step_soa(Body_soa v, float dt) { step(v, dt); }
//! extern "C" __global__ void step_aos16(Body_aos16 v, float dt) { step(v, dt); }
//! ```
//!
//! The header that example includes, from Rust:
//!
//! ```
//! use gpu_aligned::header::CudaHeader;
//!
//! #[derive(Clone, Copy, gpu_aligned::GpuSoa)]
//! struct Body { x: f32, vx: f32, id: u32 }
//!
//! let mut header = CudaHeader::new();
//! header.add_soa::<Body>()?;
//! let text = header.render();
//! for view in ["Body_soa", "Body_aos", "Body_aos16"] {
//!     assert!(text.contains(&format!("struct {view} {{")));
//! }
//! assert!(text.contains("Body load(unsigned long long i) const"));
//! assert!(text.contains("void store(unsigned long long i, const Body& v) const"));
//! assert!(text.contains("gpu_aligned_column<float, 4> vx;"));
//! # Ok::<(), gpu_aligned::header::HeaderError>(())
//! ```
//!
//! # From a build script
//!
//! Written by `build.rs`, the header follows the Rust types: put the shared
//! types in a file that the crate and its build script both compile, depend
//! on `gpu-aligned` twice (`[dependencies]` and `[build-dependencies]`), and
//! write the header into `OUT_DIR` (or any path the `.cu` side includes):
//!
//! ```rust,ignore
//! // build.rs: writes the CUDA header of the types in src/gpu_types.rs, which
//! // the crate and this script both compile, so the .cu side is regenerated
//! // whenever the Rust types change.
//! #[path = "src/gpu_types.rs"]
//! mod gpu_types;
//!
//! use gpu_aligned::header::CudaHeader;
//!
//! fn main() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
//!     println!("cargo:rerun-if-changed=src/gpu_types.rs");
//!     let mut header = CudaHeader::new();
//!     header.add::<gpu_types::Particle>()?.add_soa::<gpu_types::Body>()?;
//!     let out = std::path::Path::new(&std::env::var("OUT_DIR")?).join("gpu_types.cuh");
//!     std::fs::write(out, header.render())?;
//!     Ok(())
//! }
//! ```
//!
//! The crate then declares `mod gpu_types;` and hands a kernel the header as
//! `include_str!(concat!(env!("OUT_DIR"), "/gpu_types.cuh"))` (NVRTC), or
//! gives nvcc `OUT_DIR` as an include path. (The repository's CI builds this
//! recipe as a crate of its own.) The script runs on the build machine, so
//! its layouts are the target's when both are the same architecture; the
//! header's `static_assert`s stop nvcc if they ever differ from what the
//! device compiler lays out.

mod check;
mod checked;
mod emit;
mod error;
mod names;
mod views;

pub use checked::{write_array_preamble, write_checked_accessors};
pub use emit::{write_accessors, write_preamble, write_struct};
pub use error::{HeaderError, LayoutFault};
#[cfg(feature = "alloc")]
pub use names::member_name;
pub use names::Member;
pub use views::write_views;

/// Nesting deeper than this is refused: real types nest a few levels, and
/// hand-built layouts that refer to each other in a cycle must not recurse
/// forever.
const MAX_DEPTH: usize = 32;

#[cfg(feature = "alloc")]
mod builder;
#[cfg(feature = "alloc")]
pub use builder::CudaHeader;
