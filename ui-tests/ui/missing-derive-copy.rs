use gpu_aligned::GpuAligned;

#[derive(Clone, GpuAligned)]
#[repr(C, align(8))]
struct Vec2 {
    x: f32,
    y: f32,
}

fn main() {}
