//! Where an [`Arena`](crate::arena::Arena)'s bytes live. A backend is one
//! buffer with a fixed base address and length; the arena never moves or
//! resizes it, it only hands out offsets into it. Backends hold the only
//! `unsafe` code of the allocator: [`HostBuffer`] (aligned host memory) here,
//! a CUDA device buffer behind the `cuda` feature.

#[cfg(feature = "cuda")]
pub mod cuda;
#[cfg(feature = "cuda")]
pub mod cuda_vm;
#[cfg(feature = "alloc")]
mod host;
#[cfg(feature = "alloc")]
mod vm;

#[cfg(feature = "alloc")]
pub use host::{HostBuffer, HostBufferError, MIN_HOST_ALIGN};
#[cfg(feature = "alloc")]
pub use vm::{HostVm, VmError, HOST_VM_IS_LAZY};

/// One buffer that an arena carves arrays out of.
///
/// # Safety
///
/// An implementation promises that, for as long as the value lives:
/// - [`len`](Backend::len) and [`base_address`](Backend::base_address)
///   never change;
/// - the bytes `base_address .. base_address + len` (in the address space the
///   buffer lives in: host or device) belong to this value alone and stay
///   valid, so that `base_address + offset` is a usable address for every
///   `offset < len`.
///
/// Code that launches kernels on `base_address + offset` relies on this: an
/// address the backend lied about is a misaligned-address fault or a write
/// into someone else's memory.
pub unsafe trait Backend {
    /// Size of the buffer in bytes.
    fn len(&self) -> u64;

    /// Whether the buffer has no bytes.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Address of the first byte (a host pointer or a device pointer, as a
    /// number). The arena checks it is a multiple of its minimum alignment.
    fn base_address(&self) -> u64;
}

/// A backend whose bytes the CPU can read and write directly, which lets the
/// arena hand out `&[T]` and `&mut [T]` views of its arrays.
///
/// This trait is safe to implement: the arena bounds-checks the slices it
/// takes from [`bytes`](HostAccess::bytes) and checks their alignment before
/// viewing them as `T`, so a wrong implementation yields errors, not
/// undefined behaviour.
pub trait HostAccess: Backend {
    /// The whole buffer, `len()` bytes starting at `base_address()`.
    fn bytes(&self) -> &[u8];

    /// The whole buffer, mutably.
    fn bytes_mut(&mut self) -> &mut [u8];
}
