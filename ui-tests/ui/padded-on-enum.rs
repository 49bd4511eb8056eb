#[gpu_aligned::padded]
#[derive(Clone, Copy)]
enum Kind {
    Point,
    Line,
}

fn main() {}
