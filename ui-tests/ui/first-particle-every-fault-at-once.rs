// A first particle struct with three faults (no `#[repr(C)]`, a `bool`
// field, 36 bytes) gets all three in one compile, each with its fix.
use gpu_aligned::GpuAligned;

#[derive(Clone, Copy, GpuAligned)]
struct Particle {
    position: [f32; 3],
    velocity: [f32; 3],
    mass: f32,
    lifetime: f32,
    alive: bool,
}

fn main() {}
