use gpu_aligned::GpuAligned;

#[derive(Clone, Copy, GpuAligned)]
#[repr(C, align(16))]
struct Span {
    start: u64,
    len: usize,
}

fn main() {}
