//! Allocating and giving back one array of a host arena, in the same run:
//! an allocate+free pair, and an allocate+drop pair (the dropped array's
//! bytes come back at the next allocation), of 4 KiB also with the arena
//! recording its history (`docs/HISTORY.md`). `docs/RESULTS.md` has the
//! figures, beside the allocate+free pair before dropping freed.
//!
//! `ARENA_PAIRS=<host|device>[-free][-recorded],<bytes>,<pairs>` runs pairs
//! untimed instead, with the arena recording its history (`-recorded`) or
//! not, for instruction counts (see `pairs_only`).

use criterion::{criterion_group, BenchmarkId, Criterion};
use gpu_aligned::arena::{Arena, ArenaOptions};
use gpu_aligned::backend::Backend;

// The tests' stand-in (its fixed-size constructor is theirs).
#[path = "../tests/support/stand_in.rs"]
#[allow(dead_code)]
mod stand_in;
use stand_in::StandIn;

fn pairs(c: &mut Criterion) {
    let mut group = c.benchmark_group("host arena, one array per step");
    for (len, recorded) in [(16usize, false), (4096, false), (4096, true)] {
        let mut arena = Arena::host(1 << 20).expect("host arena");
        if recorded {
            arena.record_history(1 << 16).expect("recording");
        }
        let len_id = match recorded {
            true => format!("{len} recorded"),
            false => len.to_string(),
        };
        // One array stays in front, as in a program that keeps some.
        let _kept = arena.alloc::<f32>(100).expect("room");
        group.bench_function(BenchmarkId::new("alloc+free", &len_id), |b| {
            b.iter(|| {
                let a = arena.alloc::<f32>(std::hint::black_box(len)).expect("room");
                arena.free(a).expect("ours");
            });
        });
        group.bench_function(BenchmarkId::new("alloc+drop", &len_id), |b| {
            b.iter(|| {
                let a = arena.alloc::<f32>(std::hint::black_box(len)).expect("room");
                drop(std::hint::black_box(a));
            });
        });
    }
    group.finish();
}

criterion_group!(benches, pairs);

/// Allocates and drops `pairs` arrays of `bytes` one-byte elements, with
/// one array live in front (the device benchmark's shape), after one
/// array of each of a few other element types, as a program allocating
/// several types would (LLVM inlines differently then).
/// With `free`, each array is freed by hand instead; with `recorded`, the
/// arena records its history (the ring fills in the first run, so each
/// pair's cost includes overwriting).
fn drop_pairs<B: Backend>(
    mut arena: Arena<B>,
    bytes: usize,
    pairs: usize,
    (free, recorded): (bool, bool),
) where
    B::Error: std::fmt::Debug,
{
    if recorded {
        arena.record_history(1 << 16).expect("recording");
    }
    drop(arena.alloc::<f32>(16).expect("room"));
    drop(arena.alloc::<u32>(16).expect("room"));
    drop(arena.alloc::<u64>(16).expect("room"));
    let _head = arena.alloc::<u8>(1000).expect("room");
    if free {
        for _ in 0..pairs {
            let array = arena.alloc::<u8>(bytes).expect("room");
            arena.free(std::hint::black_box(array)).expect("ours");
        }
        return;
    }
    for _ in 0..pairs {
        drop(std::hint::black_box(
            arena.alloc::<u8>(bytes).expect("room"),
        ));
    }
}

/// `ARENA_PAIRS=<host|device>[-free],<bytes>,<pairs>`: runs that many
/// allocate + drop (or, with `-free`, allocate + free) pairs untimed and
/// exits, for instruction counts under `valgrind
/// --tool=callgrind` (two runs with different pair counts; the difference
/// divided by the difference in pairs is one pair's cost, without the
/// set-up). `device` is an arena over a stand-in for a device (see
/// `stand_in::StandIn`).
fn pairs_only(spec: &str) {
    let mut parts = spec.split(',');
    let side = parts.next().expect("host or device");
    let mut number = || {
        parts
            .next()
            .and_then(|p| p.parse::<usize>().ok())
            .expect("bytes, then pairs")
    };
    let (bytes, pairs) = (number(), number());
    // As the device benchmark's arenas: room for a batch of dropped 16 MiB arrays.
    const LEN: usize = 1 << 30;
    let (side, recorded) = side
        .strip_suffix("-recorded")
        .map_or((side, false), |s| (s, true));
    let (side, free) = side
        .strip_suffix("-free")
        .map_or((side, false), |s| (s, true));
    let how = (free, recorded);
    match side {
        "host" => drop_pairs(Arena::host(LEN).expect("host arena"), bytes, pairs, how),
        "device" => drop_pairs(
            ArenaOptions::new()
                .over(StandIn::growing(LEN, LEN))
                .expect("arena"),
            bytes,
            pairs,
            how,
        ),
        other => panic!("`{other}`: host or device"),
    }
}

fn main() {
    if let Ok(spec) = std::env::var("ARENA_PAIRS") {
        pairs_only(&spec);
        return;
    }
    benches();
    Criterion::default().configure_from_args().final_summary();
}
