//! The alignments the crate's buffers and arrays keep: [`ARRAY_ALIGN`] for the start of every
//! buffer, array and column, [`PITCH_ALIGN`] for the rows of pitched arrays. Each is the default of
//! an [`ArenaOptions`](crate::arena::ArenaOptions) setting, and what the CUDA driver gives a buffer
//! of its own.
//!
//! Inside the crate, this is also the one rounding helper every module uses (`round_up`;
//! `const_round_up` is the same rounding for the layout rules and the header's column arithmetic,
//! which run in constant evaluation, where a trait-generic function cannot). Lengths, counts and
//! byte sizes are `usize`; `u64` means an address or an offset into a device buffer, and
//! `offset_of` is the one conversion from the first to the second (`bytes_of` the way back).

/// The alignment `cudaMalloc` guarantees for every allocation (and the least a device buffer's base
/// must have), and the start alignment every array of an arena, every host buffer and every
/// structure-of-arrays column gets by default: 256 bytes, from which in-place writes reach full
/// bandwidth (docs/RESULTS.md, "The hardware").
pub const ARRAY_ALIGN: usize = 256;

/// The alignment of a pitched array's row pitch by default: 512 bytes, the multiple
/// `cuMemAllocPitch` rounds rows up to (measured on an H100: docs/RESULTS.md), so pitched arrays of
/// a device arena follow the driver's rule.
pub const PITCH_ALIGN: usize = 512;

/// `n` rounded up to a multiple of `to`, or `None` if that overflows or
/// `to` is zero. A power of two (every alignment) takes a mask, anything
/// else (a growth chunk of three pages, say) a division.
#[cfg(feature = "alloc")]
#[inline(always)]
pub(crate) fn round_up<N: Unsigned>(n: N, to: N) -> Option<N> {
    n.round_up(to)
}

/// `round_up` for constant evaluation: `n` rounded up to a multiple of `to`, on `usize`. Where
/// `round_up` says `None` (zero `to`, overflow) this panics, which in a constant is a compile
/// error: the layout rules call it only on the sizes and alignments of types that exist.
#[inline]
pub(crate) const fn const_round_up(n: usize, to: usize) -> usize {
    n.div_ceil(to) * to
}

/// A byte count as an offset into a device buffer. `usize` is at most 64
/// bits on every target the crate builds for, so this never loses a bit.
#[inline]
pub(crate) const fn offset_of(bytes: usize) -> u64 {
    bytes as u64
}

/// An offset or size in a buffer as a byte count of this host, if it fits
/// (it always does for a buffer this host can address).
#[cfg(feature = "alloc")]
#[inline]
pub(crate) fn bytes_of(offset: u64) -> Option<usize> {
    usize::try_from(offset).ok()
}

/// The unsigned integers `round_up` works on (only with `alloc`: the
/// allocator and the buffers round at run time).
#[cfg(feature = "alloc")]
pub(crate) trait Unsigned: Copy {
    fn round_up(self, to: Self) -> Option<Self>;
}

#[cfg(feature = "alloc")]
macro_rules! unsigned {
    ($($t:ty),*) => {$(
        impl Unsigned for $t {
            #[inline(always)]
            fn round_up(self, to: Self) -> Option<Self> {
                if to.is_power_of_two() {
                    Some(self.checked_add(to - 1)? & !(to - 1))
                } else {
                    Some(self.checked_add(to.checked_sub(1)?)?.checked_div(to)? * to)
                }
            }
        }
    )*};
}

#[cfg(feature = "alloc")]
unsigned!(u32, u64, usize);

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(feature = "alloc")]
    #[test]
    fn round_up_masks_powers_of_two_and_divides_the_rest() {
        assert_eq!(round_up(300u64, ARRAY_ALIGN as u64), Some(512));
        assert_eq!(round_up(257u32, 256), Some(512));
        assert_eq!(round_up(0u64, 4096), Some(0));
        assert_eq!(round_up(4096usize, 4096), Some(4096));
        assert_eq!(round_up(usize::MAX, 256), None);
        assert_eq!(round_up(5u64, 3), Some(6));
        assert_eq!(round_up(5u64, 0), None);
    }

    #[test]
    fn const_round_up_rounds_in_a_constant() {
        const PADDED: usize = const_round_up(12, 16);
        assert_eq!(PADDED, 16);
        assert_eq!(const_round_up(5, 3), 6);
    }
}
