use gpu_aligned::GpuAligned;

#[derive(Clone, Copy, GpuAligned)]
#[repr(C, packed, align(3))]
#[gpu_aligned(padding)]
struct Everything<T> {
    #[gpu_aligned(zeroed)]
    a: T,
    #[gpu_aligned(padding)]
    #[gpu_aligned(padding)]
    b: u8,
}

fn main() {}
