// A view cannot outlive its arena, whether the arena is dropped or gives
// its buffer up.
use gpu_aligned::arena::Arena;

fn main() {
    let mut arena = Arena::host(4096).unwrap();
    let a = arena.alloc::<u32>(4).unwrap();
    let view = arena.get(&a).unwrap();
    let buffer = arena.into_backend();
    drop(buffer);
    assert_eq!(view[0], 0);
}
