//! Handles kept for as long as the counters behind them can count: the
//! stamp counter is driven to its limits with `skip_stamps` (a test hook
//! that only moves it forward) instead of looping for hours.

use gpu_aligned::alloc::{AllocError, Allocator, HandleError};

use crate::support::assert_consistent;

/// What a 32-bit counter would wrap at.
const WRAP_32: u64 = 1 << 32;

#[test]
fn a_handle_kept_across_2_pow_32_reuses_of_its_slot_is_stale() {
    let mut allocator = Allocator::new(1024);
    // The whole buffer: every later whole-buffer allocation takes the same
    // slot, offset and size, so only the counter tells them apart.
    let old = allocator.alloc(1024, 1).unwrap();
    allocator.free(old).unwrap();
    // As if the slot had been allocated and freed 2^32 - 1 more times: a
    // 32-bit counter would give the next allocation `old`'s number again.
    allocator.skip_stamps(WRAP_32 - 1);
    let new = allocator.alloc(1024, 1).unwrap();
    assert_eq!((new.offset(), new.size()), (old.offset(), old.size()));
    assert_eq!(allocator.check_handle(&old), Err(HandleError::StaleHandle));
    assert_eq!(
        allocator.free(old).map_err(|e| e.kind()),
        Err(HandleError::StaleHandle)
    );
    assert_eq!(
        allocator.stats().allocations,
        1,
        "the stale free freed `new`"
    );
    allocator.free(new).unwrap();
    assert_consistent(&allocator);
}

#[test]
fn a_handle_kept_across_2_pow_32_resets_is_stale() {
    let mut allocator = Allocator::new(1024);
    let old = allocator.alloc(1024, 1).unwrap();
    // Resets do not count with a counter of their own (an epoch that could
    // wrap): allocations after a reset take new stamps. 2^32 of them later,
    // a 32-bit stamp would repeat.
    allocator.skip_stamps(WRAP_32 - 1);
    allocator.reset();
    let new = allocator.alloc(1024, 1).unwrap();
    assert_eq!((new.offset(), new.size()), (old.offset(), old.size()));
    assert_eq!(allocator.check_handle(&old), Err(HandleError::StaleHandle));
    assert_eq!(
        allocator.free(old).map_err(|e| e.kind()),
        Err(HandleError::StaleHandle)
    );
    assert_eq!(allocator.stats().allocations, 1);
    allocator.free(new).unwrap();
}

#[test]
fn the_stamp_counter_stops_at_its_end_instead_of_wrapping() {
    let mut allocator = Allocator::new(1024);
    let first = allocator.alloc(1024, 1).unwrap();
    allocator.free(first).unwrap();
    // Three stamps left before the end.
    allocator.skip_stamps(u64::MAX - 5);
    let mut granted = 0;
    let last = loop {
        match allocator.alloc(1024, 1) {
            Ok(a) => {
                granted += 1;
                allocator.free(a).unwrap();
            }
            Err(error) => break error,
        }
    };
    assert_eq!(last, AllocError::StampsExhausted);
    assert_eq!(granted, 3);
    assert!(!last.to_string().is_empty());
    // A counter that wrapped would have handed `first`'s number out again.
    assert_eq!(
        allocator.free(first).map_err(|e| e.kind()),
        Err(HandleError::DoubleFree)
    );
    // A reset frees everything but does not restart the count.
    allocator.reset();
    assert_eq!(allocator.alloc(1, 1), Err(AllocError::StampsExhausted));
    // Saturating, never wrapping.
    allocator.skip_stamps(u64::MAX);
    assert_eq!(allocator.alloc(1, 1), Err(AllocError::StampsExhausted));
    assert_consistent(&allocator);
}

#[test]
fn live_handles_survive_the_end_of_the_count() {
    let mut allocator = Allocator::new(1024);
    allocator.skip_stamps(u64::MAX - 3);
    let a = allocator.alloc(100, 1).unwrap();
    let b = allocator.alloc(100, 1).unwrap();
    assert_eq!(allocator.alloc(100, 1), Err(AllocError::StampsExhausted));
    assert_eq!(allocator.check_handle(&a), Ok(()));
    allocator.free(b).unwrap();
    allocator.free(a).unwrap();
    assert_eq!(allocator.stats().allocations, 0);
    assert_consistent(&allocator);
}
