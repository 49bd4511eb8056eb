use gpu_aligned::GpuAligned;

#[derive(Clone, Copy, GpuAligned)]
#[repr(C)]
union Bits {
    float: f32,
    int: u32,
}

fn main() {}
