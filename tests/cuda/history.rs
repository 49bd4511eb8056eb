//! The arena's history on a real GPU: the recorded inference trace replayed
//! on a growing device arena (arrays dropped, as Rust code gives them back),
//! recorded. The ledger closes at every event and agrees with the arena at
//! the end, and the run is written for the viewers, to
//! `$GPU_ALIGNED_HISTORY_DIR` (default: `gpu-aligned-history` in the
//! temporary directory), for `tests/history/memory_viz.sh`. The trace is
//! `$GPU_ALIGNED_TRACE` if set (a binary built here and run elsewhere).

#[path = "../../runtime/examples/support/history.rs"]
#[allow(dead_code)]
mod replay;
#[path = "../../runtime/examples/trace_replay/trace.rs"]
#[allow(dead_code)]
mod trace;

use gpu_aligned::arena::{ArenaOptions, GrowthPolicy};

use crate::types::stream;

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn the_ledger_closes_at_every_event_of_a_trace_on_the_device() {
    let built = concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/traces/infer.trace.gz");
    let path = std::env::var("GPU_ALIGNED_TRACE").unwrap_or_else(|_| built.into());
    let unzipped = std::process::Command::new("gzip")
        .args(["-dc", &path])
        .output();
    let trace = trace::parse(&unzipped.expect("the gzip program").stdout[..]).unwrap();
    let align = trace.max_align.max(256) as usize;
    let policy = GrowthPolicy::up_to(16 << 30);
    let options = ArenaOptions::new()
        .min_align(align)
        .pitch_align(align.max(512));
    let stream = stream();
    let mut arena = options
        .growth(policy)
        .device(&stream, policy.initial())
        .unwrap();
    let history = replay::replay_recorded(&mut arena, &trace).unwrap();
    let ledger = history.ledger();
    for (i, part) in ledger.iter().enumerate() {
        assert_eq!(part.sum(), part.reserved, "event {i}: {part:?}");
    }
    let (last, stats) = (ledger.last().unwrap(), arena.allocator().stats());
    let in_use = last.payload + last.element_padding + last.rounding + last.red_zones;
    assert_eq!(
        in_use + last.pending,
        stats.used as u64,
        "{last:?} against {stats:?}"
    );
    assert_eq!(last.reserved - last.unmapped, arena.committed() as u64);
    let dir = std::env::var_os("GPU_ALIGNED_HISTORY_DIR").map_or_else(
        || std::env::temp_dir().join("gpu-aligned-history"),
        Into::into,
    );
    replay::write_exports(&history, &dir, "infer-device").unwrap();
}
