//! What a new user writes first: a derived element, a padded one, arrays of
//! both in a host arena, a struct stored as columns, a layout report and a
//! CUDA header.

use gpu_aligned::arena::Arena;
use gpu_aligned::header::CudaHeader;
use gpu_aligned::report::LayoutReport;
use gpu_aligned::vector::float3;
use gpu_aligned::GpuAligned;

#[derive(Clone, Copy, GpuAligned)]
#[repr(C, align(16))]
struct Particle {
    position: float3,
    mass: f32,
}

#[gpu_aligned::padded]
#[derive(Clone, Copy, Debug, PartialEq)]
struct Tagged {
    tag: u8,
    value: u32,
}

#[derive(Clone, Copy, Debug, PartialEq, gpu_aligned::GpuSoa)]
struct Body {
    mass: f32,
    id: u32,
    kind: u8,
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    assert_eq!((Particle::LAYOUT.size, Particle::LAYOUT.align), (16, 16));
    assert_eq!((Tagged::LAYOUT.size, Tagged::LAYOUT.padding), (8, 3));

    let mut arena = Arena::host(1 << 16)?;
    let mut particles = arena.alloc::<Particle>(100)?;
    let mut tags = arena.alloc::<Tagged>(10)?;
    assert_eq!(arena.offset(&tags)? % 256, 0);
    arena.get_mut(&mut particles)?[99] = Particle {
        position: float3::new(1.0, 2.0, 3.0),
        mass: 0.5,
    };
    arena.get_mut(&mut tags)?[0] = Tagged::new(7, 42);
    let bytes: &[u8] = bytemuck::cast_slice(arena.get(&tags)?);
    assert_eq!(&bytes[..8], &[7, 0, 0, 0, 42, 0, 0, 0]);

    let bodies: Vec<Body> = (0..10)
        .map(|id| Body {
            mass: 2.0,
            id,
            kind: 1,
        })
        .collect();
    let mut soa = arena.alloc_soa::<Body>(bodies.len())?;
    arena.write_soa(&mut soa, &bodies)?;
    assert_eq!(arena.read_soa(&soa)?, bodies);

    let mut header = CudaHeader::new();
    header
        .add::<Particle>()?
        .add::<Tagged>()?
        .add_soa::<Body>()?;
    assert!(header.render().contains("struct __align__(16) Particle {"));

    print!("{}", LayoutReport::of::<Tagged>());
    println!("package check: ok");
    Ok(())
}
