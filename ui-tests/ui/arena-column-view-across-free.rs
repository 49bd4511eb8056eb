// A view of a column keeps its structure of arrays from being freed.
use gpu_aligned::arena::Arena;

#[derive(Clone, Copy, gpu_aligned::GpuSoa)]
struct Hit {
    x: f32,
    id: u32,
}

fn main() {
    let mut arena = Arena::host(1 << 14).unwrap();
    let soa = arena.alloc_soa::<Hit>(4).unwrap();
    let ids = arena.get(&soa.columns().id).unwrap();
    arena.free(soa).unwrap();
    assert_eq!(ids[0], 0);
}
