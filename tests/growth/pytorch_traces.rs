//! The allocation traces of two PyTorch programs kept in `docs/traces`
//! (three training steps of a small transformer, and an inference loop over
//! batches of varying sizes, recorded on an H100), replayed with the device
//! arena's settings (2 MiB chunks, arrays on 512 bytes) on a growing host
//! arena and on a growing arena over a made-up device buffer, which, like a
//! device arena, never gives memory back (so it places as the device arena
//! does; the H100 replay gave the same figures), each array freed by hand
//! and, on the device's path, dropped. The peak must stay at or below the
//! memory PyTorch itself reserved for the same program.
//!
//! The traces are read with `trace_replay`'s own parser and decompressed by
//! the `gzip` program.

#[path = "../../runtime/examples/trace_replay/trace.rs"]
mod trace;

use gpu_aligned::arena::{Arena, ArenaOptions, GrowthPolicy};
use gpu_aligned::backend::Backend;

use crate::support::StandIn;

fn read_trace(name: &str) -> trace::Trace {
    let path = format!(
        "{}/../docs/traces/{name}.trace.gz",
        env!("CARGO_MANIFEST_DIR")
    );
    let unzipped = std::process::Command::new("gzip")
        .args(["-dc", &path])
        .output()
        .expect("the gzip program");
    assert!(unzipped.status.success(), "gzip -dc {path} failed");
    trace::parse(&unzipped.stdout[..]).unwrap()
}

/// How the replay gives an array back.
#[derive(Clone, Copy, Debug)]
enum Ending {
    Freed,
    Dropped,
}

/// A growing arena with the device arena's settings for `trace`, over the
/// host (which gives free chunks' memory back) or over a made-up device.
fn arena_for<B: Backend>(
    trace: &trace::Trace,
    make: impl FnOnce(ArenaOptions, usize) -> Arena<B>,
) -> Arena<B> {
    let align = trace.max_align.max(256);
    let policy = GrowthPolicy::up_to(1 << 40);
    let options = ArenaOptions::new()
        .min_align(align as usize)
        .pitch_align(align.max(512) as usize)
        .growth(policy);
    make(options, policy.initial())
}

/// The most bytes `arena` spanned while replaying `trace` once.
fn peak_span<B: Backend>(trace: &trace::Trace, mut arena: Arena<B>, ending: Ending) -> u64
where
    B::Error: std::fmt::Debug,
{
    let align = trace.max_align.max(256);
    let mut live: Vec<_> = (0..trace.ids).map(|_| None).collect();
    let mut peak = arena.capacity() as u64;
    for op in &trace.ops {
        match *op {
            trace::Op::Alloc {
                id,
                bytes,
                align: asked,
            } => {
                assert!(asked <= align);
                live[id] = Some(arena.alloc::<u8>(bytes as usize).unwrap());
                peak = peak.max(arena.capacity() as u64);
            }
            trace::Op::Free { id } => {
                let array = live[id].take().unwrap();
                match ending {
                    Ending::Freed => arena.free(array).unwrap(),
                    Ending::Dropped => drop(array),
                }
            }
        }
    }
    for array in live.into_iter().flatten() {
        arena.free(array).unwrap();
    }
    peak
}

#[test]
#[cfg_attr(
    miri,
    ignore = "runs gzip, and Miri's fallback allocates the whole reservation"
)]
fn recorded_programs_need_no_more_than_pytorch_reserved() {
    for name in ["train", "infer"] {
        let trace = read_trace(name);
        assert_eq!(trace.streams, 1, "{name}: {:?}", trace.comments);
        let pytorch = trace
            .pytorch_max_reserved
            .expect("PyTorch's peak in the header");
        let host = || arena_for(&trace, |options, len| options.host(len).unwrap());
        let device = || {
            arena_for(&trace, |options, len| {
                options.over(StandIn::growing(len, 1 << 40)).unwrap()
            })
        };
        for (arena, ending, peak) in [
            (
                "host",
                Ending::Freed,
                peak_span(&trace, host(), Ending::Freed),
            ),
            (
                "device",
                Ending::Freed,
                peak_span(&trace, device(), Ending::Freed),
            ),
            (
                "device",
                Ending::Dropped,
                peak_span(&trace, device(), Ending::Dropped),
            ),
        ] {
            println!(
                "{name}: {} operations, {arena} arena, arrays {ending:?}: peak {peak} B, PyTorch reserved {pytorch} B ({:.3}x)",
                trace.ops.len(),
                peak as f64 / pytorch as f64
            );
            assert!(
                peak <= pytorch,
                "{name}, {arena} arena, arrays {ending:?}: {peak} B against PyTorch's {pytorch} B"
            );
        }
    }
}
