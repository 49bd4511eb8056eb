use gpu_aligned::GpuAligned;

#[derive(Clone, Copy, GpuAligned)]
#[repr(C)]
struct Int8x3 {
    x: i8,
    y: i8,
    z: i8,
}

fn main() {}
