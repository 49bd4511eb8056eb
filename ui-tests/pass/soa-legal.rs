// Accepted: any repr, any size, raw field names, a where clause, a
// renamed dependency path, and a constant spelled like a field in scope.
#![forbid(unsafe_code)]
#![allow(non_upper_case_globals, dead_code)]

use gpu_aligned::arena::Arena;
use gpu_aligned::vector::float4;
use gpu_aligned::soa::GpuSoa as _;
use gpu_aligned::GpuSoa;

const mass: f32 = 0.0;

#[derive(Clone, Copy, Debug, PartialEq, GpuSoa)]
struct Body
where
    f32: Copy,
{
    kind: u8,
    mass: f32,
    position: float4,
    r#type: u64,
}

fn main() {
    let mut arena = Arena::host(1 << 16).unwrap();
    let item = Body { kind: 1, mass: 2.0, position: float4::new(1.0, 2.0, 3.0, 4.0), r#type: 9 };
    let mut soa = arena.alloc_soa::<Body>(3).unwrap();
    arena.write_soa(&mut soa, &[item; 3]).unwrap();
    assert_eq!(arena.read_soa(&soa).unwrap(), [item; 3]);
    assert_eq!(arena.get(&soa.columns().r#type).unwrap(), &[9; 3]);
    assert_eq!(Body::COLUMNS[3].name, "type");
    arena.free(soa).unwrap();
}
