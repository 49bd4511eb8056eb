use gpu_aligned::arena::Arena;
use gpu_aligned::GpuAligned;

#[derive(Clone, Copy, GpuAligned)]
#[repr(transparent)]
struct Meters<T>(T);

fn main() {
    let mut arena = Arena::host(4096).unwrap();
    // Legal: 4 bytes, aligned to 4.
    let _ = arena.alloc::<Meters<f32>>(4);
    // Refused where it is used: 3 bytes is no GPU word.
    let _ = arena.alloc::<Meters<[u8; 3]>>(4);
}
