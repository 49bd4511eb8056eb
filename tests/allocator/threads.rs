//! One allocator or arena behind a lock, and arrays dropped on other
//! threads, under several threads at once.

use std::sync::{Arc, Mutex};
use std::thread;

use gpu_aligned::alloc::Allocator;
use gpu_aligned::arena::{Arena, ArenaSlice};
use gpu_aligned::backend::HostBuffer;

use crate::support::{assert_consistent, Rng};

const THREADS: u64 = 4;

fn steps() -> u64 {
    if cfg!(miri) {
        40
    } else {
        5_000
    }
}

fn assert_sync<T: Sync + Send>() {}

#[test]
fn allocator_and_arena_can_be_shared_behind_a_lock() {
    assert_sync::<Mutex<Allocator>>();
    assert_sync::<Mutex<Arena<HostBuffer>>>();
}

#[test]
fn threads_share_an_allocator() {
    let shared = Arc::new(Mutex::new(Allocator::new(1 << 20)));
    let workers: Vec<_> = (0..THREADS)
        .map(|id| {
            let shared = Arc::clone(&shared);
            thread::spawn(move || {
                let mut rng = Rng(id + 1);
                let mut live = Vec::new();
                for _ in 0..steps() {
                    if live.len() < 16 && rng.next_u64() % 3 != 0 {
                        let size = rng.pick(2048) + 1;
                        let align = 1 << rng.pick(10);
                        if let Ok(a) = shared.lock().unwrap().alloc(size, align) {
                            assert_eq!(a.offset() % align as u64, 0);
                            live.push(a);
                        }
                    } else if !live.is_empty() {
                        let pick = rng.pick(live.len());
                        shared.lock().unwrap().free(live.swap_remove(pick)).unwrap();
                    }
                }
                live
            })
        })
        .collect();
    let mut survivors = Vec::new();
    for worker in workers {
        survivors.extend(worker.join().unwrap());
    }
    // Whatever the interleaving, the survivors are disjoint.
    survivors.sort_by_key(|a| a.offset());
    for pair in survivors.windows(2) {
        assert!(
            pair[0].end() <= pair[1].offset(),
            "{:?} overlaps {:?}",
            pair[0],
            pair[1]
        );
    }
    let allocator = Arc::try_unwrap(shared).unwrap().into_inner().unwrap();
    assert_consistent(&allocator);
    assert_eq!(allocator.stats().allocations, survivors.len());
}

#[test]
fn threads_write_their_own_arrays_in_a_shared_arena() {
    let shared = Arc::new(Mutex::new(Arena::host(1 << 20).unwrap()));
    let workers: Vec<_> = (0..THREADS)
        .map(|id| {
            let shared = Arc::clone(&shared);
            thread::spawn(move || {
                let mut rng = Rng(id * 77 + 5);
                let mut live = Vec::new();
                for step in 0..steps() {
                    if live.len() < 8 && rng.next_u64() % 2 == 0 {
                        let len = (rng.next_u64() % 64 + 1) as usize;
                        let Ok(mut array) = shared.lock().unwrap().alloc::<u64>(len) else {
                            continue;
                        };
                        let stamp = (id << 32) | step;
                        shared
                            .lock()
                            .unwrap()
                            .get_mut(&mut array)
                            .unwrap()
                            .fill(stamp);
                        live.push((stamp, array));
                    } else if !live.is_empty() {
                        let pick = rng.pick(live.len());
                        let (stamp, array) = live.swap_remove(pick);
                        // Another thread writing into this array would have
                        // left its own stamp.
                        let mut arena = shared.lock().unwrap();
                        assert!(arena.get(&array).unwrap().iter().all(|&v| v == stamp));
                        arena.free(array).unwrap();
                    }
                }
                for (_, array) in live {
                    shared.lock().unwrap().free(array).unwrap();
                }
            })
        })
        .collect();
    for worker in workers {
        worker.join().unwrap();
    }
    let arena = Arc::try_unwrap(shared).unwrap().into_inner().unwrap();
    assert_consistent(arena.allocator());
    assert_eq!(arena.allocator().stats().free_blocks, 1);
}

#[test]
fn threads_drop_each_others_arrays_and_no_byte_is_lost() {
    // Room for 256 arrays of the smallest size: far fewer than the threads
    // allocate, so every thread lives on blocks that other threads dropped
    // (queued, kept for their size, or freed when a size does not fit).
    let bytes = 1 << 16;
    let shared = Arc::new(Mutex::new(Arena::host(bytes).unwrap()));
    let (senders, receivers): (Vec<_>, Vec<_>) = (0..THREADS)
        .map(|_| std::sync::mpsc::sync_channel::<(u64, ArenaSlice<u64>)>(4))
        .unzip();
    let workers: Vec<_> = receivers
        .into_iter()
        .enumerate()
        .map(|(id, inbox)| {
            let shared = Arc::clone(&shared);
            // Each thread hands most of its arrays to the next one, which
            // drops them.
            let next = senders[(id + 1) % senders.len()].clone();
            thread::spawn(move || {
                let id = id as u64;
                let mut rng = Rng(id * 31 + 7);
                for step in 0..steps() {
                    let len = [16, 32, 64][rng.next_u64() as usize % 3];
                    let stamp = (id << 32) | step;
                    let array = shared
                        .lock()
                        .unwrap()
                        .alloc_from(&vec![stamp; len])
                        .unwrap();
                    if rng.next_u64() % 4 == 0 {
                        drop(array);
                    } else if let Err(full) = next.try_send((stamp, array)) {
                        // At most four in flight to each thread: never
                        // blocks, so no ring of full channels can deadlock.
                        drop(full);
                    }
                    while let Ok((stamp, array)) = inbox.try_recv() {
                        // Nobody else wrote into it while it was live.
                        let arena = shared.lock().unwrap();
                        assert!(arena.get(&array).unwrap().iter().all(|&v| v == stamp));
                        drop(arena);
                        drop(array);
                    }
                }
                drop(next);
                // What the previous thread still sends, until it is done.
                for (_, array) in inbox {
                    drop(array);
                }
            })
        })
        .collect();
    drop(senders);
    for worker in workers {
        worker.join().unwrap();
    }
    let mut arena = Arc::try_unwrap(shared).unwrap().into_inner().unwrap();
    assert_eq!(arena.live(), 0);
    // Every byte comes back: the whole buffer is one array again.
    let whole = arena.alloc::<u8>(bytes).unwrap();
    assert_eq!((arena.offset(&whole).unwrap(), arena.live()), (0, 1));
    assert_eq!(arena.allocator().stats().allocations, 1);
    assert_consistent(arena.allocator());
}
