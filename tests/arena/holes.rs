//! Attacks by safe code on the allocator, the arena and structures of
//! arrays: extreme sizes, alignments and lengths give typed errors, never a
//! panic or an overlapping block; handles and columns swapped behind the
//! arena's back are refused.

use gpu_aligned::alloc::Allocator;
use gpu_aligned::arena::{Arena, ArenaError, Plan};
use gpu_aligned::backend::HostBuffer;
use gpu_aligned::vector::float4;

use crate::support::{assert_consistent, Rng};

/// Sizes and alignments at the edges of `u64`.
fn extreme(rng: &mut Rng) -> u64 {
    match rng.below(8) {
        0 => 0,
        1 => u64::MAX,
        2 => u64::MAX - rng.below(300),
        3 => 1 << rng.below(64),
        4 => (1 << rng.below(64)) + 1,
        5 => rng.next_u64(),
        _ => rng.below(5000),
    }
}

#[test]
fn the_allocator_survives_extreme_requests() {
    let mut rng = Rng(0x0bad_f00d);
    let rounds = if cfg!(miri) { 3 } else { 200 };
    for round in 0..rounds {
        let capacity = extreme(&mut rng);
        let granularity = 1 << rng.below(64);
        let Ok(mut allocator) = Allocator::with_granularity(capacity, granularity) else {
            continue;
        };
        let mut live = Vec::new();
        for _ in 0..40 {
            match rng.below(6) {
                0..=2 => {
                    if let Ok(a) = allocator.alloc(extreme(&mut rng), extreme(&mut rng)) {
                        live.push(a);
                    }
                }
                3 if !live.is_empty() => {
                    let a = live.swap_remove(rng.below(live.len() as u64) as usize);
                    allocator.free(a).unwrap();
                }
                4 => {
                    let _ = allocator.grow(extreme(&mut rng));
                }
                _ => {
                    let _ = allocator.shrink(extreme(&mut rng));
                    let _ = allocator.largest_allocatable(extreme(&mut rng));
                }
            }
            assert_consistent(&allocator);
            let mut spans: Vec<(u64, u64)> = live.iter().map(|a| (a.offset(), a.end())).collect();
            spans.sort_unstable();
            for pair in spans.windows(2) {
                assert!(pair[0].1 <= pair[1].0, "round {round}: overlap {pair:?}");
            }
            for a in &live {
                assert!(a.end() <= allocator.capacity());
            }
        }
    }
}

#[test]
fn growing_and_shrinking_never_overlaps_blocks() {
    let mut rng = Rng(0x5eed_9a0e);
    let (rounds, steps) = if cfg!(miri) { (1, 60) } else { (20, 300) };
    for _ in 0..rounds {
        let granularity = 1 << rng.below(9);
        let mut allocator =
            Allocator::with_granularity(1 + rng.below(1 << 14), granularity).unwrap();
        let mut live = Vec::new();
        for _ in 0..steps {
            match rng.below(7) {
                0..=2 => {
                    let size = 1 + rng.below(2048);
                    if let Ok(a) = allocator.alloc(size, 1 << rng.below(12)) {
                        live.push(a);
                    }
                }
                3 | 4 if !live.is_empty() => {
                    let a = live.swap_remove(rng.below(live.len() as u64) as usize);
                    allocator.free(a).unwrap();
                }
                5 => {
                    let capacity = allocator.capacity();
                    let _ = allocator.grow(capacity + rng.below(4096));
                }
                _ => {
                    let tail = allocator.free_tail();
                    let capacity = allocator.capacity();
                    let target = capacity.saturating_sub(rng.below(tail + 2));
                    let shrunk = allocator.shrink(target);
                    assert_eq!(shrunk.is_ok(), capacity - target <= tail);
                }
            }
            assert_consistent(&allocator);
            let mut spans: Vec<(u64, u64)> = live.iter().map(|a| (a.offset(), a.end())).collect();
            spans.sort_unstable();
            for pair in spans.windows(2) {
                assert!(pair[0].1 <= pair[1].0, "overlap {pair:?}");
            }
            for a in &live {
                assert!(a.end() <= allocator.capacity());
                assert_eq!(allocator.check_handle(a), Ok(()));
            }
        }
    }
}

#[test]
fn the_arena_survives_extreme_lengths() {
    let mut arena = Arena::host(1 << 16).unwrap();
    assert!(arena.alloc::<u8>(usize::MAX).is_err());
    assert!(arena.alloc::<float4>(usize::MAX).is_err());
    assert!(arena.alloc::<float4>(usize::MAX / 16 + 1).is_err());
    assert!(arena.alloc::<u8>(0).is_err());
    assert!(arena.alloc_pitched::<u8>(usize::MAX, usize::MAX).is_err());
    assert!(arena.alloc_pitched::<float4>(usize::MAX / 16, 2).is_err());
    assert!(arena.alloc_pitched::<u8>(1, usize::MAX).is_err());
    assert!(arena.alloc_pitched::<u8>(0, 1).is_err());
    let mut plan = Plan::new();
    let _big = plan.array::<float4>(usize::MAX);
    let _wide = plan.pitched::<u32>(usize::MAX, 3);
    assert!(arena.carve(&plan).is_err());
    let mut a = arena.alloc::<u32>(4).unwrap();
    assert!(arena.write_range(&mut a, usize::MAX, &[1]).is_err());
    assert!(arena.write_range(&mut a, 4, &[1]).is_err());
    assert!(arena.write_range(&mut a, 3, &[1]).is_ok());
    let mut out = [0u32; 2];
    assert!(arena.read_range(&a, usize::MAX - 1, &mut out).is_err());
    let image = arena.alloc_pitched::<u32>(3, 2).unwrap();
    assert!(arena.row(&image, usize::MAX).is_err());
    assert!(arena.row(&image, 2).is_err());
    arena.free(a).unwrap();
    arena.free_pitched(image).unwrap();
    assert_eq!(arena.live(), 0);
}

#[test]
fn arenas_refuse_extreme_alignments_and_lengths() {
    for (len, min_align, pitch_align) in [
        (0, 256, 512),
        (u64::MAX, 256, 512),
        (4096, 0, 512),
        (4096, 3, 512),
        (4096, 256, 0),
        (4096, 256, 6),
        (4096, 1 << 63, 512),
        (4096, 256, 1 << 63),
    ] {
        assert!(
            Arena::host_with_alignment(len, min_align, pitch_align).is_err(),
            "{len} {min_align} {pitch_align}"
        );
    }
    // Alignments the buffer's address cannot give are refused per request.
    let buffer = HostBuffer::new(4096, 256).unwrap();
    let mut arena = Arena::with_alignment(buffer, 1, 1 << 62).unwrap();
    assert!(arena.alloc_pitched::<u8>(1, 1).is_err());
    assert!(arena.alloc_pitched::<u8>(1, 3).is_err());
    let a = arena.alloc::<u8>(1).unwrap();
    let b = arena.alloc::<float4>(1).unwrap();
    assert_eq!(arena.offset(&b).unwrap() % 16, 0);
    arena.free(a).unwrap();
    arena.free(b).unwrap();
}

#[derive(Clone, Copy, Debug, PartialEq, gpu_aligned::GpuSoa)]
pub struct Body {
    pub mass: f32,
    pub position: float4,
}

#[test]
fn a_column_swapped_for_a_shorter_one_gives_no_view() {
    let mut arena = Arena::host(1 << 16).unwrap();
    let mut soa = arena.alloc_soa::<Body>(100).unwrap();
    let mut short = arena.alloc::<float4>(1).unwrap();
    core::mem::swap(&mut soa.columns_mut().position, &mut short);
    assert!(matches!(
        arena.soa_view(&soa),
        Err(ArenaError::LengthMismatch { .. })
    ));
    let body = Body {
        mass: 1.0,
        position: float4::new(1.0, 2.0, 3.0, 4.0),
    };
    assert!(arena.write_soa(&mut soa, &[body; 100]).is_err());
    assert!(arena.read_soa(&soa).is_err());
    core::mem::swap(&mut soa.columns_mut().position, &mut short);
    assert_eq!(arena.soa_view(&soa).unwrap().len, 100);
    arena.free_soa(soa).unwrap();
    arena.free(short).unwrap();
    assert_eq!(arena.live(), 0);
}

#[test]
fn the_same_buffer_under_a_new_arena_refuses_the_old_handles() {
    let mut arena = Arena::host(4096).unwrap();
    let mut old = arena.alloc::<u32>(4).unwrap();
    arena.write(&mut old, &[1, 2, 3, 4]).unwrap();
    let mut again = Arena::new(arena.into_backend()).unwrap();
    let mut new = again.alloc::<u32>(4).unwrap();
    assert_eq!(again.offset(&new).unwrap(), 0);
    assert!(matches!(again.get(&old), Err(ArenaError::Handle(_))));
    assert!(matches!(
        again.get_mut(&mut old),
        Err(ArenaError::Handle(_))
    ));
    assert!(again.write(&mut old, &[9; 4]).is_err());
    assert_eq!(again.get_mut(&mut new).unwrap(), &[1, 2, 3, 4]);
    assert!(again.free(old).is_err());
    again.free(new).unwrap();
}

#[test]
fn a_host_reservation_refuses_extreme_lengths() {
    use gpu_aligned::backend::HostVm;
    assert!(HostVm::reserve(0, 256).is_err());
    assert!(HostVm::reserve(u64::MAX, 256).is_err());
    assert!(HostVm::reserve(4096, 3).is_err());
    assert!(HostVm::reserve(4096, 1 << 63).is_err());
    let page = HostVm::page_size();
    let mut vm = HostVm::reserve(2 * page, 256).unwrap();
    assert!(vm.commit(u64::MAX).is_err());
    assert!(vm.commit(2 * page + 1).is_err());
    assert_eq!(vm.committed(), 0);
    vm.commit(1).unwrap();
    vm.committed_bytes_mut()[0] = 7;
    vm.decommit(u64::MAX).unwrap();
    assert_eq!(vm.committed(), page);
    vm.decommit(0).unwrap();
    assert_eq!(vm.committed(), 0);
    vm.commit(2 * page).unwrap();
    assert_eq!(vm.committed_bytes()[0], 0);
}

#[test]
fn growth_policies_at_the_edges_are_refused_or_bounded() {
    use gpu_aligned::arena::GrowthPolicy;
    let chunk = 64 << 10;
    for policy in [
        GrowthPolicy::up_to(0),
        GrowthPolicy::up_to(1 << 20).with_chunk(0),
        GrowthPolicy::up_to(1 << 20).with_chunk(3),
        GrowthPolicy::up_to(1 << 20)
            .with_chunk(chunk)
            .with_initial(u64::MAX),
        GrowthPolicy::up_to(u64::MAX).with_chunk(u64::MAX),
    ] {
        assert!(Arena::host_growing(policy).is_err(), "{policy:?}");
    }
    // Reserving address space is free off Miri; under Miri it is memory.
    if !cfg!(miri) {
        let huge = GrowthPolicy::up_to(u64::MAX).with_chunk(chunk);
        if let Ok(mut arena) = Arena::host_growing(huge) {
            assert!(arena.alloc::<float4>(usize::MAX).is_err());
            assert!(arena.alloc::<u8>(usize::MAX).is_err());
        }
    }
    let policy = GrowthPolicy::up_to(4 * chunk)
        .with_chunk(chunk)
        .with_initial(chunk);
    let mut arena = Arena::host_growing(policy).unwrap();
    assert!(arena.alloc::<u8>(4 * chunk as usize + 1).is_err());
    let first = arena.alloc::<u8>(16).unwrap();
    let mut last = arena.alloc::<u32>(chunk as usize / 2).unwrap();
    assert!(arena.capacity() > chunk);
    arena.get_mut(&mut last).unwrap().fill(7);
    arena.free(first).unwrap();
    // `last` ends the used bytes: a trim keeps it whole.
    arena.trim().unwrap();
    assert!(arena.get(&last).unwrap().iter().all(|&v| v == 7));
    let end = arena.offset(&last).unwrap() + last.size_bytes();
    assert!(arena.capacity() >= end);
    let kept = arena.alloc::<u32>(1).unwrap();
    arena.free(last).unwrap();
    arena.trim().unwrap();
    assert_eq!(arena.capacity(), chunk);
    // The bytes given back come back zeroed; those kept hold what they held.
    let mut regrown = arena.alloc::<u32>(chunk as usize / 2).unwrap();
    let start = arena.offset(&regrown).unwrap();
    assert!(start < chunk);
    let values = arena.get_mut(&mut regrown).unwrap();
    let given_back = (chunk - start) as usize / 4;
    assert!(values[..given_back].iter().all(|&v| v == 7));
    assert!(values[given_back..].iter().all(|&v| v == 0));
    arena.free(regrown).unwrap();
    arena.free(kept).unwrap();
}

#[test]
fn plan_sizes_at_the_edges_are_errors() {
    let mut plan = Plan::new();
    let _small = plan.array::<u8>(1);
    assert!(plan.bytes_needed(0, 512).is_err());
    assert!(plan.bytes_needed(256, 3).is_err());
    assert!(plan.bytes_needed(1 << 63, 512).is_err());
    assert!(plan.bytes_needed(256, 1 << 63).is_ok());
    let _empty = plan.array::<u32>(0);
    assert!(plan.bytes_needed(256, 512).is_err());
    let mut plan = Plan::new();
    for _ in 0..3 {
        let _huge = plan.array::<float4>(usize::MAX / 32);
    }
    assert!(plan.bytes_needed(256, 512).is_err());
    let mut plan = Plan::new();
    let _tall = plan.pitched::<u8>(1, usize::MAX);
    assert!(plan.bytes_needed(256, 512).is_err());
}
