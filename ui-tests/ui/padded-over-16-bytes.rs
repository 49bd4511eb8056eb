#[gpu_aligned::padded]
#[derive(Clone, Copy)]
struct Transform {
    position: [f32; 3],
    scale: [f32; 3],
}

fn main() {}
