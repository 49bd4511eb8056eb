use gpu_aligned::GpuAligned;

#[derive(Clone, Copy, GpuAligned)]
#[repr(C)]
struct Quat {
    x: f32,
    y: f32,
    z: f32,
    w: f32,
}

fn main() {}
