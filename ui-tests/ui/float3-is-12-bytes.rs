use gpu_aligned::GpuAligned;

#[derive(Clone, Copy, GpuAligned)]
#[repr(C)]
struct Float3 {
    x: f32,
    y: f32,
    z: f32,
}

fn main() {}
