//! Prices warp access patterns with the sector model: how many 32-byte
//! sectors one warp-wide load touches and how much of what it fetches is
//! used. The first three rows are the textbook cases: consecutive floats
//! from an aligned base, the same shifted by 4 bytes, and a scattered warp.
//!
//! ```sh
//! cargo run --example coalesce                  # the table
//! cargo run --example coalesce -- 4 4 4         # one pattern: width offset stride
//! ```
//!
//! An offset is from a 256-byte-aligned allocation; `stride` may be
//! `scatter` (each lane 4 KiB from the next, in a shuffled order).

use gpu_aligned::coalesce::{measure, WarpAccess, WARP_LANES};

/// Addresses of a scattered warp: lane `i` lands in block `i * 7919 % 32`.
fn scattered(offset: u64) -> [u64; WARP_LANES] {
    let mut lanes = [0; WARP_LANES];
    for (lane, address) in (0u64..).zip(lanes.iter_mut()) {
        *address = offset + (lane * 7919 % 32) * 4096;
    }
    lanes
}

fn row(name: &str, width: u64, offset: u64, stride: Option<u64>) {
    let cost = match stride {
        Some(stride) => WarpAccess::strided(offset, stride, width).measure(),
        None => measure(&scattered(offset), width),
    };
    let stride = stride.map_or_else(|| "scatter".to_string(), |s| s.to_string());
    println!(
        "{name:<18} {width:>5} {offset:>6} {stride:>7} {:>7} {:>9.1}%",
        cost.sectors,
        cost.efficiency() * 100.0
    );
}

fn main() {
    println!("pattern            width offset  stride sectors efficiency");
    let args: Vec<String> = std::env::args().skip(1).collect();
    if let [width, offset, stride] = args.as_slice() {
        let parse = |s: &str| s.parse::<u64>().map_err(|e| format!("{s:?}: {e}"));
        match (parse(width), parse(offset)) {
            (Ok(width), Ok(offset)) => {
                let stride = (stride != "scatter").then(|| parse(stride)).transpose();
                match stride {
                    Ok(stride) => row("custom", width, offset, stride),
                    Err(e) => eprintln!("stride {e}"),
                }
            }
            (Err(e), _) | (_, Err(e)) => eprintln!("{e}"),
        }
        return;
    }
    row("aligned-floats", 4, 0, Some(4));
    row("shifted-floats", 4, 4, Some(4));
    row("scattered-floats", 4, 12, None);
    row("stride-8-floats", 4, 0, Some(32));
    row("broadcast", 4, 64, Some(0));
    row("bytes-shifted", 1, 5, Some(1));
    row("u16-stride-6", 2, 30, Some(6));
    row("double-stride-24", 8, 8, Some(24));
    row("float4", 16, 0, Some(16));
    row("float4-shifted", 16, 16, Some(16));
    row("aos-16-field-x", 4, 0, Some(16));
}
