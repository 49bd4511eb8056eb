#[derive(Clone, Copy, gpu_aligned::GpuSoa)]
struct Pair<T> {
    a: T,
    b: T,
}

fn main() {}
