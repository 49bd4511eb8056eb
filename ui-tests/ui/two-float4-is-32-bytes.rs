use gpu_aligned::vector::float4;
use gpu_aligned::GpuAligned;

#[derive(Clone, Copy, GpuAligned)]
#[repr(C)]
struct Vertex {
    position: float4,
    normal: float4,
}

fn main() {}
