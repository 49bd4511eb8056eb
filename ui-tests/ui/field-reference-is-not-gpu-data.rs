use gpu_aligned::GpuAligned;

#[derive(Clone, Copy, GpuAligned)]
#[repr(C, align(16))]
struct Item {
    id: u64,
    name: &'static u64,
}

fn main() {}
