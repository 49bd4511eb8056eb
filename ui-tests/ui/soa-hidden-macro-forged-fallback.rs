// The review's attack on the hidden macro's fallback arm: tokens pasted
// between its `unsafe impl` and the trait made the macro's `unsafe` land on
// the caller's impl (`Pod` for a padded struct) and `#[cfg(any())]` delete
// the rest. The arm takes identifiers only, so the forged input matches no
// rule.
#![forbid(unsafe_code)]

#[derive(Clone, Copy)]
#[repr(C)]
struct Padded {
    a: u8,
    b: u32,
}

gpu_aligned::__gpu_soa_derive! {
    fallback: impl [gpu_aligned::bytemuck::Pod for Padded {} #[cfg(any())] impl] [Padded] where []
}

fn main() {}
