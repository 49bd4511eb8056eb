// A 144-byte struct aligned to 4 is GPU data (a kernel parameter), but an
// arena array holds elements and 16-aligned whole structs only.
use gpu_aligned::arena::Arena;
use gpu_aligned::vector::float3;
use gpu_aligned::GpuData;

#[derive(Clone, Copy, GpuData)]
#[repr(C)]
struct Camera {
    origin: float3,
    lower_left: float3,
    horizontal: float3,
    vertical: float3,
    basis: [float3; 3],
    lens_radius: f32,
    time: [f32; 2],
    size: [u32; 2],
    samples: u32,
    depth: u32,
    sky: [f32; 8],
}

fn main() {
    let mut arena = Arena::host(1 << 16).unwrap();
    let _ = arena.alloc_zeros::<Camera>(4);
}
