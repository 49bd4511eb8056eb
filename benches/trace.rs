//! Replays the two recorded PyTorch allocation traces (`docs/traces`) as
//! `trace_replay` does (each array allocated with `alloc::<u8>` and freed
//! by hand, or dropped with `-drop`; growth, array starts at the trace's
//! alignment, 512-byte pitch), on two growing arenas: a host one, which
//! gives the memory of free chunks back (the chunk map), and one over a
//! stand-in for a device (`stand_in::StandIn`), which keeps it as a device
//! arena does, so its path is the device arena's. `docs/RESULTS.md` has
//! the figures.
//!
//! Without arguments: each trace `PASSES` times (5) on each arena, every
//! operation timed on its own with `Instant` (as the example does): the
//! median ns per operation, per allocation and per free, and the most
//! bytes the arena spanned.
//!
//! `TRACE_REPLAY=<host|device>[-drop],<file>,<passes>` replays a gunzipped
//! trace that many times untimed and exits, for instruction counts under
//! `valgrind --tool=callgrind` (two runs with different pass counts: the
//! difference divided by the difference in operations is one operation's
//! cost, without reading the trace).

// The example's parser; the alignments it reads are checked by the arena.
#[allow(dead_code)]
#[path = "../runtime/examples/trace_replay/trace.rs"]
mod trace;

use std::time::Instant;

use gpu_aligned::arena::{Arena, ArenaOptions, ArenaSlice, GrowthPolicy};
use gpu_aligned::backend::Backend;

// The tests' stand-in (its fixed-size constructor is theirs).
#[path = "../tests/support/stand_in.rs"]
#[allow(dead_code)]
mod stand_in;
use stand_in::StandIn;

// The tests' median of samples.
#[path = "../tests/support/median.rs"]
mod median;
use median::median;

/// Up to 16 GiB, over either trace's peak (valgrind refuses a host
/// reservation of 1 TiB).
const MAX: usize = 16 << 30;

/// `trace_replay`'s options for `trace`.
fn options(trace: &trace::Trace) -> (ArenaOptions, GrowthPolicy) {
    let align = trace.max_align.max(256) as usize;
    let policy = GrowthPolicy::up_to(MAX);
    let options = ArenaOptions::new()
        .min_align(align)
        .pitch_align(align.max(512))
        .growth(policy);
    (options, policy)
}

/// Replays `trace` `passes` times on `arena`, each pass freeing what the
/// trace left live; `time` is called after each operation with the instant
/// it began (`true` for an allocation), or never with `timed` off (the
/// `Instant` calls stay out, for instruction counts).
fn replay<B: Backend>(
    mut arena: Arena<B>,
    trace: &trace::Trace,
    passes: usize,
    by_hand: bool,
    timed: bool,
    mut time: impl FnMut(bool, Instant),
) -> usize
where
    B::Error: std::fmt::Debug,
{
    let mut peak = 0;
    let mut live: Vec<Option<ArenaSlice<u8, B>>> = (0..trace.ids).map(|_| None).collect();
    for _ in 0..passes {
        for op in &trace.ops {
            match *op {
                trace::Op::Alloc { id, bytes, .. } => {
                    let began = timed.then(Instant::now);
                    live[id] = arena.alloc::<u8>(std::hint::black_box(bytes as usize)).ok();
                    if let Some(began) = began {
                        time(true, began);
                    }
                    peak = peak.max(arena.capacity());
                }
                trace::Op::Free { id } => {
                    if let Some(array) = live[id].take() {
                        let began = timed.then(Instant::now);
                        if by_hand {
                            arena.free(std::hint::black_box(array)).expect("ours");
                        } else {
                            drop(std::hint::black_box(array));
                        }
                        if let Some(began) = began {
                            time(false, began);
                        }
                    }
                }
            }
        }
        for array in live.iter_mut().filter_map(Option::take) {
            arena.free(array).expect("ours");
        }
    }
    peak
}

/// Replays `trace` on `side`'s arena: `host` (a growing host arena, which
/// gives the memory of free chunks back), or `device` (a growing arena over
/// a stand-in for a device, which keeps it, as a device arena does).
fn replay_on(
    side: &str,
    trace: &trace::Trace,
    passes: usize,
    timed: bool,
    time: impl FnMut(bool, Instant),
) -> usize {
    let (options, policy) = options(trace);
    let (side, by_hand) = match side.strip_suffix("-drop") {
        Some(side) => (side, false),
        None => (side, true),
    };
    match side {
        "host" => replay(
            options.host(policy.initial()).expect("host arena"),
            trace,
            passes,
            by_hand,
            timed,
            time,
        ),
        "device" => replay(
            options
                .over(StandIn::growing(policy.initial(), MAX))
                .expect("arena"),
            trace,
            passes,
            by_hand,
            timed,
            time,
        ),
        other => panic!("`{other}`: host or device"),
    }
}

fn read(path: &str) -> trace::Trace {
    let text = if path.ends_with(".gz") {
        let out = std::process::Command::new("gzip")
            .args(["-dc", path])
            .output()
            .expect("the gzip program");
        assert!(out.status.success(), "gzip -dc {path}");
        out.stdout
    } else {
        std::fs::read(path).expect("the trace")
    };
    trace::parse(&text[..]).expect("a trace")
}

fn main() {
    if let Ok(spec) = std::env::var("TRACE_REPLAY") {
        let parts: Vec<&str> = spec.split(',').collect();
        let [side, path, passes] = parts[..] else {
            panic!("TRACE_REPLAY=<host|device>[-drop],<file>,<passes>");
        };
        let passes = passes.parse().expect("a pass count");
        let peak = replay_on(side, &read(path), passes, false, |_, _| {});
        eprintln!("peak span {peak}");
        return;
    }
    let passes: usize = std::env::var("PASSES").map_or(5, |p| p.parse().expect("a count"));
    for name in ["train", "infer"] {
        let trace = read(&format!(
            "{}/../docs/traces/{name}.trace.gz",
            env!("CARGO_MANIFEST_DIR")
        ));
        for side in ["host", "device", "host-drop", "device-drop"] {
            let (mut allocs, mut frees) = (Vec::new(), Vec::new());
            let began = Instant::now();
            let peak = replay_on(side, &trace, passes, true, |alloc, at| {
                let took = at.elapsed().as_nanos() as u64;
                if alloc { &mut allocs } else { &mut frees }.push(took);
            });
            let total = began.elapsed().as_nanos() as f64 / (passes * trace.ops.len()) as f64;
            let all: Vec<u64> = allocs.iter().chain(&frees).copied().collect();
            println!(
                "{name} on {side:<6}: {} ops x {passes} passes: median ns/op {}, alloc {}, free {}; mean with Instant {total:.0}; peak span {peak}",
                trace.ops.len(),
                median(&all),
                median(&allocs),
                median(&frees),
            );
        }
    }
}
