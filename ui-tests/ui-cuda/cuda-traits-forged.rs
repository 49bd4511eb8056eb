// The review's attack on the hidden macro that writes cudarc's traits:
// called by hand on any local type, it gave `DeviceRepr` and
// `ValidAsZeroBits` to a struct with padding and to one holding a
// reference (cudarc's safe `alloc_zeros` then made a null `&'static u8`).
// Its impls now hold only for `GpuData` types, which a caller cannot forge,
// so both stay unusable.
#![forbid(unsafe_code)]

use gpu_aligned::__private::cudarc::driver::{DeviceRepr, ValidAsZeroBits};

#[derive(Clone, Copy)]
#[repr(C)]
struct Padded {
    a: u8,
    b: u32,
}

#[derive(Clone, Copy)]
struct Reference {
    r: &'static u8,
}

gpu_aligned::__private::cuda_traits!(Padded);
gpu_aligned::__private::cuda_traits!(Reference);

#[derive(Clone, Copy)]
#[repr(C)]
struct Mixed<T> {
    a: T,
    b: u8,
}

gpu_aligned::__private::cuda_traits!(generic [T] T Mixed);

fn repr<T: DeviceRepr>() {}
fn zeros<T: ValidAsZeroBits>() {}

fn main() {
    repr::<Padded>();
    zeros::<Reference>();
    repr::<Mixed<u32>>();
}
