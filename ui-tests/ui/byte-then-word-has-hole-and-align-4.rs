use gpu_aligned::GpuAligned;

#[derive(Clone, Copy, GpuAligned)]
#[repr(C)]
struct Tagged {
    tag: u8,
    value: u32,
}

fn main() {}
