// A trait object makes its supertraits' methods callable without an import:
// the sealed methods that reach a handle's place must still be out of reach,
// or two handles of different element types could swap their places.
use gpu_aligned::arena::{Arena, ArenaArray};
use gpu_aligned::backend::HostBuffer;

fn main() {
    let mut arena = Arena::host(1 << 16).unwrap();
    let mut words = arena.alloc_zeros::<u32>(4).unwrap();
    let mut wide = arena.alloc_zeros::<u64>(4).unwrap();
    let a: &mut dyn ArenaArray<HostBuffer> = &mut words;
    let b: &mut dyn ArenaArray<HostBuffer> = &mut wide;
    core::mem::swap(a.place_mut(), b.place_mut());
    let _ = a.place();
}
