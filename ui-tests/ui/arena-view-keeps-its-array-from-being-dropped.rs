// A view borrows its array: the array cannot be dropped (its bytes given
// back) while the view lives, on the host or the device.
use gpu_aligned::arena::Arena;

fn main() {
    let mut arena = Arena::host(4096).unwrap();
    let a = arena.alloc_from(&[1u32, 2, 3, 4]).unwrap();
    let view = arena.get(&a).unwrap();
    drop(a);
    assert_eq!(view[0], 1);
}
