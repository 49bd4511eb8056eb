use gpu_aligned::GpuAligned;

#[derive(Clone, Copy, GpuAligned)]
#[repr(C)]
struct Marker;

fn main() {}
