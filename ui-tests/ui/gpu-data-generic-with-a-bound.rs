#[derive(Clone, Copy, gpu_aligned::GpuData)]
#[repr(C)]
struct Block<T: Copy> {
    values: [T; 8],
    count: u32,
}

fn main() {}
