use gpu_aligned::GpuAligned;

#[derive(Clone, Copy, GpuAligned)]
#[repr(C, align(2))]
struct Flagged {
    value: u8,
    flag: bool,
}

fn main() {}
