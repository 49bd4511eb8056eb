#[gpu_aligned::padded]
#[derive(Clone, Copy)]
struct Rgb(u8, u8, u8);

fn main() {}
