use gpu_aligned::GpuAligned;

#[derive(Clone, Copy, GpuAligned)]
#[repr(C, align(8))]
struct Glyph {
    id: u32,
    letter: char,
}

fn main() {}
