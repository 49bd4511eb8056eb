//! [`KernelArray`]: an array as a kernel argument that carries its length,
//! for the header's checked `gpu_load(a, i)` / `gpu_store(a, i, v)`
//! (see [`crate::header::write_checked_accessors`]).

use core::fmt;
use core::marker::PhantomData;

use cudarc::driver::DeviceRepr;

use super::{Arena, ArenaResult, ArenaSlice};
use crate::backend::cuda::CudaBackend;
use crate::GpuAligned;

/// An array's device address and length, laid out as the header's
/// `gpu_array<T>` (`T* ptr; unsigned long long len;`, 16 bytes): a kernel
/// argument (`builder.arg(&array)`) whose accessors can check an index.
///
/// It is a plain address: unlike a view, passing it records no use of the
/// array on any stream. Launch on the arena's stream, or order the kernel
/// after the array's other work yourself.
#[repr(C)]
pub struct KernelArray<T> {
    address: u64,
    len: u64,
    _element: PhantomData<fn() -> T>,
}

impl<T> KernelArray<T> {
    /// The first element's device address.
    pub fn address(&self) -> u64 {
        self.address
    }

    /// Number of elements.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Whether the array has no elements (never, for one an arena made).
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

impl<T> Clone for KernelArray<T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for KernelArray<T> {}

impl<T> fmt::Debug for KernelArray<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("KernelArray")
            .field("type", &core::any::type_name::<T>())
            .field("address", &format_args!("{:#x}", self.address))
            .field("len", &self.len)
            .finish()
    }
}

// SAFETY: `#[repr(C)]`, two `u64`s and a zero-sized marker: exactly the
// bytes of the header's `gpu_array<T>` on a 64-bit device, with no padding
// and no pointer into host memory.
unsafe impl<T> DeviceRepr for KernelArray<T> {}

impl Arena<CudaBackend> {
    /// The array as a [`KernelArray`]: its address and length, for a kernel
    /// that takes a `gpu_array<T>` and indexes it through the header's
    /// checked accessors.
    ///
    /// ```no_run
    /// # use gpu_aligned::arena::Arena;
    /// # use gpu_aligned::backend::cuda::cudarc::driver::CudaContext;
    /// # let stream = CudaContext::new(0)?.default_stream();
    /// let mut arena = Arena::device(&stream, 1 << 20)?;
    /// let weights = arena.alloc::<f32>(100)?;
    /// let argument = arena.kernel_array(&weights)?;
    /// assert_eq!(argument.len(), 100);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`address`](Arena::address).
    pub fn kernel_array<T: GpuAligned>(
        &self,
        array: &ArenaSlice<T, CudaBackend>,
    ) -> ArenaResult<KernelArray<T>, CudaBackend> {
        Ok(KernelArray {
            address: self.address(array)?,
            len: array.len() as u64,
            _element: PhantomData,
        })
    }
}
