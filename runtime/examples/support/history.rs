//! A trace replayed on an arena that records its history, and the history
//! written for the viewers: `<name>.pickle` (PyTorch's memory snapshot:
//! `python3 -m torch.cuda._memory_viz trace_plot <name>.pickle -o out.html`,
//! or drop it on pytorch.org/memory_viz), `<name>.json` (the Chrome trace
//! format: ui.perfetto.dev) and `<name>.html` (the crate's own page, no
//! network). Shared by `memory_history` (host) and `trace_replay --history`
//! (device).

use std::io::BufWriter;
use std::path::Path;

use gpu_aligned::arena::{Arena, ArenaSlice};
use gpu_aligned::backend::Backend;
use gpu_aligned::history::{History, Ledger};

use super::trace::{Op, Trace};

/// Replays `trace` once on `arena` (made with the trace's largest
/// alignment as its minimum), each array labelled `id <n>` and dropped at
/// its free (as Rust code gives it back), what is left freed at the end;
/// returns the history of the run, which the ring must hold whole.
pub fn replay_recorded<B: Backend>(
    arena: &mut Arena<B>,
    trace: &Trace,
) -> Result<History, Box<dyn std::error::Error>>
where
    B::Error: std::fmt::Debug,
{
    let fail = |error: gpu_aligned::arena::ArenaError<B::Error>| format!("{error:?}");
    // An event per allocation, label and taking back, and one per growth or
    // block freed: four per operation is room enough.
    arena
        .record_history(4 * trace.ops.len() + 1024)
        .map_err(fail)?;
    let mut live: Vec<Option<ArenaSlice<u8, B>>> = (0..trace.ids).map(|_| None).collect();
    for op in &trace.ops {
        match *op {
            Op::Alloc { id, bytes, .. } => {
                let array = arena.alloc::<u8>(bytes as usize).map_err(fail)?;
                arena.label(&array, &format!("id {id}")).map_err(fail)?;
                live[id] = Some(array);
            }
            Op::Free { id } => drop(live[id].take()),
        }
    }
    for array in live.into_iter().flatten() {
        arena.free(array).map_err(|failed| fail(failed.error))?;
    }
    let history = arena.history().ok_or("recording")?;
    assert_eq!(history.lost(), 0, "the ring held the whole run");
    Ok(history)
}

/// Writes `history` as `dir/<name>.{pickle,json,html}` and prints its peak.
pub fn write_exports(history: &History, dir: &Path, name: &str) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let file = |ext: &str| -> std::io::Result<_> {
        Ok(BufWriter::new(std::fs::File::create(
            dir.join(format!("{name}.{ext}")),
        )?))
    };
    history.to_pytorch_pickle(&mut file("pickle")?)?;
    history.to_chrome_trace(&mut file("json")?)?;
    history.to_html(&mut file("html")?)?;
    let ledger = history.ledger();
    let in_use = |l: &Ledger| l.payload + l.element_padding + l.rounding + l.red_zones + l.pending;
    if let Some(peak) = ledger.iter().max_by_key(|l| in_use(l)) {
        let mapped = peak.reserved - peak.unmapped;
        println!(
            "{name}: {} events; at the peak {} B mapped: payload {}, rounding {}, pending {}, \
             free {} (largest {}), mapped unused {}; every ledger sums: {}",
            ledger.len(),
            mapped,
            peak.payload,
            peak.rounding,
            peak.pending,
            peak.free,
            peak.largest_free,
            peak.mapped_unused,
            ledger.iter().all(|l| l.sum() == l.reserved),
        );
    }
    println!("wrote {}/{name}.pickle, .json, .html", dir.display());
    Ok(())
}
