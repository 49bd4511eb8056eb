#[derive(Clone, Copy, gpu_aligned::GpuSoa)]
struct Point(f32, f32);

fn main() {}
