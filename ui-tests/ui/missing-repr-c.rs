use gpu_aligned::GpuAligned;

#[derive(Clone, Copy, GpuAligned)]
struct Pair {
    a: u16,
    b: u16,
}

fn main() {}
