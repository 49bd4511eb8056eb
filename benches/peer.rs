//! A kernel on device 1 reading an array of device 0's arena through the arena's mapping
//! (`Share::Peer`), against `cuMemcpyPeerAsync` of the same bytes between the same pair: both
//! copy 1 GiB (`--mib N`) from device 0's memory into a buffer on device 1, on one stream of
//! device 1, timed with events, the sides taking turns (`rounds.rs`). Prints the medians in GB/s
//! and the kernel's share of the copy engine's bandwidth (the issue asks for at least 90%).
//! Needs two NVIDIA GPUs (build here, carry the binary there).

use std::sync::Arc;

use gpu_aligned::arena::{ArenaOptions, GrowthPolicy};
use gpu_aligned::backend::cuda::cudarc;
use gpu_aligned::backend::Buffer;
use gpu_aligned::share::Share;

use cudarc::driver::{sys, CudaContext, CudaStream, DevicePtr, LaunchConfig, PushKernelArg};

#[path = "../runtime/examples/support/rounds.rs"]
#[allow(dead_code)]
mod rounds;

type Res<T> = Result<T, Box<dyn std::error::Error>>;

/// 16 bytes a load, a grid of 4 blocks per SM striding over the array.
const COPY: &str = r#"
extern "C" __global__ void copy16(const uint4* from, uint4* to, unsigned long long n) {
    for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (unsigned long long)gridDim.x * blockDim.x)
        to[i] = from[i];
}
"#;

/// Milliseconds of the work `queue` puts on `stream`, between two events.
fn timed(stream: &Arc<CudaStream>, queue: impl FnOnce() -> Res<()>) -> Res<f32> {
    let flags = Some(sys::CUevent_flags::CU_EVENT_DEFAULT);
    let start = stream.record_event(flags)?;
    queue()?;
    let end = stream.record_event(flags)?;
    Ok(start.elapsed_ms(&end)?)
}

fn main() -> Res<()> {
    if CudaContext::device_count()? < 2 {
        println!("# peer: needs two GPUs");
        return Ok(());
    }
    let bytes = rounds::flag("--mib").unwrap_or(1024) << 20;
    let rounds = rounds::Rounds::from_args(2, 11);
    let (zero, one) = (CudaContext::new(0)?, CudaContext::new(1)?);
    let (s0, s1) = (zero.new_stream()?, one.new_stream()?);
    println!(
        "# peer: {} MiB from {} to {}",
        bytes >> 20,
        zero.name()?,
        one.name()?
    );

    let share = Share::Peer {
        device: 1,
        writable: false,
    };
    let options = ArenaOptions::new().growth(GrowthPolicy::up_to(bytes + (64 << 20)));
    let mut arena = options.share(share).device(&s0, 2 << 20)?;
    let array = arena.alloc_zeros::<gpu_aligned::vector::uint4>(bytes / 16)?;
    let address = arena.backend().base_address() + arena.offset(&array)?;
    let mut local = s1.alloc_zeros::<u8>(bytes)?;
    let kernel = one
        .load_module(cudarc::nvrtc::compile_ptx(COPY)?)?
        .load_function("copy16")?;
    let sms = one.attribute(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)?;
    let config = LaunchConfig {
        grid_dim: (4 * sms as u32, 1, 1),
        block_dim: (256, 1, 1),
        shared_mem_bytes: 0,
    };
    let n = (bytes / 16) as u64;

    let sides = [
        "kernel on device 1 through the mapping",
        "cuMemcpyPeerAsync",
    ];
    let samples = rounds::race("peer read", "GB/s", &sides, rounds, |side| {
        let ms = timed(&s1, || {
            match side {
                0 => {
                    let from = arena.view(&array, .., &s1)?;
                    let mut launch = s1.launch_builder(&kernel);
                    launch.arg(&from).arg(&mut local).arg(&n);
                    // SAFETY: `copy16` touches n 16-byte words of each buffer.
                    unsafe { launch.launch(config) }?;
                }
                _ => {
                    let (to, _record) = local.device_ptr(&s1);
                    // SAFETY: both ranges hold `bytes` bytes; the contexts own them.
                    let r = unsafe {
                        sys::cuMemcpyPeerAsync(
                            to,
                            one.cu_ctx(),
                            address,
                            zero.cu_ctx(),
                            bytes,
                            s1.cu_stream(),
                        )
                    };
                    r.result()?;
                }
            }
            Ok(())
        })?;
        Ok(bytes as f64 / (f64::from(ms) * 1e6))
    })?;
    let median = |side: usize| rounds::median(&samples.iter().map(|r| r[side]).collect::<Vec<_>>());
    let (kernel, engine) = (median(0), median(1));
    let share = kernel / engine;
    let verdict = if share >= 0.9 { "PASS" } else { "FAIL" };
    println!("\nkernel {kernel:.1} GB/s, cuMemcpyPeerAsync {engine:.1} GB/s: {share:.3} ({verdict}: at least 0.9)");
    Ok(())
}
