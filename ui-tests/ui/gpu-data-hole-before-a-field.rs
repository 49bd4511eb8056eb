use gpu_aligned::GpuData;

#[derive(Clone, Copy, GpuData)]
#[repr(C)]
struct Params {
    scale: f32,
    offset: f64,
    count: u32,
}

fn main() {}
