//! Element types shared by the device tests, and the CUDA source that
//! declares them: generated from the Rust types by `gpu_aligned::header`, so
//! the kernels and the host agree by construction (the header's
//! `static_assert`s stop the NVRTC build if they do not).

use std::sync::Arc;

use gpu_aligned::backend::cuda::cudarc::driver::{CudaContext, CudaModule, CudaStream};
use gpu_aligned::backend::cuda::cudarc::nvrtc::{compile_ptx_with_opts, CompileOptions};
use gpu_aligned::header::CudaHeader;
use gpu_aligned::vector::{float2, float3};
use gpu_aligned::GpuAligned;

/// `float3` padded to one 16-byte word by the attribute macro.
#[gpu_aligned::padded]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Position {
    pub p: float3,
}

/// A float then a double: the macro makes the 4-byte hole a field.
#[gpu_aligned::padded]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Sample {
    pub t: f32,
    pub v: f64,
}

#[derive(Clone, Copy, Debug, PartialEq, GpuAligned)]
#[repr(C, align(8))]
pub struct Pair {
    pub id: u32,
    pub w: f32,
}

#[derive(Clone, Copy, Debug, PartialEq, GpuAligned)]
#[repr(C, align(16))]
pub struct Particle {
    pub pair: Pair,
    pub v: float2,
}

#[derive(Clone, Copy, Debug, PartialEq, GpuAligned)]
#[repr(C, align(4))]
pub struct Rgba {
    pub c: [u8; 4],
}

/// The header for every test type, ready for NVRTC.
pub fn header() -> String {
    let mut header = CudaHeader::new();
    header
        .add::<Position>()
        .and_then(|h| h.add::<Sample>())
        .and_then(|h| h.add::<Pair>())
        .and_then(|h| h.add::<Particle>())
        .and_then(|h| h.add::<Rgba>())
        .expect("test types are legal header types");
    header.render()
}

/// A context and stream on GPU 0.
pub fn stream() -> Arc<CudaStream> {
    CudaContext::new(0).expect("a CUDA GPU").default_stream()
}

/// `source` (after the types' header) compiled by NVRTC and loaded.
pub fn module(stream: &Arc<CudaStream>, source: &str) -> Arc<CudaModule> {
    let full = format!("{}\n{source}", header());
    let options = CompileOptions {
        arch: Some("compute_90"),
        ..Default::default()
    };
    let ptx = compile_ptx_with_opts(&full, options).unwrap_or_else(|e| panic!("NVRTC: {e:?}"));
    stream.context().load_module(ptx).expect("module loads")
}
