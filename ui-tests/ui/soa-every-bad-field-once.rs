// Each field that cannot be a column gets one error, at its type, and
// nothing else does.
use gpu_aligned::vector::float3;

#[derive(Clone, Copy, gpu_aligned::GpuSoa)]
struct Cell {
    alive: bool,
    age: u32,
    position: float3,
    corners: [f32; 4],
}

fn main() {}
