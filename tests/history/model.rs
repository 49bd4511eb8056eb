//! Random programs of allocations (flat and pitched, of types with and
//! without pad bytes), drops, frees by hand, labels and trims, on fixed and
//! growing host arenas, with rings that hold the whole run and rings that
//! wrap: every ledger sums to the reserved bytes, the last agrees with the
//! allocator, and after a trim (which takes every dropped array back) the
//! payload and element padding are those of the arrays the model holds.

use std::collections::HashMap;

use gpu_aligned::arena::{Arena, ArenaOptions, GrowthPolicy, Pitched, ThreadArena};
use gpu_aligned::backend::HostBuffer;
use gpu_aligned::vector::{float3_16_t, float4};

use crate::check_ledger;
use crate::support::Rng;

/// A live array of the program, with its element bytes and pad bytes.
enum Array {
    Bytes(gpu_aligned::arena::ArenaSlice<u8, HostBuffer>),
    Points(gpu_aligned::arena::ArenaSlice<float3_16_t, HostBuffer>),
    Vectors(gpu_aligned::arena::ArenaSlice<float4, HostBuffer>),
    Image(Pitched<u32, HostBuffer>),
}

/// Runs `steps` random steps on `arena`, recording into a ring of `ring`
/// events; checks after each.
fn run(mut arena: Arena<HostBuffer>, seed: u64, steps: usize, ring: usize) {
    let grows = arena.growth().grows();
    arena.record_history(ring).unwrap();
    let mut rng = Rng(seed);
    let mut live: HashMap<u64, (Array, u64, u64)> = HashMap::new();
    let mut next = 0;
    for step in 0..steps {
        let context = format!("seed {seed}, ring {ring}, step {step}");
        match rng.pick(10) {
            0..=3 => {
                let len = rng.pick(3000);
                let made = match rng.pick(4) {
                    0 => arena.alloc::<u8>(len).map(|a| (Array::Bytes(a), len, 0)),
                    1 => arena
                        .alloc::<float3_16_t>(len)
                        .map(|a| (Array::Points(a), 16 * len, 4 * len)),
                    2 => arena
                        .alloc::<float4>(len)
                        .map(|a| (Array::Vectors(a), 16 * len, 0)),
                    _ => {
                        let (width, height) = (1 + len % 97, 1 + len % 13);
                        let image = arena.alloc_pitched::<u32>(width, height);
                        image.map(|a| (Array::Image(a), 4 * (width * height), 0))
                    }
                };
                // Out of memory in a fixed arena is part of the program.
                if let Ok((array, bytes, pads)) = made {
                    if rng.pick(3) == 0 {
                        let label = format!("array {}", rng.pick(5));
                        match &array {
                            Array::Bytes(a) => arena.label(a, &label),
                            Array::Points(a) => arena.label(a, &label),
                            Array::Vectors(a) => arena.label(a, &label),
                            Array::Image(a) => arena.label(a, &label),
                        }
                        .unwrap();
                    }
                    live.insert(next, (array, bytes as u64 - pads as u64, pads as u64));
                    next += 1;
                }
            }
            4..=6 if !live.is_empty() => {
                let key = *live.keys().nth(rng.pick(live.len())).unwrap();
                let (array, ..) = live.remove(&key).unwrap();
                match (rng.pick(2), array) {
                    (0, Array::Bytes(a)) => arena.free(a).unwrap(),
                    (0, Array::Points(a)) => arena.free(a).unwrap(),
                    (0, Array::Image(a)) => arena.free(a).unwrap(),
                    (_, array) => drop(array),
                }
            }
            7 if grows => {
                arena.trim().unwrap();
                let last = check_ledger(&arena, &context);
                let payload: u64 = live.values().map(|(_, payload, _)| payload).sum();
                let pads: u64 = live.values().map(|(_, _, pads)| pads).sum();
                if ring >= 4 * steps {
                    assert_eq!(
                        (last.payload, last.element_padding),
                        (payload, pads),
                        "{context}"
                    );
                    assert_eq!(last.pending, 0, "{context}: a trim takes every block back");
                }
            }
            _ => {}
        }
        check_ledger(&arena, &context);
    }
}

#[test]
fn the_ledger_closes_at_every_event_of_random_programs() {
    for seed in 0..6 {
        let fixed = Arena::host(1 << 20).unwrap();
        let policy = GrowthPolicy::up_to(64 << 20).with_chunk(64 << 10);
        let growing = ArenaOptions::new().growth(policy).host(64 << 10).unwrap();
        run(fixed, seed, 150, 10_000);
        run(growing, seed, 150, 10_000);
        let policy = GrowthPolicy::up_to(64 << 20).with_chunk(64 << 10);
        let wrapping = ArenaOptions::new().growth(policy).host(64 << 10).unwrap();
        run(wrapping, seed, 150, 40);
    }
}

#[test]
fn red_zones_and_alignment_gaps_are_parts_of_their_own() {
    let mut arena = Arena::host(1 << 16).unwrap();
    arena.set_red_zones(true);
    arena.record_history(100).unwrap();
    let a = arena.alloc::<float4>(10).unwrap();
    let first = check_ledger(&arena, "red zones");
    assert_eq!(
        (first.payload, first.red_zones, first.rounding),
        (160, 256, 96)
    );
    drop(a);
    // A 2048-aligned start skips the bytes before it.
    let mut arena = Arena::host(1 << 16).unwrap();
    arena.record_history(100).unwrap();
    let _small = arena.alloc::<u8>(1).unwrap();
    let _image = arena.alloc_pitched::<u8>(3000, 2).unwrap();
    let last = check_ledger(&arena, "gaps");
    assert!(last.alignment_gap > 0, "{last:?}");
}

#[test]
fn off_records_nothing_and_zero_stops() {
    let mut arena = Arena::host(1 << 16).unwrap();
    assert!(arena.history().is_none());
    arena.record_history(10).unwrap();
    drop(arena.alloc::<u8>(1).unwrap());
    arena.record_history(0).unwrap();
    assert!(arena.history().is_none());
    let a = arena.alloc::<u8>(1).unwrap();
    assert_eq!(arena.offset(&a).unwrap(), 0, "the arena works on");
}

#[test]
fn a_reset_frees_every_block_in_the_ledger() {
    let mut arena = Arena::host(1 << 16).unwrap();
    arena.record_history(100).unwrap();
    let _a = arena.alloc::<u32>(100).unwrap();
    arena.reset().unwrap();
    let last = check_ledger(&arena, "reset");
    assert_eq!((last.payload, last.free), (0, 1 << 16));
}

#[test]
fn threads_sharing_a_recording_arena_are_each_seen() {
    let mut arena = Arena::host(1 << 20).unwrap();
    arena.record_history(10_000).unwrap();
    let shared = ThreadArena::new(arena);
    std::thread::scope(|scope| {
        for t in 0..3 {
            let shared = &shared;
            scope.spawn(move || {
                for i in 0..50 {
                    let a = shared.alloc::<u32>(1 + (t * 50 + i) % 70).unwrap();
                    drop(a);
                }
            });
        }
    });
    let arena = shared.lock();
    check_ledger(&arena, "threads");
    let history = arena.history().unwrap();
    let mut json = Vec::new();
    history.to_chrome_trace(&mut json).unwrap();
    let json = String::from_utf8(json).unwrap();
    let threads = (0..64)
        .filter(|t| json.contains(&format!("\"tid\":{t},\"ph\":\"b\"")))
        .count();
    assert!(threads >= 3, "arrays of {threads} threads");
}

#[test]
fn turning_red_zones_on_and_off_keeps_the_history_recording() {
    let mut arena = Arena::host(1 << 16).unwrap();
    arena.record_history(64).unwrap();
    arena.set_red_zones(true);
    arena.set_red_zones(false);
    let before = arena.history().unwrap().ledger().len();
    let _a = arena.alloc::<f32>(10).unwrap();
    let after = arena.history().unwrap().ledger().len();
    assert_eq!(
        after,
        before + 1,
        "the allocation after red zones went off was not recorded"
    );
}
