use gpu_aligned::header::CudaHeader;
use gpu_aligned::GpuAligned;

// Every `Pair<T>` is a legal field (no padding for any `T`), but none is an
// element: 8 bytes aligned to 4 for `f32`.
#[derive(Clone, Copy, GpuAligned)]
#[repr(C)]
struct Pair<T> {
    a: T,
    b: T,
}

fn main() {
    let _ = CudaHeader::new().add::<Pair<f32>>();
}
