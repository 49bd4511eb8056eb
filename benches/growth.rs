//! The device benchmark of arenas that grow in place (build here, run on an
//! NVIDIA GPU): what growing a full arena by one chunk costs (the allocation
//! that does not fit maps the chunk, grants access and zeroes it) against
//! what a fixed buffer needs to grow (allocate a bigger buffer, copy
//! everything over, free the old one), for 1, 4 and 16 GiB of data; and the steady-state alloc+free pair of a device arena grown in
//! place to 1 GiB against a fixed 1 GiB one. Every figure is the median of
//! repeated runs, timed on the host around calls that return only once the
//! device is done.

use std::sync::Arc;
use std::time::Instant;

use gpu_aligned::arena::{Arena, ArenaOptions, GrowthPolicy, DEFAULT_CHUNK};
use gpu_aligned::backend::cuda::cudarc;
use gpu_aligned::backend::cuda::CudaBackend;

use cudarc::driver::{sys, CudaContext, CudaStream};

// The tests' median, and their seeded generator: the same sequence for both
// arenas.
#[path = "../tests/support/median.rs"]
mod median;
#[path = "../tests/support/rng.rs"]
mod rng;
use median::median;
use rng::Rng;

type Res<T> = Result<T, Box<dyn std::error::Error>>;

const GIB: usize = 1 << 30;
const REPEATS: usize = 11;

fn driver(op: &str, r: sys::CUresult) -> Res<()> {
    r.result().map_err(|e| format!("{op}: {e:?}").into())
}

/// Median microseconds of growing a device arena whose `size` bytes are
/// all live by one chunk: allocating the array that does not fit. Dropping
/// it and trimming the arena back between runs is not timed.
fn grow_by_one_chunk(stream: &Arc<CudaStream>, size: usize) -> Res<f64> {
    let policy = GrowthPolicy::up_to(size + 16 * DEFAULT_CHUNK);
    let mut arena = ArenaOptions::new().growth(policy).device(stream, size)?;
    if !arena.growth().grows() {
        return Err("the device has no virtual memory management".into());
    }
    let full = arena.alloc::<u8>(size)?;
    let mut samples = Vec::new();
    for _ in 0..REPEATS + 2 {
        let start = Instant::now();
        let grown = arena.alloc::<u8>(DEFAULT_CHUNK)?;
        samples.push(start.elapsed().as_secs_f64() * 1e6);
        arena.free(grown).map_err(|e| e.to_string())?;
        arena.trim()?;
    }
    arena.free(full).map_err(|e| e.to_string())?;
    Ok(median(&samples.split_off(2)))
}

/// Median microseconds of moving `size` bytes into a buffer one chunk
/// larger: `cuMemAlloc`, `cuMemcpyDtoD`, wait, `cuMemFree`.
fn reallocate_and_copy(ctx: &Arc<CudaContext>, chunk: usize, size: usize) -> Res<f64> {
    ctx.bind_to_thread()?;
    let mut old: sys::CUdeviceptr = 0;
    // SAFETY: `old` is a live local.
    driver("cuMemAlloc", unsafe { sys::cuMemAlloc_v2(&mut old, size) })?;
    // SAFETY: `old` holds `size` bytes.
    driver("cuMemsetD8", unsafe { sys::cuMemsetD8_v2(old, 1, size) })?;
    let mut samples = Vec::new();
    for _ in 0..REPEATS + 2 {
        let start = Instant::now();
        let mut new: sys::CUdeviceptr = 0;
        // SAFETY: `new` is a live local; the copy stays inside both buffers.
        unsafe {
            driver("cuMemAlloc", sys::cuMemAlloc_v2(&mut new, size + chunk))?;
            driver("cuMemcpyDtoD", sys::cuMemcpyDtoD_v2(new, old, size))?;
            driver("cuCtxSynchronize", sys::cuCtxSynchronize())?;
            driver("cuMemFree", sys::cuMemFree_v2(new))?;
        }
        samples.push(start.elapsed().as_secs_f64() * 1e6);
    }
    // SAFETY: `old` came from `cuMemAlloc` and is freed once.
    driver("cuMemFree", unsafe { sys::cuMemFree_v2(old) })?;
    Ok(median(&samples.split_off(2)))
}

const LIVE: usize = 1000;
const PAIRS: usize = 200_000;

/// Nanoseconds per alloc+free pair with `LIVE` arrays of 256 B to 64 KiB
/// live: free a random one, allocate another in its place.
fn steady_state(arena: &mut Arena<CudaBackend>, seed: u64) -> Res<f64> {
    let mut rng = Rng(seed);
    let mut live = Vec::with_capacity(LIVE);
    for _ in 0..LIVE {
        live.push(arena.alloc::<u8>(256 + rng.below(64 << 10) as usize)?);
    }
    let mut pair = |arena: &mut Arena<CudaBackend>, rng: &mut Rng| -> Res<()> {
        let index = rng.below(LIVE as u64) as usize;
        let fresh = arena.alloc::<u8>(256 + rng.below(64 << 10) as usize)?;
        let old = std::mem::replace(&mut live[index], fresh);
        arena.free(old).map_err(|e| e.to_string())?;
        Ok(())
    };
    for _ in 0..PAIRS / 10 {
        pair(arena, &mut rng)?;
    }
    let start = Instant::now();
    for _ in 0..PAIRS {
        pair(arena, &mut rng)?;
    }
    let ns = start.elapsed().as_secs_f64() * 1e9 / PAIRS as f64;
    for array in live {
        arena.free(array).map_err(|e| e.to_string())?;
    }
    Ok(ns)
}

/// A device arena grown in place from one chunk to 1 GiB by 512
/// allocations of 2 MiB, all freed again.
fn grown_arena(stream: &Arc<CudaStream>) -> Res<Arena<CudaBackend>> {
    let mut arena = ArenaOptions::new()
        .growth(GrowthPolicy::up_to(2 * GIB))
        .device(stream, DEFAULT_CHUNK)?;
    let mut arrays = Vec::new();
    while arena.capacity() < GIB {
        arrays.push(arena.alloc::<u8>(2 << 20)?);
    }
    for array in arrays {
        arena.free(array).map_err(|e| e.to_string())?;
    }
    Ok(arena)
}

fn alloc_free_pairs(ctx: &Arc<CudaContext>) -> Res<()> {
    let stream = ctx.new_stream()?;
    let mut fixed = Arena::device(&stream, GIB)?;
    let mut grown = grown_arena(&stream)?;
    println!();
    println!(
        "Steady-state alloc+free pair, {LIVE} live arrays of 256 B-64 KiB \
         (median of 7 runs of {PAIRS} pairs)"
    );
    println!(
        "grown arena: {} bytes in {} MiB chunks",
        grown.capacity(),
        grown.growth().chunk() >> 20
    );
    let (mut fixed_ns, mut grown_ns) = (Vec::new(), Vec::new());
    for run in 0..7 {
        fixed_ns.push(steady_state(&mut fixed, 0x9E37_79B9 + run)?);
        grown_ns.push(steady_state(&mut grown, 0x9E37_79B9 + run)?);
    }
    let (fixed_ns, grown_ns) = (median(&fixed_ns), median(&grown_ns));
    println!("{:>14} | {:>10}", "arena", "ns / pair");
    println!("{:>14} | {fixed_ns:>10.1}", "fixed 1 GiB");
    println!("{:>14} | {grown_ns:>10.1}", "grown to 1 GiB");
    println!("grown / fixed: {:.3}x", grown_ns / fixed_ns);
    Ok(())
}

fn main() -> Res<()> {
    let ctx = CudaContext::new(0)?;
    let stream = ctx.new_stream()?;
    let chunk = DEFAULT_CHUNK;
    println!("device: {}", ctx.name()?);
    println!();
    println!(
        "Growing a full arena by one {} MiB chunk (median of {REPEATS})",
        chunk >> 20
    );
    println!(
        "{:>8} | {:>24} | {:>24} | {:>8}",
        "data", "map + access + zero (us)", "alloc + copy + free (us)", "ratio"
    );
    for size in [GIB, 4 * GIB, 16 * GIB] {
        let grow = grow_by_one_chunk(&stream, size)?;
        let copy = reallocate_and_copy(&ctx, chunk, size)?;
        println!(
            "{:>5} GiB | {grow:>24.1} | {copy:>24.1} | {:>7.0}x",
            size / GIB,
            copy / grow
        );
    }
    alloc_free_pairs(&ctx)
}
