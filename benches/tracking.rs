//! The device benchmark of per-array stream tracking: what the device
//! arena's typed arrays, each with its own read and write events, cost
//! against plain cudarc `CudaSlice`s doing the same work, and how fast the
//! arena allocates compared to the driver's stream-ordered pool. Runs on an
//! NVIDIA GPU (build here, carry the binary there); prints tables with
//! ratios measured in the same run. The allocation race is fair to the
//! pool (`rounds.rs`): a stream of its own, the pool warmed, the same pairs
//! per round on both sides, taking turns, medians; `--pairs N`,
//! `--rounds N` and `--warmup N` size it.
//!
//! The loop: for each of many small arrays, upload it, launch a kernel that
//! rewrites it, then download every array, checking the values. First with
//! one stream (the context has no other, so neither side records events),
//! then with the arrays spread over two streams (both sides record events
//! on every use). Figures are medians of timed rounds after warm-up rounds.

use std::sync::Arc;
use std::time::Instant;

use gpu_aligned::arena::{Arena, ArenaSlice};
use gpu_aligned::backend::cuda::{cudarc, CudaBackend};

use cudarc::driver::{
    sys, CudaContext, CudaFunction, CudaSlice, CudaStream, LaunchConfig, PushKernelArg,
};

// Alternating rounds and medians, shared with the other device benches and
// `trace_replay`.
#[path = "../runtime/examples/support/rounds.rs"]
#[allow(dead_code)]
mod rounds;

type Res<T> = Result<T, Box<dyn std::error::Error>>;

const ARRAYS: usize = 64;
const WARMUP: usize = 5;
const ROUNDS: usize = 41;

const KERNEL: &str = r#"
extern "C" __global__ void bump(float* a, unsigned long long n) {
    unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) a[i] = a[i] * 2.0f + 1.0f;
}
"#;

fn config(n: usize) -> LaunchConfig {
    LaunchConfig {
        grid_dim: (u32::try_from(n.div_ceil(256)).expect("fits"), 1, 1),
        block_dim: (256, 1, 1),
        shared_mem_bytes: 0,
    }
}

fn inputs(len: usize) -> Vec<Vec<f32>> {
    (0..ARRAYS)
        .map(|a| (0..len).map(|i| (a * 7 + i % 13) as f32).collect())
        .collect()
}

fn check(inputs: &[Vec<f32>], outputs: &[Vec<f32>]) -> Res<()> {
    for (a, (input, output)) in inputs.iter().zip(outputs).enumerate() {
        for (i, (x, y)) in input.iter().zip(output).enumerate() {
            if *y != x * 2.0 + 1.0 {
                return Err(format!("array {a} element {i}: {y} for input {x}").into());
            }
        }
    }
    Ok(())
}

/// One round over plain cudarc slices; array `i` runs on `streams[i % len]`.
fn cudarc_round(
    streams: &[Arc<CudaStream>],
    kernel: &CudaFunction,
    slices: &mut [CudaSlice<f32>],
    inputs: &[Vec<f32>],
    outputs: &mut [Vec<f32>],
) -> Res<()> {
    for (i, slice) in slices.iter_mut().enumerate() {
        let stream = &streams[i % streams.len()];
        stream.memcpy_htod(&inputs[i], slice)?;
        let n = slice.len() as u64;
        let cfg = config(slice.len());
        let mut launch = stream.launch_builder(kernel);
        launch.arg(&mut *slice).arg(&n);
        // SAFETY: `bump` touches elements [0, n) of the slice.
        unsafe { launch.launch(cfg) }?;
    }
    for (i, slice) in slices.iter().enumerate() {
        let stream = &streams[i % streams.len()];
        stream.memcpy_dtoh(slice, &mut outputs[i])?;
        stream.synchronize()?;
    }
    Ok(())
}

/// The same round over arena arrays: cudarc's own copies and launches, on
/// the arena's views.
fn arena_round(
    streams: &[Arc<CudaStream>],
    kernel: &CudaFunction,
    arena: &Arena<CudaBackend>,
    arrays: &mut [ArenaSlice<f32, CudaBackend>],
    inputs: &[Vec<f32>],
    outputs: &mut [Vec<f32>],
) -> Res<()> {
    for (i, array) in arrays.iter_mut().enumerate() {
        let stream = &streams[i % streams.len()];
        let n = array.len() as u64;
        let mut view = arena.view_mut(array, .., stream)?;
        stream.memcpy_htod(&inputs[i], &mut view)?;
        let mut launch = stream.launch_builder(kernel);
        launch.arg(&mut view).arg(&n);
        // SAFETY: `bump` touches elements [0, n) of the view.
        unsafe { launch.launch(config(n as usize)) }?;
    }
    for (i, array) in arrays.iter().enumerate() {
        let stream = &streams[i % streams.len()];
        stream.memcpy_dtoh(&arena.view(array, .., stream)?, &mut outputs[i])?;
        stream.synchronize()?;
    }
    Ok(())
}

/// Median microseconds per round of both loops, interleaved round by round
/// (taking turns at going first) so drift hits both alike; the values of
/// every round are checked.
fn compare(streams: &[Arc<CudaStream>], kernel: &CudaFunction, len: usize) -> Res<(f64, f64)> {
    let inputs = inputs(len);
    let mut outputs = vec![vec![0.0f32; len]; ARRAYS];
    let first = &streams[0];
    let mut slices = (0..ARRAYS)
        .map(|_| first.alloc_zeros::<f32>(len))
        .collect::<Result<Vec<_>, _>>()?;
    let mut arena = Arena::device(first, ARRAYS * len * 4 + (1 << 20))?;
    let mut arrays = (0..ARRAYS)
        .map(|_| arena.alloc::<f32>(len))
        .collect::<Result<Vec<_>, _>>()?;
    let (mut plain, mut ours) = (Vec::new(), Vec::new());
    for round in 0..WARMUP + ROUNDS {
        // The two take turns at going first.
        let mut us = [0.0; 2];
        for k in 0..2 {
            let side = (round + k) % 2;
            let t = Instant::now();
            if side == 0 {
                cudarc_round(streams, kernel, &mut slices, &inputs, &mut outputs)?;
            } else {
                arena_round(streams, kernel, &arena, &mut arrays, &inputs, &mut outputs)?;
            }
            us[side] = t.elapsed().as_secs_f64() * 1e6;
            check(&inputs, &outputs)?;
            outputs.iter_mut().for_each(|o| o.fill(0.0));
        }
        if round >= WARMUP {
            plain.push(us[0]);
            ours.push(us[1]);
        }
    }
    for array in arrays {
        arena.free(array)?;
    }
    arena.backend().synchronize()?;
    Ok((rounds::median(&plain), rounds::median(&ours)))
}

/// Nanoseconds per alloc+free pair, medians of rounds: the driver's pool
/// (`cuMemAllocAsync` + `cuMemFreeAsync` on `stream`, a stream of its own,
/// the pool warmed) and the arena on the same stream, `pairs` pairs per
/// round on each side, taking turns (`rounds.rs`).
fn alloc_pairs(
    stream: &Arc<CudaStream>,
    bytes: usize,
    pairs: usize,
    laps: rounds::Rounds,
) -> Res<(f64, f64)> {
    let cu_stream = stream.cu_stream();
    rounds::warm_pool(stream, bytes)?;
    let mut arena = Arena::device(stream, 64 << 20)?;
    let head = arena.alloc::<u8>(1000)?;
    let samples = rounds::race(
        &format!("{bytes} B: alloc + free pairs"),
        "ns per pair",
        &["pool", "arena"],
        laps,
        |side| {
            let t = Instant::now();
            if side == 0 {
                for _ in 0..pairs {
                    let mut p = 0;
                    // SAFETY: writes one pointer; freed just below on the same stream.
                    unsafe { sys::cuMemAllocAsync(&mut p, bytes, cu_stream) }.result()?;
                    // SAFETY: `p` came from `cuMemAllocAsync` on this stream.
                    unsafe { sys::cuMemFreeAsync(p, cu_stream) }.result()?;
                }
                stream.synchronize()?;
            } else {
                for _ in 0..pairs {
                    let h = arena.alloc::<u8>(bytes)?;
                    arena.free(std::hint::black_box(h))?;
                }
            }
            Ok(t.elapsed().as_nanos() as f64 / pairs as f64)
        },
    )?;
    arena.free(head)?;
    let side = |k: usize| rounds::median(&samples.iter().map(|f| f[k]).collect::<Vec<_>>());
    Ok((side(0), side(1)))
}

fn main() -> Res<()> {
    let context = CudaContext::new(0)?;
    // The context's own stream, before any other exists: the one-stream
    // phase measures a context with no second stream (cudarc records no
    // events then). No allocation is timed on it (see below).
    let one = context.default_stream();
    let ptx = cudarc::nvrtc::compile_ptx(KERNEL)?;
    let module = context.load_module(ptx)?;
    let kernel = module.load_function("bump")?;
    println!(
        "# per-array tracking: {ARRAYS} arrays, upload + kernel + download, median of {ROUNDS} rounds (us per round)"
    );
    println!(
        "{:>8} {:>8} {:>12} {:>12} {:>14}",
        "streams", "floats", "cudarc", "arena", "arena/cudarc"
    );
    let sizes = [256usize, 4096, 65_536];
    let mut rows = Vec::new();
    for &len in &sizes {
        let (plain, ours) = compare(&[Arc::clone(&one)], &kernel, len)?;
        rows.push((1, len, plain, ours));
        println!(
            "{:>8} {len:>8} {plain:>12.1} {ours:>12.1} {:>13.3}x",
            1,
            ours / plain
        );
    }
    // From here on the context has several streams: cudarc and the arena
    // record events on every use.
    let two = [context.new_stream()?, context.new_stream()?];
    for &len in &sizes {
        let (plain, ours) = compare(&two, &kernel, len)?;
        rows.push((2, len, plain, ours));
        println!(
            "{:>8} {len:>8} {plain:>12.1} {ours:>12.1} {:>13.3}x",
            2,
            ours / plain
        );
    }
    // Allocation speed, only now: the pool is never timed on the legacy
    // default stream (`one`), where it is slower than on a stream of its own.
    let pairs = rounds::flag("--pairs").unwrap_or(100_000);
    let laps = rounds::Rounds::from_args(1, 7);
    let mut allocs = Vec::new();
    for &bytes in &[256usize, 4096, 65_536, 1 << 20] {
        allocs.push((bytes, alloc_pairs(&two[0], bytes, pairs, laps)?));
    }
    println!(
        "\n# alloc+free pair (ns): cuMemAllocAsync + cuMemFreeAsync on a new stream, the pool warmed, vs the arena; medians of {} rounds of {pairs} pairs each, taking turns",
        laps.timed
    );
    println!(
        "{:>10} {:>12} {:>10} {:>10}",
        "bytes", "pool", "arena", "pool/arena"
    );
    for (bytes, (pool, arena)) in allocs {
        println!(
            "{bytes:>10} {pool:>12.0} {arena:>10.1} {:>9.2}x",
            pool / arena
        );
    }
    let worst_one = rows
        .iter()
        .filter(|r| r.0 == 1)
        .map(|r| r.3 / r.2)
        .fold(0.0, f64::max);
    let worst_two = rows
        .iter()
        .filter(|r| r.0 == 2)
        .map(|r| r.3 / r.2)
        .fold(0.0, f64::max);
    println!(
        "\nworst arena/cudarc: one stream {worst_one:.3}x (target <= 1.1x), two streams {worst_two:.3}x; every round's values checked"
    );
    Ok(())
}
