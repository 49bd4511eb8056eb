//! What red zones and region registration cost a device arena's
//! alloc + free: host-timed ns per pair (the arena calls no driver to
//! allocate), median of 11 rounds of 100,000 pairs, for 1,000-byte and
//! 1 MiB arrays with 64 other arrays live. Run it plainly (no tool: red
//! zones off, then forced on) and under `compute-sanitizer --tool memcheck`
//! (registration with the tool, red zones on by themselves). Also prints the
//! bytes red zones add for those arrays.
//!
//! ```text
//! cargo bench -p gpu-aligned-benches --features cuda --bench sanitizer
//! ```

use std::error::Error;
use std::time::Instant;

use gpu_aligned::arena::Arena;
use gpu_aligned::backend::cuda::cudarc::driver::CudaContext;
use gpu_aligned::backend::cuda::CudaBackend;

const ROUNDS: usize = 11;

fn pairs_ns(
    arena: &mut Arena<CudaBackend>,
    bytes: usize,
    pairs: usize,
) -> Result<f64, Box<dyn Error>> {
    let mut rounds = Vec::with_capacity(ROUNDS);
    for _ in 0..ROUNDS {
        let start = Instant::now();
        for _ in 0..pairs {
            let array = arena.alloc::<u8>(std::hint::black_box(bytes))?;
            arena.free(array).map_err(|failed| failed.error)?;
        }
        rounds.push(start.elapsed().as_nanos() as f64 / pairs as f64);
    }
    rounds.sort_by(f64::total_cmp);
    Ok(rounds[ROUNDS / 2])
}

fn main() -> Result<(), Box<dyn Error>> {
    let stream = CudaContext::new(0)?.new_stream()?;
    let under_tool = gpu_aligned::sanitizer::tool_attached();
    let pairs = if under_tool { 2_000 } else { 100_000 };
    println!(
        "tool attached: {under_tool}; ns per alloc+free pair, median of {ROUNDS} rounds of {pairs}"
    );
    println!("| array | red zones | ns/pair | bytes reserved for 64 arrays | overhead |");
    println!("| --- | --- | --- | --- | --- |");
    for bytes in [1_000usize, 1 << 20] {
        for red_zones in [false, true] {
            let mut arena = Arena::device(&stream, 256 << 20)?;
            arena.set_red_zones(red_zones); // red-zone
            let live: Vec<_> = (0..64)
                .map(|_| arena.alloc::<u8>(bytes))
                .collect::<Result<_, _>>()?;
            let reserved = arena.allocator().stats().used;
            let ns = pairs_ns(&mut arena, bytes, pairs)?;
            let useful = 64 * bytes as u64;
            println!(
                "| u8[{bytes}] | {} | {ns:.1} | {reserved} | {:.1}% |",
                if red_zones { "on" } else { "off" },
                (reserved as f64 / useful as f64 - 1.0) * 100.0
            );
            for array in live {
                arena.free(array).map_err(|failed| failed.error)?;
            }
        }
    }
    Ok(())
}
