// An attribute macro after `#[derive(GpuAligned)]` runs after the derive
// has read `#[repr(C, align(8))]`, and here it removes the repr: the
// compiler lays the struct out as `repr(Rust)`, largest alignment first.
// The impls are refused all the same, since the check is on the layout the
// compiler computed, not on the tokens the derive saw.
use gpu_aligned::GpuAligned;
use gpu_aligned_strip_repr::strip_repr;

#[derive(Clone, Copy, GpuAligned)]
#[strip_repr]
#[repr(C, align(8))]
struct Reordered {
    a: u8,
    b: u8,
    c: u16,
    d: u32,
}

fn main() {
    let _: &[u8] = gpu_aligned::__private::bytemuck::bytes_of(&Reordered { a: 1, b: 2, c: 3, d: 4 });
}
