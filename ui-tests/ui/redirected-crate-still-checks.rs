// A crate of one's own that forwards to the runtime's macro gets the
// runtime's check with it: its own `is_legal` is never asked.
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
        pub use gpu_aligned::__private::*;
    }
}

#[derive(Clone, Copy, GpuAligned)]
#[gpu_aligned(crate = "fake")]
#[repr(C)]
struct Holey {
    tag: u8,
    value: u32,
}

fn main() {}
