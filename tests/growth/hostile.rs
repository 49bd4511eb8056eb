//! A growing arena under the allocation pattern that made PyTorch's
//! expandable segments grow without bound (pytorch/pytorch#123548, the
//! reproducer of pull request #193400): every cycle allocates a large
//! block A and a large block B, then a small block that stays alive, then
//! frees A and B, so the merged hole they leave is fenced off from the
//! arena's end by the small block; each cycle asks for sizes slightly
//! different from the last. PyTorch's reserved memory grew by about one
//! A + B per cycle (220 MiB to 14 GiB in 100 cycles) while the live bytes
//! grew by the small block only.
//!
//! Nothing here is written to, so the host pages committed cost address
//! space only. The tests use `alloc`, `free`, `capacity`, `committed`,
//! `offset`, `size_bytes`, `growth` and `trim` only. "Reserved" is what
//! the arena holds ([`Arena::committed`]): its span less the whole free
//! chunks it gave back.

use std::collections::VecDeque;

use gpu_aligned::arena::{Arena, ArenaOptions, ArenaSlice, GrowthPolicy};
use gpu_aligned::backend::HostBuffer;

const MIB: u64 = 1 << 20;

/// A's and B's sizes in cycle `cycle`: the reproducer's 91 MiB and
/// 45.5 MiB, each moved by up to about 1 MiB in 64 KiB steps, the two out
/// of step, so no cycle asks for what the last one freed.
fn large_sizes(cycle: u64) -> (u64, u64) {
    let step = 64 << 10;
    let a = 91 * MIB + (cycle * 7 % 33) * step - 16 * step;
    let b = 91 * MIB / 2 + (cycle * 13 % 31) * step - 15 * step;
    (a, b)
}

/// What a run of the pattern did.
struct Run {
    /// The most bytes live at once (arrays' sizes).
    peak_live: u64,
    /// The most bytes the arena spanned.
    peak_span: u64,
    /// The most bytes the arena held.
    peak_held: u64,
    /// Cycles after which the arena held more than 1.1x the most bytes
    /// live so far plus one chunk.
    over_bound: u64,
    arena: Arena<HostBuffer>,
    survivors: VecDeque<ArenaSlice<u8, HostBuffer>>,
}

/// `cycles` cycles, the small block of each (`small` bytes) kept alive for
/// `keep` cycles.
fn hostile(cycles: u64, keep: usize, small: u64) -> Run {
    let policy = GrowthPolicy::up_to(1 << 40);
    let mut arena = ArenaOptions::new()
        .growth(policy)
        .host(policy.initial())
        .unwrap();
    let chunk = arena.growth().chunk() as u64;
    let (mut live, mut peak_live, mut peak_span, mut peak_held, mut over_bound) = (0, 0, 0, 0, 0);
    let mut survivors = VecDeque::new();
    for cycle in 0..cycles {
        let (a_len, b_len) = large_sizes(cycle);
        let a = arena.alloc::<u8>(a_len as usize).unwrap();
        let b = arena.alloc::<u8>(b_len as usize).unwrap();
        let s = arena.alloc::<u8>(small as usize).unwrap();
        live += (a.size_bytes() + b.size_bytes() + s.size_bytes()) as u64;
        peak_live = u64::max(peak_live, live);
        peak_span = peak_span.max(arena.capacity() as u64);
        peak_held = peak_held.max(arena.committed() as u64);
        if arena.committed() as f64 > 1.1 * peak_live as f64 + chunk as f64 {
            over_bound += 1;
        }
        live -= (a.size_bytes() + b.size_bytes()) as u64;
        arena.free(a).unwrap();
        arena.free(b).unwrap();
        survivors.push_back(s);
        if survivors.len() > keep {
            let old = survivors.pop_front().unwrap();
            live -= old.size_bytes() as u64;
            arena.free(old).unwrap();
        }
    }
    Run {
        peak_live,
        peak_span,
        peak_held,
        over_bound,
        arena,
        survivors,
    }
}

/// The chunks the live arrays touch (no trim can give those back).
fn touched_chunks(run: &Run) -> u64 {
    let chunk = run.arena.growth().chunk() as u64;
    let mut touched = std::collections::BTreeSet::new();
    for s in &run.survivors {
        let offset = run.arena.offset(s).unwrap();
        touched.extend(offset / chunk..(offset + s.size_bytes() as u64).div_ceil(chunk));
    }
    touched.len() as u64
}

/// Prints the run's figures, trims, and returns `(free chunks, free chunks
/// still held after the trim)`: the chunks no live array touches, before
/// and after.
fn report(name: &str, run: &mut Run) -> (u64, u64) {
    let chunk = run.arena.growth().chunk() as u64;
    let live = run
        .survivors
        .iter()
        .map(|s| s.size_bytes() as u64)
        .sum::<u64>();
    let span = run.arena.capacity() as u64;
    let touched = touched_chunks(run);
    let free_chunks = span / chunk - touched;
    run.arena.trim().unwrap();
    let still_held = run.arena.committed() as u64 / chunk - touched;
    println!(
        "{name}: peak live {} MiB, peak held {} MiB ({:.3}x), peak span {} MiB, {} cycles over \
         1.1x + 1 chunk; at the end {} MiB live in a span of {} MiB, {free_chunks} free chunks, \
         {still_held} still held after trim",
        run.peak_live / MIB,
        run.peak_held / MIB,
        run.peak_held as f64 / run.peak_live as f64,
        run.peak_span / MIB,
        run.over_bound,
        live / MIB,
        span / MIB,
    );
    (free_chunks, still_held)
}

/// The reproducer as it was reported (every 2 MiB block stays alive):
/// after 10,000 cycles the arena spans within 1.1x of the most bytes live
/// plus one chunk, where PyTorch's reserved memory grew by an A + B (136.5
/// MiB) per cycle. Each cycle's A and B go into the holes the last ones
/// left; the span grows by about the survivor, as the live bytes do.
#[test]
#[cfg_attr(miri, ignore = "Miri's fallback allocates the whole reservation")]
fn reported_reproducer_reuses_the_fenced_holes() {
    let mut run = hostile(10_000, usize::MAX, 2 * MIB);
    let chunk = run.arena.growth().chunk() as u64;
    assert!(
        run.arena.capacity() as f64 <= 1.1 * run.peak_live as f64 + chunk as f64,
        "spans {} MiB with at most {} MiB live",
        run.arena.capacity() as u64 / MIB,
        run.peak_live / MIB
    );
    report("2 MiB survivors, all kept", &mut run);
    for s in run.survivors.drain(..) {
        run.arena.free(s).unwrap();
    }
}

/// The bound at every cycle (what the arena holds within 1.1x of the most
/// bytes live so far plus one chunk), and `trim` leaving at most 5% of the
/// free chunks (those no live array touches) held, under variants of the
/// pattern: smaller survivors, survivors freed after a while. The arena
/// gives back the whole chunks of each hole as it becomes free and places
/// arrays of a chunk or more high in their free block, so small survivors
/// pack together low (see `gpu_aligned::arena`'s `chunks` module). Run
/// with `--nocapture` for the numbers (in `docs/RESULTS.md`).
#[test]
#[cfg_attr(miri, ignore = "Miri's fallback allocates the whole reservation")]
fn hostile_variants_stay_within_the_bound() {
    let mut failures = Vec::new();
    for (keep, small) in [
        (usize::MAX, 2 * MIB),
        (16, 2 * MIB),
        (1, 2 * MIB),
        (usize::MAX, 64 << 10),
        (64, 4 << 10),
    ] {
        let mut run = hostile(10_000, keep, small);
        let name = format!("{} KiB survivors, each kept {keep} cycles", small >> 10);
        let (free_chunks, still_held) = report(&name, &mut run);
        if run.over_bound > 0 || still_held as f64 > 0.05 * free_chunks as f64 {
            failures.push(name);
        }
        for s in run.survivors.drain(..) {
            run.arena.free(s).unwrap();
        }
    }
    assert!(failures.is_empty(), "over the bound: {failures:?}");
}
