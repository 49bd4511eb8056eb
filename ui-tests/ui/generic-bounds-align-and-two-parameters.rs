use gpu_aligned::{GpuAligned, GpuData};

#[derive(Clone, Copy, GpuAligned)]
#[repr(C, align(8))]
struct Mixed<'a, T: GpuData, U, const N: usize>
where
    U: Copy,
{
    a: T,
    b: U,
    c: &'a [T; N],
}

fn main() {}
