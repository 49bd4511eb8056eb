// A view through a shared arena cannot outlive the lock it was taken under.
use gpu_aligned::arena::{Arena, ThreadArena};

fn main() {
    let shared = ThreadArena::new(Arena::host(4096).unwrap());
    let a = shared.alloc::<u32>(4).unwrap();
    let view = {
        let arena = shared.lock();
        arena.get(&a).unwrap()
    };
    assert_eq!(view[0], 0);
}
