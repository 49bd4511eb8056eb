use gpu_aligned::vector::float3;

#[derive(Clone, Copy, gpu_aligned::GpuSoa)]
struct Particle {
    position: float3,
    mass: f32,
}

fn main() {}
