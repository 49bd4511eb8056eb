#[gpu_aligned::padded]
#[derive(Clone, Copy)]
struct Pair<T> {
    a: T,
    b: T,
}

fn main() {}
