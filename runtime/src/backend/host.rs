//! The host-memory backend: one zero-initialised allocation from the global
//! allocator, aligned to at least 256 bytes (what `cudaMalloc` guarantees),
//! so the same offsets are aligned on the host as on the device.

use alloc_crate::alloc::{alloc_zeroed, dealloc, Layout};
use core::fmt;
use core::ptr::NonNull;

use super::{Backend, HostAccess};

/// The smallest alignment a [`HostBuffer`] gets, whatever is asked: the
/// alignment `cudaMalloc` guarantees for device buffers.
pub const MIN_HOST_ALIGN: u64 = 256;

/// Why a [`HostBuffer`] could not be made.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum HostBufferError {
    /// A buffer of zero bytes: it would have no address.
    ZeroLength,
    /// The alignment is not a power of two.
    AlignNotPowerOfTwo {
        /// The alignment asked for.
        align: u64,
    },
    /// The length, rounded up to the alignment, does not fit in `isize`.
    TooLarge {
        /// The length asked for.
        len: u64,
    },
    /// The global allocator returned no memory.
    OutOfHostMemory {
        /// The length asked for.
        len: u64,
    },
}

impl fmt::Display for HostBufferError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            HostBufferError::ZeroLength => f.write_str("a host buffer cannot be empty"),
            HostBufferError::AlignNotPowerOfTwo { align } => {
                write!(f, "host buffer alignment {align} is not a power of two")
            }
            HostBufferError::TooLarge { len } => {
                write!(f, "a host buffer of {len} bytes exceeds the address space")
            }
            HostBufferError::OutOfHostMemory { len } => {
                write!(f, "the host has no {len} bytes to spare")
            }
        }
    }
}

#[cfg(feature = "std")]
impl std::error::Error for HostBufferError {}

/// An aligned, zero-initialised host buffer, freed on drop.
pub struct HostBuffer {
    ptr: NonNull<u8>,
    layout: Layout,
}

// SAFETY: `HostBuffer` owns its allocation exclusively (like a `Box<[u8]>`);
// access goes through `&self`/`&mut self`, so the usual borrow rules make
// sending and sharing it between threads sound.
unsafe impl Send for HostBuffer {}
// SAFETY: as above; `&HostBuffer` only gives out `&[u8]`.
unsafe impl Sync for HostBuffer {}

impl HostBuffer {
    /// A zeroed buffer of `len` bytes whose address is a multiple of
    /// `max(align, 256)`.
    ///
    /// # Errors
    ///
    /// [`HostBufferError::ZeroLength`], [`HostBufferError::AlignNotPowerOfTwo`],
    /// [`HostBufferError::TooLarge`], or
    /// [`HostBufferError::OutOfHostMemory`] when the global allocator fails.
    pub fn new(len: u64, align: u64) -> Result<HostBuffer, HostBufferError> {
        if len == 0 {
            return Err(HostBufferError::ZeroLength);
        }
        if !align.is_power_of_two() {
            return Err(HostBufferError::AlignNotPowerOfTwo { align });
        }
        let too_large = HostBufferError::TooLarge { len };
        let size = usize::try_from(len).map_err(|_| too_large)?;
        let align = usize::try_from(align.max(MIN_HOST_ALIGN)).map_err(|_| too_large)?;
        let layout = Layout::from_size_align(size, align).map_err(|_| too_large)?;
        // SAFETY: `layout` has a nonzero size (checked above).
        let raw = unsafe { alloc_zeroed(layout) };
        let ptr = NonNull::new(raw).ok_or(HostBufferError::OutOfHostMemory { len })?;
        Ok(HostBuffer { ptr, layout })
    }
}

impl Drop for HostBuffer {
    fn drop(&mut self) {
        // SAFETY: `ptr` came from `alloc_zeroed(self.layout)` and is freed
        // only here, once.
        unsafe { dealloc(self.ptr.as_ptr(), self.layout) }
    }
}

impl fmt::Debug for HostBuffer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HostBuffer")
            .field("address", &self.ptr)
            .field("len", &self.layout.size())
            .field("align", &self.layout.align())
            .finish()
    }
}

// SAFETY: the length and address are fixed at construction, and the
// allocation is owned by this value until it drops.
unsafe impl Backend for HostBuffer {
    fn len(&self) -> u64 {
        self.layout.size() as u64
    }

    fn base_address(&self) -> u64 {
        self.ptr.as_ptr() as usize as u64
    }
}

impl HostAccess for HostBuffer {
    fn bytes(&self) -> &[u8] {
        // SAFETY: `ptr` points to `layout.size()` bytes owned by `self`,
        // initialised (zeroed) at allocation; `&self` keeps them from being
        // written through `bytes_mut` meanwhile.
        unsafe { core::slice::from_raw_parts(self.ptr.as_ptr(), self.layout.size()) }
    }

    fn bytes_mut(&mut self) -> &mut [u8] {
        // SAFETY: as in `bytes`, and `&mut self` makes this the only view.
        unsafe { core::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.layout.size()) }
    }
}
