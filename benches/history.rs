//! The arena's history (`gpu_aligned::history`): what recording costs, and
//! how fast a recorded run is exported. `docs/HISTORY.md` has the figures.
//!
//! Without arguments (criterion): a history of 10^6 events (a host arena
//! allocating, labelling and dropping arrays of a few types and sizes),
//! replayed into its ledger and written in each format to `io::sink()`.
//!
//! What recording costs per allocate + drop (or free) pair is counted by
//! `benches/history.sh`, through `benches/arena.rs`'s `ARENA_PAIRS`.

use criterion::{criterion_group, Criterion};
use gpu_aligned::arena::Arena;
use gpu_aligned::history::History;
use gpu_aligned::vector::{float3_16_t, float4};

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

fn main() {
    benches();
    Criterion::default().configure_from_args().final_summary();
}
