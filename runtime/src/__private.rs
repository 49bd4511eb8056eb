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

use crate::layout::{GpuData, GpuField, GpuLayout, GpuType};
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

/// The layout a derived struct's checks read: names, offsets, sizes and
/// alignments, without the fields' types. The derive's macro implements it
/// for a local marker type, so the size, alignment and hole checks report
/// even when a field's type is not `GpuData` (reported on its own) or the
/// struct is not `Copy`: every fault in one compile. Only read when a check
/// fails (see [`blame_type`]).
pub trait Shape {
    /// The struct's layout; each field typed as bytes of its size.
    const LAYOUT: GpuLayout;
}

/// A field of a [`Shape`]: the messages of [`rules`] read its name, offset,
/// size and alignment, never its type, which is given as bytes.
pub const fn shape_field(
    name: &'static str,
    offset: usize,
    size: usize,
    align: usize,
    is_padding: bool,
) -> GpuField {
    const BYTE: GpuType = GpuType::Scalar(crate::Scalar::U8);
    GpuField::new(
        name,
        offset,
        size,
        align,
        is_padding,
        GpuType::Array {
            elem: &BYTE,
            len: size,
        },
    )
}

/// The fields of a [`Shape`] laid out as C lays out `shapes` (`(size,
/// align)` per field), named as in `names` (with whether each is padding).
pub const fn c_fields<const N: usize>(
    shapes: &[(usize, usize)],
    names: [(&'static str, bool); N],
) -> [GpuField; N] {
    let mut fields = [shape_field("", 0, 0, 1, false); N];
    let mut i = 0;
    while i < N && i < shapes.len() {
        let (size, align) = shapes[i];
        fields[i] = shape_field(
            names[i].0,
            rules::repr_c_offset(shapes, i),
            size,
            align,
            names[i].1,
        );
        i += 1;
    }
    fields
}

/// Stops compilation with the rules' message if they blame field `name`
/// of the struct `S` describes. `#[track_caller]`: the error points at the
/// call, which the derive spans at that field.
#[track_caller]
pub const fn blame_field<S: Shape>(name: &str) {
    if let Blame::Field(field) = rules::blame(&S::LAYOUT) {
        if str_eq(field, name) {
            panic!("{}", rules::explain(&S::LAYOUT).as_str())
        }
    }
}

/// Stops compilation with the rules' message if they blame the alignment
/// (its `align(N)`, where the derive spans the call).
#[track_caller]
pub const fn blame_alignment<S: Shape>() {
    if let Blame::Alignment = rules::blame(&S::LAYOUT) {
        panic!("{}", rules::explain(&S::LAYOUT).as_str())
    }
}

/// Stops compilation with the rules' message if the layout breaks any rule.
#[track_caller]
pub const fn blame_type<S: Shape>() {
    if !matches!(rules::blame(&S::LAYOUT), Blame::Nothing) {
        panic!("{}", rules::explain(&S::LAYOUT).as_str())
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

/// Stops compilation: the layout breaks the rule. The derive's spanned
/// `blame_*` calls come first and say where; this one makes the failure
/// independent of them.
#[track_caller]
pub const fn reject<S: Shape>() {
    let message = rules::explain(&S::LAYOUT);
    if message.is_empty() {
        panic!("the type breaks the GPU layout rule: 1, 2, 4, 8 or 16 bytes, aligned to its size, no holes")
    }
    panic!("{}", message.as_str())
}

/// Stops compilation: the compiler did not lay the struct out as C lays
/// out its field list (`fields`: `(offset, size, align)` per field, as the
/// compiler computed them).
#[track_caller]
pub const fn not_repr_c(
    name: &str,
    names: &[&str],
    fields: &[(usize, usize, usize)],
    size: usize,
    align: usize,
) {
    if let Some(index) = rules::repr_c_mismatch(size, align, fields) {
        panic!(
            "{}",
            rules::message::not_repr_c(name, names, fields, size, align, index).as_str()
        )
    }
}

/// What `T: Copy` adds to a derived struct's impls, said once: the derive
/// asks for it with this trait so that a missing `#[derive(Clone, Copy)]`
/// is one error that names the fix, not one per impl.
#[diagnostic::on_unimplemented(
    message = "`{Self}` must derive `Clone, Copy` to be a GPU element",
    label = "add `#[derive(Clone, Copy)]` to this struct",
    note = "GPU elements are copied byte for byte between host and device (`bytemuck::Pod` requires `Copy`)"
)]
pub trait DerivesCopy {}
impl<T: Copy> DerivesCopy for T {}

/// Fails to compile, with [`DerivesCopy`]'s message, unless `T: Copy`.
pub const fn derives_copy<T: DerivesCopy>() {}

/// Fails to compile unless `T` is [`GpuData`]; the derive spans the call
/// at the field's type.
pub const fn gpu_data<T: GpuData>() {}

pub use crate::__gpu_aligned_cuda_traits as cuda_traits;
pub use crate::__gpu_aligned_derive as derive_impls;

/// Every impl `#[derive(GpuAligned)]` gives a struct, together with the
/// checks that make them sound; the derive's output is one invocation of
/// this, and nothing else it emits is `unsafe`.
///
/// Why the checks and the impls cannot be separated: they are expanded
/// together, here, through `$crate` paths, which name this crate however the
/// user's crate names it. A crate that redirects the path the derive uses
/// (`extern crate self as gpu_aligned;`, or `crate = "..."`) reaches either
/// this macro, which checks, or a macro of its own, which has to spell out
/// `unsafe impl` itself. And this macro trusts nothing it is given: the
/// field list is proven to be the struct's (see `__fields` below), the
/// offsets, sizes and alignments come from `offset_of!`, `size_of` and
/// `align_of`, and the blame calls only choose where the error points, with
/// [`reject`] after them failing the build regardless.
///
/// The first check is the layout itself: whatever `#[repr]` the derive saw
/// (an attribute macro after it may rewrite the struct, and this macro can
/// be called by hand), the impls exist only if the compiler laid the struct
/// out exactly as C lays out its field list ([`rules::is_repr_c`]), which is
/// the layout CUDA code, the header and `bytemuck` assume.
///
/// The second arm, `checks_only`, is what the derive emits next to a
/// rejected `#[repr]`: no impls (there is no layout to trust), but the rule
/// checked on the C layout of the field list, each field checked as
/// `GpuData`, and `Copy` checked, so that every fault of the struct is
/// reported in the same compile.
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
            // The compiler's layout, checked first against C's, then
            // against the rule. Only these sums and comparisons are
            // evaluated for a legal type; the messages are built (from
            // `__GpuAlignedShape`, inside the generic `blame_*` functions)
            // only on failure.
            let fields: &[(
                $crate::__private::core::primitive::usize,
                $crate::__private::core::primitive::usize,
                $crate::__private::core::primitive::usize,
            )] = &[$((
                $crate::__private::core::mem::offset_of!($ty, $member),
                $crate::__private::core::mem::size_of::<$fty>(),
                $crate::__private::core::mem::align_of::<$fty>(),
            )),*];
            let size = $crate::__private::core::mem::size_of::<$ty>();
            let align = $crate::__private::core::mem::align_of::<$ty>();
            if !$crate::rules::is_repr_c(size, align, fields) {
                $crate::__private::not_repr_c($name, &[$($fname),*], fields, size, align);
            } else if !$crate::rules::is_legal(
                size,
                align,
                0 $(+ $crate::__private::core::mem::size_of::<$fty>())*,
            ) {
                $($blame)*
                $crate::__private::reject::<__GpuAlignedShape>();
            }

            #[doc(hidden)]
            struct __GpuAlignedShape;
            impl $crate::__private::Shape for __GpuAlignedShape {
                const LAYOUT: $crate::GpuLayout = {
                    let fields: &'static $crate::__private::Fields<$count> =
                        &const { $crate::__private::Fields::new([$(
                            $crate::__private::shape_field(
                                $fname,
                                $crate::__private::core::mem::offset_of!($ty, $member),
                                $crate::__private::core::mem::size_of::<$fty>(),
                                $crate::__private::core::mem::align_of::<$fty>(),
                                $padding,
                            )
                        ),*]) };
                    $crate::GpuLayout::new(
                        $name,
                        $crate::__private::core::mem::size_of::<$ty>(),
                        $crate::__private::core::mem::align_of::<$ty>(),
                        0,
                        fields.sized(),
                    )
                };
            }

            // One error, naming the fix, for a struct that is not `Copy`;
            // the impls below are conditional on it, so they add none.
            #[allow(dead_code)]
            fn __copy() {
                $crate::__private::derives_copy::<$ty>();
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

            // Why the four impls below are sound: the checks above hold, so
            // `$ty` is laid out as C lays out its fields, is 1, 2, 4, 8 or
            // 16 bytes, aligned to its size, and its fields cover every
            // byte; each field is `GpuData` (required by `TYPE` in
            // `LAYOUT`), hence `Pod`: any bit pattern, all zeroes included,
            // is a valid value of every field and so of `$ty`. `LAYOUT` is
            // built from `size_of`, `align_of` and `offset_of!` of `$ty`
            // itself.
            //
            // Each impl holds where `$ty: Copy` (bound under `for<'a>` so
            // that it is not a trivial bound, which would be an error of its
            // own): without `Copy` the impls do not apply, and `__copy`
            // above is the one error.

            // SAFETY: `TYPE` is `$ty`'s own layout, and `$ty` has no padding
            // (see above).
            #[automatically_derived]
            unsafe impl $crate::GpuData for $ty
            where
                for<'__a> $ty: $crate::__private::core::marker::Copy,
            {
                const TYPE: $crate::GpuType =
                    $crate::GpuType::Struct(&<$ty as $crate::GpuAligned>::LAYOUT);
            }

            // SAFETY: the four promises of `GpuAligned` (word size, aligned
            // to it, no holes, `LAYOUT` exact) are the checks above.
            #[automatically_derived]
            unsafe impl $crate::GpuAligned for $ty
            where
                for<'__a> $ty: $crate::__private::core::marker::Copy,
            {
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
            unsafe impl $crate::__private::bytemuck::Zeroable for $ty
            where
                for<'__a> $ty: $crate::__private::core::marker::Copy,
            {
            }

            // SAFETY: no padding, every field `Pod`, laid out as C lays out
            // its fields; `Copy + 'static` hold (the bound, and a
            // non-generic struct).
            #[automatically_derived]
            unsafe impl $crate::__private::bytemuck::Pod for $ty
            where
                for<'__a> $ty: $crate::__private::core::marker::Copy,
            {
            }

            $crate::__private::cuda_traits!($ty);
        };
    };
    (
        checks_only;
        type: $ty:ident;
        name: $name:literal;
        count: $count:literal;
        align: $align:literal;
        fields: [$({ $member:tt: $fty:ty, $fname:literal, $padding:literal })*];
        blame: { $($blame:tt)* };
    ) => {
        #[doc(hidden)]
        #[allow(unused_qualifications, clippy::all)]
        const _: () = {
            // The rule, over the layout C gives the field list (with the
            // `align(N)` written, if any): what the struct will be once its
            // `#[repr]` is fixed.
            let shapes: &[(
                $crate::__private::core::primitive::usize,
                $crate::__private::core::primitive::usize,
            )] = &[$((
                $crate::__private::core::mem::size_of::<$fty>(),
                $crate::__private::core::mem::align_of::<$fty>(),
            )),*];
            let (size, align) = $crate::rules::repr_c_size(shapes, $align);
            if !$crate::rules::is_legal(size, align, 0 $(+ $crate::__private::core::mem::size_of::<$fty>())*) {
                $($blame)*
                $crate::__private::reject::<__GpuAlignedShape>();
            }

            #[doc(hidden)]
            struct __GpuAlignedShape;
            impl $crate::__private::Shape for __GpuAlignedShape {
                const LAYOUT: $crate::GpuLayout = {
                    const SHAPES: &[(
                        $crate::__private::core::primitive::usize,
                        $crate::__private::core::primitive::usize,
                    )] = &[$((
                        $crate::__private::core::mem::size_of::<$fty>(),
                        $crate::__private::core::mem::align_of::<$fty>(),
                    )),*];
                    let fields: &'static $crate::__private::Fields<$count> =
                        &const { $crate::__private::Fields::new($crate::__private::c_fields(
                            SHAPES,
                            [$(($fname, $padding)),*],
                        )) };
                    let (size, align) = $crate::rules::repr_c_size(SHAPES, $align);
                    $crate::GpuLayout::new($name, size, align, 0, fields.sized())
                };
            }

            #[allow(dead_code)]
            fn __copy() {
                $crate::__private::derives_copy::<$ty>();
            }

            #[allow(dead_code)]
            fn __field_types() {
                $(let _: $crate::GpuType = <$fty as $crate::GpuData>::TYPE;)*
            }
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
