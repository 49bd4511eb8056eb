// A handle given to `free` is gone: it cannot be used or freed again.
use gpu_aligned::arena::Arena;

fn main() {
    let mut arena = Arena::host(4096).unwrap();
    let a = arena.alloc::<u32>(4).unwrap();
    arena.free(a).unwrap();
    let _ = arena.get(&a);
    let image = arena.alloc_pitched::<u8>(4, 1).unwrap();
    arena.free(image).unwrap();
    arena.free(image).unwrap();
}
