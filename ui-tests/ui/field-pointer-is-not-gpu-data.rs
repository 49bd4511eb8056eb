use gpu_aligned::GpuAligned;

#[derive(Clone, Copy, GpuAligned)]
#[repr(C, align(16))]
struct Node {
    value: u64,
    next: *const Node,
}

fn main() {}
