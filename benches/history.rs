//! The arena's history (`gpu_aligned::history`): what recording costs, and
//! how fast a recorded run is exported. `docs/HISTORY.md` has the figures.
//!
//! Without arguments (criterion): a history of 10^6 events (a host arena
//! allocating, labelling and dropping arrays of a few types and sizes),
//! replayed into its ledger and written in each format to `io::sink()`.
//!
//! `HISTORY_PAIRS=<host|device>[-free][-recorded],<bytes>,<pairs>` runs
//! allocate + drop (or free) pairs untimed, as `benches/arena.rs`'s
//! `ARENA_PAIRS` does, with the arena recording (`-recorded`) or not, for
//! instruction counts under callgrind (`benches/history.sh`).

use criterion::{criterion_group, Criterion};
use gpu_aligned::arena::{Arena, ArenaOptions};
use gpu_aligned::backend::Backend;
use gpu_aligned::history::History;
use gpu_aligned::vector::{float3_16_t, float4};

// The tests' stand-in (its fixed-size constructor is theirs).
#[path = "../tests/support/stand_in.rs"]
#[allow(dead_code)]
mod stand_in;
use stand_in::StandIn;

/// A history of exactly `events` events: arrays of three types and a few
/// sizes allocated, some labelled, dropped in a shuffled order.
fn history(events: usize) -> History {
    let mut arena = Arena::host(1 << 30).expect("host arena");
    arena.record_history(events).expect("recording");
    let (mut live, mut step) = (Vec::new(), 0u64);
    // About one event per step: past `events` steps the ring has wrapped.
    for _ in 0..events + events / 4 {
        step = step
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let len = 1 + (step >> 40) as usize % 5000;
        match (step >> 20) % 4 {
            0 => {
                live.push(Box::new(arena.alloc::<u8>(len).expect("room")) as Box<dyn std::any::Any>)
            }
            1 => live.push(Box::new(arena.alloc::<float4>(len).expect("room"))),
            2 => {
                let points = arena.alloc::<float3_16_t>(len).expect("room");
                arena.label(&points, "points").expect("ours");
                live.push(Box::new(points));
            }
            _ if !live.is_empty() => drop(live.swap_remove((step >> 8) as usize % live.len())),
            _ => {}
        }
        while live.len() > 200 {
            drop(live.swap_remove((step >> 12) as usize % live.len()));
        }
    }
    arena.history().expect("recording")
}

fn exports(c: &mut Criterion) {
    let history = history(1_000_000);
    assert_eq!(history.ledger().len(), 1_000_000);
    let mut group = c.benchmark_group("history of 10^6 events");
    group.sample_size(10);
    group.bench_function("ledger", |b| b.iter(|| history.ledger().len()));
    group.bench_function("to_chrome_trace", |b| {
        b.iter(|| history.to_chrome_trace(&mut std::io::sink()).expect("sink"))
    });
    group.bench_function("to_pytorch_pickle", |b| {
        b.iter(|| {
            history
                .to_pytorch_pickle(&mut std::io::sink())
                .expect("sink")
        })
    });
    group.bench_function("to_html", |b| {
        b.iter(|| history.to_html(&mut std::io::sink()).expect("sink"))
    });
    group.finish();
}

criterion_group!(benches, exports);

/// `benches/arena.rs`'s `drop_pairs`, with the arena recording if `recorded`.
fn drop_pairs<B: Backend>(
    mut arena: Arena<B>,
    bytes: usize,
    pairs: usize,
    free: bool,
    recorded: bool,
) where
    B::Error: std::fmt::Debug,
{
    if recorded {
        // The ring fills in the first run: each pair's cost includes overwriting.
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

/// `HISTORY_PAIRS`: see the module docs.
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
    const LEN: usize = 1 << 30;
    let (side, recorded) = side
        .strip_suffix("-recorded")
        .map_or((side, false), |s| (s, true));
    let (side, free) = side
        .strip_suffix("-free")
        .map_or((side, false), |s| (s, true));
    match side {
        "host" => drop_pairs(
            Arena::host(LEN).expect("arena"),
            bytes,
            pairs,
            free,
            recorded,
        ),
        "device" => {
            let arena = ArenaOptions::new()
                .over(StandIn::growing(LEN, LEN))
                .expect("arena");
            drop_pairs(arena, bytes, pairs, free, recorded)
        }
        other => panic!("`{other}`: host or device"),
    }
}

fn main() {
    if let Ok(spec) = std::env::var("HISTORY_PAIRS") {
        pairs_only(&spec);
        return;
    }
    benches();
    Criterion::default().configure_from_args().final_summary();
}
