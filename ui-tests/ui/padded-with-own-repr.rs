#[gpu_aligned::padded]
#[derive(Clone, Copy)]
#[repr(C)]
struct Rgb {
    r: u8,
    g: u8,
    b: u8,
}

fn main() {}
