//! CUDA's built-in vector types (`float4`, `int2`, `char3`, ...) with exactly
//! CUDA's size and alignment, so a Rust struct can hold the same fields a
//! `.cu` struct does, plus the padded forms from the CUDA alignment guide
//! (`float3_16_t`, `int8_3_4_t`) that turn a 12- or 3-byte value into one
//! GPU word.
//!
//! The word-sized ones (1, 2, 4, 8 or 16 bytes, aligned to their size) are
//! [`GpuAligned`] elements. The others (`char3` 3/1,
//! `short3` 6/2, `int3`/`float3` 12/4, `double3` 24/8, ...) are legal only as
//! fields: an array of `float3` costs three loads per element.
#![allow(non_camel_case_types)]

use crate::layout::{GpuAligned, GpuData, GpuField, GpuLayout, GpuType, GpuWords, Scalar};
use core::mem::{align_of, offset_of, size_of};

/// The value of a lane in the examples: x = 1, y = 2, z = 3, w = 4.
macro_rules! lane_value {
    (x) => {
        "1"
    };
    (y) => {
        "2"
    };
    (z) => {
        "3"
    };
    (w) => {
        "4"
    };
}

/// What makes an integer literal a float literal of the lane type.
macro_rules! float_suffix {
    (f32) => {
        ".0"
    };
    (f64) => {
        ".0"
    };
    ($other:ident) => {
        ""
    };
}

/// The arguments of `new` in the examples: `1.0, 2.0, 3.0`.
macro_rules! lane_args {
    ($lane:ident; $f:ident) => { concat!(lane_value!($f), float_suffix!($lane)) };
    ($lane:ident; $f:ident, $($rest:ident),+) => {
        concat!(lane_value!($f), float_suffix!($lane), ", ", lane_args!($lane; $($rest),+))
    };
}

/// The same lanes as a struct literal in the examples: `x: 1.0, y: 2.0`.
macro_rules! lane_fields {
    ($lane:ident; $f:ident) => {
        concat!(stringify!($f), ": ", lane_value!($f), float_suffix!($lane))
    };
    ($lane:ident; $f:ident, $($rest:ident),+) => {
        concat!(lane_fields!($lane; $f), ", ", lane_fields!($lane; $($rest),+))
    };
}

/// What the last line of a vector type's example needs.
macro_rules! vector_role_use {
    (word) => {
        "use gpu_aligned::GpuAligned;"
    };
    (field) => {
        "use gpu_aligned::rules::is_word_size;"
    };
}

/// The last line of a vector type's example: what the type may be used as.
macro_rules! vector_role {
    (word, $name:ident) => {
        concat!(
            "assert!(",
            stringify!($name),
            "::LAYOUT.is_one_word()); ",
            "// an element: one instruction moves it"
        )
    };
    (field, $name:ident) => {
        concat!(
            "// Legal as a field of an element, but not an element itself (several loads each):\n",
            "assert!(!is_word_size(size_of::<",
            stringify!($name),
            ">()));"
        )
    };
}

macro_rules! vector_struct {
    ($role:ident, $name:ident, $lane:ident, $scalar:ident, $align:literal, $size:literal, [$($f:ident),+]) => {
        #[doc = concat!(
            "CUDA's `", stringify!($name), "`: ", stringify!($size), " bytes, aligned to ",
            stringify!($align), "."
        )]
        #[doc = ""]
        #[doc = "```"]
        #[doc = concat!("use gpu_aligned::vector::", stringify!($name), ";")]
        #[doc = vector_role_use!($role)]
        #[doc = "use core::mem::{align_of, size_of};"]
        #[doc = ""]
        #[doc = concat!("let v = ", stringify!($name), "::new(", lane_args!($lane; $($f),+), ");")]
        #[doc = concat!("assert_eq!(v.x, 1", float_suffix!($lane), ");")]
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
            #[doc = ""]
            #[doc = "```"]
            #[doc = concat!("use gpu_aligned::vector::", stringify!($name), ";")]
            #[doc = ""]
            #[doc = concat!(
                "assert_eq!(", stringify!($name), "::new(", lane_args!($lane; $($f),+), "), ",
                stringify!($name), " { ", lane_fields!($lane; $($f),+), " });"
            )]
            #[doc = "```"]
            #[allow(clippy::too_many_arguments)]
            pub const fn new($($f: $lane),+) -> Self {
                Self { $($f),+ }
            }
        }

        // SAFETY: every lane is a `Pod` scalar, and the assertion below checks
        // that the lanes fill the whole struct (no padding), so any bit pattern
        // is valid and every byte is initialised.
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
    ($name:ident, $lane:ident, $scalar:ident, $size:literal, [$($f:ident),+]) => {
        vector_struct!(word, $name, $lane, $scalar, $size, $size, [$($f),+]);

        // SAFETY: size == align ∈ {2, 4, 8, 16} and no padding, asserted in
        // `vector_struct!`; `LAYOUT` lists every lane at its real offset.
        unsafe impl GpuAligned for $name {
            const LAYOUT: GpuLayout = GpuLayout {
                name: stringify!($name),
                size: size_of::<$name>(),
                align: align_of::<$name>(),
                padding: 0,
                fields: &[$(
                    GpuField {
                        name: stringify!($f),
                        offset: offset_of!($name, $f),
                        size: size_of::<$lane>(),
                        align: align_of::<$lane>(),
                        is_padding: false,
                        ty: GpuType::Scalar(Scalar::$scalar),
                    }
                ),+],
            };
        }
        // SAFETY: an element (above).
        unsafe impl GpuWords for $name {
            const CHECKED: GpuLayout = <$name as GpuAligned>::LAYOUT;
        }
    };
}

// Word-sized: one load each.
vector_word!(char2, i8, I8, 2, [x, y]);
vector_word!(uchar2, u8, U8, 2, [x, y]);
vector_word!(char4, i8, I8, 4, [x, y, z, w]);
vector_word!(uchar4, u8, U8, 4, [x, y, z, w]);
vector_word!(short2, i16, I16, 4, [x, y]);
vector_word!(ushort2, u16, U16, 4, [x, y]);
vector_word!(short4, i16, I16, 8, [x, y, z, w]);
vector_word!(ushort4, u16, U16, 8, [x, y, z, w]);
vector_word!(int2, i32, I32, 8, [x, y]);
vector_word!(uint2, u32, U32, 8, [x, y]);
vector_word!(float2, f32, F32, 8, [x, y]);
vector_word!(int4, i32, I32, 16, [x, y, z, w]);
vector_word!(uint4, u32, U32, 16, [x, y, z, w]);
vector_word!(float4, f32, F32, 16, [x, y, z, w]);
vector_word!(longlong2, i64, I64, 16, [x, y]);
vector_word!(ulonglong2, u64, U64, 16, [x, y]);
vector_word!(double2, f64, F64, 16, [x, y]);

// Not words: legal as fields, never as elements.
vector_struct!(field, char3, i8, I8, 1, 3, [x, y, z]);
vector_struct!(field, uchar3, u8, U8, 1, 3, [x, y, z]);
vector_struct!(field, short3, i16, I16, 2, 6, [x, y, z]);
vector_struct!(field, ushort3, u16, U16, 2, 6, [x, y, z]);
vector_struct!(field, int3, i32, I32, 4, 12, [x, y, z]);
vector_struct!(field, uint3, u32, U32, 4, 12, [x, y, z]);
vector_struct!(field, float3, f32, F32, 4, 12, [x, y, z]);
vector_struct!(field, longlong3, i64, I64, 8, 24, [x, y, z]);
vector_struct!(field, ulonglong3, u64, U64, 8, 24, [x, y, z]);
vector_struct!(field, double3, f64, F64, 8, 24, [x, y, z]);

/// CUDA's `struct __align__(16) float3_16_t { float x, y, z; }` from the
/// alignment guide: a float3 that one `LDG.E.128` moves, at the price of 4
/// pad bytes (zeroed, and listed in its layout) per element.
///
/// ```
/// use gpu_aligned::vector::{float3, float3_16_t};
/// use gpu_aligned::GpuAligned;
///
/// let v = float3_16_t::from(float3::new(1.0, 2.0, 3.0));
/// assert_eq!((float3_16_t::LAYOUT.size, float3_16_t::LAYOUT.padding), (16, 4));
/// assert_eq!(&gpu_aligned::bytemuck::bytes_of(&v)[12..], &[0; 4]);
/// assert_eq!(float3::from(v), float3::new(1.0, 2.0, 3.0));
/// ```
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

/// CUDA's `struct __align__(4) int8_3_4_t { int8_t x, y, z; }` from the
/// alignment guide: three bytes that one 4-byte `LDG.E` moves, with one
/// zeroed pad byte.
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

impl From<float3> for float3_16_t {
    fn from(v: float3) -> Self {
        float3_16_t::new(v.x, v.y, v.z)
    }
}

impl From<float3_16_t> for float3 {
    fn from(v: float3_16_t) -> Self {
        float3::new(v.x, v.y, v.z)
    }
}

impl From<char3> for int8_3_4_t {
    fn from(v: char3) -> Self {
        int8_3_4_t::new(v.x, v.y, v.z)
    }
}

impl From<int8_3_4_t> for char3 {
    fn from(v: int8_3_4_t) -> Self {
        char3::new(v.x, v.y, v.z)
    }
}

const _: () = {
    assert!(size_of::<float3_16_t>() == 16 && align_of::<float3_16_t>() == 16);
    assert!(<float3_16_t as GpuAligned>::LAYOUT.padding == 4);
    assert!(size_of::<int8_3_4_t>() == 4 && align_of::<int8_3_4_t>() == 4);
    assert!(<int8_3_4_t as GpuAligned>::LAYOUT.padding == 1);
};
