#[gpu_aligned::padded]
#[derive(Clone, Copy)]
#[r#repr(packed(4))]
struct Packed {
    a: u32,
    b: u64,
}

fn main() {}
