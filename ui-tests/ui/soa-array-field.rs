#[derive(Clone, Copy, gpu_aligned::GpuSoa)]
struct Body {
    position: [f32; 3],
}

fn main() {}
