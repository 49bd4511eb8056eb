//! Growing host arenas: addresses and contents kept through growth, the
//! maximum refused with a typed error, memory given back by `trim`, and a
//! fixed arena far larger than RAM that costs only what it touches.

use crate::support::{address_of, page_size, GrowingArena};
use gpu_aligned::alloc::AllocError;
use gpu_aligned::arena::ArenaOptions;
use gpu_aligned::arena::{Arena, ArenaError, GrowthError, GrowthPolicy, DEFAULT_CHUNK};
use gpu_aligned::backend::Buffer;

/// Small enough for Miri, whose fallback allocates the whole maximum.
const CHUNK: usize = 64 << 10;

fn small_policy(max: usize) -> GrowthPolicy {
    GrowthPolicy::up_to(max).with_chunk(CHUNK)
}

#[test]
fn a_policy_says_what_it_was_made_with() {
    let fixed = GrowthPolicy::fixed();
    assert!(!fixed.grows() && !GrowthPolicy::default().grows());
    assert_eq!(
        (fixed.initial(), fixed.max()),
        (DEFAULT_CHUNK, DEFAULT_CHUNK)
    );
    assert_eq!(fixed.with_initial(4096).max(), 4096);
    let policy = GrowthPolicy::up_to(1 << 30);
    assert!(policy.grows());
    assert_eq!(
        (policy.initial(), policy.max(), policy.chunk()),
        (DEFAULT_CHUNK, 1 << 30, DEFAULT_CHUNK)
    );
    assert_eq!(policy.with_chunk(8 << 20).chunk(), 8 << 20);
    assert_eq!(policy.with_chunk(8 << 20).initial(), 8 << 20);
    assert_eq!(policy.with_initial(4 << 20).initial(), 4 << 20);
}

#[test]
fn an_arena_settles_its_policy_in_whole_chunks_and_grows_by_them() {
    let mut arena = ArenaOptions::new()
        .growth(small_policy(16 * CHUNK + 1))
        .host(CHUNK)
        .unwrap();
    assert_eq!(arena.growth().max(), 16 * CHUNK);
    assert_eq!(arena.capacity(), CHUNK);
    let one = ArenaOptions::new().growth(small_policy(16 * CHUNK));
    assert_eq!(one.host(1).unwrap().capacity(), CHUNK); // rounded up
    let big = arena.alloc::<u8>(5 * CHUNK / 2).unwrap();
    assert_eq!(arena.capacity(), 3 * CHUNK);
    arena.free(big).unwrap();
}

#[test]
fn growth_keeps_the_first_arrays_address_and_contents() {
    let mut arena = ArenaOptions::new()
        .growing_host(small_policy(4 << 20))
        .unwrap();
    assert_eq!(arena.capacity(), CHUNK);
    let mut first = arena.alloc::<u32>(1000).unwrap();
    let values: Vec<u32> = (0..1000).map(|i| i * 7).collect();
    arena.write(&mut first, .., &values).unwrap();
    let at = address_of(&arena, &first).unwrap();

    // Miri interprets every write: fewer arrays there, still several chunks.
    let count = if cfg!(miri) { 12 } else { 100 };
    let mut others = Vec::new();
    for i in 0..count {
        // Odd sizes, so growth does not always land on a chunk boundary.
        let len = 5000 + i as usize * 37;
        let mut array = arena.alloc::<u32>(len).unwrap();
        arena.write(&mut array, .., &vec![i; len]).unwrap();
        others.push(array);
        assert_eq!(address_of(&arena, &first).unwrap(), at);
    }
    assert!(
        arena.capacity() >= 4 * CHUNK,
        "grew to {}",
        arena.capacity()
    );
    assert_eq!(arena.capacity() % CHUNK, 0);
    assert_eq!(arena.get(&first).unwrap(), &values[..]);
    for (i, array) in others.iter().enumerate() {
        assert!(arena.get(array).unwrap().iter().all(|&v| v == i as u32));
        assert_eq!(arena.offset(array).unwrap() % 256, 0);
    }
    crate::support::assert_consistent(arena.allocator());
    for array in others {
        arena.free(array).unwrap();
    }
    arena.free(first).unwrap();
}

#[test]
fn growth_past_the_maximum_is_a_typed_error_and_the_arena_stays_usable() {
    let max = 1 << 20;
    let mut arena = ArenaOptions::new().growing_host(small_policy(max)).unwrap();
    let mut kept = Vec::new();
    let refused = loop {
        match arena.alloc::<u8>(100_000) {
            Ok(array) => kept.push(array),
            Err(error) => break error,
        }
    };
    match refused {
        ArenaError::Growth(GrowthError::AtMaximum { needed, max: at }) => {
            assert_eq!(at, max);
            assert!(needed > max);
        }
        other => panic!("expected growth to stop at the maximum, got {other:?}"),
    }
    assert_eq!(kept.len(), 10);
    assert_eq!(arena.capacity(), max);
    // Still usable: what fits is allocated, and freed space is reused.
    let mut small = arena.alloc::<u8>(1000).unwrap();
    arena.write(&mut small, .., &[3; 1000]).unwrap();
    let freed = kept.pop().unwrap();
    arena.free(freed).unwrap();
    let again = arena.alloc::<u8>(100_000).unwrap();
    assert_eq!(arena.capacity(), max);
    assert_eq!(arena.get(&small).unwrap(), &[3; 1000][..]);
    arena.free(again).unwrap();
    arena.free(small).unwrap();
    for array in kept {
        arena.free(array).unwrap();
    }
}

#[test]
fn a_fixed_arena_does_not_grow() {
    let mut arena = Arena::host(CHUNK).unwrap();
    assert!(!arena.growth().grows());
    // Its maximum is its length, small or large, not the default chunk.
    assert_eq!(arena.growth().max(), CHUNK);
    let large = DEFAULT_CHUNK + 3;
    assert_eq!(Arena::host(large).unwrap().growth().max(), large);
    assert!(matches!(
        arena.alloc::<u8>(CHUNK + 1),
        Err(ArenaError::Alloc(AllocError::SizeExceedsCapacity { .. }))
    ));
    let half = arena.alloc::<u8>(40_000).unwrap();
    assert!(matches!(
        arena.alloc::<u8>(40_000),
        Err(ArenaError::Alloc(AllocError::OutOfMemory { .. }))
    ));
    assert_eq!(arena.capacity(), CHUNK);
    arena.free(half).unwrap();
    assert_eq!(arena.trim().unwrap(), 0);
}

#[test]
fn trim_gives_whole_chunks_back_and_keeps_live_arrays() {
    let mut arena = ArenaOptions::new()
        .growing_host(small_policy(4 << 20))
        .unwrap();
    let mut first = arena.alloc::<u64>(100).unwrap();
    arena.write(&mut first, .., &[9; 100]).unwrap();
    let mut big = arena.alloc::<u8>(3 << 20).unwrap();
    arena.write(&mut big, .., &vec![0xEE; 3 << 20]).unwrap();
    let grown = arena.capacity();
    assert!(grown >= 3 << 20);
    // A live array at the end keeps everything.
    assert_eq!(arena.trim().unwrap(), 0);
    arena.free(big).unwrap();
    let given_back = arena.trim().unwrap();
    assert_eq!(arena.capacity(), CHUNK);
    assert_eq!(given_back, grown - CHUNK);
    assert_eq!(arena.backend().len(), CHUNK);
    assert_eq!(arena.get(&first).unwrap(), &[9; 100][..]);
    // It grows again, and the bytes given back and regrown read zero.
    let again = arena.alloc::<u8>(1 << 20).unwrap();
    let kept = CHUNK - arena.offset(&again).unwrap() as usize;
    let regrown = &arena.get(&again).unwrap()[kept..];
    assert!(regrown.iter().step_by(509).all(|&b| b == 0));
    arena.free(again).unwrap();
    arena.free(first).unwrap();
}

#[test]
fn a_bad_policy_is_refused() {
    assert_eq!(
        ArenaOptions::new()
            .growing_host(GrowthPolicy::up_to(1 << 20).with_chunk(1000))
            .unwrap_err(),
        ArenaError::Growth(GrowthError::ChunkNotMultiple {
            chunk: 1000,
            granularity: page_size()
        })
    );
    assert!(matches!(
        ArenaOptions::new().growing_host(
            GrowthPolicy::up_to(CHUNK)
                .with_chunk(CHUNK)
                .with_initial(2 * CHUNK)
        ),
        Err(ArenaError::Growth(GrowthError::InitialAboveMax { .. }))
    ));
}

/// A long-lived array fences a freed one off from the end: the hole's whole
/// chunks go back, the span stays.
#[test]
#[cfg_attr(miri, ignore = "Miri's fallback allocates the whole reservation")]
fn the_chunks_of_a_fenced_hole_go_back_and_the_span_stays() {
    let growing = ArenaOptions::new().growth(GrowthPolicy::up_to(64 << 20));
    let mut arena = growing.host(2 << 20).unwrap();
    let big = arena.alloc::<u8>(8 << 20).unwrap();
    let small = arena.alloc::<u8>(1000).unwrap();
    assert_eq!(arena.committed(), 10 << 20);
    arena.free(big).unwrap();
    assert_eq!(arena.committed(), 2 << 20);
    assert_eq!(arena.capacity(), 10 << 20);
    arena.free(small).unwrap();
}

/// Resident memory of this process in bytes.
#[cfg(target_os = "linux")]
fn resident_bytes() -> usize {
    let statm = std::fs::read_to_string("/proc/self/statm").expect("procfs");
    let pages: usize = statm
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .expect("resident pages");
    pages * page_size()
}

/// A fixed 64 GiB host arena on a machine with less RAM than that: made at
/// once, and only the pages of the arrays written become memory.
#[test]
#[cfg(target_os = "linux")]
#[cfg_attr(miri, ignore = "the fallback allocates the whole buffer")]
fn a_64_gib_host_arena_costs_only_what_it_touches() {
    let before = resident_bytes();
    let mut arena = Arena::host(64 << 30).unwrap();
    let mut small = arena.alloc::<u32>(1 << 16).unwrap();
    arena.write(&mut small, .., &vec![5; 1 << 16]).unwrap();
    let far = arena.alloc::<u8>(60 << 30).unwrap();
    let mut last = arena.alloc::<u32>(1024).unwrap();
    arena.write(&mut last, .., &[6; 1024]).unwrap();
    assert!(arena.offset(&last).unwrap() > 60 << 30);
    let grown = resident_bytes().saturating_sub(before);
    assert!(grown < 64 << 20, "resident memory grew by {grown} bytes");
    assert_eq!(arena.get(&small).unwrap()[12345], 5);
    arena.free(far).unwrap();
    arena.free(last).unwrap();
    arena.free(small).unwrap();
}

/// The same with a growing arena: 64 GiB reserved, one chunk committed.
#[test]
#[cfg(target_os = "linux")]
#[cfg_attr(miri, ignore = "the fallback allocates the whole maximum")]
fn a_growing_arena_reserves_64_gib_and_commits_one_chunk() {
    let mut arena = ArenaOptions::new()
        .growing_host(GrowthPolicy::up_to(64 << 30))
        .unwrap();
    assert_eq!(arena.capacity(), 2 << 20);
    let mut small = arena.alloc::<u32>(1000).unwrap();
    arena.write(&mut small, .., &[1; 1000]).unwrap();
    assert_eq!(arena.capacity(), 2 << 20);
    arena.free(small).unwrap();
}
