// With `#[repr(C)]` written, a field that is not GPU data and a size over
// 16 bytes are both reported in one compile: the size is checked from
// `size_of` alone, without the layout the bad field leaves unevaluated.
use gpu_aligned::GpuAligned;

#[derive(Clone, Copy, GpuAligned)]
#[repr(C)]
struct Particle {
    position: [f32; 3],
    velocity: [f32; 3],
    mass: f32,
    lifetime: f32,
    alive: bool,
}

fn main() {}
