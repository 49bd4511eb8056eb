//! Captures one step of a small model (a layer that allocates its
//! temporaries, uploads a bias and runs three kernels) from a device arena
//! into a CUDA graph, replays it, and checks the result on the host.
//!
//! Run on a machine with an NVIDIA GPU:
//! `cargo run --release --features cuda --example graph_capture -p gpu-aligned`.

use gpu_aligned::arena::Arena;
use gpu_aligned::backend::cuda::cudarc::driver::{CudaContext, LaunchConfig, PushKernelArg};
use gpu_aligned::backend::cuda::cudarc::nvrtc::compile_ptx;

const KERNELS: &str = r#"
extern "C" __global__ void scale(const float* x, float* y, float s, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] * s;
}
extern "C" __global__ void add(const float* a, const float* b, float* out, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = a[i] + b[i];
}
"#;

const N: usize = 1 << 12;
const REPLAYS: usize = 100;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let context = CudaContext::new(0)?;
    // A stream of our own: the legacy default stream cannot be captured.
    let stream = context.new_stream()?;
    let module = context.load_module(compile_ptx(KERNELS)?)?;
    let (scale, add) = (module.load_function("scale")?, module.load_function("add")?);
    let mut arena = Arena::device(&stream, 16 << 20)?;
    let mut x = arena.alloc_from(&vec![1.0f32; N])?;
    let n = N as u32;
    let cfg = LaunchConfig::for_num_elems(n);

    // One step: x = 0.5 * x + bias, through two temporaries that live only
    // inside the step. Nothing runs yet: the work is recorded.
    let (graph, temporaries) = arena.capture(|arena| {
        let bias = arena.alloc_from(&vec![0.25f32; N])?; // uploaded at every replay
        let mut half = arena.alloc::<f32>(N)?;
        let mut sum = arena.alloc::<f32>(N)?;
        {
            let (xv, mut hv) = (
                arena.view(&x, .., &stream)?,
                arena.view_mut(&mut half, .., &stream)?,
            );
            let mut launch = stream.launch_builder(&scale);
            launch.arg(&xv).arg(&mut hv).arg(&0.5f32).arg(&n);
            // SAFETY: `scale` touches elements [0, n) of two arrays of n.
            unsafe { launch.launch(cfg) }?;
        }
        {
            let (hv, bv, mut sv) = (
                arena.view(&half, .., &stream)?,
                arena.view(&bias, .., &stream)?,
                arena.view_mut(&mut sum, .., &stream)?,
            );
            let mut launch = stream.launch_builder(&add);
            launch.arg(&hv).arg(&bv).arg(&mut sv).arg(&n);
            // SAFETY: `add` touches elements [0, n) of three arrays of n.
            unsafe { launch.launch(cfg) }?;
        }
        {
            let (sv, mut xv) = (
                arena.view(&sum, .., &stream)?,
                arena.view_mut(&mut x, .., &stream)?,
            );
            let mut launch = stream.launch_builder(&scale);
            launch.arg(&sv).arg(&mut xv).arg(&1.0f32).arg(&n);
            // SAFETY: as above.
            unsafe { launch.launch(cfg) }?;
        }
        // A download cannot be captured: it is refused, and the capture
        // goes on.
        assert!(arena.to_vec(&x).is_err());
        Ok(3)
    })?; // the temporaries were dropped: their bytes stay the graph's

    graph.upload()?;
    for _ in 0..REPLAYS {
        graph.launch()?;
    }
    let mut expected = 1.0f32;
    for _ in 0..REPLAYS {
        expected = expected * 0.5 + 0.25;
    }
    let got = arena.to_vec(&x)?;
    assert!(got.iter().all(|&v| v == expected));
    println!(
        "{REPLAYS} replays of a step with {temporaries} temporaries: x[0] = {} (expected {expected})",
        got[0]
    );
    drop(graph); // the temporaries' bytes come back once the last replay is done
    Ok(())
}
