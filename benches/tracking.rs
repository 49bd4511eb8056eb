//! The device benchmark of per-array stream tracking: what the device
//! arena's typed arrays, each with its own read and write events, cost
//! against plain cudarc `CudaSlice`s doing the same work, and how fast the
//! arena allocates compared to the driver's stream-ordered pool. Runs on an
//! NVIDIA GPU (build here, carry the binary there); prints tables with
//! ratios measured in the same run.
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

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
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

/// The same round over arena arrays.
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
        arena.on(stream).write(array, &inputs[i])?;
        let n = array.len() as u64;
        let mut view = arena.view_mut(array)?;
        let mut launch = stream.launch_builder(kernel);
        launch.arg(&mut view).arg(&n);
        // SAFETY: `bump` touches elements [0, n) of the view.
        unsafe { launch.launch(config(n as usize)) }?;
    }
    for (i, array) in arrays.iter().enumerate() {
        let stream = &streams[i % streams.len()];
        arena.on(stream).read(array, &mut outputs[i])?;
    }
    Ok(())
}

/// Median microseconds per round of both loops, interleaved round by round
/// so drift hits both alike; the values of the last round are checked.
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
        let t = Instant::now();
        cudarc_round(streams, kernel, &mut slices, &inputs, &mut outputs)?;
        let cudarc_us = t.elapsed().as_secs_f64() * 1e6;
        check(&inputs, &outputs)?;
        outputs.iter_mut().for_each(|o| o.fill(0.0));
        let t = Instant::now();
        arena_round(streams, kernel, &arena, &mut arrays, &inputs, &mut outputs)?;
        let arena_us = t.elapsed().as_secs_f64() * 1e6;
        check(&inputs, &outputs)?;
        outputs.iter_mut().for_each(|o| o.fill(0.0));
        if round >= WARMUP {
            plain.push(cudarc_us);
            ours.push(arena_us);
        }
    }
    for array in arrays {
        arena.free(array)?;
    }
    arena.synchronize()?;
    Ok((median(plain), median(ours)))
}

/// Nanoseconds per alloc+free pair: the driver's pool (`cuMemAllocAsync` +
/// `cuMemFreeAsync` on `stream`) and the arena.
fn alloc_pairs(stream: &Arc<CudaStream>, bytes: usize) -> Res<(f64, f64)> {
    const PAIRS: usize = 2000;
    const ARENA_PAIRS: usize = 200_000;
    let cu_stream = stream.cu_stream();
    stream.context().bind_to_thread()?;
    let t = Instant::now();
    for _ in 0..PAIRS {
        let mut p = 0;
        // SAFETY: writes one pointer; freed just below on the same stream.
        unsafe { sys::cuMemAllocAsync(&mut p, bytes, cu_stream) }.result()?;
        // SAFETY: `p` came from `cuMemAllocAsync` on this stream.
        unsafe { sys::cuMemFreeAsync(p, cu_stream) }.result()?;
    }
    stream.synchronize()?;
    let pool_ns = t.elapsed().as_nanos() as f64 / PAIRS as f64;
    let mut arena = Arena::device(stream, 64 << 20)?;
    let head = arena.alloc::<u8>(1000)?;
    let t = Instant::now();
    for _ in 0..ARENA_PAIRS {
        let h = arena.alloc::<u8>(bytes)?;
        arena.free(std::hint::black_box(h))?;
    }
    let arena_ns = t.elapsed().as_nanos() as f64 / ARENA_PAIRS as f64;
    arena.free(head)?;
    Ok((pool_ns, arena_ns))
}

fn main() -> Res<()> {
    let context = CudaContext::new(0)?;
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
    // Allocation speed while the context still has one stream.
    let mut allocs = Vec::new();
    for &bytes in &[256usize, 4096, 65_536, 1 << 20] {
        allocs.push((1, bytes, alloc_pairs(&one, bytes)?));
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
    for &bytes in &[256usize, 4096, 65_536, 1 << 20] {
        allocs.push((2, bytes, alloc_pairs(&two[0], bytes)?));
    }
    println!("\n# alloc+free pair (ns): cuMemAllocAsync + cuMemFreeAsync on the default pool vs the arena");
    println!(
        "{:>8} {:>10} {:>12} {:>10} {:>10}",
        "streams", "bytes", "pool", "arena", "speed-up"
    );
    for (streams, bytes, (pool, arena)) in allocs {
        println!(
            "{streams:>8} {bytes:>10} {pool:>12.0} {arena:>10.1} {:>9.1}x",
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
