//! Growing and shrinking the buffer in place: live allocations keep their
//! offsets and stay valid, new bytes join the free tail.

use gpu_aligned::alloc::{AllocError, Allocator};

use crate::support::assert_consistent;

#[test]
fn growth_keeps_every_allocation_and_merges_with_the_free_tail() {
    let mut allocator = Allocator::new(4096);
    let kept: Vec<_> = (0..4).map(|_| allocator.alloc(700, 64).unwrap()).collect();
    let before = allocator.stats();
    let tail = allocator.free_tail();
    assert!(tail > 0);
    allocator.grow_to(1 << 20).unwrap();
    assert_eq!(allocator.capacity(), 1 << 20);
    let after = allocator.stats();
    // One free block at the end, now longer: no new block.
    assert_eq!(after.free_blocks, before.free_blocks);
    assert_eq!(after.free, before.free + (1 << 20) - 4096);
    assert_eq!(allocator.free_tail(), tail + (1 << 20) - 4096);
    for a in &kept {
        assert_eq!(allocator.check_handle(a), Ok(()));
    }
    // The merged tail holds what the old one could not.
    let big = allocator.alloc(1 << 19, 4096).unwrap();
    assert_eq!(big.offset(), 4096);
    assert_consistent(&allocator);
    for a in kept {
        allocator.free(a).unwrap();
    }
    allocator.free(big).unwrap();
    assert_eq!(allocator.stats().largest_free_block, 1 << 20);
}

#[test]
fn growth_after_a_full_buffer_adds_a_free_block() {
    let mut allocator = Allocator::with_granularity(1000, 1).unwrap();
    let a = allocator.alloc(1000, 1).unwrap();
    assert_eq!(allocator.free_tail(), 0);
    allocator.grow_to(3000).unwrap();
    assert_eq!(allocator.stats().free_blocks, 1);
    let b = allocator.alloc(2000, 8).unwrap();
    assert_eq!(b.offset(), 1000);
    assert_consistent(&allocator);
    allocator.free(a).unwrap();
    allocator.free(b).unwrap();
    assert_eq!(allocator.stats().free_blocks, 1);
}

#[test]
fn growth_completes_a_granule_cut_short_by_the_old_end() {
    // 1000 bytes at granularity 256: the last block is cut at 1000.
    let mut allocator = Allocator::with_granularity(1000, 256).unwrap();
    let blocks: Vec<_> = (0..4).map(|_| allocator.alloc(200, 1).unwrap()).collect();
    assert_eq!(blocks[3].offset(), 768);
    assert_eq!(allocator.stats().used, 1000);
    allocator.grow_to(2048).unwrap();
    // The last block now reaches its granule's end; the free block after it
    // starts on a granule.
    assert_eq!(allocator.stats().used, 1024);
    let next = allocator.alloc(1, 1).unwrap();
    assert_eq!(next.offset(), 1024);
    assert_consistent(&allocator);
    for a in blocks {
        allocator.free(a).unwrap();
    }
    allocator.free(next).unwrap();
    assert_eq!(allocator.stats().free_blocks, 1);
}

#[test]
fn growth_from_nothing() {
    let mut allocator = Allocator::new(0);
    allocator.grow_to(0).unwrap();
    assert_eq!(allocator.stats().free_blocks, 0);
    allocator.grow_to(512).unwrap();
    let a = allocator.alloc(512, 512).unwrap();
    assert_eq!(a.offset(), 0);
    assert_consistent(&allocator);
    allocator.free(a).unwrap();
}

#[test]
fn growth_cannot_shrink() {
    let mut allocator = Allocator::new(4096);
    assert_eq!(
        allocator.grow_to(4095),
        Err(AllocError::CannotResize {
            capacity: 4096,
            new_capacity: 4095
        })
    );
    assert_eq!(allocator.capacity(), 4096);
}

#[test]
fn shrinking_drops_only_free_tail_bytes() {
    let mut allocator = Allocator::with_granularity(4096, 1).unwrap();
    let a = allocator.alloc(1000, 1).unwrap();
    assert_eq!(allocator.free_tail(), 3096);
    assert!(allocator.shrink_to(999).is_err());
    assert!(allocator.shrink_to(5000).is_err());
    assert_eq!(allocator.capacity(), 4096);
    allocator.shrink_to(2000).unwrap();
    assert_eq!((allocator.capacity(), allocator.free_tail()), (2000, 1000));
    // Down to the end of `a`: the free tail block goes away entirely.
    allocator.shrink_to(1000).unwrap();
    assert_eq!(allocator.stats().free_blocks, 0);
    assert!(allocator.alloc(1, 1).is_err());
    assert_consistent(&allocator);
    allocator.grow_to(1500).unwrap();
    let b = allocator.alloc(500, 4).unwrap();
    assert_eq!(b.offset(), 1000);
    allocator.free(a).unwrap();
    allocator.free(b).unwrap();
    allocator.shrink_to(0).unwrap();
    assert_eq!(allocator.stats().free_blocks, 0);
    assert_consistent(&allocator);
}
