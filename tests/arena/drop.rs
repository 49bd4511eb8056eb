//! Dropping an array gives its bytes back, as dropping a `Vec` does; a
//! handle does not borrow its arena, and one that outlives it, or a reset,
//! drops harmlessly without touching a newer array.

use std::thread;

use gpu_aligned::alloc::AllocError;
use gpu_aligned::arena::{Arena, ArenaError, ArenaSlice, Pitched, Plan};
use gpu_aligned::vector::float4;

use crate::support::assert_consistent;

/// One temporary array per call, used and dropped, as a user's function
/// would: before drop gave bytes back, the 17th call in an arena of 16
/// arrays ran out of memory.
fn smooth(arena: &mut Arena, input: &[f32]) -> Result<f32, ArenaError> {
    let mut scratch = arena.alloc::<f32>(input.len())?;
    arena.write(&mut scratch, .., input)?;
    let sum = arena.get(&scratch)?.iter().sum::<f32>();
    Ok(sum / input.len() as f32)
}

#[test]
fn ten_thousand_temporary_arrays_in_an_arena_of_sixteen() {
    // 16 arrays of 1,024 floats fill the arena exactly.
    let mut arena = Arena::host(16 * 4096).unwrap();
    let input: Vec<f32> = (0..1024).map(|i| i as f32).collect();
    let calls = if cfg!(miri) { 40 } else { 10_000 };
    for call in 0..calls {
        let mean = smooth(&mut arena, &input).unwrap_or_else(|e| panic!("call {call}: {e}"));
        assert_eq!(mean, 511.5);
    }
    assert_eq!(arena.live(), 0);
    // ... and the 17th of arrays kept alive is still refused.
    let kept: Vec<ArenaSlice<f32>> = (0..16).map(|_| arena.alloc(1024).unwrap()).collect();
    assert!(matches!(
        arena.alloc::<f32>(1024),
        Err(ArenaError::Alloc(AllocError::OutOfMemory { .. }))
    ));
    drop(kept);
    assert_eq!(
        arena.alloc_zeros::<f32>(16 * 1024).unwrap().len(),
        16 * 1024
    );
    assert_consistent(arena.allocator());
}

/// A user's struct holding arrays apart from their arena.
struct Particles {
    positions: ArenaSlice<float4>,
    image: Pitched<u8>,
}

#[test]
fn handles_live_in_structs_and_threads_apart_from_their_arena() {
    let mut arena = Arena::host(1 << 16).unwrap();
    let particles = Particles {
        positions: arena
            .alloc_from(&[float4::new(1.0, 1.0, 1.0, 1.0); 8])
            .unwrap(),
        image: arena.alloc_pitched(100, 4).unwrap(),
    };
    assert_eq!(arena.get(&particles.positions).unwrap()[7].w, 1.0);
    assert_eq!(arena.row(&particles.image, 3).unwrap().len(), 100);
    assert_eq!(arena.live(), 2);
    // Dropped on another thread: the arena takes the bytes back later.
    thread::spawn(move || drop(particles)).join().unwrap();
    assert_eq!(arena.live(), 0);
    let whole = arena.alloc::<u8>(1 << 16).unwrap();
    assert_eq!(arena.offset(&whole).unwrap(), 0);
}

#[test]
fn a_handle_outliving_its_arena_drops_harmlessly() {
    let mut arena = Arena::host(4096).unwrap();
    let a = arena.alloc_from(&[1u32, 2, 3]).unwrap();
    let b = arena.alloc::<u32>(3).unwrap();
    drop(b); // queued, then the arena goes with it still queued
    drop(arena);
    drop(a);
}

#[test]
fn a_stale_handle_dropped_after_a_reset_never_frees_the_newer_array() {
    // Two arrays' room.
    let mut arena = Arena::host(512).unwrap();
    let old = arena.alloc::<u32>(64).unwrap();
    let old_offset = arena.offset(&old).unwrap();
    arena.reset().unwrap();
    // The same bytes, and the same slot of the allocator, for a new array.
    let new = arena.alloc_from(&[7u32; 64]).unwrap();
    assert_eq!(arena.offset(&new).unwrap(), old_offset);
    drop(old);
    assert_eq!(arena.live(), 1);
    assert_eq!(arena.pending_frees(), 0);
    let next = arena.alloc::<u32>(64).unwrap();
    assert_ne!(arena.offset(&next).unwrap(), old_offset);
    // Full: the arena takes the stale drop back, which frees nothing.
    assert!(matches!(
        arena.alloc::<u32>(64),
        Err(ArenaError::Alloc(AllocError::OutOfMemory { .. }))
    ));
    assert_eq!(arena.to_vec(&new).unwrap(), [7; 64]);
    assert_eq!(arena.live(), 2);
    assert_consistent(arena.allocator());
}

#[test]
fn dropped_arrays_come_back_in_batches_and_are_kept_for_their_size() {
    // Eight arrays' room.
    let mut arena = Arena::host(8 * 256).unwrap();
    for _ in 0..7 {
        drop(arena.alloc::<u8>(100).unwrap());
    }
    // Room to spare: seven wait, none reused yet.
    assert_eq!((arena.live(), arena.pending_frees()), (0, 7));
    assert_eq!(arena.allocator().stats().allocations, 7);
    drop(arena.alloc::<u8>(100).unwrap());
    // The next allocation takes the batch of eight back first and reuses
    // the block dropped last; the other seven are kept for arrays of the
    // same size, still allocated as far as the counters go.
    let a = arena.alloc::<u8>(100).unwrap();
    assert_eq!(arena.offset(&a).unwrap(), 7 * 256);
    assert_eq!((arena.live(), arena.pending_frees()), (1, 7));
    assert_eq!(arena.allocator().stats().allocations, 8);
    assert_eq!(arena.leaks(), [(7 * 256, 100)]);
    let b = arena.alloc::<u8>(100).unwrap();
    assert_eq!(arena.offset(&b).unwrap(), 6 * 256);
    // An array of another size fits only without them: they go back to
    // the allocator, merged into one block.
    let c = arena.alloc::<u8>(6 * 256).unwrap();
    assert_eq!(arena.offset(&c).unwrap(), 0);
    assert_eq!((arena.live(), arena.pending_frees()), (3, 0));
    assert_eq!(arena.allocator().stats().allocations, 3);
    assert_consistent(arena.allocator());
}

#[test]
fn a_large_array_takes_back_what_was_dropped_before_it_is_placed() {
    const MIB: usize = 1 << 20;
    let mut arena = Arena::host(64 * MIB).unwrap();
    // Allocating and dropping a large array (1 MiB or more) in a loop
    // takes back what it dropped once four arrays' bytes wait (the arena's
    // `LARGE_TAKE_BACK`), before a batch of eight would: it cycles through
    // four blocks, and never has more out.
    let mut offsets = Vec::new();
    for _ in 0..20 {
        let again = arena.alloc::<u8>(MIB).unwrap();
        let offset = arena.offset(&again).unwrap();
        if !offsets.contains(&offset) {
            offsets.push(offset);
        }
        assert!(arena.allocator().stats().allocations <= 4);
        assert!(arena.pending_frees() < 4);
        drop(again);
    }
    assert_eq!(offsets.len(), 4, "{offsets:?}");
    drop(arena.alloc::<u8>(100).unwrap());
    arena.reset().unwrap();

    // Four large and four small arrays dropped, taken back as a batch by
    // the next allocation and kept for their sizes.
    let large: Vec<_> = (0..4)
        .map(|_| arena.alloc::<u8>(2 * MIB).unwrap())
        .collect();
    let small: Vec<_> = (0..4).map(|_| arena.alloc::<u8>(256).unwrap()).collect();
    drop((large, small));
    let probe = arena.alloc::<u8>(256).unwrap();
    assert_eq!(arena.pending_frees(), 7);
    // A large array of another size: the large kept blocks go back to the
    // allocator first, merged into the hole it is placed in; the small
    // ones stay kept.
    let big = arena.alloc::<u8>(8 * MIB).unwrap();
    assert_eq!(arena.offset(&big).unwrap(), 0);
    assert_eq!(arena.pending_frees(), 3);
    drop((probe, big));
    assert_consistent(arena.allocator());
}

#[test]
fn a_kept_block_is_never_reached_through_an_old_handle() {
    let mut arena = Arena::host(1 << 16).unwrap();
    let mut arrays: Vec<ArenaSlice<u32>> = (0..8)
        .map(|i| arena.alloc_from(&[i; 16]).unwrap())
        .collect();
    let old = arrays.pop().unwrap();
    let old_offset = arena.offset(&old).unwrap();
    // Given back by hand, then dropped: the handle stays out.
    let mut other = Arena::host(4096).unwrap();
    let refused = other.free(old).unwrap_err().handle;
    drop(arrays);
    drop(refused);
    // Nine handles came back (the batch is eight); the last is reused.
    let new = arena.alloc_from(&[42u32; 16]).unwrap();
    assert_eq!(arena.offset(&new).unwrap(), old_offset);
    assert_eq!(arena.to_vec(&new).unwrap(), [42; 16]);
    // Every other array of that size comes from a kept block too, each its
    // own, and the counters agree with the blocks.
    let more: Vec<_> = (0..7).map(|_| arena.alloc::<u32>(16).unwrap()).collect();
    let mut offsets: Vec<u64> = more.iter().map(|a| arena.offset(a).unwrap()).collect();
    offsets.push(old_offset);
    offsets.sort_unstable();
    offsets.dedup();
    assert_eq!(offsets.len(), 8);
    assert_eq!(arena.live(), 8);
    assert_eq!(arena.leaks().len(), 8);
    drop((new, more));
    assert_eq!(arena.live(), 0);
    assert_consistent(arena.allocator());
}

#[test]
fn kept_blocks_go_back_before_a_growing_arena_grows_and_on_trim() {
    use gpu_aligned::arena::{ArenaOptions, GrowthPolicy};

    let chunk = 2 << 20;
    let growing = ArenaOptions::new().growth(GrowthPolicy::up_to(8 * chunk));
    let mut arena = growing.host(chunk).unwrap();
    // The first chunk full of 16 arrays, all dropped and kept.
    let arrays: Vec<_> = (0..16)
        .map(|_| arena.alloc::<u8>(chunk / 16).unwrap())
        .collect();
    drop(arrays);
    drop(arena.alloc::<u8>(chunk / 16).unwrap());
    assert!(arena.pending_frees() > 0);
    // A whole chunk fits once they are freed: no growth.
    let whole = arena.alloc::<u8>(chunk).unwrap();
    assert_eq!(
        (arena.capacity(), arena.offset(&whole).unwrap()),
        (chunk, 0)
    );
    drop(whole);
    // Grown, then kept blocks past the first chunk are trimmed away too.
    let grown: Vec<_> = (0..32)
        .map(|_| arena.alloc::<u8>(chunk / 16).unwrap())
        .collect();
    assert_eq!(arena.capacity(), 2 * chunk);
    drop(grown);
    drop(arena.alloc::<u8>(chunk / 16).unwrap());
    assert!(arena.pending_frees() > 0);
    assert_eq!(arena.trim().unwrap(), chunk);
    assert_eq!((arena.live(), arena.pending_frees()), (0, 0));
    assert_consistent(arena.allocator());
}

#[test]
fn a_dropped_handle_of_another_arena_is_given_back_to_its_own() {
    let mut mine = Arena::host(4096).unwrap();
    let mut theirs = Arena::host(4096).unwrap();
    let a = mine.alloc::<u8>(10).unwrap();
    let b = theirs.alloc::<u8>(10).unwrap();
    // Refused by the other arena, and handed back unharmed.
    let a = theirs.free(a).unwrap_err().handle;
    drop(a);
    assert_eq!((mine.live(), theirs.live()), (0, 1));
    assert_eq!(theirs.offset(&b).unwrap(), 0);
    let c = theirs.alloc::<u8>(10).unwrap();
    assert_eq!(theirs.offset(&c).unwrap(), 256);
}

#[test]
fn a_carving_gives_back_what_was_not_taken_and_its_arrays_their_own() {
    let mut arena = Arena::host(1 << 16).unwrap();
    let mut plan = Plan::new();
    let flat = plan.array::<u32>(100);
    let _rows = plan.pitched::<f32>(64, 4);
    let mut carving = arena.carve(&plan).unwrap();
    let flat = carving.take(flat).unwrap();
    drop(carving);
    assert_eq!(arena.live(), 1);
    drop(flat);
    assert_eq!(arena.live(), 0);
    let whole = arena.alloc::<u8>(1 << 16).unwrap();
    assert_eq!(whole.len(), 1 << 16);
}

#[test]
fn zeroed_filled_and_copied_arrays() {
    // One array's room: the dropped array's bytes, zeroed.
    let mut arena = Arena::host(256).unwrap();
    let source = arena.alloc_from(&[1u32, 2, 3, 4]).unwrap();
    drop(source);
    let zeros = arena.alloc_zeros::<u32>(4).unwrap();
    assert_eq!(arena.offset(&zeros).unwrap(), 0);
    assert_eq!(arena.get(&zeros).unwrap(), &[0; 4]);
    drop(zeros);
    let mut arena = Arena::host(4096).unwrap();
    let source = arena.alloc_from(&[5u32, 6, 7, 8]).unwrap();
    assert_eq!(arena.to_vec(&source).unwrap(), [5, 6, 7, 8]);
    let mut copy = arena.alloc::<u32>(4).unwrap();
    arena.copy(&source, &mut copy).unwrap();
    assert_eq!(arena.to_vec(&copy).unwrap(), [5, 6, 7, 8]);
    let mut short = arena.alloc::<u32>(3).unwrap();
    assert_eq!(
        arena.copy(&source, &mut short).unwrap_err(),
        ArenaError::LengthMismatch {
            expected: 3,
            found: 4
        }
    );
    // Another arena's array is refused as either side of a copy.
    let mut other = Arena::host(4096).unwrap();
    let mut foreign = other.alloc::<u32>(4).unwrap();
    assert!(matches!(
        arena.copy(&source, &mut foreign),
        Err(ArenaError::Handle(_))
    ));
    assert!(matches!(
        arena.copy(&foreign, &mut copy),
        Err(ArenaError::Handle(_))
    ));
    assert_eq!(arena.to_vec(&copy).unwrap(), [5, 6, 7, 8]);
}

#[test]
fn an_arena_sized_for_a_plan_holds_it_exactly() {
    let mut plan = Plan::new();
    let a = plan.array::<float4>(1000);
    let b = plan.pitched::<u16>(300, 7);
    let mut arena = gpu_aligned::arena::ArenaOptions::new()
        .host_for(&plan)
        .unwrap();
    let mut carving = arena.carve(&plan).unwrap();
    let (a, b) = (carving.take(a).unwrap(), carving.take_pitched(b).unwrap());
    assert_eq!((a.len(), b.height()), (1000, 7));
    let needed = plan.bytes_needed(256, 512).unwrap();
    assert_eq!(arena.capacity(), needed);
    // Nothing is left past the last array.
    assert_eq!(
        arena.offset(&b).unwrap() + b.size_bytes() as u64,
        needed as u64
    );
    drop((a, b, carving));
    assert!(arena.carve(&plan).is_ok());
}
