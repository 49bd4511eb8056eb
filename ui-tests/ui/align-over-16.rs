use gpu_aligned::GpuAligned;

#[derive(Clone, Copy, GpuAligned)]
#[repr(C, align(32))]
struct Wide {
    x: f64,
    y: f64,
}

fn main() {}
