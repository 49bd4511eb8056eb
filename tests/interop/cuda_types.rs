//! Types for the header, report and coalescing tests: derived elements of
//! every word size (1, 2, 4, 8, 16), the `{f32; pad; f64}` shape padded by
//! hand and by `#[gpu_aligned::padded]`, nesting, arrays, vector fields,
//! tuple and keyword field names; and one field-only (non-word) struct whose
//! layout is measured with `size_of`, `align_of` and `offset_of!` the way the
//! derive measures, since the derive only accepts elements.
#![allow(dead_code)]

use crate::{field, layout};
use gpu_aligned::header::CudaHeader;
use gpu_aligned::vector::{double3, float2, float3, int2};
use gpu_aligned::{GpuAligned, GpuData, GpuField, GpuLayout, GpuType};
use std::mem::{align_of, offset_of, size_of};

pub const fn padding_of(fields: &[GpuField]) -> usize {
    let mut sum = 0;
    let mut i = 0;
    while i < fields.len() {
        if fields[i].is_padding {
            sum += fields[i].size;
        }
        i += 1;
    }
    sum
}

/// `const $LAYOUT: GpuLayout` of the struct `$ty`, one line per field:
/// `name: RustType => GpuType expression, is_padding`.
macro_rules! gpu_layout {
    ($layout:ident = $ty:ident { $($field:tt : $fty:ty => $gty:expr, $pad:literal);* $(;)? }) => {
        pub const $layout: GpuLayout = {
            const FIELDS: &[GpuField] = &[$(
                field(
                    stringify!($field),
                    offset_of!($ty, $field),
                    size_of::<$fty>(),
                    align_of::<$fty>(),
                    $pad,
                    $gty,
                )
            ),*];
            layout(stringify!($ty), size_of::<$ty>(), align_of::<$ty>(), padding_of(FIELDS), FIELDS)
        };
    };
}

pub const fn ty<T: GpuData>() -> GpuType {
    T::TYPE
}

/// A 16-aligned `{float; pad; double}`: on an H100 nvcc loads it with two
/// 8-byte loads unless made to read one 16-byte word.
#[derive(Clone, Copy, GpuAligned)]
#[repr(C, align(16))]
pub struct Mixed {
    pub x: f32,
    #[gpu_aligned(padding)]
    pub pad: u32,
    pub y: f64,
}
pub const MIXED: GpuLayout = Mixed::LAYOUT;

/// The same shape, padded by the attribute macro instead of by hand.
#[gpu_aligned::padded]
#[derive(Clone, Copy)]
pub struct FloatThenDouble {
    pub x: f32,
    pub y: f64,
}
pub const FLOAT_THEN_DOUBLE: GpuLayout = FloatThenDouble::LAYOUT;

/// A `float3` padded to one 16-byte word (CUDA's `float3_16_t`).
#[gpu_aligned::padded]
#[derive(Clone, Copy)]
pub struct Position {
    pub p: float3,
}
pub const POSITION: GpuLayout = Position::LAYOUT;

#[derive(Clone, Copy, GpuAligned)]
#[repr(C)]
pub struct Byte {
    pub v: u8,
}
pub const BYTE: GpuLayout = Byte::LAYOUT;

#[derive(Clone, Copy, GpuAligned)]
#[repr(C, align(2))]
pub struct Half {
    pub lo: u8,
    pub hi: i8,
}
pub const HALF: GpuLayout = Half::LAYOUT;

#[derive(Clone, Copy, GpuAligned)]
#[repr(C, align(4))]
pub struct Rgba {
    pub c: [u8; 4],
}
pub const RGBA: GpuLayout = Rgba::LAYOUT;

#[derive(Clone, Copy, GpuAligned)]
#[repr(C, align(8))]
pub struct Pair {
    pub id: u32,
    pub w: f32,
}
pub const PAIR: GpuLayout = Pair::LAYOUT;

/// A struct field and a vector field.
#[derive(Clone, Copy, GpuAligned)]
#[repr(C, align(16))]
pub struct Nested {
    pub pair: Pair,
    pub v: float2,
}
pub const NESTED: GpuLayout = Nested::LAYOUT;

/// A two-dimensional array field and a vector field.
#[derive(Clone, Copy, GpuAligned)]
#[repr(C, align(16))]
pub struct Grid {
    pub m: [[u16; 2]; 2],
    pub k: int2,
}
pub const GRID: GpuLayout = Grid::LAYOUT;

/// An array of structs as a field.
#[derive(Clone, Copy, GpuAligned)]
#[repr(C, align(16))]
pub struct Pairs {
    pub pairs: [Pair; 2],
}
pub const PAIRS: GpuLayout = Pairs::LAYOUT;

/// Tuple fields are `0`, `1`.
#[derive(Clone, Copy, GpuAligned)]
#[repr(C, align(8))]
pub struct Tuple(pub f32, pub i32);
pub const TUPLE: GpuLayout = Tuple::LAYOUT;

/// Field names that are C++ keywords.
#[derive(Clone, Copy, GpuAligned)]
#[repr(C, align(8))]
pub struct Keywords {
    pub class: u32,
    pub float: f32,
}
pub const KEYWORDS: GpuLayout = Keywords::LAYOUT;

#[derive(Clone, Copy, GpuAligned)]
#[repr(C)]
pub struct Wide {
    pub v: u128,
}
pub const WIDE: GpuLayout = Wide::LAYOUT;

/// Legal as a field, not as an element: 40 bytes, align 8.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct Frame {
    pub p: float3,
    pub m: f32,
    pub d: double3,
}
gpu_layout!(FRAME = Frame { p: float3 => ty::<float3>(), false; m: f32 => ty::<f32>(), false; d: double3 => ty::<double3>(), false });

/// Every element type above, smallest first.
pub const ELEMENTS: [&GpuLayout; 13] = [
    &BYTE,
    &HALF,
    &RGBA,
    &PAIR,
    &TUPLE,
    &KEYWORDS,
    &MIXED,
    &FLOAT_THEN_DOUBLE,
    &POSITION,
    &NESTED,
    &GRID,
    &PAIRS,
    &WIDE,
];

/// A header with every element type above, added the way users add them,
/// and the field-only `Frame`.
pub fn full_header() -> CudaHeader {
    let mut header = CudaHeader::new();
    header
        .add::<Byte>()
        .and_then(|h| h.add::<Half>())
        .and_then(|h| h.add::<Rgba>())
        .and_then(|h| h.add::<Pair>())
        .and_then(|h| h.add::<Tuple>())
        .and_then(|h| h.add::<Keywords>())
        .and_then(|h| h.add::<Mixed>())
        .and_then(|h| h.add::<FloatThenDouble>())
        .and_then(|h| h.add::<Position>())
        .and_then(|h| h.add::<Nested>())
        .and_then(|h| h.add::<Grid>())
        .and_then(|h| h.add::<Pairs>())
        .and_then(|h| h.add::<Wide>())
        .and_then(|h| h.add_layout(&FRAME, false))
        .expect("every test type is legal");
    header
}
