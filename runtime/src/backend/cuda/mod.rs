//! The CUDA backend (feature `cuda`): one device allocation an arena carves
//! typed arrays out of, at the same offsets as the allocator's.
//!
//! Each array is ordered by its last uses ([`LastUses`]): a use on another stream than the last one
//! waits on an event that stream records only when needed; a read waits for the last write, a write
//! for the last reads and write. Work on one array never waits for another's. A freed array's bytes
//! are free at once in the arena's stream's order, which waits on the device for the array's uses
//! elsewhere.
//!
//! ```no_run
//! use gpu_aligned::arena::Arena;
//! use gpu_aligned::backend::cuda::cudarc::driver::{CudaContext, LaunchConfig, PushKernelArg};
//! use gpu_aligned::backend::cuda::cudarc::nvrtc::compile_ptx;
//! use gpu_aligned::vector::float4;
//!
//! let stream = CudaContext::new(0)?.default_stream();
//! let ptx = compile_ptx(r#"extern "C" __global__ void scale(float4* p, const float* w, unsigned n) {
//!     unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
//!     if (i < n) { float4 v = p[i]; v.x *= w[i]; p[i] = v; }
//! }"#)?;
//! let scale = stream.context().load_module(ptx)?.load_function("scale")?;
//!
//! let mut arena = Arena::device(&stream, 1 << 20)?;
//! let mut points = arena.alloc::<float4>(1000)?; // both start on 256-byte boundaries
//! let mut weights = arena.alloc::<f32>(1000)?;   // of the same device buffer
//! arena.write(&mut points, .., &vec![float4::new(1.0, 2.0, 3.0, 4.0); 1000])?;
//! arena.write(&mut weights, .., &vec![0.5; 1000])?;
//! {
//!     let mut p = arena.view_mut(&mut points, .., &stream)?; // written by the kernel
//!     let w = arena.view(&weights, .., &stream)?;            // read by it
//!     let n = 1000u32;
//!     let mut launch = stream.launch_builder(&scale);
//!     launch.arg(&mut p).arg(&w).arg(&n);
//!     // SAFETY: `scale` touches elements [0, n) of two arrays of n elements.
//!     unsafe { launch.launch(LaunchConfig::for_num_elems(n)) }?;
//! }
//! assert_eq!(arena.to_vec(&points)?[999].x, 0.5);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! A step can be captured into a CUDA graph ([`Arena::capture`](crate::arena::Arena::capture));
//! what cannot be captured is refused with [`CudaError::Capturing`].
//!
//! cudarc loads `libcuda` when first used and panics if it is missing: [`probe`] asks first, so a
//! program can fall back to a host arena. A cudarc `DriverError` converts into [`CudaError`], so
//! `?` works on your own cudarc calls.
//!
//! # After a sticky fault
//!
//! A fault that destroys the context (misaligned or illegal address, a trap) is recorded, and every
//! later device operation of the arena returns [`CudaError::Poisoned`] with it; bookkeeping still
//! works and dropping does not panic. To recover, drop every user of the context and make a new
//! one. The safe API cannot cause such a fault: every view is checked.

mod buffer;
mod capture;
mod copy;
mod error;
mod order;
mod plain;
mod probe;
mod vm;

pub use buffer::{check_base, CudaBackend};
pub(crate) use capture::{abandon_capture, Graph};
pub use cudarc;
pub use error::CudaError;
pub use order::LastUses;
pub(crate) use order::{Access, Ordered};
pub use probe::probe;
#[cfg(feature = "nccl-bindings")]
pub(crate) use vm::Kept;
pub(crate) use vm::{Chunk, CudaVm, Sharing};
