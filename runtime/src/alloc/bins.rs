//! The size classes of the two-level segregated fit: which free list a block
//! of a given size lives in, and which list a request must start searching
//! from so that every block found there is big enough without looking at it.

/// log2 of the number of second-level lists per power of two: 32 lists split each doubling into
/// steps of 1/32, so a request rounded up to its list overshoots by less than 3.2%.
const SECOND_LEVEL_LOG2: u32 = 5;
/// Lists per first level.
pub(super) const SECOND_LEVEL_COUNT: usize = 1 << SECOND_LEVEL_LOG2;
/// Sizes below this get one exact list each (first level 0).
const LINEAR_LIMIT: u64 = SECOND_LEVEL_COUNT as u64;
/// First level 0 holds the linear sizes; levels 1..=59 hold sizes with log2 = 5..=63, so every
/// `u64` size has a list. Levels 60..=63 stay empty: rounding the count up to 64 lets indices be
/// masked into range instead of bounds-checked.
pub(super) const FIRST_LEVEL_COUNT: usize = 64;
/// Total number of free lists.
pub(super) const BIN_COUNT: usize = FIRST_LEVEL_COUNT * SECOND_LEVEL_COUNT;

/// The list a free block of `size` bytes is filed under, as a flat index `first * 32 + second`: its
/// size lies in `[lower_bound(bin), lower_bound(bin + 1))`.
#[inline(always)]
pub(super) fn containing(size: u64) -> usize {
    if size < LINEAR_LIMIT {
        return size as usize;
    }
    let log2 = 63 - size.leading_zeros();
    let shift = log2 - SECOND_LEVEL_LOG2;
    // The top bit is implied by the first level (`shift + 1`); the next five
    // bits pick the step within the doubling.
    let second = (size >> shift) as usize & (SECOND_LEVEL_COUNT - 1);
    ((shift as usize + 1) << SECOND_LEVEL_LOG2) | second
}

/// The first list whose every block holds at least `size` bytes, or `None`
/// when no list can (the rounded size overflows `u64`).
#[inline(always)]
pub(super) fn first_fitting(size: u64) -> Option<usize> {
    if size < LINEAR_LIMIT {
        return Some(size as usize);
    }
    let log2 = 63 - size.leading_zeros();
    let step = 1u64 << (log2 - SECOND_LEVEL_LOG2);
    // Rounding up to the next list boundary: blocks in the list that merely
    // contains `size` may be smaller than `size`.
    size.checked_add(step - 1).map(containing)
}

/// Which lists are non-empty, so the first non-empty list at or above a
/// given one is found with two bit scans instead of a walk.
#[derive(Clone, Debug)]
pub(super) struct Bitmaps {
    first: u64,
    second: [u32; FIRST_LEVEL_COUNT],
}

impl Bitmaps {
    pub(super) const fn new() -> Self {
        let (first, second) = (0, [0; FIRST_LEVEL_COUNT]);
        Bitmaps { first, second }
    }

    #[inline(always)]
    pub(super) fn set(&mut self, bin: usize) {
        let first = (bin >> SECOND_LEVEL_LOG2) % FIRST_LEVEL_COUNT;
        self.second[first] |= 1 << (bin % SECOND_LEVEL_COUNT);
        self.first |= 1 << first;
    }

    /// Clears `bin`'s bit when `now_empty`, without a branch: whether a list
    /// just emptied follows the data, which a branch predictor cannot learn.
    #[inline(always)]
    pub(super) fn clear_if(&mut self, bin: usize, now_empty: bool) {
        let first = (bin >> SECOND_LEVEL_LOG2) % FIRST_LEVEL_COUNT;
        let row = &mut self.second[first];
        *row &= !(u32::from(now_empty) << (bin % SECOND_LEVEL_COUNT));
        self.first &= !(u64::from(*row == 0) << first);
    }

    pub(super) fn is_set(&self, bin: usize) -> bool {
        let first = (bin >> SECOND_LEVEL_LOG2) % FIRST_LEVEL_COUNT;
        self.second[first] & (1 << (bin % SECOND_LEVEL_COUNT)) != 0
    }

    /// The first non-empty list at or after `from`, in size order.
    #[inline(always)]
    pub(super) fn first_at_or_after(&self, from: usize) -> Option<usize> {
        let first = (from >> SECOND_LEVEL_LOG2) % FIRST_LEVEL_COUNT;
        let same_level = self.second[first] & (u32::MAX << (from % SECOND_LEVEL_COUNT));
        if same_level != 0 {
            return Some((first << SECOND_LEVEL_LOG2) | same_level.trailing_zeros() as usize);
        }
        // Two shifts, each below 64: the levels above `first`.
        let higher_levels = self.first & ((u64::MAX << first) << 1);
        if higher_levels == 0 {
            return None;
        }
        let first = higher_levels.trailing_zeros() as usize;
        let second = self.second[first % FIRST_LEVEL_COUNT].trailing_zeros() as usize;
        Some((first << SECOND_LEVEL_LOG2) | second)
    }

    /// The last non-empty list (the one holding the largest blocks).
    #[inline]
    pub(super) fn last(&self) -> Option<usize> {
        if self.first == 0 {
            return None;
        }
        let first = 63 - self.first.leading_zeros() as usize;
        let second = 31 - self.second[first % FIRST_LEVEL_COUNT].leading_zeros() as usize;
        Some((first << SECOND_LEVEL_LOG2) | second)
    }

    /// The first-level bits: bit `f` is set when a list of level `f` is non-empty.
    #[inline]
    pub(super) fn first_bits(&self) -> u64 {
        self.first
    }

    /// The second-level bits of one first level.
    #[inline]
    pub(super) fn row(&self, first: usize) -> u32 {
        self.second[first % FIRST_LEVEL_COUNT]
    }

    /// Whether each first-level bit is set exactly when its row is non-zero.
    pub(super) fn levels_agree(&self) -> bool {
        self.second
            .iter()
            .enumerate()
            .all(|(first, &row)| (self.first >> first) & 1 == u64::from(row != 0))
    }

    pub(super) fn reset(&mut self) {
        *self = Bitmaps::new();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc_crate::vec;

    /// The smallest size filed under `bin`.
    fn lower_bound(bin: usize) -> u64 {
        let (first, second) = (bin / SECOND_LEVEL_COUNT, bin % SECOND_LEVEL_COUNT);
        if first == 0 {
            return second as u64;
        }
        (LINEAR_LIMIT | second as u64) << (first - 1)
    }

    #[test]
    fn every_size_lies_in_its_bin() {
        let mut sizes = vec![0, 1, 31, 32, 33, 63, 64, 65, 1000, u64::MAX, u64::MAX - 1];
        for shift in 0..64 {
            let p = 1u64 << shift;
            sizes.extend([p - 1, p, p + 1, p | (p >> 1), p | (p >> 3) | 7]);
        }
        for size in sizes {
            let bin = containing(size);
            assert!(bin < BIN_COUNT, "size {size}: bin {bin:?} out of range");
            assert!(
                lower_bound(bin) <= size,
                "size {size}: bin {bin:?} starts above it"
            );
            let next = containing(size.saturating_add(1));
            if size < u64::MAX && next != bin {
                assert_eq!(lower_bound(next), size + 1, "size {size}: bins leave a gap");
            }
            if let Some(fit) = first_fitting(size) {
                assert!(
                    lower_bound(fit) >= size,
                    "size {size}: bin {fit:?} may hold smaller blocks"
                );
                assert!(fit >= bin, "size {size}: search starts below its own bin");
            }
        }
    }

    #[test]
    fn first_at_or_after_finds_the_next_set_bin() {
        let mut maps = Bitmaps::new();
        let small = containing(40);
        let large = containing(1 << 40);
        maps.set(small);
        maps.set(large);
        assert_eq!(maps.first_at_or_after(containing(0)), Some(small));
        assert_eq!(maps.first_at_or_after(small), Some(small));
        assert_eq!(maps.first_at_or_after(containing(41 + 8)), Some(large));
        assert_eq!(maps.last(), Some(large));
        maps.clear_if(large, true);
        assert_eq!(maps.first_at_or_after(containing(1 << 20)), None);
        maps.clear_if(small, false);
        assert_eq!(maps.last(), Some(small));
        assert_eq!(maps.last(), Some(small));
        maps.clear_if(small, true);
        assert_eq!(maps.last(), None);
    }
}
