use gpu_aligned::GpuAligned;

#[derive(Clone, Copy, GpuAligned)]
#[repr(C, align(8))]
struct Tagged {
    tag: u8,
    #[gpu_aligned(padding, padding)]
    _pad: [u8; 3],
    value: u32,
}

fn main() {}
