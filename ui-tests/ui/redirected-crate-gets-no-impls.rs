// Pointing the derive at a crate of one's own, with a rule check that
// accepts anything, does not produce a `Pod` impl: the impls come from the
// same runtime macro as the check, which this crate does not have.
#![allow(unused_imports)]

use gpu_aligned::GpuAligned;

mod fake {
    pub use gpu_aligned::{GpuAligned, GpuData, GpuLayout, GpuType};
    pub mod rules {
        pub const fn is_legal(_: usize, _: usize, _: usize) -> bool {
            true
        }
    }
    pub mod __private {
        pub use gpu_aligned::__private::{blame_alignment, blame_field, blame_type, bytemuck};
    }
}

#[derive(Clone, Copy, GpuAligned)]
#[gpu_aligned(crate = "fake")]
#[repr(C)]
struct Holey {
    tag: u8,
    value: u32,
}

fn main() {
    let _: &[u8] = gpu_aligned::__private::bytemuck::bytes_of(&Holey { tag: 1, value: 2 });
}
