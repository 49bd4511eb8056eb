//! The allocation traces of two PyTorch programs kept in `docs/traces`
//! (three training steps of a small transformer, and an inference loop over
//! batches of varying sizes, recorded on an H100), replayed on a growing
//! host arena with the device arena's settings (2 MiB chunks, arrays on
//! 512 bytes): the allocator and the growth policy are the same on both, so
//! the host arena spans what the device arena maps (the H100 replay gave the
//! same figures). Its peak must stay at or below the memory PyTorch itself
//! reserved for the same program.
//!
//! The traces are read with `trace_replay`'s own parser and decompressed by
//! the `gzip` program.

#[path = "../../runtime/examples/trace_replay/trace.rs"]
mod trace;

use gpu_aligned::arena::{ArenaOptions, GrowthPolicy};

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

/// The most bytes the arena spanned while replaying `trace` once.
fn peak_span(trace: &trace::Trace) -> u64 {
    let align = trace.max_align.max(256);
    let policy = GrowthPolicy::up_to(1 << 40);
    let options = ArenaOptions::new()
        .min_align(align as usize)
        .pitch_align(align.max(512) as usize)
        .growth(policy);
    let mut arena = options.host(policy.initial()).unwrap();
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
            trace::Op::Free { id } => arena.free(live[id].take().unwrap()).unwrap(),
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
        let peak = peak_span(&trace);
        println!(
            "{name}: {} operations, arena peak {peak} B, PyTorch reserved {pytorch} B ({:.3}x)",
            trace.ops.len(),
            peak as f64 / pytorch as f64
        );
        assert!(
            peak <= pytorch,
            "{name}: {peak} B against PyTorch's {pytorch} B"
        );
    }
}
