//! The structs the tests store as structures of arrays: one Rust reorders
//! (vector, struct, 16-byte and smaller fields), one field alone, only
//! bytes; and random elements of the first.

use gpu_aligned::vector::{float2, float4};
use gpu_aligned::GpuAligned;

use crate::support::Rng;

/// A word-sized element used as a field.
#[derive(Clone, Copy, Debug, PartialEq, GpuAligned)]
#[repr(C, align(8))]
pub struct Pair {
    pub lo: u32,
    pub hi: u32,
}

/// Vector, struct, 16-byte, 8, 4, 2 and 1-byte fields, declared small to
/// large so Rust reorders them (no `repr`).
#[derive(Clone, Copy, Debug, PartialEq, gpu_aligned::GpuSoa)]
pub struct Particle {
    pub kind: u8,
    pub charge: i16,
    pub mass: f32,
    pub id: u64,
    pub velocity: float2,
    pub pair: Pair,
    pub position: float4,
    pub big: u128,
}

/// One field.
#[derive(Clone, Copy, Debug, PartialEq, gpu_aligned::GpuSoa)]
pub struct Scalar {
    pub value: f64,
}

/// Only bytes.
#[derive(Clone, Copy, Debug, PartialEq, gpu_aligned::GpuSoa)]
#[repr(C)]
pub struct Bytes {
    pub a: u8,
    pub b: i8,
    pub c: u8,
}

/// A particle of random fields (floats exact on the CPU and the GPU).
pub fn particle(rng: &mut Rng) -> Particle {
    Particle {
        kind: rng.u32() as u8,
        charge: rng.u32() as i16,
        mass: rng.f32(),
        id: rng.next_u64(),
        velocity: float2::new(rng.f32(), rng.f32()),
        pair: Pair {
            lo: rng.u32(),
            hi: rng.u32(),
        },
        position: float4::new(rng.f32(), rng.f32(), rng.f32(), rng.f32()),
        big: u128::from(rng.next_u64()) << 64 | u128::from(rng.next_u64()),
    }
}
