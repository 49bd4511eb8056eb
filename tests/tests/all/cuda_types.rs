//! Layouts of real `repr(C)` Rust structs, measured with `size_of`,
//! `align_of` and `offset_of!` exactly as the derive measures them, for the
//! header, report and coalescing tests: one element per word size
//! (1, 2, 4, 8, 16), the `{f32; pad; f64}` shape, nesting, arrays, vector
//! fields, tuple and keyword field names, and a field-only (non-word) type.
#![allow(dead_code)]

use gpu_aligned::__private::{field, layout};
use gpu_aligned::vector::{double3, float2, float3, int2};
use gpu_aligned::{GpuData, GpuField, GpuLayout, GpuType};
use std::mem::{align_of, offset_of, size_of};

const fn padding_of(fields: &[GpuField]) -> usize {
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

const fn ty<T: GpuData>() -> GpuType {
    T::TYPE
}

/// The GPU-FACTS.md shape: nvcc loads it with two 8-byte loads unless made to
/// read one 16-byte word.
#[repr(C, align(16))]
#[derive(Clone, Copy)]
pub struct Mixed {
    pub x: f32,
    pub pad: [u8; 4],
    pub y: f64,
}
gpu_layout!(MIXED = Mixed { x: f32 => ty::<f32>(), false; pad: [u8; 4] => ty::<[u8; 4]>(), true; y: f64 => ty::<f64>(), false });

#[repr(C)]
#[derive(Clone, Copy)]
pub struct Byte {
    pub v: u8,
}
gpu_layout!(BYTE = Byte { v: u8 => ty::<u8>(), false });

#[repr(C, align(2))]
#[derive(Clone, Copy)]
pub struct Half {
    pub lo: u8,
    pub hi: i8,
}
gpu_layout!(HALF = Half { lo: u8 => ty::<u8>(), false; hi: i8 => ty::<i8>(), false });

#[repr(C, align(4))]
#[derive(Clone, Copy)]
pub struct Rgba {
    pub c: [u8; 4],
}
gpu_layout!(RGBA = Rgba { c: [u8; 4] => ty::<[u8; 4]>(), false });

#[repr(C, align(8))]
#[derive(Clone, Copy)]
pub struct Pair {
    pub id: u32,
    pub w: f32,
}
gpu_layout!(PAIR = Pair { id: u32 => ty::<u32>(), false; w: f32 => ty::<f32>(), false });

/// A struct field and a vector field.
#[repr(C, align(16))]
#[derive(Clone, Copy)]
pub struct Nested {
    pub pair: Pair,
    pub v: float2,
}
gpu_layout!(NESTED = Nested { pair: Pair => GpuType::Struct(&PAIR), false; v: float2 => ty::<float2>(), false });

/// A two-dimensional array field and a vector field.
#[repr(C, align(16))]
#[derive(Clone, Copy)]
pub struct Grid {
    pub m: [[u16; 2]; 2],
    pub k: int2,
}
gpu_layout!(GRID = Grid { m: [[u16; 2]; 2] => ty::<[[u16; 2]; 2]>(), false; k: int2 => ty::<int2>(), false });

/// An array of structs as a field.
#[repr(C, align(16))]
#[derive(Clone, Copy)]
pub struct Pairs {
    pub pairs: [Pair; 2],
}
gpu_layout!(PAIRS = Pairs { pairs: [Pair; 2] => GpuType::Array { elem: &GpuType::Struct(&PAIR), len: 2 }, false });

/// Tuple fields are `0`, `1`.
#[repr(C, align(8))]
#[derive(Clone, Copy)]
pub struct Tuple(pub f32, pub i32);
gpu_layout!(TUPLE = Tuple { 0: f32 => ty::<f32>(), false; 1: i32 => ty::<i32>(), false });

/// Field names that are C++ keywords.
#[repr(C, align(8))]
#[derive(Clone, Copy)]
pub struct Keywords {
    pub class: u32,
    pub float: f32,
}
gpu_layout!(KEYWORDS = Keywords { class: u32 => ty::<u32>(), false; float: f32 => ty::<f32>(), false });

#[repr(C, align(16))]
#[derive(Clone, Copy)]
pub struct Wide {
    pub v: u128,
}
gpu_layout!(WIDE = Wide { v: u128 => ty::<u128>(), false });

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
pub const ELEMENTS: [&GpuLayout; 10] = [
    &BYTE, &HALF, &RGBA, &PAIR, &TUPLE, &KEYWORDS, &MIXED, &NESTED, &GRID, &PAIRS,
];
