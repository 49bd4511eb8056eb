//! CUDA C++ declarations generated from Rust types, so a struct is written once. Each struct comes
//! out with its alignment as `__align__(N)`, its fields (padding included) and `static_assert`s of
//! its `sizeof`, `alignof` and offsets, so drift stops the CUDA build. Elements also get
//! `gpu_load`/`gpu_store`, which move a value in one instruction where nvcc would split a struct
//! copy per field; any struct can get
//! [views](#structure-of-arrays-and-array-of-structs-views-the-kernel-side). The `write_*`
//! functions need no `alloc`; [`CudaHeader`] collects types.
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
//! [`CudaHeader::add_soa`] (for a `#[derive(GpuSoa)]` type), [`CudaHeader::add_soa_layout`] and
//! [`write_views`] emit, for a struct `P`, three C++ structs with the same members, so one kernel
//! source runs over any of them:
//!
//! | view | storage | one element moves as |
//! |---|---|---|
//! | `P_soa` | one column per data field (what [`Arena::alloc_soa`](crate::arena::Arena::alloc_soa) carves) | one instruction per field |
//! | `P_aos` | the struct whole, `sizeof(P)` bytes apart | words of its alignment (at most 16 bytes) |
//! | `P_aos16` | the struct whole, in 16-aligned slots of `sizeof(P)` rounded up to 16 | 16-byte words |
//!
//! Each view has, in column order (padding fields are not members):
//!
//! - `v.field[i]`, a reference (`F&`) to that field of element `i`;
//! - `unsigned long long len`, the number of elements;
//! - `P load(unsigned long long i) const` and `void store(unsigned long long
//!   i, const P& v) const`, the whole element;
//! - `static unsigned long long bytes(unsigned long long len)`, and `static P_soa carve(void*
//!   buffer, unsigned long long len)` (columns as the arena lays them out) or `static P_aos
//!   over(void* elements, unsigned long long len)` to build a view in C++.
//!
//! A view is pointers and a length, passed by value; `Arena::soa_view` lends
//! a [`SoaView`](crate::soa::SoaView) to one launch. No index is checked. A
//! kernel templated on the view compiles for every layout:
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
//! Put the shared types in a file the crate and its `build.rs` both compile
//! (depend on `gpu-aligned` in both), and write the header into `OUT_DIR`:
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
//! The kernel then takes `include_str!(concat!(env!("OUT_DIR"),
//! "/gpu_types.cuh"))` (NVRTC) or `OUT_DIR` as an include path; the
//! `static_assert`s stop nvcc should the build machine's layouts differ.

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

/// Nesting deeper than this is refused, so cyclic hand-built layouts end.
const MAX_DEPTH: usize = 32;

#[cfg(feature = "alloc")]
mod builder;
#[cfg(feature = "alloc")]
pub use builder::CudaHeader;
