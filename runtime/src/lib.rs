#![doc = include_str!("../../README.md")]
#![no_std]
#![deny(missing_docs)]
#![deny(unsafe_op_in_unsafe_fn)]
#![deny(clippy::undocumented_unsafe_blocks, clippy::missing_safety_doc)]

#[cfg(feature = "alloc")]
extern crate alloc as alloc_crate;
#[cfg(feature = "std")]
extern crate std;

// Lets the derive's absolute `::gpu_aligned::...` paths resolve inside this crate too.
extern crate self as gpu_aligned;

#[cfg(feature = "alloc")]
pub mod alloc;
#[cfg(feature = "alloc")]
pub mod arena;
pub mod backend;
pub mod coalesce;
#[cfg(feature = "alloc")]
pub mod header;
mod layout;
pub mod report;
pub mod rules;
pub mod vector;

pub use layout::{GpuAligned, GpuData, GpuField, GpuLayout, GpuType, Scalar};

/// Derives [`GpuAligned`] (and `bytemuck::Pod` + `bytemuck::Zeroable`) after
/// checking, at compile time, that the type is a legal GPU element.
pub use gpu_aligned_derive::GpuAligned;

/// Rewrites a struct into a legal GPU element by adding explicit, zeroed
/// padding fields and raising its alignment.
pub use gpu_aligned_derive::padded;

#[doc(hidden)]
pub mod __private;
