//! The types both sides share: this crate uses them, its build script
//! writes their CUDA header.

use gpu_aligned::vector::float3;

#[derive(Clone, Copy, gpu_aligned::GpuAligned)]
#[repr(C, align(16))]
pub struct Particle {
    pub position: float3,
    pub mass: f32,
}

#[derive(Clone, Copy, Debug, PartialEq, gpu_aligned::GpuSoa)]
pub struct Body {
    pub mass: f32,
    pub id: u32,
}
