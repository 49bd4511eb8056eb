//! Writes a CUDA header for a few GPU element types, so a `.cu` file can
//! `#include` the same structs the Rust side uploads, with `static_assert`s
//! that stop nvcc if the two ever disagree, and `gpu_load`/`gpu_store` that
//! move each element with one instruction.
//!
//! ```sh
//! cargo run --example header -- gpu_types.cuh   # write the file
//! cargo run --example header                    # print it
//! ```
//!
//! The same code fits in a `build.rs` that writes into `OUT_DIR` (or next to
//! the `.cu` sources) before nvcc runs.

use gpu_aligned::header::CudaHeader;
use gpu_aligned::vector::float3;
use gpu_aligned::GpuAligned;

/// One byte of flags.
#[derive(Clone, Copy, GpuAligned)]
#[repr(C)]
struct Flags {
    bits: u8,
}

/// Two bytes.
#[derive(Clone, Copy, GpuAligned)]
#[repr(C, align(2))]
struct Texel {
    luma: u8,
    alpha: i8,
}

/// Four bytes.
#[derive(Clone, Copy, GpuAligned)]
#[repr(C, align(4))]
struct Rgba8 {
    r: u8,
    g: u8,
    b: u8,
    a: u8,
}

/// Eight bytes.
#[derive(Clone, Copy, GpuAligned)]
#[repr(C, align(8))]
struct Vec2 {
    x: f32,
    y: f32,
}

/// The shape nvcc splits into two 8-byte loads when copied as a struct.
#[derive(Clone, Copy, GpuAligned)]
#[repr(C, align(16))]
struct Sample {
    value: f32,
    #[gpu_aligned(padding)]
    pad: u32,
    time: f64,
}

/// A 12-byte position padded to one 16-byte word by the attribute macro.
#[gpu_aligned::padded]
#[derive(Clone, Copy)]
struct Particle {
    position: float3,
}

/// A struct inside a struct.
#[derive(Clone, Copy, GpuAligned)]
#[repr(C, align(16))]
struct Segment {
    from: Vec2,
    to: Vec2,
}

fn header() -> Result<CudaHeader, gpu_aligned::header::HeaderError> {
    let mut header = CudaHeader::new();
    header
        .add::<Flags>()?
        .add::<Texel>()?
        .add::<Rgba8>()?
        .add::<Vec2>()?
        .add::<Sample>()?
        .add::<Particle>()?
        .add::<Segment>()?;
    Ok(header)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let text = header()?.render();
    match std::env::args_os().nth(1) {
        Some(path) => {
            std::fs::write(&path, &text)?;
            eprintln!("wrote {}", std::path::Path::new(&path).display());
            // Show what the file holds for the type nvcc mishandles.
            eprintln!("\n{}", gpu_aligned::report::LayoutReport::of::<Sample>());
        }
        None => print!("{text}"),
    }
    Ok(())
}
