// The main arm took a `where` list and pasted it into its `unsafe impl`,
// where a `{}` closed the impl early and left a forged `GpuSoa` (any
// `LAYOUT`) behind. The arm takes no `where` list.
#![forbid(unsafe_code)]

#[derive(Clone, Copy)]
struct Byte {
    a: u8,
}

gpu_aligned::__gpu_soa_derive! {
    vis: pub,
    type: Byte,
    columns: ByteColumns,
    where: [u8: Copy {} #[cfg(any())] impl gpu_aligned::soa::GpuSoa for Byte where],
    fields: [a: u8],
}

fn main() {}
