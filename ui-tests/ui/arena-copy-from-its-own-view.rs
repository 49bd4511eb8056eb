// An array cannot be written from, or read into, a view of itself.
use gpu_aligned::arena::Arena;

fn main() {
    let mut arena = Arena::host(4096).unwrap();
    let mut a = arena.alloc::<u32>(4).unwrap();
    arena.write(&mut a, .., arena.get(&a).unwrap()).unwrap();
    arena.read(&a, .., arena.get_mut(&mut a).unwrap()).unwrap();
    let mut image = arena.alloc_pitched::<u32>(4, 1).unwrap();
    arena.write(&mut image, .., arena.row(&image, 0).unwrap()).unwrap();
}
