// A view lent to another thread keeps the arena from allocating meanwhile.
use gpu_aligned::arena::Arena;

fn main() {
    let mut arena = Arena::host(4096).unwrap();
    let a = arena.alloc::<u32>(4).unwrap();
    std::thread::scope(|scope| {
        let view = arena.get(&a).unwrap();
        scope.spawn(move || assert_eq!(view[0], 0));
        let _b = arena.alloc::<u32>(4).unwrap();
    });
}
