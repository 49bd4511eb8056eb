//! What a caller can learn about allocations it lost track of, and what a
//! refused free gives back; what rounding costs; how far a failing search
//! goes.

use gpu_aligned::alloc::{AllocError, Allocator, HandleError, DEFAULT_GRANULARITY, SEARCH_LIMIT};

use crate::support::assert_consistent;

#[test]
fn a_refused_free_hands_the_handle_back() {
    let mut mine = Allocator::new(1024);
    let mut theirs = Allocator::new(1024);
    let a = mine.alloc(64, 16).unwrap();
    let refused = theirs.free(a).unwrap_err();
    assert_eq!(refused.kind(), HandleError::ForeignHandle);
    assert_eq!(*refused.allocation(), a);
    assert!(refused.to_string().contains("different allocator"));
    // Handed back, the allocation is not lost: it frees where it belongs.
    mine.free(refused.into_allocation()).unwrap();
    assert_eq!(mine.stats().allocations, 0);
    let refused = mine.free(a).unwrap_err();
    assert_eq!(
        (refused.kind(), refused.into_allocation()),
        (HandleError::DoubleFree, a)
    );
}

#[test]
fn live_allocations_are_counted_and_listed() {
    let mut allocator = Allocator::with_granularity(1 << 16, 256).unwrap();
    let a = allocator.alloc(100, 1).unwrap();
    let b = allocator.alloc(3000, 1024).unwrap();
    let c = allocator.alloc(1, 1).unwrap();
    allocator.free(b).unwrap();
    assert_eq!(allocator.stats().allocations, 2);
    let mut live: Vec<_> = allocator.live().collect();
    live.sort_unstable();
    // Requested sizes, not the rounded blocks.
    assert_eq!(live, [(a.offset(), 100), (c.offset(), 1)]);
    allocator.reset();
    assert_eq!(allocator.stats().allocations, 0);
    assert_eq!(allocator.live().count(), 0);
}

#[test]
fn rounding_to_the_granularity_is_counted_as_waste() {
    let mut allocator = Allocator::with_granularity(4096, 256).unwrap();
    let a = allocator.alloc(100, 1).unwrap();
    let b = allocator.alloc(256, 1).unwrap();
    let c = allocator.alloc(257, 64).unwrap();
    let stats = allocator.stats();
    assert_eq!(stats.requested, 100 + 256 + 257);
    assert_eq!(stats.used, 256 + 256 + 512);
    assert_eq!(stats.alignment_waste, 156 + 255);
    assert_eq!(allocator.check_invariants(), Ok(()));
    allocator.free(a).unwrap();
    assert_eq!(allocator.stats().alignment_waste, 255);
    allocator.free(c).unwrap();
    allocator.free(b).unwrap();
    assert_eq!(allocator.stats().alignment_waste, 0);
    // Byte-exact blocks waste nothing: padding before an aligned start stays
    // a free block.
    let mut exact = Allocator::with_granularity(4096, 1).unwrap();
    let _a = exact.alloc(100, 1).unwrap();
    let _b = exact.alloc(100, 1024).unwrap();
    assert_eq!(exact.stats().alignment_waste, 0);
    assert_consistent(&exact);
    // The default granularity rounds to 16 bytes, and says so.
    let mut default = Allocator::new(4096);
    assert_eq!(default.granularity(), DEFAULT_GRANULARITY);
    let a = default.alloc(1, 1).unwrap();
    let b = default.alloc(17, 1).unwrap();
    assert_eq!((a.offset(), b.offset()), (0, 16));
    let stats = default.stats();
    assert_eq!((stats.used, stats.alignment_waste), (48, 15 + 15));
    assert_consistent(&default);
}

/// `count` free blocks of 90 bytes between live ones, and a 91-byte free
/// block (the same size class) listed behind them.
fn fragmented(count: usize) -> Allocator {
    let mut allocator = Allocator::with_granularity(count * 180 + 256, 1).unwrap();
    let mut holes = Vec::new();
    for _ in 0..count {
        holes.push(allocator.alloc(90, 1).unwrap());
        let _separator = allocator.alloc(90, 1).unwrap();
    }
    let deep = allocator.alloc(91, 1).unwrap();
    let _rest = allocator.alloc(allocator.free_tail(), 1).unwrap();
    allocator.free(deep).unwrap();
    for hole in holes {
        allocator.free(hole).unwrap();
    }
    allocator
}

#[test]
fn a_failing_search_stops_after_the_search_limit() {
    // 91 bytes fit only in the 91-byte block, listed behind all the 90-byte
    // ones of its size class. A search that walked every block would find
    // it; the bounded one gives up and says so.
    let count = if cfg!(miri) { 200 } else { 20_000 };
    let mut allocator = fragmented(count);
    assert_eq!(allocator.stats().free_blocks, count + 1);
    assert_eq!(allocator.largest_allocatable(1), Ok(91));
    match allocator.alloc(91, 1) {
        Err(AllocError::OutOfMemory { largest_fit, .. }) => assert_eq!(largest_fit, 90),
        other => panic!("expected a bounded refusal, got {other:?}"),
    }
    // Within the limit the search is exhaustive.
    let mut small = fragmented(SEARCH_LIMIT - 1);
    let found = small.alloc(91, 1).unwrap();
    assert_eq!(found.size(), 91);
    assert_consistent(&small);
}
