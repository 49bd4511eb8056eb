// A padding field is refused; the impl is still emitted, with every field a
// column, so code using the type and its columns adds no error.
use gpu_aligned::arena::Arena;

#[derive(Clone, Copy, gpu_aligned::GpuSoa)]
struct Hit {
    x: f32,
    #[gpu_aligned(padding)]
    pad: u32,
}

fn alloc(arena: &mut Arena<gpu_aligned::backend::HostBuffer>) {
    let hits = arena.alloc_soa::<Hit>(10).unwrap();
    let _x = &hits.columns().x;
}

fn main() {}
