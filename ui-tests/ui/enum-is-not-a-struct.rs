use gpu_aligned::GpuAligned;

#[derive(Clone, Copy, GpuAligned)]
#[repr(u32)]
enum Kind {
    Point,
    Line,
}

fn main() {}
