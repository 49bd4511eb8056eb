use gpu_aligned::GpuAligned;

#[derive(Clone, Copy, GpuAligned)]
#[repr(C)]
#[r#repr(packed(4))]
struct Packed {
    a: u32,
    b: u64,
}

fn main() {}
