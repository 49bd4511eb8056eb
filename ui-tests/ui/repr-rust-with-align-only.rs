use gpu_aligned::GpuAligned;

#[derive(Clone, Copy, GpuAligned)]
#[repr(align(8))]
struct Unordered {
    x: f32,
    y: f32,
}

fn main() {}
