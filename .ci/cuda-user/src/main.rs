//! A CUDA user's program: its own cudarc (with its own CUDA version), whose
//! stream a device arena takes, so the build holds one cudarc and one
//! `CudaStream` type. `.ci/package` checks it with CUDA 12.8 and 13.0
//! bindings (`cuda-12080/`, `cuda-13000/`); it runs only on a GPU machine.

use std::sync::Arc;

use cudarc::driver::{CudaContext, CudaStream};
use gpu_aligned::arena::{Arena, ArenaError};
use gpu_aligned::backend::cuda::{probe, CudaError};

/// `?` on the user's own cudarc calls and on the arena's, in one function.
fn scaled(stream: &Arc<CudaStream>, values: &[f32]) -> Result<Vec<f32>, ArenaError<CudaError>> {
    let mut arena = Arena::device(stream, 1 << 20)?;
    let mut array = arena.alloc::<f32>(values.len())?;
    arena.write(&mut array, .., values)?;
    stream.synchronize()?; // cudarc's DriverError
    arena.to_vec(&array)
}

fn main() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    if let Err(why) = probe() {
        println!("{why}: nothing to run here");
        return Ok(());
    }
    let stream: Arc<CudaStream> = CudaContext::new(0)?.default_stream();
    assert_eq!(scaled(&stream, &[1.0, 2.0])?, [1.0, 2.0]);
    Ok(())
}
