//! Replays an allocation trace on a growing host arena (the device arena's
//! settings: arrays on the trace's largest alignment, 2 MiB chunks) that
//! records its history, and writes it for three viewers: PyTorch's memory
//! snapshot, the Chrome trace format (Perfetto) and the crate's own page.
//!
//! ```text
//! cargo run --release --example memory_history -- docs/traces/train.trace.gz target/history
//! ```
//!
//! A `.gz` trace is read through the `gzip` program. `trace_replay
//! --history DIR` does the same on a GPU (`docs/HISTORY.md`).

#[path = "support/history.rs"]
mod history;
#[allow(dead_code)]
#[path = "trace_replay/trace.rs"]
mod trace;

use std::path::Path;

use gpu_aligned::arena::{ArenaOptions, GrowthPolicy};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let usage = "usage: memory_history TRACE[.gz] OUT_DIR";
    let (path, dir) = (args.next().ok_or(usage)?, args.next().ok_or(usage)?);
    let text = match path.ends_with(".gz") {
        true => {
            std::process::Command::new("gzip")
                .args(["-dc", &path])
                .output()?
                .stdout
        }
        false => std::fs::read(&path)?,
    };
    let trace = trace::parse(&text[..])?;
    let align = trace.max_align.max(256) as usize;
    let options = ArenaOptions::new()
        .min_align(align)
        .pitch_align(align.max(512))
        .growth(GrowthPolicy::up_to(1 << 40));
    let mut arena = options.host(GrowthPolicy::up_to(1 << 40).initial())?;
    let history = history::replay_recorded(&mut arena, &trace)?;
    let name = Path::new(&path)
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or("trace");
    let name = name.trim_end_matches(".gz").trim_end_matches(".trace");
    history::write_exports(&history, Path::new(&dir), name)?;
    Ok(())
}
