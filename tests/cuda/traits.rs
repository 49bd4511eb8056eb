//! With the `cuda` feature, every derived, padded and vector type is cudarc
//! `DeviceRepr` (a kernel argument by value, `clone_htod`) and
//! `ValidAsZeroBits` (`alloc_zeros`), without `unsafe` here: the derive's
//! output carries the impls (so a crate that forbids `unsafe` code can use
//! them). Compile-time facts, so these run without a GPU.
#![forbid(unsafe_code)]

use gpu_aligned::backend::cuda::cudarc::driver::{DeviceRepr, ValidAsZeroBits};
use gpu_aligned::vector::{
    char3, double2, double3, float2, float3, float3_16_t, float4, int2, int8_3_4_t, uchar4,
    ulonglong2,
};
use gpu_aligned::GpuAligned;

#[derive(Clone, Copy, Debug, PartialEq, GpuAligned)]
#[repr(C, align(16))]
struct Particle {
    position: float3,
    mass: f32,
}

#[derive(Clone, Copy, GpuAligned)]
#[repr(transparent)]
struct Meters(f32);

#[gpu_aligned::padded]
#[derive(Clone, Copy)]
struct Tagged {
    tag: u8,
    value: u32,
}

/// What `launch.arg(&value)`, `clone_htod(&[T])` and `alloc_zeros::<T>()`
/// require of `T`.
fn assert_device_repr<T: DeviceRepr + ValidAsZeroBits>() -> usize {
    core::mem::size_of::<T>()
}

#[test]
fn derived_and_padded_types_are_device_repr() {
    assert_eq!(assert_device_repr::<Particle>(), 16);
    assert_eq!(assert_device_repr::<Meters>(), 4);
    assert_eq!(assert_device_repr::<Tagged>(), 8);
}

#[test]
fn vector_types_are_device_repr() {
    assert_eq!(assert_device_repr::<float4>(), 16);
    assert_eq!(assert_device_repr::<float2>(), 8);
    assert_eq!(assert_device_repr::<int2>(), 8);
    assert_eq!(assert_device_repr::<uchar4>(), 4);
    assert_eq!(assert_device_repr::<double2>(), 16);
    assert_eq!(assert_device_repr::<ulonglong2>(), 16);
    // Field-only vectors too: a `float3` array is a valid device buffer.
    assert_eq!(assert_device_repr::<float3>(), 12);
    assert_eq!(assert_device_repr::<char3>(), 3);
    assert_eq!(assert_device_repr::<double3>(), 24);
}

#[test]
fn padded_vector_types_are_device_repr() {
    assert_eq!(assert_device_repr::<float3_16_t>(), 16);
    assert_eq!(assert_device_repr::<int8_3_4_t>(), 4);
}
