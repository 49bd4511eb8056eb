//! A sticky device fault, provoked on purpose, and what the device arena
//! does after it. Its own test binary: the fault destroys the process's
//! CUDA context, which every other test in the same process would share.
//! Not for compute-sanitizer runs (it reports the planted fault, as it
//! should).
#![cfg(feature = "cuda")]

use gpu_aligned::arena::{Arena, ArenaError};
use gpu_aligned::backend::cuda::cudarc::driver::{sys, CudaContext, LaunchConfig, PushKernelArg};
use gpu_aligned::backend::cuda::cudarc::nvrtc::{compile_ptx_with_opts, CompileOptions};
use gpu_aligned::backend::cuda::CudaError;
use gpu_aligned::backend::Buffer;
use gpu_aligned::vector::float4;

const READ_FLOAT4: &str = r#"
// All four lanes are used, so the load is one 16-byte `ld.global.v4.f32`
// (reading `.x` alone would be a 4-byte load, legal at +4).
extern "C" __global__ void read_float4(const float4* p, float* out) {
    float4 v = p[0];
    out[0] = v.x + v.y + v.z + v.w;
}
"#;

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn a_misaligned_access_poisons_the_arena() {
    let stream = CudaContext::new(0).unwrap().default_stream();
    let options = CompileOptions {
        arch: Some("compute_90"),
        ..Default::default()
    };
    let ptx = compile_ptx_with_opts(READ_FLOAT4, options).unwrap();
    let module = stream.context().load_module(ptx).unwrap();
    let kernel = module.load_function("read_float4").unwrap();

    let mut arena = Arena::device(&stream, 1 << 20).unwrap();
    let mut points = arena.alloc::<float4>(4).unwrap();
    let mut out = arena.alloc::<f32>(1).unwrap();
    arena
        .write(&mut points, .., &[float4::new(1.0, 2.0, 3.0, 4.0); 4])
        .unwrap();

    // The safe API cannot make this pointer; raw addresses can: 4 bytes
    // into a float4 array, the "naive carve" the arena exists to prevent.
    let base = arena.backend().base_address();
    let misaligned = base + arena.offset(&points).unwrap() + 4;
    let out_address = base + arena.offset(&out).unwrap();
    let mut launch = stream.launch_builder(&kernel);
    launch.arg(&misaligned).arg(&out_address);
    let one = LaunchConfig {
        grid_dim: (1, 1, 1),
        block_dim: (1, 1, 1),
        shared_mem_bytes: 0,
    };
    // SAFETY: deliberately not: the kernel reads a float4 at an address that
    // is 4 mod 16. The device faults instead of reading; that is the point.
    let launched = unsafe { launch.launch(one) };
    assert!(
        launched.is_ok(),
        "a launch reports success; the fault comes later"
    );

    match arena.backend().synchronize() {
        Err(CudaError::Driver { error, .. }) => {
            assert_eq!(
                error.0,
                sys::CUresult::CUDA_ERROR_MISALIGNED_ADDRESS,
                "{error:?}"
            )
        }
        other => panic!("expected the misaligned-address fault, got {other:?}"),
    }
    let first = arena.backend().fault().expect("the fault is recorded");
    assert_eq!(first.0, sys::CUresult::CUDA_ERROR_MISALIGNED_ADDRESS);

    // From now on every device operation refuses, naming the first fault.
    for outcome in [
        arena.write(&mut out, .., &[1.0]),
        arena.read(&out, .., &mut [0.0]),
        arena.zero(&mut out),
        arena.backend().synchronize().map_err(ArenaError::Backend),
        arena.view(&out, .., &stream).map(|_| ()),
    ] {
        match outcome {
            Err(ArenaError::Backend(CudaError::Poisoned { first: f })) => assert_eq!(f, first),
            other => panic!("expected Poisoned, got {other:?}"),
        }
    }
    // Bookkeeping still works, and dropping everything does not panic.
    arena.free(points).unwrap();
    arena.free(out).unwrap();
    assert_eq!(arena.allocator().stats().allocations, 0);
    drop(arena);
}
