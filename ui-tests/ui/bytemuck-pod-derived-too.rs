use gpu_aligned::GpuAligned;

#[derive(Clone, Copy, GpuAligned, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C, align(8))]
struct Vec2 {
    x: f32,
    y: f32,
}

fn main() {}
