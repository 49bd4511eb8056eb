// One compile reports every fault of a `GpuData` struct: an unknown helper
// key, a field that is not GPU data, and a missing `Copy`.
use gpu_aligned::GpuData;

#[derive(Clone, GpuData)]
#[repr(C)]
#[gpu_aligned(pading)]
struct Uniforms {
    enabled: bool,
    scale: f32,
    seed: u64,
}

fn main() {}
