// Several `align(N)` are legal, and rustc takes the largest: the derive
// reads them the same way (here 16, so the 12-byte float3 leaves a hole
// the message names, instead of a "duplicate align" error).
use gpu_aligned::vector::float3;
use gpu_aligned::GpuAligned;

#[derive(Clone, Copy, GpuAligned)]
#[repr(C, align(4), align(16))]
#[repr(align(8))]
struct Spaced {
    v: float3,
}

fn main() {}
