use gpu_aligned::GpuAligned;

// `Tagged<u32>` would have 3 bytes of padding after `tag`: refused for every
// `T`, at the definition.
#[derive(Clone, Copy, GpuAligned)]
#[repr(C)]
struct Tagged<T> {
    tag: u8,
    value: T,
}

fn main() {}
