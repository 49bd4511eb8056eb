//! `ThreadArena`: many threads allocating from one arena, each with a cache
//! of its own, dropping each other's arrays and exiting while others still
//! hold theirs, checked against a model of the live arrays.

use std::collections::BTreeMap;
use std::sync::mpsc::{channel, sync_channel, TrySendError};
use std::sync::Mutex;
use std::thread;

use gpu_aligned::alloc::AllocError;
use gpu_aligned::arena::{Arena, ArenaError, ArenaOptions, ArenaSlice, GrowthPolicy, ThreadArena};
use gpu_aligned::backend::HostBuffer;

use crate::support::{assert_nothing_lost, Rng};

/// The live arrays, by offset: `(end, stamp)`. Every array is added when it
/// is made and taken out just before it is dropped, so two entries that
/// overlap are two live arrays sharing bytes.
#[derive(Default)]
struct Model(Mutex<BTreeMap<u64, (u64, u64)>>);

impl Model {
    fn made(&self, arena: &ThreadArena<HostBuffer>, array: &ArenaSlice<u64>, stamp: u64) {
        let offset = arena.lock().offset(array).unwrap();
        let end = offset + array.size_bytes() as u64;
        let mut live = self.0.lock().unwrap();
        if let Some((&before, &(before_end, _))) = live.range(..=offset).next_back() {
            assert!(
                before_end <= offset,
                "{before}..{before_end} overlaps {offset}..{end}"
            );
        }
        if let Some((&after, _)) = live.range(offset..).next() {
            assert!(
                end <= after,
                "{offset}..{end} overlaps the array at {after}"
            );
        }
        live.insert(offset, (end, stamp));
    }

    /// Checks that nobody wrote into `array` while it was live, then drops
    /// it.
    fn drop(&self, arena: &ThreadArena<HostBuffer>, array: ArenaSlice<u64>, stamp: u64) {
        let offset = {
            let shared = arena.lock();
            assert!(shared.get(&array).unwrap().iter().all(|&v| v == stamp));
            shared.offset(&array).unwrap()
        };
        let removed = self.0.lock().unwrap().remove(&offset);
        assert_eq!(removed.map(|(_, s)| s), Some(stamp));
        drop(array);
    }

    fn is_empty(&self) -> bool {
        self.0.lock().unwrap().is_empty()
    }
}

#[test]
fn threads_allocate_and_drop_across_each_other_and_no_byte_is_lost() {
    let (threads, steps) = if cfg!(miri) { (3, 30) } else { (8, 3_000) };
    let capacity = 1 << 18;
    for seed in 0..if cfg!(miri) { 1 } else { 4 } {
        let arena = ThreadArena::new(Arena::host(capacity).unwrap());
        let model = Model::default();
        // The arrays threads leave behind when they exit.
        let (leave, left) = channel::<(u64, ArenaSlice<u64>)>();
        let (senders, inboxes): (Vec<_>, Vec<_>) = (0..threads)
            .map(|_| sync_channel::<(u64, ArenaSlice<u64>)>(4))
            .unzip();
        thread::scope(|scope| {
            for (id, inbox) in inboxes.into_iter().enumerate() {
                let next = senders[(id + 1) % threads].clone();
                let leave = leave.clone();
                let (arena, model) = (&arena, &model);
                scope.spawn(move || {
                    let id = id as u64;
                    let mut rng = Rng(seed * 1000 + id * 31 + 7);
                    let mut mine: Vec<(u64, ArenaSlice<u64>)> = Vec::new();
                    // Odd threads stop early: the others still drop and
                    // hold their arrays after they exit.
                    let steps = if id % 2 == 1 { steps / 3 } else { steps };
                    for step in 0..steps {
                        let stamp = (id << 32) | step;
                        match rng.pick(8) {
                            // Drop one of ours.
                            0..=2 if !mine.is_empty() => {
                                let (stamp, array) = mine.swap_remove(rng.pick(mine.len()));
                                model.drop(arena, array, stamp);
                            }
                            // Hand one to the next thread, which drops it (at
                            // most four in flight, so a ring of full channels
                            // never blocks).
                            3 if !mine.is_empty() => {
                                let sent = mine.swap_remove(rng.pick(mine.len()));
                                if let Err(
                                    TrySendError::Full(sent) | TrySendError::Disconnected(sent),
                                ) = next.try_send(sent)
                                {
                                    mine.push(sent);
                                }
                            }
                            _ if mine.len() < 8 => {
                                let len = [1, 16, 32, 100][rng.pick(4)];
                                let array = arena.alloc_from(&vec![stamp; len]).unwrap();
                                model.made(arena, &array, stamp);
                                mine.push((stamp, array));
                            }
                            _ => {}
                        }
                        while let Ok((stamp, array)) = inbox.try_recv() {
                            model.drop(arena, array, stamp);
                        }
                    }
                    // Exit while others hold what this thread made.
                    for kept in mine {
                        leave.send(kept).unwrap();
                    }
                    drop(next);
                    for (stamp, array) in inbox {
                        model.drop(arena, array, stamp);
                    }
                });
            }
            drop(senders);
        });
        drop(leave);
        // Every worker has exited: their arrays come back from here.
        for (stamp, array) in left {
            model.drop(&arena, array, stamp);
        }
        assert!(model.is_empty());
        assert_nothing_lost(&arena, capacity);
    }
}

#[test]
fn a_thread_reuses_the_blocks_it_dropped() {
    let arena = ThreadArena::new(Arena::host(1 << 16).unwrap());
    let first = arena.alloc::<f32>(64).unwrap();
    let at = arena.lock().offset(&first).unwrap();
    assert_eq!(at % 256, 0);
    drop(first);
    for _ in 0..20 {
        let again = arena.alloc::<f32>(64).unwrap();
        assert_eq!(arena.lock().offset(&again).unwrap(), at);
    }
    assert_eq!(arena.live(), 0);
    // The kept block counts as allocated until it is flushed.
    assert_eq!(arena.stats().allocations, 1);
    assert_nothing_lost(&arena, 1 << 16);
}

#[test]
fn a_large_array_is_placed_where_the_large_blocks_a_thread_kept_were() {
    const MIB: usize = 1 << 20;
    let arena = ThreadArena::new(Arena::host(64 * MIB).unwrap());
    // Four large and four small arrays, dropped: the thread keeps them all
    // for their sizes once it takes them back.
    let large: Vec<_> = (0..4)
        .map(|_| arena.alloc::<u8>(2 * MIB).unwrap())
        .collect();
    let small: Vec<_> = (0..4).map(|_| arena.alloc::<u8>(256).unwrap()).collect();
    assert_eq!(arena.lock().offset(&large[0]).unwrap(), 0);
    drop((large, small));
    let probe = arena.alloc::<u8>(256).unwrap();
    // A large array of another size: the large blocks the thread kept go
    // back to the shared arena first, and merge into the hole it takes.
    let big = arena.alloc::<u8>(8 * MIB).unwrap();
    assert_eq!(arena.lock().offset(&big).unwrap(), 0);
    // The small blocks are still kept: three of them, besides the probe's.
    assert_eq!(arena.stats().allocations, 1 + 1 + 3);
    drop((probe, big));
    assert_nothing_lost(&arena, 64 * MIB);
}

#[test]
fn arrays_of_an_exited_thread_come_back_and_its_slot_is_taken_over() {
    let capacity = 1 << 14;
    let arena = ThreadArena::new(Arena::host(capacity).unwrap());
    let made: Vec<ArenaSlice<u32>> = thread::scope(|scope| {
        scope
            .spawn(|| {
                // Dropped here: kept by this thread's cache until it exits.
                drop(arena.alloc::<u32>(100).unwrap());
                (0..8).map(|_| arena.alloc::<u32>(64).unwrap()).collect()
            })
            .join()
            .unwrap()
    });
    // The thread is gone and gave back what it kept; its arrays live on.
    assert_eq!(arena.live(), 8);
    assert_eq!(arena.stats().allocations, 8);
    // A new thread takes over the slot; the old thread's arrays, dropped on
    // yet another thread, come back to it.
    thread::scope(|scope| {
        scope.spawn(|| drop(made));
        scope.spawn(|| {
            let a = arena.alloc::<u32>(64).unwrap();
            assert_eq!(arena.lock().to_vec(&a).unwrap().len(), 64);
        });
    });
    assert_nothing_lost(&arena, capacity);
}

#[test]
fn an_array_that_does_not_fit_takes_back_what_other_threads_keep() {
    let capacity = 4096;
    let arena = ThreadArena::new(Arena::host(capacity).unwrap());
    thread::scope(|scope| {
        // Channels, not barriers: a panic on either side ends the wait.
        let (filled, done) = (channel(), channel::<()>());
        let arena = &arena;
        scope.spawn(move || {
            // The whole buffer, dropped: kept by this thread, which stays.
            let quarters: Vec<_> = (0..4).map(|_| arena.alloc::<u8>(1024).unwrap()).collect();
            drop(quarters);
            assert_eq!(arena.alloc::<u8>(1024).map(drop).ok(), Some(()));
            filled.0.send(()).unwrap();
            let _ = done.1.recv();
        });
        filled.1.recv().unwrap();
        let whole = arena.alloc::<u8>(capacity).unwrap();
        assert_eq!(arena.lock().offset(&whole).unwrap(), 0);
        // Nothing more fits, and that is a typed error.
        assert!(matches!(
            arena.alloc::<u8>(1),
            Err(ArenaError::Alloc(AllocError::OutOfMemory { .. }))
        ));
        drop((whole, done.0));
    });
    assert_nothing_lost(&arena, capacity);
}

#[test]
fn a_growing_arena_takes_back_what_threads_keep_before_it_grows() {
    let (chunk, max) = (1 << 16, 1 << 20);
    let growing = ArenaOptions::new().growth(GrowthPolicy::up_to(max).with_chunk(chunk));
    let arena = ThreadArena::new(growing.host(chunk).unwrap());
    let capacity = || arena.lock().capacity();
    thread::scope(|scope| {
        let (filled, done) = (channel(), channel::<()>());
        let arena = &arena;
        scope.spawn(move || {
            let quarters: Vec<_> = (0..4)
                .map(|_| arena.alloc::<u8>(chunk / 4).unwrap())
                .collect();
            drop(quarters);
            filled.0.send(()).unwrap();
            let _ = done.1.recv();
        });
        filled.1.recv().unwrap();
        // The whole chunk again: the other thread's dropped quarters, not
        // a second chunk.
        let whole = arena.alloc::<u8>(chunk).unwrap();
        let at = arena.lock().offset(&whole).unwrap();
        assert_eq!((at, capacity()), (0, chunk));
        // Past what is there, the arena grows.
        let more = arena.alloc::<u8>(chunk).unwrap();
        assert_eq!(capacity(), 2 * chunk);
        drop((whole, more, done.0));
    });
    assert_eq!(arena.live(), 0);
    arena.flush().unwrap();
    assert_eq!(arena.stats().allocations, 0);
}

/// An array larger than a growing arena's current span grows it, as
/// `Arena::alloc` does, through every maker: it was refused with
/// `SizeExceedsCapacity` by the first, fixed-size try.
#[test]
fn an_array_larger_than_the_span_grows_the_arena() {
    let (chunk, max) = (1 << 16, 1 << 20);
    let growing = ArenaOptions::new().growth(GrowthPolicy::up_to(max).with_chunk(chunk));
    let arena = ThreadArena::new(growing.host(chunk).unwrap());
    let big = arena.alloc::<u8>(3 * chunk).unwrap();
    let zeros = arena.alloc_zeros::<u32>(chunk / 2).unwrap();
    let copy = arena.alloc_from(&vec![7u8; 2 * chunk]).unwrap();
    assert_eq!(big.len(), 3 * chunk);
    assert!(arena.lock().to_vec(&zeros).unwrap().iter().all(|&v| v == 0));
    assert!(arena.lock().to_vec(&copy).unwrap().iter().all(|&v| v == 7));
    assert!(arena.lock().capacity() >= 7 * chunk);
    // Past the growth limit it is still refused, with the arena's error.
    assert!(arena.alloc::<u8>(2 * max).is_err());
    drop((big, zeros, copy));
    arena.flush().unwrap();
    assert_eq!(arena.stats().allocations, 0);
}

#[test]
fn trim_takes_back_what_every_thread_keeps_and_leaves_held_arrays() {
    let (chunk, max) = (1 << 16, 1 << 20);
    let growing = ArenaOptions::new().growth(GrowthPolicy::up_to(max).with_chunk(chunk));
    let arena = ThreadArena::new(growing.host(chunk).unwrap());
    let capacity = || arena.lock().capacity();
    thread::scope(|scope| {
        let (kept, done) = (channel(), channel::<()>());
        let arena = &arena;
        // Another thread fills three chunks and drops two arrays: its slot
        // keeps their blocks; the third array it holds on to.
        scope.spawn(move || {
            let mut arrays: Vec<_> = (0..3).map(|_| arena.alloc::<u8>(chunk).unwrap()).collect();
            let held = arrays.remove(0);
            drop(arrays);
            kept.0.send(arena.lock().offset(&held).unwrap()).unwrap();
            let _ = done.1.recv();
            drop(held);
        });
        let held_at = kept.1.recv().unwrap();
        assert_eq!(capacity(), 3 * chunk);
        // The blocks the other thread keeps come back; its held array, in
        // the first chunk, stays, and so does that chunk.
        assert_eq!(held_at, 0);
        assert_eq!(arena.trim().unwrap(), 2 * chunk);
        assert_eq!((capacity(), arena.live()), (chunk, 1));
        drop(done.0);
    });
    assert_eq!(arena.trim().unwrap(), 0);
    arena.flush().unwrap();
    assert_eq!((arena.live(), arena.stats().allocations), (0, 0));
}

#[test]
fn bad_requests_are_the_arenas_errors() {
    let arena = ThreadArena::new(Arena::host(4096).unwrap());
    assert_eq!(arena.stats().capacity, 4096);
    assert!(matches!(
        arena.alloc::<u32>(usize::MAX),
        Err(ArenaError::Alloc(AllocError::SizeOverflow))
    ));
    // A handle of another arena is refused by the shared arena's check.
    let other = Arena::host(4096).unwrap();
    let mut other = other;
    let foreign = other.alloc::<u8>(4).unwrap();
    assert!(matches!(
        arena.lock().offset(&foreign),
        Err(ArenaError::Handle(_))
    ));
    assert_nothing_lost(&arena, 4096);
}
