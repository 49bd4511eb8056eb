use gpu_aligned::GpuAligned;

#[derive(Clone, Copy, GpuAligned)]
#[repr(transparent)]
struct Rgba([u8; 4]);

fn main() {}
