#[derive(Clone, Copy, gpu_aligned::GpuData)]
#[repr(u32)]
enum Mode {
    Diffuse,
    Metal,
}

fn main() {}
