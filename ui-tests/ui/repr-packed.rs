use gpu_aligned::GpuAligned;

#[derive(Clone, Copy, GpuAligned)]
#[repr(C, packed)]
struct Packed {
    tag: u8,
    value: u32,
}

fn main() {}
