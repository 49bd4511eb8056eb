//! CUDA's built-in vector types (`float4`, `int2`, `char3`, ...) with exactly CUDA's size and
//! alignment, so a Rust struct can hold the same fields a `.cu` struct does, plus the padded forms
//! from the CUDA alignment guide (`float3_16_t`, `int8_3_4_t`) that turn a 12- or 3-byte value into
//! one GPU word.
//!
//! The word-sized ones (1, 2, 4, 8 or 16 bytes, aligned to their size) are
//! [`GpuAligned`] elements. The others (`float3`, `char3`, ...) are legal
//! only as fields: an array of `float3` costs three loads per element.
#![allow(non_camel_case_types)]

use crate::layout::{GpuAligned, GpuData, GpuField, GpuLayout, GpuType, GpuWords, Scalar};
use core::mem::{align_of, offset_of, size_of};

/// The last line of a vector type's example: what the type may be used as.
macro_rules! vector_role {
    (word, $name:ident) => {
        concat!(
            "assert!(",
            stringify!($name),
            "::TYPE.is_one_word()); // an element: one load"
        )
    };
    (field, $name:ident) => {
        concat!(
            "assert!(!",
            stringify!($name),
            "::TYPE.is_one_word()); // a field: several loads"
        )
    };
}

macro_rules! vector_struct {
    ($role:ident, $name:ident, $lane:ident, $scalar:ident, $align:literal, $size:literal, [$($f:ident),+], $args:literal) => {
        #[doc = concat!(
            "CUDA's `", stringify!($name), "`: ", stringify!($size), " bytes, aligned to ",
            stringify!($align), "."
        )]
        #[doc = ""]
        #[doc = "```"]
        #[doc = concat!("use gpu_aligned::vector::", stringify!($name), ";")]
        #[doc = "use gpu_aligned::GpuData;"]
        #[doc = "use core::mem::{align_of, size_of};"]
        #[doc = ""]
        #[doc = concat!("let v = ", stringify!($name), "::new(", $args, ");")]
        #[doc = concat!("assert_eq!(gpu_aligned::bytemuck::bytes_of(&v).len(), ", stringify!($size), ");")]
        #[doc = concat!(
            "assert_eq!((size_of::<", stringify!($name), ">(), align_of::<", stringify!($name),
            ">()), (", stringify!($size), ", ", stringify!($align), "));"
        )]
        #[doc = vector_role!($role, $name)]
        #[doc = "```"]
        #[repr(C, align($align))]
        #[derive(Clone, Copy, Debug, Default, PartialEq)]
        pub struct $name {
            $(
                #[allow(missing_docs)]
                pub $f: $lane,
            )+
        }

        impl $name {
            #[doc = concat!(
                "Builds the vector from its lanes, like CUDA's `make_", stringify!($name), "`."
            )]
            #[allow(clippy::too_many_arguments)]
            pub const fn new($($f: $lane),+) -> Self {
                Self { $($f),+ }
            }
        }

        // SAFETY: every lane is a `Pod` scalar, and the assertion below checks that the lanes fill
        // the whole struct (no padding), so any bit pattern is valid and every byte is initialised.
        unsafe impl bytemuck::Zeroable for $name {}
        // SAFETY: as above; the struct is `repr(C)`, `Copy` and `'static`.
        unsafe impl bytemuck::Pod for $name {}

        // cudarc's `DeviceRepr` and `ValidAsZeroBits`, with the `cuda` feature.
        crate::__private::cuda_traits!($name);

        // SAFETY: `TYPE` records CUDA's size and alignment, asserted below to be
        // Rust's too; there is no padding.
        unsafe impl GpuData for $name {
            const TYPE: GpuType = GpuType::Vector {
                cuda_name: stringify!($name),
                lane: Scalar::$scalar,
                lanes: [$(stringify!($f)),+].len(),
                align: $align,
            };
        }

        const _: () = {
            assert!(size_of::<$name>() == $size, concat!("size of ", stringify!($name)));
            assert!(align_of::<$name>() == $align, concat!("align of ", stringify!($name)));
            assert!(
                size_of::<$lane>() * [$(stringify!($f)),+].len() == $size,
                concat!(stringify!($name), " has padding")
            );
            assert!(<$name as GpuData>::TYPE.size() == $size);
        };
    };
}

macro_rules! vector_word {
    ($name:ident, $lane:ident, $scalar:ident, $size:literal, [$($f:ident),+], $args:literal) => {
        vector_struct!(word, $name, $lane, $scalar, $size, $size, [$($f),+], $args);

        // SAFETY: size == align ∈ {2, 4, 8, 16} and no padding, asserted in
        // `vector_struct!`; `LAYOUT` lists every lane at its real offset.
        unsafe impl GpuAligned for $name {
            const LAYOUT: GpuLayout = GpuLayout::new(stringify!($name), $size, $size, 0, &[$(
                GpuField::new(stringify!($f), offset_of!($name, $f), size_of::<$lane>(),
                    align_of::<$lane>(), false, GpuType::Scalar(Scalar::$scalar))
            ),+]);
        }
        // SAFETY: an element (above).
        unsafe impl GpuWords for $name {
            const CHECKED: GpuLayout = <$name as GpuAligned>::LAYOUT;
        }
    };
}

// Word-sized: one load each.
vector_word!(char2, i8, I8, 2, [x, y], "1, 2");
vector_word!(uchar2, u8, U8, 2, [x, y], "1, 2");
vector_word!(char4, i8, I8, 4, [x, y, z, w], "1, 2, 3, 4");
vector_word!(uchar4, u8, U8, 4, [x, y, z, w], "1, 2, 3, 4");
vector_word!(short2, i16, I16, 4, [x, y], "1, 2");
vector_word!(ushort2, u16, U16, 4, [x, y], "1, 2");
vector_word!(short4, i16, I16, 8, [x, y, z, w], "1, 2, 3, 4");
vector_word!(ushort4, u16, U16, 8, [x, y, z, w], "1, 2, 3, 4");
vector_word!(int2, i32, I32, 8, [x, y], "1, 2");
vector_word!(uint2, u32, U32, 8, [x, y], "1, 2");
vector_word!(float2, f32, F32, 8, [x, y], "1.0, 2.0");
vector_word!(int4, i32, I32, 16, [x, y, z, w], "1, 2, 3, 4");
vector_word!(uint4, u32, U32, 16, [x, y, z, w], "1, 2, 3, 4");
vector_word!(float4, f32, F32, 16, [x, y, z, w], "1.0, 2.0, 3.0, 4.0");
vector_word!(longlong2, i64, I64, 16, [x, y], "1, 2");
vector_word!(ulonglong2, u64, U64, 16, [x, y], "1, 2");
vector_word!(double2, f64, F64, 16, [x, y], "1.0, 2.0");

// Not words: legal as fields, never as elements.
vector_struct!(field, char3, i8, I8, 1, 3, [x, y, z], "1, 2, 3");
vector_struct!(field, uchar3, u8, U8, 1, 3, [x, y, z], "1, 2, 3");
vector_struct!(field, short3, i16, I16, 2, 6, [x, y, z], "1, 2, 3");
vector_struct!(field, ushort3, u16, U16, 2, 6, [x, y, z], "1, 2, 3");
vector_struct!(field, int3, i32, I32, 4, 12, [x, y, z], "1, 2, 3");
vector_struct!(field, uint3, u32, U32, 4, 12, [x, y, z], "1, 2, 3");
vector_struct!(field, float3, f32, F32, 4, 12, [x, y, z], "1.0, 2.0, 3.0");
vector_struct!(field, longlong3, i64, I64, 8, 24, [x, y, z], "1, 2, 3");
vector_struct!(field, ulonglong3, u64, U64, 8, 24, [x, y, z], "1, 2, 3");
vector_struct!(field, double3, f64, F64, 8, 24, [x, y, z], "1.0, 2.0, 3.0");

/// CUDA's `struct __align__(16) float3_16_t { float x, y, z; }` from the alignment guide: a float3
/// that one `LDG.E.128` moves, at the price of 4 pad bytes (zeroed, and listed in its layout) per
/// element; `From` both ways with `float3`.
#[crate::padded(align = 16)]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct float3_16_t {
    /// First lane.
    pub x: f32,
    /// Second lane.
    pub y: f32,
    /// Third lane.
    pub z: f32,
}

/// CUDA's `struct __align__(4) int8_3_4_t { int8_t x, y, z; }` from the alignment guide: three
/// bytes that one 4-byte `LDG.E` moves, with one zeroed pad byte.
///
/// ```
/// use gpu_aligned::vector::{char3, int8_3_4_t};
/// use gpu_aligned::GpuAligned;
///
/// let v = int8_3_4_t::new(1, -1, 2);
/// assert_eq!((int8_3_4_t::LAYOUT.size, int8_3_4_t::LAYOUT.align), (4, 4));
/// assert_eq!(gpu_aligned::bytemuck::bytes_of(&v), &[1, 0xff, 2, 0]);
/// assert_eq!(char3::from(v), char3::new(1, -1, 2));
/// ```
#[crate::padded(align = 4)]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct int8_3_4_t {
    /// First lane.
    pub x: i8,
    /// Second lane.
    pub y: i8,
    /// Third lane.
    pub z: i8,
}

/// Each padded form converts from and to its CUDA vector, lane for lane.
macro_rules! padded_from {
    ($($vector:ident <-> $padded:ident),*) => {$(
        impl From<$vector> for $padded {
            fn from(v: $vector) -> Self {
                $padded::new(v.x, v.y, v.z)
            }
        }
        impl From<$padded> for $vector {
            fn from(v: $padded) -> Self {
                $vector::new(v.x, v.y, v.z)
            }
        }
    )*};
}

padded_from!(float3 <-> float3_16_t, char3 <-> int8_3_4_t);

const _: () = {
    assert!(size_of::<float3_16_t>() == 16 && align_of::<float3_16_t>() == 16);
    assert!(<float3_16_t as GpuAligned>::LAYOUT.padding == 4);
    assert!(size_of::<int8_3_4_t>() == 4 && align_of::<int8_3_4_t>() == 4);
    assert!(<int8_3_4_t as GpuAligned>::LAYOUT.padding == 1);
};
