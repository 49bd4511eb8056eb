use gpu_aligned::GpuData;

#[derive(Clone, Copy, GpuData)]
struct Params {
    scale: f32,
    count: u32,
}

fn main() {}
