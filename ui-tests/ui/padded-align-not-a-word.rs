#[gpu_aligned::padded(align = 12)]
#[derive(Clone, Copy)]
struct Rgb {
    r: u8,
    g: u8,
    b: u8,
}

fn main() {}
