// A view cannot live across a reset, which frees every array at once.
use gpu_aligned::arena::Arena;

fn main() {
    let mut arena = Arena::host(4096).unwrap();
    let mut a = arena.alloc::<u32>(4).unwrap();
    let view = arena.get_mut(&mut a).unwrap();
    arena.reset().unwrap();
    view[0] = 1;
}
