//! The kernel's view of a structure of arrays: one device address per
//! column, in column order, then the length, laid out as the CUDA header's
//! `P_soa`.

/// What a kernel is handed for a structure of arrays: one device address
/// per column, in the columns' declaration order ([`GpuSoa::COLUMNS`]),
/// then the length. It is laid out as the CUDA header's `P_soa` view (8
/// bytes a column, then `len`; the header `static_assert`s it), and with the
/// `cuda` feature it is cudarc's `DeviceRepr`, so it passes to a launch by
/// value.
///
/// ```
/// use gpu_aligned::arena::Arena;
/// use gpu_aligned::soa::GpuSoa;
///
/// #[derive(Clone, Copy, gpu_aligned::GpuSoa)]
/// struct Hit { id: u32, x: f64 }
///
/// let mut arena = Arena::host(1 << 14)?;
/// let soa = arena.alloc_soa::<Hit>(10)?;
/// let view = arena.soa_view(&soa)?;
/// assert_eq!(core::mem::size_of_val(&view), 8 * (Hit::COLUMNS.len() + 1));
/// assert_eq!(view.len, 10);
/// // Declaration order: `id` first, though rustc put `x` at offset 0.
/// assert_eq!(view.columns[0], arena.address(&soa.columns().id)?);
/// assert_eq!(view.columns[1], arena.address(&soa.columns().x)?);
/// # Ok::<(), gpu_aligned::arena::ArenaError>(())
/// ```
///
/// [`GpuSoa::COLUMNS`]: super::GpuSoa::COLUMNS
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(C)]
pub struct SoaView<const N: usize> {
    /// Each column's address, in column order.
    pub columns: [u64; N],
    /// The number of elements.
    pub len: u64,
}

/// Builds a kernel view from its columns' addresses.
#[doc(hidden)]
pub trait FromAddresses: Sized {
    /// `None` unless `columns` holds one address per column.
    fn from_addresses(columns: &[u64], len: u64) -> Option<Self>;
}

impl<const N: usize> FromAddresses for SoaView<N> {
    fn from_addresses(columns: &[u64], len: u64) -> Option<Self> {
        Some(SoaView {
            columns: columns.try_into().ok()?,
            len,
        })
    }
}

#[cfg(feature = "cuda")]
// SAFETY: `repr(C)` plain integers with no padding (N u64s then a u64):
// every bit pattern, all zeroes included, is a valid value, and its bytes
// are what the header's view struct expects, as they are.
unsafe impl<const N: usize> cudarc::driver::DeviceRepr for SoaView<N> {}
#[cfg(feature = "cuda")]
// SAFETY: as above: all zeroes is a valid `SoaView`.
unsafe impl<const N: usize> cudarc::driver::ValidAsZeroBits for SoaView<N> {}
