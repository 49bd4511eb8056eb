use gpu_aligned::GpuAligned;

#[derive(Clone, Copy, GpuAligned)]
#[repr(C, align(16))]
struct Position {
    x: f32,
    y: f32,
    z: f32,
}

fn main() {}
