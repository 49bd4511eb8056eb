// Handles are move-only: there is no second copy of an array's handle, a
// carving, a structure of arrays or its key.
use gpu_aligned::arena::{Arena, Plan};

#[derive(Clone, Copy, gpu_aligned::GpuSoa)]
struct Hit {
    x: f32,
}

fn main() {
    let mut arena = Arena::host(1 << 14).unwrap();
    let b = arena.alloc::<u32>(4).unwrap();
    let _twin = b.clone();
    let image = arena.alloc_pitched::<u8>(4, 1).unwrap();
    let _twin = image.clone();
    let mut plan = Plan::new();
    let _key = plan.array::<u8>(1);
    let carving = arena.carve(&plan).unwrap();
    let _twin = carving.clone();
    let soa = arena.alloc_soa::<Hit>(4).unwrap();
    let _twin = soa.clone();
    let key = Plan::new().soa::<Hit>(4);
    let _twin = key.clone();
}
