//! Attacks by safe code on the allocator, the arena and structures of
//! arrays: extreme sizes, alignments and lengths give typed errors, never a
//! panic or an overlapping block; handles and columns swapped behind the
//! arena's back are refused; long runs of every verb, growth, trims and
//! resets keep each live array's contents and refuse every stale handle;
//! threads sharing an arena, with or without its lock, reach only their own
//! arrays, even while another thread resets it.

use crate::support::GrowingArena;
use gpu_aligned::alloc::Allocator;
use gpu_aligned::arena::ArenaOptions;
use gpu_aligned::arena::{Arena, ArenaError, Plan};
use gpu_aligned::backend::HostBuffer;
use gpu_aligned::vector::float4;

use crate::support::{assert_consistent, page_size, Rng};

/// Sizes and alignments at the edges of `usize`.
fn extreme(rng: &mut Rng) -> usize {
    match rng.pick(8) {
        0 => 0,
        1 => usize::MAX,
        2 => usize::MAX - rng.pick(300),
        3 => 1 << rng.pick(usize::BITS as usize),
        4 => (1 << rng.pick(usize::BITS as usize)) + 1,
        5 => rng.pick(usize::MAX),
        _ => rng.pick(5000),
    }
}

#[test]
fn the_allocator_survives_extreme_requests() {
    let mut rng = Rng(0x0bad_f00d);
    let rounds = if cfg!(miri) { 3 } else { 200 };
    for round in 0..rounds {
        let capacity = extreme(&mut rng);
        let granularity = 1 << rng.pick(usize::BITS as usize);
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
                    let a = live.swap_remove(rng.pick(live.len()));
                    allocator.free(a).unwrap();
                }
                4 => {
                    let _ = allocator.grow_to(extreme(&mut rng));
                }
                _ => {
                    let _ = allocator.shrink_to(extreme(&mut rng));
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
                assert!(a.end() <= allocator.capacity() as u64);
            }
        }
    }
}

#[test]
fn growing_and_shrinking_never_overlaps_blocks() {
    let mut rng = Rng(0x5eed_9a0e);
    let (rounds, steps) = if cfg!(miri) { (1, 60) } else { (20, 300) };
    for _ in 0..rounds {
        let granularity = 1 << rng.pick(9);
        let mut allocator =
            Allocator::with_granularity(1 + rng.pick(1 << 14), granularity).unwrap();
        let mut live = Vec::new();
        for _ in 0..steps {
            match rng.below(7) {
                0..=2 => {
                    let size = 1 + rng.pick(2048);
                    if let Ok(a) = allocator.alloc(size, 1 << rng.pick(12)) {
                        live.push(a);
                    }
                }
                3 | 4 if !live.is_empty() => {
                    let a = live.swap_remove(rng.pick(live.len()));
                    allocator.free(a).unwrap();
                }
                5 => {
                    let capacity = allocator.capacity();
                    let _ = allocator.grow_to(capacity + rng.pick(4096));
                }
                _ => {
                    let tail = allocator.free_tail();
                    let capacity = allocator.capacity();
                    let target = capacity.saturating_sub(rng.pick(tail + 2));
                    let shrunk = allocator.shrink_to(target);
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
                assert!(a.end() <= allocator.capacity() as u64);
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
    assert!(arena.alloc::<u8>(0).unwrap().is_empty());
    assert!(arena.alloc_pitched::<u8>(usize::MAX, usize::MAX).is_err());
    assert!(arena.alloc_pitched::<float4>(usize::MAX / 16, 2).is_err());
    assert!(arena.alloc_pitched::<u8>(1, usize::MAX).is_err());
    assert_eq!(arena.alloc_pitched::<u8>(0, 1).unwrap().size_bytes(), 0);
    let mut plan = Plan::new();
    let _big = plan.array::<float4>(usize::MAX);
    let _wide = plan.pitched::<u32>(usize::MAX, 3);
    assert!(arena.carve(&plan).is_err());
    let mut a = arena.alloc::<u32>(4).unwrap();
    assert!(arena.write(&mut a, usize::MAX.., &[1]).is_err());
    assert!(arena.write(&mut a, usize::MAX..=usize::MAX, &[1]).is_err());
    assert!(arena.write(&mut a, 4..5, &[1]).is_err());
    assert!(arena.write(&mut a, 3..4, &[1]).is_ok());
    let mut out = [0u32; 2];
    assert!(arena.read(&a, usize::MAX - 1.., &mut out).is_err());
    assert!(arena
        .read(&a, usize::MAX - 1..=usize::MAX, &mut out)
        .is_err());
    let image = arena.alloc_pitched::<u32>(3, 2).unwrap();
    assert!(arena.row(&image, usize::MAX).is_err());
    assert!(arena.row(&image, 2).is_err());
    arena.free(a).unwrap();
    arena.free(image).unwrap();
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
            ArenaOptions::new()
                .min_align(min_align)
                .pitch_align(pitch_align)
                .host(len as usize)
                .is_err(),
            "{len} {min_align} {pitch_align}"
        );
    }
    // Alignments the buffer's address cannot give are refused per request.
    let buffer = HostBuffer::new(4096, 256).unwrap();
    let mut arena = ArenaOptions::new()
        .min_align(1)
        .pitch_align(1 << 62)
        .over(buffer)
        .unwrap();
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
        arena.read_soa(&soa),
        Err(ArenaError::LengthMismatch { .. })
    ));
    let body = Body {
        mass: 1.0,
        position: float4::new(1.0, 2.0, 3.0, 4.0),
    };
    assert!(arena.write_soa(&mut soa, &[body; 100]).is_err());
    core::mem::swap(&mut soa.columns_mut().position, &mut short);
    assert_eq!(arena.read_soa(&soa).unwrap().len(), 100);
    arena.free(soa).unwrap();
    arena.free(short).unwrap();
    assert_eq!(arena.live(), 0);
}

#[test]
fn the_same_buffer_under_a_new_arena_refuses_the_old_handles() {
    let mut arena = Arena::host(4096).unwrap();
    let mut old = arena.alloc::<u32>(4).unwrap();
    arena.write(&mut old, .., &[1, 2, 3, 4]).unwrap();
    let mut again = ArenaOptions::new().over(arena.into_backend()).unwrap();
    let mut new = again.alloc::<u32>(4).unwrap();
    assert_eq!(again.offset(&new).unwrap(), 0);
    assert!(matches!(again.get(&old), Err(ArenaError::Handle(_))));
    assert!(matches!(
        again.get_mut(&mut old),
        Err(ArenaError::Handle(_))
    ));
    assert!(again.write(&mut old, .., &[9; 4]).is_err());
    assert_eq!(again.get_mut(&mut new).unwrap(), &[1, 2, 3, 4]);
    assert!(again.free(old).is_err());
    again.free(new).unwrap();
}

#[test]
fn growth_policies_at_the_edges_are_refused_or_bounded() {
    use gpu_aligned::arena::GrowthPolicy;
    let chunk: usize = 64 << 10;
    for policy in [
        GrowthPolicy::up_to(0),
        GrowthPolicy::up_to(1 << 20).with_chunk(0),
        GrowthPolicy::up_to(1 << 20).with_chunk(3),
        GrowthPolicy::up_to(1 << 20)
            .with_chunk(chunk)
            .with_initial(usize::MAX),
        GrowthPolicy::up_to(usize::MAX).with_chunk(usize::MAX),
    ] {
        assert!(
            ArenaOptions::new().growing_host(policy).is_err(),
            "{policy:?}"
        );
    }
    // Reserving address space is free off Miri; under Miri it is memory.
    if !cfg!(miri) {
        let huge = GrowthPolicy::up_to(usize::MAX).with_chunk(chunk);
        if let Ok(mut arena) = ArenaOptions::new().growing_host(huge) {
            assert!(arena.alloc::<float4>(usize::MAX).is_err());
            assert!(arena.alloc::<u8>(usize::MAX).is_err());
        }
    }
    let policy = GrowthPolicy::up_to(4 * chunk)
        .with_chunk(chunk)
        .with_initial(chunk);
    let mut arena = ArenaOptions::new().growing_host(policy).unwrap();
    assert!(arena.alloc::<u8>(4 * chunk + 1).is_err());
    let first = arena.alloc::<u8>(16).unwrap();
    let mut last = arena.alloc::<u32>(chunk / 2).unwrap();
    assert!(arena.capacity() > chunk);
    arena.get_mut(&mut last).unwrap().fill(7);
    arena.free(first).unwrap();
    // `last` ends the used bytes: a trim keeps it whole.
    arena.trim().unwrap();
    assert!(arena.get(&last).unwrap().iter().all(|&v| v == 7));
    let end = arena.offset(&last).unwrap() + last.size_bytes() as u64;
    assert!(arena.capacity() as u64 >= end);
    let kept = arena.alloc::<u32>(1).unwrap();
    arena.free(last).unwrap();
    arena.trim().unwrap();
    assert_eq!(arena.capacity(), chunk);
    // The bytes given back come back zeroed; those kept hold what they held.
    // (An array of a chunk or more goes high in a growing arena, so this
    // one may lie wholly in the regrown bytes.)
    let mut regrown = arena.alloc::<u32>(chunk / 2).unwrap();
    let start = arena.offset(&regrown).unwrap() as usize;
    let below = (chunk.saturating_sub(start) / 4).min(chunk / 2);
    let values = arena.get_mut(&mut regrown).unwrap();
    assert!(values[..below].iter().all(|&v| v == 7));
    assert!(values[below..].iter().all(|&v| v == 0));
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
    assert_eq!(plan.bytes_needed(256, 512), Ok(1));
    let mut plan = Plan::new();
    for _ in 0..3 {
        let _huge = plan.array::<float4>(usize::MAX / 32);
    }
    assert!(plan.bytes_needed(256, 512).is_err());
    let mut plan = Plan::new();
    let _tall = plan.pitched::<u8>(1, usize::MAX);
    assert!(plan.bytes_needed(256, 512).is_err());
}

/// What one array of [`churn`] holds: every element is its stamp.
enum Held {
    Flat(gpu_aligned::arena::ArenaSlice<u32>),
    Rows(gpu_aligned::arena::Pitched<u32>),
    Columns(gpu_aligned::soa::Soa<Body>),
}

fn body(stamp: u32) -> Body {
    // Stamps stay below 2^24, so they are exact as `f32`.
    let s = stamp as f32;
    Body {
        mass: s,
        position: float4::new(s, s, s, s),
    }
}

/// Whether `held` is a live array of `arena` that still holds `stamp`
/// everywhere (`None` when the arena refuses the handle).
fn holds(arena: &Arena<HostBuffer>, held: &Held, stamp: u32) -> Option<bool> {
    match held {
        Held::Flat(a) => Some(arena.get(a).ok()?.iter().all(|&v| v == stamp)),
        Held::Rows(image) => {
            let mut packed = vec![0; image.width() * image.height()];
            arena.read(image, .., &mut packed).ok()?;
            Some(packed.iter().all(|&v| v == stamp))
        }
        Held::Columns(soa) => Some(arena.read_soa(soa).ok()?.iter().all(|&b| b == body(stamp))),
    }
}

/// Tries every verb on a handle the arena no longer holds: each must be
/// refused, and none may write (the live arrays are checked after).
fn refuse_everything(arena: &mut Arena<HostBuffer>, held: Held, stamp: u32) {
    assert_eq!(
        holds(arena, &held, stamp),
        None,
        "a stale handle gave a view"
    );
    match held {
        Held::Flat(mut a) => {
            let len = a.len();
            assert!(arena.get_mut(&mut a).is_err());
            assert!(arena.write(&mut a, .., &vec![u32::MAX; len]).is_err());
            assert!(arena.zero(&mut a).is_err());
            assert!(arena.offset(&a).is_err());
            assert!(arena.free(a).is_err());
        }
        Held::Rows(mut image) => {
            let len = image.width() * image.height();
            assert!(arena.row_mut(&mut image, 0).is_err());
            assert!(arena.write(&mut image, .., &vec![u32::MAX; len]).is_err());
            assert!(arena.free(image).is_err());
        }
        Held::Columns(mut soa) => {
            let len = soa.len();
            assert!(arena.read_soa(&soa).is_err());
            assert!(arena.write_soa(&mut soa, &vec![body(0); len]).is_err());
            assert!(arena.get_mut(&mut soa.columns_mut().mass).is_err());
            assert!(arena.free(soa).is_err());
        }
    }
}

/// Many rounds of allocating, carving, writing, freeing, trimming and
/// resetting, keeping stale handles around: after every step each live
/// array still holds what was written into it, and every stale handle is
/// refused by every verb, even where its bytes now belong to a new array.
fn churn(arena: &mut Arena<HostBuffer>, seed: u64, steps: usize) {
    // Miri checks every byte touched: smaller arrays keep it quick.
    let most = if cfg!(miri) { 200 } else { 3000 };
    let mut rng = Rng(seed);
    let mut live: Vec<(u32, Held)> = Vec::new();
    let mut stale: Vec<(u32, Held)> = Vec::new();
    for step in 0..steps {
        // Never 0, which a fresh or zeroed array holds.
        let stamp = step as u32 + 1;
        match rng.below(16) {
            0..=3 => {
                let len = 1 + rng.below(most) as usize;
                if let Ok(mut a) = arena.alloc::<u32>(len) {
                    arena.get_mut(&mut a).unwrap().fill(stamp);
                    live.push((stamp, Held::Flat(a)));
                }
            }
            4 | 5 => {
                let (width, height) =
                    (1 + rng.below(most / 10) as usize, 1 + rng.below(8) as usize);
                if let Ok(mut image) = arena.alloc_pitched::<u32>(width, height) {
                    arena
                        .write(&mut image, .., &vec![stamp; width * height])
                        .unwrap();
                    live.push((stamp, Held::Rows(image)));
                }
            }
            6 => {
                let len = 1 + rng.below(most / 6) as usize;
                if let Ok(mut soa) = arena.alloc_soa::<Body>(len) {
                    arena.write_soa(&mut soa, &vec![body(stamp); len]).unwrap();
                    live.push((stamp, Held::Columns(soa)));
                }
            }
            7 => {
                // A plan: one array taken, one left in the carving.
                let mut plan = Plan::new();
                let taken = plan.array::<u32>(1 + rng.below(most / 3) as usize);
                let _left = plan.pitched::<u8>(1 + rng.below(600) as usize, 2);
                if let Ok(mut carving) = arena.carve(&plan) {
                    let mut a = carving.take(taken).unwrap();
                    arena.get_mut(&mut a).unwrap().fill(stamp);
                    live.push((stamp, Held::Flat(a)));
                    arena.free(carving).unwrap();
                }
            }
            8..=11 if !live.is_empty() => {
                let (_, held) = live.swap_remove(rng.pick(live.len()));
                match held {
                    Held::Flat(a) => arena.free(a).unwrap(),
                    Held::Rows(image) => arena.free(image).unwrap(),
                    Held::Columns(soa) => arena.free(soa).unwrap(),
                }
            }
            12 | 13 => {
                arena.trim().unwrap();
            }
            14 if rng.below(4) == 0 => {
                arena.reset().unwrap();
                stale.append(&mut live);
            }
            _ => {
                // A stale handle tries its luck against the current arrays.
                if !stale.is_empty() {
                    let (old, held) = stale.swap_remove(rng.below(stale.len() as u64) as usize);
                    refuse_everything(arena, held, old);
                }
            }
        }
        for (stamp, held) in &live {
            assert_eq!(holds(arena, held, *stamp), Some(true), "step {step}");
        }
        assert_eq!(arena.live() as u64, live.len() as u64 + soa_extra(&live));
        assert_consistent(arena.allocator());
    }
    for (old, held) in stale {
        refuse_everything(arena, held, old);
    }
    for (stamp, held) in &live {
        assert_eq!(holds(arena, held, *stamp), Some(true));
    }
    arena.reset().unwrap();
    assert_eq!(arena.live(), 0);
}

/// An SoA of [`Body`] is two arrays of the arena.
fn soa_extra(live: &[(u32, Held)]) -> u64 {
    live.iter()
        .filter(|(_, held)| matches!(held, Held::Columns(_)))
        .count() as u64
}

#[test]
fn a_fixed_arena_keeps_every_array_through_churn_and_refuses_stale_handles() {
    let steps = if cfg!(miri) { 30 } else { 400 };
    let mut arena = Arena::host(1 << 17).unwrap();
    churn(&mut arena, 0xc4a0_5eed, steps);
}

#[test]
fn a_growing_arena_keeps_every_array_through_growth_and_trims() {
    use gpu_aligned::arena::GrowthPolicy;
    let steps = if cfg!(miri) { 30 } else { 400 };
    let chunk = 4 * page_size();
    let policy = GrowthPolicy::up_to(16 * chunk).with_chunk(chunk);
    let mut arena = ArenaOptions::new().growing_host(policy).unwrap();
    churn(&mut arena, 0x9e0_3e11, steps);
    assert!(arena.capacity() >= chunk);
}

#[test]
fn threads_racing_a_reset_never_reach_each_others_arrays() {
    use gpu_aligned::alloc::HandleError;
    let (threads, steps) = if cfg!(miri) { (2, 24) } else { (4, 400) };
    let shared = std::sync::Mutex::new(Arena::host(1 << 16).unwrap());
    std::thread::scope(|scope| {
        for id in 0..threads {
            let shared = &shared;
            scope.spawn(move || {
                let mut rng = Rng(id + 1);
                let mut live: Vec<(u64, gpu_aligned::arena::ArenaSlice<u64>)> = Vec::new();
                for step in 0..steps {
                    let stamp = (id << 32) | step;
                    match rng.below(8) {
                        0..=2 => {
                            let len = 1 + rng.below(64) as usize;
                            let Ok(mut a) = shared.lock().unwrap().alloc::<u64>(len) else {
                                continue;
                            };
                            // Another thread's reset may come between the
                            // two locks: the write is then refused.
                            let written = shared
                                .lock()
                                .unwrap()
                                .get_mut(&mut a)
                                .map(|v| v.fill(stamp));
                            if written.is_ok() {
                                live.push((stamp, a));
                            }
                        }
                        3 | 4 if !live.is_empty() => {
                            let (stamp, a) = live.swap_remove(rng.pick(live.len()));
                            let mut arena = shared.lock().unwrap();
                            // A live handle shows what this thread wrote,
                            // whatever the others did meanwhile.
                            if let Ok(values) = arena.get(&a) {
                                assert!(values.iter().all(|&v| v == stamp), "{id} {step}");
                            }
                            if let Err(refused) = arena.free(a) {
                                assert_eq!(
                                    refused.error,
                                    ArenaError::Handle(HandleError::StaleHandle)
                                );
                            }
                        }
                        5 if id == 0 => shared.lock().unwrap().reset().unwrap(),
                        _ => {
                            // Rewrite every array this thread holds; those a
                            // reset made stale are refused, never written.
                            let arena = shared.lock().unwrap();
                            for (stamp, a) in &mut live {
                                let values = vec![*stamp; a.len()];
                                if arena.write(a, .., &values).is_err() {
                                    assert!(arena.offset(a).is_err());
                                }
                            }
                        }
                    }
                }
                let arena = shared.lock().unwrap();
                for (stamp, a) in &live {
                    if let Ok(values) = arena.get(a) {
                        assert!(values.iter().all(|&v| v == *stamp));
                    }
                }
            });
        }
    });
    let arena = shared.into_inner().unwrap();
    assert_consistent(arena.allocator());
}

#[test]
fn threads_write_their_own_arrays_through_one_shared_arena_without_a_lock() {
    let (threads, rounds) = if cfg!(miri) { (3, 2) } else { (8, 50) };
    let mut arena = Arena::host(1 << 16).unwrap();
    let mut arrays: Vec<_> = (0..threads)
        .map(|_| arena.alloc::<u32>(33).unwrap())
        .collect();
    let image = arena.alloc_pitched::<u32>(5, 3).unwrap();
    let shared = &arena;
    std::thread::scope(|scope| {
        for (id, array) in arrays.iter_mut().enumerate() {
            let image = &image;
            scope.spawn(move || {
                for round in 0..rounds {
                    let stamp = (id * 1000 + round) as u32;
                    shared.get_mut(array).unwrap().fill(stamp);
                    // A neighbour's row is read while others write.
                    assert_eq!(shared.row(image, id % 3).unwrap(), &[0; 5]);
                    assert!(shared.get(array).unwrap().iter().all(|&v| v == stamp));
                }
            });
        }
    });
    for (id, array) in arrays.iter().enumerate() {
        let last = (id * 1000 + rounds - 1) as u32;
        assert!(arena.get(array).unwrap().iter().all(|&v| v == last));
    }
    for array in arrays {
        arena.free(array).unwrap();
    }
    arena.free(image).unwrap();
}

#[test]
fn pitched_rows_at_the_edges_of_the_pitch_are_refused_or_exact() {
    use gpu_aligned::arena::GrowthPolicy;
    // Pitch alignment 1 packs byte rows; the last row ends the buffer.
    let mut arena = ArenaOptions::new()
        .min_align(1)
        .pitch_align(1)
        .over(HostBuffer::new(15, 256).unwrap())
        .unwrap();
    let mut image = arena.alloc_pitched::<u8>(3, 5).unwrap();
    assert_eq!((image.pitch(), image.padding_bytes()), (3, 0));
    let packed: Vec<u8> = (1..=15).collect();
    arena.write(&mut image, .., &packed).unwrap();
    assert_eq!(arena.row(&image, 4).unwrap(), &[13, 14, 15]);
    arena.row_mut(&mut image, 4).unwrap()[2] = 99;
    assert_eq!(arena.bytes()[14], 99);
    assert!(arena.row(&image, 5).is_err());
    assert!(arena.row(&image, usize::MAX).is_err());
    assert!(arena.alloc_pitched::<u8>(1, 1).is_err());
    arena.free(image).unwrap();
    // Wider elements keep whole, aligned rows whatever the pitch alignment.
    let rows = arena.alloc_pitched::<u32>(1, 3).unwrap();
    assert_eq!(rows.pitch(), 4);
    arena.free(rows).unwrap();

    let chunk = 4 * page_size();
    let policy = GrowthPolicy::up_to(8 * chunk).with_chunk(chunk);
    let fixed = ArenaOptions::new()
        .min_align(256)
        .pitch_align(1)
        .over(HostBuffer::new(1 << 16, 256).unwrap())
        .unwrap();
    let growing = ArenaOptions::new()
        .min_align(256)
        .pitch_align(1)
        .growing_host(policy)
        .unwrap();
    for mut arena in [fixed, growing] {
        let edges = [
            (usize::MAX, 1),
            (usize::MAX, 2),
            (usize::MAX / 16, 1),
            (usize::MAX / 16 + 1, 1),
            (usize::MAX / 16 - 31, 1),
            (1 << 60, 16),
            (1, usize::MAX),
            (2, usize::MAX / 2 + 1),
        ];
        for (width, height) in edges {
            assert!(arena.alloc_pitched::<float4>(width, height).is_err());
            assert!(arena.alloc_pitched::<u8>(width, height).is_err());
            let mut plan = Plan::new();
            let _small = plan.pitched::<u8>(3, 3);
            let _edge = plan.pitched::<u64>(width, height);
            assert!(arena.carve(&plan).is_err());
            assert_eq!(arena.live(), 0, "{width} x {height}");
        }
        // No elements in any number of rows, or no rows, is an empty
        // array, unless the row's size overflows.
        assert_eq!(
            arena
                .alloc_pitched::<u8>(0, usize::MAX)
                .unwrap()
                .size_bytes(),
            0
        );
        assert_eq!(
            arena
                .alloc_pitched::<u8>(usize::MAX, 0)
                .unwrap()
                .size_bytes(),
            0
        );
        assert!(arena.alloc_pitched::<float4>(usize::MAX, 0).is_err());
        assert_eq!(arena.live(), 0);
        // Still whole: one array fills what the arena may span.
        let capacity = arena.growth().max();
        let mut last = arena.alloc_pitched::<u8>(1024, capacity / 1024).unwrap();
        let height = last.height();
        arena.row_mut(&mut last, height - 1).unwrap().fill(7);
        assert_eq!(arena.row(&last, height - 1).unwrap()[1023], 7);
        arena.free(last).unwrap();
    }
}

#[test]
fn keys_outlive_a_reset_but_the_arrays_they_redeem_do_not() {
    use gpu_aligned::arena::GrowthPolicy;
    let mut arena = Arena::host(1 << 14).unwrap();
    let mut plan = Plan::new();
    let flat = plan.array::<u32>(64);
    let rows = plan.pitched::<u32>(8, 4);
    let columns = plan.soa::<Body>(16);
    let mut carving = arena.carve(&plan).unwrap();
    let mut early = carving.take(flat).unwrap();
    arena.write(&mut early, .., &[5; 64]).unwrap();
    let at = arena.offset(&early).unwrap();
    arena.reset().unwrap();
    // A new array takes the same bytes.
    let mut fresh = arena.alloc::<u32>(64).unwrap();
    assert_eq!(arena.offset(&fresh).unwrap(), at);
    arena.write(&mut fresh, .., &[7; 64]).unwrap();
    // The keys still redeem what the carving holds, but what they give is
    // stale: every verb refuses it, and nothing reaches the new array.
    let mut image = carving.take_pitched(rows).unwrap();
    let mut soa = carving.take_soa(columns).unwrap();
    assert!(matches!(arena.get(&early), Err(ArenaError::Handle(_))));
    assert!(arena.write(&mut early, .., &[9; 64]).is_err());
    assert!(arena.zero(&mut early).is_err());
    assert!(arena.write(&mut image, .., &[9; 32]).is_err());
    assert!(arena.row(&image, 0).is_err());
    assert!(arena.write_soa(&mut soa, &[body(9); 16]).is_err());
    assert!(arena.read_soa(&soa).is_err());
    assert_eq!(arena.to_vec(&fresh).unwrap(), [7; 64]);
    assert_eq!(carving.take(flat).unwrap_err(), ArenaError::AlreadyTaken);
    // The emptied carving frees nothing; stale arrays are refused and kept.
    arena.free(carving).unwrap();
    assert!(arena.free(early).is_err());
    assert!(arena.free(image).is_err());
    assert!(arena.free(soa).is_err());
    assert_eq!(arena.live(), 1);

    // The same plan carved in this arena and in a growing twin: each key
    // redeems in both, and each array answers to its own arena only.
    let chunk = 4 * page_size();
    let mut twin = ArenaOptions::new()
        .growing_host(GrowthPolicy::up_to(4 * chunk).with_chunk(chunk))
        .unwrap();
    let mut here = arena.carve(&plan).unwrap();
    let mut there = twin.carve(&plan).unwrap();
    let mut a = here.take(flat).unwrap();
    let mut b = there.take(flat).unwrap();
    arena.write(&mut a, .., &[1; 64]).unwrap();
    twin.write(&mut b, .., &[2; 64]).unwrap();
    assert!(twin.get(&a).is_err());
    assert!(arena.write(&mut b, .., &[3; 64]).is_err());
    assert_eq!(twin.to_vec(&b).unwrap(), [2; 64]);
    let b = arena.free(b).unwrap_err().handle;
    let there = arena.free(there).unwrap_err().handle;
    twin.free(b).unwrap();
    twin.free(there).unwrap();
    arena.free(a).unwrap();
    arena.free(here).unwrap();
    arena.free(fresh).unwrap();
    assert_eq!((arena.live(), twin.live()), (0, 0));
}

/// The growth policy's arithmetic at the same edges is a unit test of
/// `runtime/src/arena/growth.rs`: only the arena calls it.
#[test]
fn plan_arithmetic_at_the_edges_never_panics() {
    let mut rng = Rng(0x6e0_7a1e);
    let rounds = if cfg!(miri) { 50 } else { 5000 };
    for _ in 0..rounds {
        let mut plan = Plan::new();
        for _ in 0..rng.below(4) {
            let len = extreme(&mut rng);
            match rng.below(3) {
                0 => {
                    let _key = plan.array::<float4>(len);
                }
                1 => {
                    let _key = plan.pitched::<u16>(len, extreme(&mut rng));
                }
                _ => {
                    let _key = plan.soa::<Body>(len);
                }
            }
        }
        let _ = plan.bytes_needed(extreme(&mut rng), extreme(&mut rng));
    }
}
