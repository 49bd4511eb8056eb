//! The CUDA backend (feature `cuda`): one device allocation that an arena
//! carves typed arrays out of, so every array starts where the allocator put
//! it (a multiple of 256 bytes by default) on the GPU too.
//!
//! Each array is ordered on its own: it gets its own read and write events,
//! exactly as cudarc keeps them for each `CudaSlice` (made on the array's
//! first device use). A kernel argument passed as a read-only view waits on
//! the array's last write and records a read; a writable view waits on both
//! and records a write; copies and zero-fill do the same on the stream they
//! run on. Work on one array never waits for work on another. A freed
//! array's bytes are handed out again only once every use recorded in its
//! events has finished (the arena checks without waiting, and waits only
//! before reporting out of memory). While the context has a single stream,
//! cudarc records no events at all and neither does this backend: that
//! stream orders everything.
//!
//! Freeing an array makes a private stream of the backend wait on the
//! array's events, so none of the caller's streams is held up; an array
//! first used while the context still had one stream keeps its events on
//! the arena's stream, which then does the waiting.
//!
//! Two streams share one limit with cudarc: an array keeps its last read
//! only, so when kernels on two streams read the same array at once, a later
//! write or free waits for the read recorded last. Order such readers
//! yourself (`stream.join`) before writing or freeing the array.
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
//!     let mut p = arena.view_mut(&mut points, ..)?; // written by the kernel
//!     let w = arena.view(&weights, ..)?;            // read by it
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
//! A step can be captured into a CUDA graph and replayed
//! ([`Arena::capture`](crate::arena::Arena::capture)): inside the capture the
//! backend makes no call that would end it (no event query, no wait on an
//! event recorded outside it, no allocation, no synchronization), and refuses
//! what cannot be captured with [`CudaError::Capturing`].
//!
//! cudarc loads `libcuda` (and `libnvrtc`) when first used, and panics if
//! they are missing; building needs neither. [`probe`] asks first, without
//! panicking, whether a driver and a device are there, so a program can fall
//! back to a host arena. Everything this module does after a context exists
//! returns errors instead, and a cudarc `DriverError` converts into them, so
//! `?` works on your own cudarc calls in a function that returns
//! [`CudaError`] or `ArenaError<CudaError>`. The other way there is no
//! conversion, since most arena errors are not the driver's: a function
//! that returns cudarc's `DriverError` calls the arena with
//! `.map_err(...)`, or returns `Box<dyn Error + Send + Sync>` (every error
//! of the crate is `Send + Sync + 'static`), whose `source()` is the
//! driver's error where there is one.
//!
//! # After a sticky fault
//!
//! Some device faults (misaligned or illegal address, a trap, an illegal
//! instruction, ...) destroy the CUDA context: every later call in that
//! context fails, whatever it is. When the backend sees one, it records it,
//! and from then on every device operation of the arena returns
//! [`CudaError::Poisoned`] with that first fault instead of touching the
//! driver; bookkeeping (freeing handles, statistics) still works, and
//! dropping the arena does not panic (cudarc records the failed free). To
//! recover, drop the arena and every other user of the context, then create
//! a new context. The safe API cannot cause such a fault: every typed view
//! is checked, in release builds too, to start aligned for its element and
//! to lie inside its array; only a kernel that indexes out of bounds or
//! reinterprets memory can.

mod buffer;
mod capture;
mod copy;
mod error;
mod plain;
mod probe;
mod tracking;
mod vm;

pub use buffer::{check_base, CudaBackend};
pub(crate) use capture::{abandon_capture, Graph};
pub use cudarc;
pub use error::CudaError;
pub use probe::probe;
pub use tracking::ArrayEvents;
pub(crate) use vm::CudaVm;
