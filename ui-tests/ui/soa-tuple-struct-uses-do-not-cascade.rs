// The derive's refusal is the only error: a fallback impl stands next to
// it, so code using the type adds none.
use gpu_aligned::arena::Arena;

#[derive(Clone, Copy, gpu_aligned::GpuSoa)]
struct Point(f32, f32);

fn alloc(arena: &mut Arena<gpu_aligned::backend::HostBuffer>) {
    let _points = arena.alloc_soa::<Point>(10);
}

fn main() {}
