use gpu_aligned::GpuAligned;

#[derive(Clone, Copy, GpuAligned)]
#[repr(C)]
struct Mesh {
    vertices: Vec<f32>,
}

fn main() {}
