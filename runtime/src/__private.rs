//! What the code of `#[derive(GpuAligned)]` and `#[gpu_aligned::padded]`
//! names, and nothing else: re-exports, and shims that turn
//! [`rules`](crate::rules) into compile errors. Not public API, no semver
//! guarantees. The rule itself and its message live in [`crate::rules`].
#![allow(missing_docs)]

pub use crate::layout::{AlignMarker, Fields, Width};
pub use crate::rules::{is_legal, pad_before, padded_width, tail_pad};
pub use bytemuck;
pub use core;
#[cfg(feature = "cuda")]
pub use cudarc;

use crate::layout::{GpuAligned, GpuField, GpuLayout, GpuType};
use crate::rules::{self, Blame};

/// [`GpuLayout::new`], under the name generated code and older tests use.
pub const fn layout(
    name: &'static str,
    size: usize,
    align: usize,
    padding: usize,
    fields: &'static [GpuField],
) -> GpuLayout {
    GpuLayout::new(name, size, align, padding, fields)
}

/// [`GpuField::new`], under the name generated code and older tests use.
pub const fn field(
    name: &'static str,
    offset: usize,
    size: usize,
    align: usize,
    is_padding: bool,
    ty: GpuType,
) -> GpuField {
    GpuField::new(name, offset, size, align, is_padding, ty)
}

/// A value whose every byte is zero, usable in `const fn`s (the constructors
/// `#[gpu_aligned::padded]` writes fill pad fields with it).
pub const fn zeroed<T: bytemuck::Zeroable>() -> T {
    // SAFETY: `Zeroable` promises that the all-zero bit pattern is a valid `T`.
    unsafe { core::mem::zeroed() }
}

/// Stops compilation with the rules' message if they blame field `name`
/// of `T`. `#[track_caller]`: the error points at the call, which the derive
/// spans at that field.
#[track_caller]
pub const fn blame_field<T: GpuAligned>(name: &str) {
    if let Blame::Field(field) = rules::blame(&T::LAYOUT) {
        if str_eq(field, name) {
            panic!("{}", rules::explain(&T::LAYOUT).as_str())
        }
    }
}

/// Stops compilation with the rules' message if they blame the alignment of
/// `T` (its `align(N)`, where the derive spans the call).
#[track_caller]
pub const fn blame_alignment<T: GpuAligned>() {
    if let Blame::Alignment = rules::blame(&T::LAYOUT) {
        panic!("{}", rules::explain(&T::LAYOUT).as_str())
    }
}

/// Stops compilation with the rules' message if `T` breaks any rule.
#[track_caller]
pub const fn blame_type<T: GpuAligned>() {
    if !matches!(rules::blame(&T::LAYOUT), Blame::Nothing) {
        panic!("{}", rules::explain(&T::LAYOUT).as_str())
    }
}

const fn str_eq(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}
