//! What the code of `#[derive(GpuAligned)]` and `#[gpu_aligned::padded]`
//! names, and nothing else: re-exports, and shims that turn
//! [`rules`](crate::rules) into compile errors. Not public API, no semver
//! guarantees. The rule itself and its message live in [`crate::rules`].
#![allow(missing_docs)]

pub use crate::layout::{AlignMarker, Fields, Width};
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

pub(crate) const fn str_eq(a: &str, b: &str) -> bool {
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

/// Stops compilation: `T` breaks the rule. The derive's spanned `blame_*`
/// calls come first and say where; this one makes the failure independent
/// of them.
#[track_caller]
pub const fn reject<T: GpuAligned>() {
    let message = rules::explain(&T::LAYOUT);
    if message.is_empty() {
        panic!("the type breaks the GPU layout rule: 1, 2, 4, 8 or 16 bytes, aligned to its size, no holes")
    }
    panic!("{}", message.as_str())
}

pub use crate::__gpu_aligned_cuda_traits as cuda_traits;
pub use crate::__gpu_aligned_derive as derive_impls;

/// Every impl `#[derive(GpuAligned)]` gives a struct, together with the
/// check that makes them sound; the derive's output is one invocation of
/// this, and nothing else it emits is `unsafe`.
///
/// Why the check and the impls cannot be separated: they are expanded
/// together, here, through `$crate` paths, which name this crate however the
/// user's crate names it. A crate that redirects the path the derive uses
/// (`extern crate self as gpu_aligned;`, or `crate = "..."`) reaches either
/// this macro, which checks, or a macro of its own, which has to spell out
/// `unsafe impl` itself. And this macro trusts nothing it is given: the
/// field list is proven to be the struct's (see `__fields` below), the sizes
/// come from `size_of`, and the blame calls only choose where the error
/// points, with [`reject`] after them failing the build regardless.
#[doc(hidden)]
#[macro_export]
macro_rules! __gpu_aligned_derive {
    (
        type: $ty:ident;
        name: $name:literal;
        count: $count:literal;
        fields: [$({ $member:tt: $fty:ty, $fname:literal, $padding:literal })*];
        blame: { $($blame:tt)* };
    ) => {
        #[doc(hidden)]
        #[allow(unused_qualifications, clippy::all)]
        const _: () = {
            // The rule, over the sizes the compiler computed: the only thing
            // evaluated for a legal type. Fields never overlap, so fields
            // covering `size` bytes leave no hole. The derive's blame calls,
            // spanned at what they blame, say where; `reject` fails anyway.
            if !$crate::rules::is_legal(
                $crate::__private::core::mem::size_of::<$ty>(),
                $crate::__private::core::mem::align_of::<$ty>(),
                0 $(+ $crate::__private::core::mem::size_of::<$fty>())*,
            ) {
                $($blame)*
                $crate::__private::reject::<$ty>();
            }

            // The field list above is the struct's own: the pattern names
            // every field exactly once (a missing or repeated field does not
            // compile), and each raw pointer has the field's exact type (raw
            // pointers never coerce through `Deref`). The binding's name is
            // one no user item has: a constant or unit struct in scope with
            // the same name would turn the parameter into a pattern. A union
            // matches a pattern naming one field, but never one with `..`:
            // its fields overlap, so one of them may leave bytes
            // uninitialised that the others cover.
            #[allow(dead_code, clippy::no_effect_underscore_binding)]
            fn __fields(__gpu_aligned_value: &$ty) {
                let $ty { $($member: _),* } = __gpu_aligned_value;
                let $ty { .. } = __gpu_aligned_value;
                $(
                    let _: *const $fty =
                        $crate::__private::core::ptr::addr_of!(__gpu_aligned_value.$member);
                )*
            }

            // Why the four impls below are sound: the check above holds, so
            // `$ty` is 1, 2, 4, 8 or 16 bytes, aligned to its size, and its
            // fields cover every byte; each field is `GpuData` (required by
            // `TYPE` in `LAYOUT`), hence `Pod`: any bit pattern, all zeroes
            // included, is a valid value of every field and so of `$ty`.
            // `LAYOUT` is built from `size_of`, `align_of` and `offset_of!`
            // of `$ty` itself.

            // SAFETY: `TYPE` is `$ty`'s own layout, and `$ty` has no padding
            // (see above).
            #[automatically_derived]
            unsafe impl $crate::GpuData for $ty {
                const TYPE: $crate::GpuType =
                    $crate::GpuType::Struct(&<$ty as $crate::GpuAligned>::LAYOUT);
            }

            // SAFETY: the four promises of `GpuAligned` (word size, aligned
            // to it, no holes, `LAYOUT` exact) are the check above.
            #[automatically_derived]
            unsafe impl $crate::GpuAligned for $ty {
                const LAYOUT: $crate::GpuLayout = {
                    let fields: &'static $crate::__private::Fields<$count> =
                        &const { $crate::__private::Fields::new([$(
                            $crate::GpuField::new(
                                $fname,
                                $crate::__private::core::mem::offset_of!($ty, $member),
                                $crate::__private::core::mem::size_of::<$fty>(),
                                $crate::__private::core::mem::align_of::<$fty>(),
                                $padding,
                                <$fty as $crate::GpuData>::TYPE,
                            )
                        ),*]) };
                    $crate::GpuLayout::new(
                        $name,
                        $crate::__private::core::mem::size_of::<$ty>(),
                        $crate::__private::core::mem::align_of::<$ty>(),
                        fields.padding(),
                        fields.sized(),
                    )
                };
            }

            // SAFETY: every field is `Pod`, so all zeroes is a valid `$ty`.
            #[automatically_derived]
            unsafe impl $crate::__private::bytemuck::Zeroable for $ty {}

            // SAFETY: no padding, every field `Pod`, `repr(C)` or
            // transparent; `Copy + 'static` the compiler checks.
            #[automatically_derived]
            unsafe impl $crate::__private::bytemuck::Pod for $ty {}

            $crate::__private::cuda_traits!($ty);
        };
    };
}

/// cudarc's `DeviceRepr` and `ValidAsZeroBits` for a GPU type, when this
/// crate is built with `cuda`; nothing otherwise. The derive cannot see this
/// crate's features, so it expands this macro, which was defined knowing
/// them.
#[cfg(feature = "cuda")]
#[doc(hidden)]
#[macro_export]
macro_rules! __gpu_aligned_cuda_traits {
    ($ty:ty) => {
        // SAFETY: `$ty` is `GpuData`, so `Pod`: `Copy`, no padding, every
        // bit pattern (all zeroes included) valid, so its bytes can be copied
        // to the device or passed as a kernel argument as they are, and a
        // zeroed allocation holds valid values. Its layout is `repr(C)` (or
        // transparent over such) and matches CUDA's, by the layout rules.
        unsafe impl $crate::__private::cudarc::driver::DeviceRepr for $ty {}
        // SAFETY: as above: all zeroes is a valid `$ty` (`Zeroable`).
        unsafe impl $crate::__private::cudarc::driver::ValidAsZeroBits for $ty {}
    };
}

/// Without the `cuda` feature there is no cudarc to implement traits of.
#[cfg(not(feature = "cuda"))]
#[doc(hidden)]
#[macro_export]
macro_rules! __gpu_aligned_cuda_traits {
    ($ty:ty) => {};
}
