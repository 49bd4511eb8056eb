use gpu_aligned::GpuAligned;

#[derive(Clone, Copy, GpuAligned)]
#[repr(C)]
struct Empty {
    nothing: [u32; 0],
}

fn main() {}
