// A view of an array cannot live across an allocation, which may grow the
// arena, nor across a trim, which gives memory back.
use gpu_aligned::arena::{ArenaOptions, GrowthPolicy};

fn main() {
    let growing = ArenaOptions::new().growth(GrowthPolicy::up_to(16 << 20));
    let mut arena = growing.host(2 << 20).unwrap();
    let a = arena.alloc::<u32>(4).unwrap();
    let view = arena.get(&a).unwrap();
    let _big = arena.alloc::<u8>(8 << 20).unwrap();
    arena.trim().unwrap();
    assert_eq!(view[0], 0);
}
