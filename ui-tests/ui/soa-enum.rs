#[derive(Clone, Copy, gpu_aligned::GpuSoa)]
enum Shape {
    Circle { radius: f32 },
}

fn main() {}
