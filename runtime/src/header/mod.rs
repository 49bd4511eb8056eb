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
//! with the same members, so one kernel source runs over either layout
//! ([`write_views`]).
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
