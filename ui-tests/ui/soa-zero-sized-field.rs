// A zero-sized field cannot be a column: it is no GPU word.
#[derive(Clone, Copy, gpu_aligned::GpuSoa)]
struct Tagged {
    value: f32,
    nothing: (),
    empty: [u32; 0],
}

fn main() {}
