//! The device benchmark of arenas that grow in place (build here, run on an
//! NVIDIA GPU): what growing by one chunk costs (map the chunk and grant
//! access) against what a fixed buffer needs to grow (allocate a bigger
//! buffer, copy everything over, free the old one), for 1, 4 and 16 GiB of
//! data. Every figure is the median of repeated runs, timed on the host
//! around calls that return only once the device is done.

use std::sync::Arc;
use std::time::Instant;

use gpu_aligned::backend::cuda::cudarc;
use gpu_aligned::backend::cuda_vm::CudaVm;

use cudarc::driver::{sys, CudaContext};

type Res<T> = Result<T, Box<dyn std::error::Error>>;

const GIB: u64 = 1 << 30;
const REPEATS: usize = 11;

fn median(mut samples: Vec<f64>) -> f64 {
    samples.sort_by(f64::total_cmp);
    samples[samples.len() / 2]
}

fn driver(op: &str, r: sys::CUresult) -> Res<()> {
    r.result().map_err(|e| format!("{op}: {e:?}").into())
}

/// Median microseconds of growing a `size`-byte mapping by one chunk
/// (trimmed back between runs, untimed).
fn grow_by_one_chunk(ctx: &Arc<CudaContext>, chunk: u64, size: u64) -> Res<f64> {
    let mut vm = CudaVm::reserve(ctx, Some(size + 16 * chunk), chunk)?;
    vm.grow_to(size)?;
    let mut samples = Vec::new();
    for _ in 0..REPEATS + 2 {
        let start = Instant::now();
        vm.grow_to(size + chunk)?;
        samples.push(start.elapsed().as_secs_f64() * 1e6);
        vm.trim_to(size)?;
    }
    Ok(median(samples.split_off(2)))
}

/// Median microseconds of moving `size` bytes into a buffer one chunk
/// larger: `cuMemAlloc`, `cuMemcpyDtoD`, wait, `cuMemFree`.
fn reallocate_and_copy(ctx: &Arc<CudaContext>, chunk: u64, size: u64) -> Res<f64> {
    ctx.bind_to_thread()?;
    let mut old: sys::CUdeviceptr = 0;
    // SAFETY: `old` is a live local.
    driver("cuMemAlloc", unsafe {
        sys::cuMemAlloc_v2(&mut old, size as usize)
    })?;
    // SAFETY: `old` holds `size` bytes.
    driver("cuMemsetD8", unsafe {
        sys::cuMemsetD8_v2(old, 1, size as usize)
    })?;
    let mut samples = Vec::new();
    for _ in 0..REPEATS + 2 {
        let start = Instant::now();
        let mut new: sys::CUdeviceptr = 0;
        // SAFETY: `new` is a live local; the copy stays inside both buffers.
        unsafe {
            driver(
                "cuMemAlloc",
                sys::cuMemAlloc_v2(&mut new, (size + chunk) as usize),
            )?;
            driver(
                "cuMemcpyDtoD",
                sys::cuMemcpyDtoD_v2(new, old, size as usize),
            )?;
            driver("cuCtxSynchronize", sys::cuCtxSynchronize())?;
            driver("cuMemFree", sys::cuMemFree_v2(new))?;
        }
        samples.push(start.elapsed().as_secs_f64() * 1e6);
    }
    // SAFETY: `old` came from `cuMemAlloc` and is freed once.
    driver("cuMemFree", unsafe { sys::cuMemFree_v2(old) })?;
    Ok(median(samples.split_off(2)))
}

fn main() -> Res<()> {
    let ctx = CudaContext::new(0)?;
    let chunk = CudaVm::granularity(&ctx)?;
    println!(
        "device: {}; virtual memory: {}; granularity: {} KiB",
        ctx.name()?,
        CudaVm::supported(&ctx)?,
        chunk >> 10
    );
    println!();
    println!(
        "Growing by one {} MiB chunk (median of {REPEATS})",
        chunk >> 20
    );
    println!(
        "{:>8} | {:>18} | {:>24} | {:>8}",
        "data", "map + access (us)", "alloc + copy + free (us)", "ratio"
    );
    for size in [GIB, 4 * GIB, 16 * GIB] {
        let grow = grow_by_one_chunk(&ctx, chunk, size)?;
        let copy = reallocate_and_copy(&ctx, chunk, size)?;
        println!(
            "{:>5} GiB | {grow:>18.1} | {copy:>24.1} | {:>7.0}x",
            size / GIB,
            copy / grow
        );
    }
    Ok(())
}
