#[gpu_aligned::padded(width = 16)]
#[derive(Clone, Copy)]
struct Rgb {
    r: u8,
    g: u8,
    b: u8,
}

fn main() {}
