use gpu_aligned::GpuAligned;

#[derive(Clone, Copy, GpuAligned)]
#[gpu_aligned(crate = "not a path")]
#[repr(C)]
struct Word {
    value: u32,
}

fn main() {}
