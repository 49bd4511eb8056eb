use gpu_aligned::GpuAligned;

#[derive(Clone, Copy, GpuAligned)]
#[repr(C)]
struct Pair<T> {
    a: T,
    b: T,
}

fn main() {}
