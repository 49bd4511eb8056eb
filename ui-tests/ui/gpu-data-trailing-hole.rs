use gpu_aligned::vector::float3;
use gpu_aligned::GpuData;

#[derive(Clone, Copy, GpuData)]
#[repr(C, align(16))]
struct Light {
    position: float3,
    intensity: f32,
    color: float3,
}

fn main() {}
