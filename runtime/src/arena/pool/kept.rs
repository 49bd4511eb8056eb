//! The kept layer: dropped arrays' blocks kept under a new stamp for the next array of their size,
//! so an allocate-and-drop loop costs a push and a pop. The cache is direct-mapped, [`CLASSES`]
//! sizes of at most [`DEPTH`] blocks; [`LARGE`] blocks are freed when a large array misses, so
//! their holes merge before it is placed.

use alloc_crate::boxed::Box;

use super::{Ask, Fate, Offsets, Pool};
use crate::align::offset_of;
use crate::alloc::Allocation;
use crate::arena::tuning::{CLASSES, DEPTH, LARGE};
use crate::arena::{ArenaError, ArenaResult};
use crate::backend::StreamOrder;
use crate::sanitizer::ArrayInfo;

pub(in crate::arena) struct Kept<L> {
    pub(super) reuse: Reuse<true>,
    pub(super) lower: L,
}

impl<L> Kept<L> {
    pub(in crate::arena) fn new(lower: L) -> Self {
        Kept {
            reuse: Reuse::default(),
            lower,
        }
    }

    /// Keeps a dropped array's block, or frees it.
    #[inline(always)]
    fn keep<B: StreamOrder>(&mut self, backend: &mut B, block: Allocation)
    where
        L: Pool<B>,
    {
        let Some(renewed) = self.lower.offsets_mut().allocator.renew(&block) else {
            return self.unkept(backend, block);
        };
        let offsets = self.lower.offsets_mut();
        let kept = self.reuse.keep(renewed, |block| free_kept(offsets, block));
        if let Err(unkept) = kept {
            self.unkept(backend, unkept);
        }
    }

    #[cold]
    #[inline(never)]
    fn unkept<B: StreamOrder>(&mut self, backend: &mut B, block: Allocation)
    where
        L: Pool<B>,
    {
        // Refused only for a stale block, which is nobody's.
        let tracking = &mut B::Tracking::default();
        let _ = self.lower.release(backend, block, tracking, Fate::Free);
    }

    /// [`Pool::release`] for a block a stream used: retired, then freed.
    #[inline(never)]
    fn retire<B: StreamOrder>(
        &mut self,
        backend: &mut B,
        block: Allocation,
        tracking: &mut B::Tracking,
    ) -> ArenaResult<(), B>
    where
        L: Pool<B>,
    {
        self.lower.offsets().allocator.check_handle(&block)?;
        backend.retire(tracking).map_err(ArenaError::Backend)?;
        self.lower.release(backend, block, tracking, Fate::Free)
    }

    #[cold]
    #[inline(never)]
    fn free_large<B: StreamOrder>(&mut self)
    where
        L: Pool<B>,
    {
        let offsets = self.lower.offsets_mut();
        self.reuse.drain_large(|block| free_kept(offsets, block));
    }
}

impl<B: StreamOrder, L: Pool<B>> Pool<B> for Kept<L> {
    #[inline(always)]
    fn take(&mut self, ask: Ask) -> Option<Allocation> {
        self.reuse.take(ask.bytes, ask.align)
    }

    #[inline(always)]
    fn reserve(
        &mut self,
        backend: &mut B,
        ask: Ask,
        array: impl Fn() -> ArrayInfo,
    ) -> ArenaResult<Allocation, B> {
        if let Some(kept) = self.reuse.take(ask.bytes, ask.align) {
            return Ok(kept);
        }
        if ask.bytes >= LARGE && self.reuse.may_hold_large() {
            self.free_large::<B>();
        }
        self.lower.reserve(backend, ask, array)
    }

    /// Keeps a dropped array's block unless a stream used it or arrays are watched.
    #[inline(always)]
    fn release(
        &mut self,
        backend: &mut B,
        block: Allocation,
        tracking: &mut B::Tracking,
        fate: Fate,
    ) -> ArenaResult<(), B> {
        if backend.needs_retire(tracking) {
            return self.retire(backend, block, tracking);
        }
        if fate == Fate::Free || self.lower.watching() {
            return self.lower.release(backend, block, tracking, fate);
        }
        self.keep(backend, block);
        Ok(())
    }

    #[inline(always)]
    fn release_unused(&mut self, backend: &mut B, blocks: &[Allocation]) {
        if self.lower.watching() {
            return self.lower.release_unused(backend, blocks);
        }
        for &block in blocks {
            self.keep(backend, block);
        }
    }

    fn reclaim(&mut self, backend: &mut B, wait: bool) -> ArenaResult<bool, B> {
        let any = self.reuse.len() != 0;
        let offsets = self.lower.offsets_mut();
        self.reuse.drain(|block| free_kept(offsets, block));
        Ok(self.lower.reclaim(backend, wait)? | any)
    }

    fn held(&self, each: &mut dyn FnMut(&Allocation)) {
        self.reuse.each(each);
        self.lower.held(each);
    }

    pass_down!();
}

/// Frees a kept block (none is kept while arrays are watched).
fn free_kept(offsets: &mut Offsets, block: Allocation) {
    let freed = offsets.allocator.free(block);
    debug_assert!(freed.is_ok(), "a kept block is live");
}

/// `HOISTED`: a caller's inlined loop hoists its size's hash; else the last size's class is kept.
pub(in crate::arena) struct Reuse<const HOISTED: bool = false> {
    /// Boxed: some 8 KiB that moving an arena should not copy.
    classes: Box<[Class; CLASSES]>,
    count: usize,
    /// Bit `i` set: class `i` is for a [`LARGE`] size.
    large_classes: u16,
    last: (usize, usize),
}

impl<const HOISTED: bool> Default for Reuse<HOISTED> {
    fn default() -> Self {
        Reuse {
            classes: Box::new([Class::EMPTY; CLASSES]),
            count: 0,
            large_classes: 0,
            last: (0, class_of(0)),
        }
    }
}

/// The kept blocks of one size, most recent last.
struct Class {
    bytes: usize,
    len: usize,
    blocks: [Allocation; DEPTH],
}

impl Class {
    const EMPTY: Class = Class {
        bytes: 0,
        len: 0,
        blocks: [Allocation::NONE; DEPTH],
    };

    fn kept(&self) -> &[Allocation] {
        &self.blocks[..self.len]
    }

    fn empty(&mut self, each: impl FnMut(Allocation)) {
        self.kept().iter().copied().for_each(each);
        self.len = 0;
    }
}

/// A Fibonacci hash of the odd part mixed with the trailing zeros: 16 powers of two, 16 classes.
#[inline(always)]
fn class_of(bytes: usize) -> usize {
    const CLASS_BITS: u32 = CLASSES.trailing_zeros();
    let bytes = offset_of(bytes);
    let zeros = bytes.trailing_zeros();
    // `wrapping_shr`: zero bytes has 64 trailing zeros, and stays zero.
    let odd = bytes.wrapping_shr(zeros);
    let hash = odd.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (u64::BITS - CLASS_BITS);
    (hash ^ u64::from(zeros)) as usize % CLASSES
}

impl<const HOISTED: bool> Reuse<HOISTED> {
    /// The class of `bytes`; unless `HOISTED`, the last size's, masked (an index check branches).
    #[inline(always)]
    fn class(&mut self, bytes: usize) -> usize {
        if !HOISTED && self.last.0 != bytes {
            self.last = (bytes, class_of(bytes));
        }
        match HOISTED {
            true => class_of(bytes),
            false => self.last.1 % CLASSES,
        }
    }

    /// Keeps `block`, giving `free` what it evicts; hands it back when its class is full.
    #[inline(always)]
    pub(in crate::arena) fn keep(
        &mut self,
        block: Allocation,
        free: impl FnMut(Allocation),
    ) -> Result<(), Allocation> {
        let index = self.class(block.size());
        let class = &mut self.classes[index];
        if class.bytes != block.size() {
            self.count -= class.len;
            evict(class, block.size(), free);
            let bit = 1 << index;
            if block.size() >= LARGE {
                self.large_classes |= bit;
            } else {
                self.large_classes &= !bit;
            }
        }
        let len = class.len;
        if len >= DEPTH {
            return Err(block);
        }
        class.blocks[len] = block;
        class.len = len + 1;
        self.count += 1;
        Ok(())
    }

    /// The latest kept block of exactly `bytes`, if aligned to `align`.
    #[inline(always)]
    pub(in crate::arena) fn take(&mut self, bytes: usize, align: usize) -> Option<Allocation> {
        if self.count == 0 {
            return None;
        }
        let class = &mut self.classes[self.class(bytes)];
        let top = class.len.checked_sub(1)?;
        let block = class.blocks[top];
        if class.bytes != bytes
            || !align.is_power_of_two()
            || block.offset() & (offset_of(align) - 1) != 0
        {
            return None;
        }
        class.len = top;
        self.count -= 1;
        Some(block)
    }

    #[inline]
    pub(in crate::arena) fn len(&self) -> usize {
        self.count
    }

    #[inline]
    pub(in crate::arena) fn may_hold_large(&self) -> bool {
        self.large_classes != 0
    }

    pub(in crate::arena) fn drain(&mut self, mut each: impl FnMut(Allocation)) {
        if self.count == 0 {
            return;
        }
        for class in self.classes.iter_mut() {
            class.empty(&mut each);
        }
        self.count = 0;
    }

    pub(in crate::arena) fn drain_large(&mut self, mut each: impl FnMut(Allocation)) {
        let mut classes = self.large_classes;
        while classes != 0 {
            let class = &mut self.classes[classes.trailing_zeros() as usize];
            self.count -= class.len;
            class.empty(&mut each);
            classes &= classes - 1;
        }
    }

    pub(in crate::arena) fn each(&self, each: &mut dyn FnMut(&Allocation)) {
        if self.count != 0 {
            self.classes.iter().flat_map(Class::kept).for_each(each);
        }
    }
}

#[cold]
#[inline(never)]
fn evict(class: &mut Class, bytes: usize, free: impl FnMut(Allocation)) {
    class.empty(free);
    class.bytes = bytes;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::alloc::Allocator;
    use alloc_crate::vec::Vec;

    #[test]
    fn blocks_come_back_by_exact_size_and_alignment_within_the_bounds() {
        let mut allocator = Allocator::new(1 << 20);
        let mut reuse = <Reuse>::default();
        let never = |_| unreachable!("nothing to evict");
        let a = allocator.alloc(100, 256).unwrap();
        reuse.keep(a, never).unwrap();
        assert_eq!(reuse.len(), 1);
        let mut kept = Vec::new();
        reuse.each(&mut |block| kept.push(block.offset()));
        assert_eq!(kept, [a.offset()]);
        assert_eq!(reuse.take(101, 256), None);
        let b = allocator.alloc(100, 256).unwrap();
        reuse.keep(b, never).unwrap();
        // The most recent first; an alignment the offset lacks is a miss.
        assert_eq!(b.offset(), 256);
        assert_eq!(reuse.take(100, 512), None);
        assert_eq!(reuse.take(100, 256), Some(b));
        assert_eq!(reuse.take(100, 512), Some(a));
        assert_eq!((reuse.take(100, 256), reuse.len()), (None, 0));
        assert!(allocator.free(a).is_ok() && allocator.free(b).is_ok());

        // A class holds at most DEPTH blocks, of one size at a time: the
        // blocks of a size that shares it are evicted.
        let mut kept = 0;
        for _ in 0..=DEPTH {
            let block = allocator.alloc(48, 16).unwrap();
            match reuse.keep(block, never) {
                Ok(()) => kept += 1,
                Err(refused) => allocator.free(refused).unwrap(),
            }
        }
        assert_eq!((kept, reuse.len()), (DEPTH, DEPTH));
        let other = (49..).find(|&b| class_of(b) == class_of(48)).unwrap();
        let newer = allocator.alloc(other, 16).unwrap();
        let mut evicted = 0;
        let kept = reuse.keep(newer, |block| {
            assert_eq!(block.size(), 48);
            allocator.free(block).unwrap();
            evicted += 1;
        });
        assert_eq!((kept, evicted, reuse.len()), (Ok(()), DEPTH, 1));
        assert_eq!(reuse.take(48, 16), None);
        let mut drained = 0;
        reuse.drain(|block| {
            allocator.free(block).unwrap();
            drained += 1;
        });
        assert_eq!((drained, reuse.len()), (1, 0));
        assert_eq!(allocator.live_count(), 0);
    }

    #[test]
    fn only_large_blocks_are_drained_as_large() {
        let mut allocator = Allocator::new(64 << 20);
        let mut reuse = <Reuse>::default();
        let never = |_| unreachable!("nothing to evict");
        // Four sizes of four different classes, two large, two not.
        for bytes in [LARGE, 3 * LARGE, 100, 256] {
            for _ in 0..2 {
                let block = allocator.alloc(bytes, 256).unwrap();
                reuse.keep(block, never).unwrap();
            }
        }
        assert!(reuse.may_hold_large());
        let mut drained = Vec::new();
        reuse.drain_large(|block| {
            drained.push(block.size());
            allocator.free(block).unwrap();
        });
        drained.sort_unstable();
        assert_eq!(drained, [LARGE, LARGE, 3 * LARGE, 3 * LARGE]);
        assert_eq!(reuse.len(), 4);
        assert_eq!(reuse.take(LARGE, 256), None);
        assert!(reuse.take(100, 256).is_some() && reuse.take(256, 256).is_some());
        // Draining again finds nothing more, though the classes still say they are for large sizes.
        reuse.drain_large(|_| unreachable!("drained already"));
        assert_eq!(reuse.len(), 2);
    }
}
