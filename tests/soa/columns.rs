//! The columns of a structure of arrays on the host arena: elements round-
//! trip through them, they are carved together, aligned and disjoint, all
//! or nothing; a length mismatch and foreign columns are refused; an SoA
//! sits in a `Plan` beside ordinary arrays; packed and empty structs.

use gpu_aligned::arena::{Arena, ArenaError, ArenaOptions, Plan};
use gpu_aligned::soa::GpuSoa;

use crate::support::Rng;
use crate::types::{particle, Bytes, Particle, Scalar};

#[test]
fn structs_round_trip_through_their_columns() {
    let mut rng = Rng(0x05ee_d50a);
    let mut arena = Arena::host(1 << 20).unwrap();
    for len in [1, 2, 31, 257, 1000] {
        let particles: Vec<Particle> = (0..len).map(|_| particle(&mut rng)).collect();
        let mut soa = arena.alloc_soa::<Particle>(len).unwrap();
        arena.write_soa(&mut soa, &particles).unwrap();
        assert_eq!(arena.read_soa(&soa).unwrap(), particles);
        // Each column holds its field, in element order.
        let columns = soa.columns();
        let masses: Vec<f32> = particles.iter().map(|p| p.mass).collect();
        assert_eq!(arena.get(&columns.mass).unwrap(), masses.as_slice());
        let bigs: Vec<u128> = particles.iter().map(|p| p.big).collect();
        assert_eq!(arena.get(&columns.big).unwrap(), bigs.as_slice());
        let kinds: Vec<u8> = particles.iter().map(|p| p.kind).collect();
        assert_eq!(arena.get(&columns.kind).unwrap(), kinds.as_slice());
        arena.free(soa).unwrap();
    }
    let scalars: Vec<Scalar> = (0..100).map(|i| Scalar { value: i as f64 }).collect();
    let mut soa = arena.alloc_soa::<Scalar>(100).unwrap();
    arena.write_soa(&mut soa, &scalars).unwrap();
    assert_eq!(arena.read_soa(&soa).unwrap(), scalars);
    arena.free(soa).unwrap();
    let bytes: Vec<Bytes> = (0..=255u8)
        .map(|i| Bytes {
            a: i,
            b: i as i8,
            c: !i,
        })
        .collect();
    let mut soa = arena.alloc_soa::<Bytes>(bytes.len()).unwrap();
    arena.write_soa(&mut soa, &bytes).unwrap();
    assert_eq!(arena.read_soa(&soa).unwrap(), bytes);
    arena.free(soa).unwrap();
    assert_eq!(
        arena.allocator().stats().allocations,
        0,
        "every column was freed"
    );
}

#[test]
fn a_column_written_alone_shows_in_the_elements() {
    let mut arena = Arena::host(1 << 16).unwrap();
    let mut soa = arena.alloc_soa::<Particle>(4).unwrap();
    let mut rng = Rng(9);
    let particles: Vec<Particle> = (0..4).map(|_| particle(&mut rng)).collect();
    arena.write_soa(&mut soa, &particles).unwrap();
    arena
        .get_mut(&mut soa.columns_mut().charge)
        .unwrap()
        .copy_from_slice(&[-1, -2, -3, -4]);
    let read = arena.read_soa(&soa).unwrap();
    for (i, (before, after)) in particles.iter().zip(&read).enumerate() {
        assert_eq!(after.charge, -(i as i16) - 1);
        assert_eq!(
            Particle {
                charge: before.charge,
                ..*after
            },
            *before
        );
    }
    arena.free(soa).unwrap();
}

#[test]
fn columns_are_aligned_disjoint_and_carved_together() {
    for min_align in [256, 512, 16] {
        let mut arena = ArenaOptions::new()
            .min_align(min_align)
            .pitch_align(512)
            .host(1 << 20)
            .unwrap();
        let soa = arena.alloc_soa::<Particle>(1001).unwrap();
        let c = soa.columns();
        let mut spans = vec![
            (arena.offset(&c.kind).unwrap(), c.kind.size_bytes()),
            (arena.offset(&c.charge).unwrap(), c.charge.size_bytes()),
            (arena.offset(&c.mass).unwrap(), c.mass.size_bytes()),
            (arena.offset(&c.id).unwrap(), c.id.size_bytes()),
            (arena.offset(&c.velocity).unwrap(), c.velocity.size_bytes()),
            (arena.offset(&c.pair).unwrap(), c.pair.size_bytes()),
            (arena.offset(&c.position).unwrap(), c.position.size_bytes()),
            (arena.offset(&c.big).unwrap(), c.big.size_bytes()),
        ];
        for &(offset, bytes) in &spans {
            assert_eq!(offset % arena.min_align() as u64, 0, "column at {offset}");
            assert_eq!(offset % min_align as u64, 0);
            assert!(bytes >= 1001);
        }
        assert_eq!(c.kind.len(), 1001);
        assert_eq!(c.big.size_bytes(), 1001 * 16);
        spans.sort();
        for pair in spans.windows(2) {
            assert!(
                pair[0].0 + pair[0].1 as u64 <= pair[1].0,
                "overlap: {spans:?}"
            );
        }
        arena.free(soa).unwrap();
    }
}

#[test]
fn all_or_nothing_when_the_columns_do_not_fit() {
    // 8 columns of 100 elements need more than 4 KiB; nothing may be left
    // reserved after the refusal.
    let mut arena = Arena::host(4096).unwrap();
    let refused = arena.alloc_soa::<Particle>(100).unwrap_err();
    assert!(matches!(refused, ArenaError::Alloc(_)), "{refused:?}");
    assert_eq!(arena.allocator().stats().allocations, 0);
    let fits = arena.alloc_soa::<Bytes>(100).unwrap();
    arena.free(fits).unwrap();
}

#[test]
fn a_length_mismatch_is_refused_and_writes_nothing() {
    let mut arena = Arena::host(1 << 16).unwrap();
    let mut soa = arena.alloc_soa::<Scalar>(3).unwrap();
    arena
        .write_soa(&mut soa, &[1.0, 2.0, 3.0].map(|value| Scalar { value }))
        .unwrap();
    for wrong in [2, 4] {
        let items = vec![Scalar { value: 9.0 }; wrong];
        assert_eq!(
            arena.write_soa(&mut soa, &items),
            Err(ArenaError::LengthMismatch {
                expected: 3,
                found: wrong
            })
        );
    }
    assert_eq!(arena.get(&soa.columns().value).unwrap(), &[1.0, 2.0, 3.0]);
    arena.free(soa).unwrap();
}

#[test]
fn dropping_gives_every_column_back() {
    // Room for 16 structures of three 256-byte columns, no more.
    let mut arena = Arena::host(16 * 3 * 256).unwrap();
    let held: Vec<_> = (0..16)
        .map(|_| arena.alloc_soa::<Bytes>(100).unwrap())
        .collect();
    assert!(arena.alloc_soa::<Bytes>(100).is_err(), "the arena is full");
    drop(held);
    let items = [Bytes { a: 1, b: -2, c: 3 }; 100];
    for _ in 0..if cfg!(miri) { 50 } else { 10_000 } {
        let mut soa = arena.alloc_soa::<Bytes>(100).unwrap();
        arena.write_soa(&mut soa, &items).unwrap();
        assert_eq!(arena.read_soa(&soa).unwrap()[99], items[99]);
    }
    // A carving dropped with its structure of arrays never taken.
    let mut plan = Plan::new();
    let _never_taken = plan.soa::<Bytes>(100);
    drop(arena.carve(&plan).unwrap());
    assert_eq!(arena.live(), 0);
}

#[test]
fn columns_of_another_arena_are_refused() {
    let mut mine = Arena::host(1 << 16).unwrap();
    let mut other = Arena::host(1 << 16).unwrap();
    let mut soa = other.alloc_soa::<Bytes>(8).unwrap();
    let items = [Bytes { a: 1, b: 2, c: 3 }; 8];
    assert!(matches!(
        mine.write_soa(&mut soa, &items),
        Err(ArenaError::Handle(_))
    ));
    assert!(matches!(mine.read_soa(&soa), Err(ArenaError::Handle(_))));
    other.write_soa(&mut soa, &items).unwrap();
    assert_eq!(other.read_soa(&soa).unwrap(), items);
    // A refused free frees nothing and hands the columns back.
    let refused = mine.free(soa).unwrap_err();
    assert!(matches!(refused.error, ArenaError::Handle(_)));
    let soa = refused.handle;
    assert_eq!(other.read_soa(&soa).unwrap(), items);
    other.free(soa).unwrap();
    assert_eq!(other.allocator().stats().allocations, 0);
}

#[test]
fn an_soa_sits_in_a_plan_beside_ordinary_arrays() {
    let mut arena = Arena::host(1 << 20).unwrap();
    let mut plan = Plan::new();
    let before = plan.array::<f32>(100);
    let particles = plan.soa::<Particle>(50);
    let after = plan.array::<u64>(10);
    assert_eq!(plan.len(), 2 + 8, "one array per column");
    let mut carving = arena.carve(&plan).unwrap();
    let mut soa = carving.take_soa(particles).expect("planned here");
    let mut before = carving.take(before).expect("planned here");
    let mut after = carving.take(after).expect("planned here");
    let mut rng = Rng(77);
    let items: Vec<Particle> = (0..50).map(|_| particle(&mut rng)).collect();
    arena.write_soa(&mut soa, &items).unwrap();
    arena.get_mut(&mut before).unwrap().fill(1.5);
    arena.get_mut(&mut after).unwrap().fill(7);
    assert_eq!(arena.read_soa(&soa).unwrap(), items);
    assert!(arena.get(&before).unwrap().iter().all(|&v| v == 1.5));
    arena.free(soa).unwrap();
    arena.free(before).unwrap();
    arena.free(after).unwrap();
    arena.free(carving).unwrap();
    assert_eq!(arena.allocator().stats().allocations, 0);

    // A key redeems only in the carving of its own plan.
    let mut first = Plan::new();
    let key = first.soa::<Scalar>(4);
    let second = {
        let mut plan = Plan::new();
        let _ = plan.array::<f64>(4);
        plan
    };
    let mut wrong = arena.carve(&second).unwrap();
    assert!(matches!(wrong.take_soa(key), Err(ArenaError::ForeignKey)));
    arena.free(wrong).unwrap();
    assert_eq!(arena.allocator().stats().allocations, 0);
}

/// Packed, as a struct read from a file format might be: its columns are
/// aligned all the same, and no field is ever referenced where it lies.
#[derive(Clone, Copy, Debug, PartialEq, gpu_aligned::GpuSoa)]
#[repr(C, packed)]
pub struct Packed {
    pub tag: u8,
    pub value: f64,
    pub count: u32,
}

#[test]
fn a_packed_struct_round_trips_through_aligned_columns() {
    let mut arena = Arena::host(1 << 14).unwrap();
    let items: Vec<Packed> = (0..9u8)
        .map(|i| Packed {
            tag: i,
            value: f64::from(i) * 1.5,
            count: 1000 + u32::from(i),
        })
        .collect();
    let mut soa = arena.alloc_soa::<Packed>(items.len()).unwrap();
    arena.write_soa(&mut soa, &items).unwrap();
    assert_eq!(arena.read_soa(&soa).unwrap(), items);
    assert_eq!(arena.get(&soa.columns().value).unwrap()[2], 3.0);
    assert_eq!(arena.offset(&soa.columns().value).unwrap() % 256, 0);
    arena.free(soa).unwrap();
}

#[test]
fn an_empty_structure_of_arrays_takes_no_bytes_and_reads_back_empty() {
    let mut arena = Arena::host(4096).unwrap();
    let kept = arena.alloc_soa::<Bytes>(3).unwrap();
    let before = arena.allocator().stats();
    let mut soa = arena.alloc_soa::<Particle>(0).unwrap();
    assert!(soa.is_empty());
    assert_eq!(arena.allocator().stats(), before);
    arena.write_soa(&mut soa, &[]).unwrap();
    assert!(arena.read_soa(&soa).unwrap().is_empty());
    assert!(arena.write_soa(&mut soa, &[particle(&mut Rng(7))]).is_err());
    // No bytes: every column is empty, at offset 0.
    let c = soa.columns();
    assert!(c.mass.is_empty() && c.big.is_empty());
    assert_eq!(arena.offset(&c.kind).unwrap(), 0);
    assert_eq!(arena.offset(&c.big).unwrap(), 0);
    // Planned among other arrays.
    let mut plan = Plan::new();
    let weights = plan.array::<f32>(4);
    let none = plan.soa::<Scalar>(0);
    let mut carving = arena.carve(&plan).unwrap();
    let none = carving.take_soa(none).unwrap();
    let weights = carving.take(weights).unwrap();
    assert_eq!((none.len(), weights.len()), (0, 4));
    arena.free(none).unwrap();
    arena.free(soa).unwrap();
    drop(weights);
    assert_eq!(arena.live(), Bytes::COLUMNS.len());
    arena.free(kept).unwrap();
}
