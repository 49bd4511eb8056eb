//! What the code of `#[derive(GpuAligned)]` and `#[gpu_aligned::padded]` names, and nothing else:
//! re-exports, and shims that turn [`rules`](crate::rules) into compile errors. Not public API, no
//! semver guarantees. The rule itself and its message live in [`crate::rules`].
//!
//! **The rule for the exported macros that write an `unsafe impl`** (here: `__gpu_aligned_derive!`
//! and `__gpu_aligned_cuda_traits!`; in [`soa::derive`](crate::soa::derive): `__gpu_soa_derive!`).
//! Safe code can call them by hand, and `#![forbid(unsafe_code)]` does not see their `unsafe`,
//! which is theirs. So each takes identifiers, literals and types only, never token trees or a
//! `where` list pasted between its `unsafe impl` and the trait (a `{}` or `#[cfg(any())]` in them
//! would hand the macro's `unsafe` to the caller's own impl), and proves every claim its impls make
//! with code the compiler checks (`offset_of!`, `size_of`, a struct literal that names every field)
//! or bounds them on a trait the caller cannot forge (`GpuData`). Each has ui-tests that call it by
//! hand with forged input (`ui-tests/ui/*hidden-macro*`, `ui-tests/ui-cuda/`).
#![allow(missing_docs)]

// One file per job, re-exported here at the paths the generated code names.
mod bounds;
mod checks;
mod derived;
mod macros;

pub use bounds::{
    derives_copy, facts, field_of, is_element, layout_of, type_of, DerivesCopy, Element,
};
pub use checks::{
    blame_alignment, blame_alignment_in, blame_field, blame_field_in, blame_hole, blame_hole_in,
    blame_size, blame_type, blame_type_in, c_fields, c_layout, checked_layout,
    generic_has_no_padding, not_repr_c_in, reject, reject_holes, reject_holes_in, reject_in, Shape,
};
pub use derived::{kind, Derived};

pub use crate::layout::{AlignMarker, Fields, Width};
pub use crate::rules::repr_c::{pad_before, padded_width, repr_c_offset, repr_c_size, tail_pad};
pub use bytemuck;
pub use core;
// Shorter paths for the derive's code: a path's every segment is resolved
// again for each of a thousand structs.
pub use core::mem::{align_of, offset_of, size_of};

/// A value of any type, for the derive's proof that a field list is the
/// struct's own, which type-checks expressions built from it and never runs.
pub const fn never<T>() -> T {
    panic!("the derive's field-list proof is never run")
}
#[cfg(feature = "cuda")]
pub use cudarc;

/// A value whose every byte is zero, usable in `const fn`s (the constructors
/// `#[gpu_aligned::padded]` writes fill pad fields with it).
pub const fn zeroed<T: bytemuck::Zeroable>() -> T {
    // SAFETY: `Zeroable` promises that the all-zero bit pattern is a valid `T`.
    unsafe { core::mem::zeroed() }
}

pub use crate::__gpu_aligned_cuda_traits as cuda_traits;
pub use crate::__gpu_aligned_derive as derive_impls;
