#[gpu_aligned::padded(align = 4)]
#[derive(Clone, Copy)]
struct Pair {
    a: f32,
    b: f32,
}

fn main() {}
