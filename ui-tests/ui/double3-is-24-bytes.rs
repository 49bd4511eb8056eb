use gpu_aligned::GpuAligned;

#[derive(Clone, Copy, GpuAligned)]
#[repr(C)]
struct Double3 {
    x: f64,
    y: f64,
    z: f64,
}

fn main() {}
