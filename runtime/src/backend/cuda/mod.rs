//! The CUDA backend (feature `cuda`): one device allocation that an arena
//! carves typed arrays out of, so every array starts where the allocator put
//! it (a multiple of 256 bytes by default) on the GPU too.
//!
//! Each array is ordered on its own, by its last uses: the stream and
//! epoch of its last write and of its last reads ([`LastUses`]). A use on
//! the stream of the last use needs nothing, as stream order already puts
//! it after; a use on another stream waits, once per producer stream, on an
//! event that stream records only when another stream needs it, shared by
//! every array it used before. A kernel argument passed as a read-only view
//! waits for the array's last write; a writable one for its last reads and
//! write; copies and zero-fill do the same on the stream they run on. Work
//! on one array never waits for work on another. A freed array's bytes are
//! free in the arena's stream's order at once: that stream waits (on the
//! device, never the host) for the array's uses on other streams, and an
//! array never used, or made from such bytes, is ordered after the arena's
//! stream wherever it is first used.
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
pub(crate) use vm::CudaVm;
