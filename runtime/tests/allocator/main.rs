//! The sub-allocator, its host backend and the arena, one module per topic.
//! Everything here also runs under Miri (`cargo +nightly miri test -p
//! gpu-aligned`), with smaller op counts.

mod arena;
mod bad_input;
mod model;
mod pitched;
mod plan;
mod threads;
mod utilization;

use gpu_aligned::alloc::Allocator;

/// Both invariant checks, with the failure spelled out.
fn assert_consistent(allocator: &Allocator) {
    if let Err(error) = allocator.check_invariants() {
        panic!("{error}\n{allocator:?}");
    }
    if let Err(error) = allocator.stats().check() {
        panic!("{error}\n{allocator:?}");
    }
}

/// `value` rounded up to a multiple of `align` (a power of two).
fn align_up(value: u64, align: u64) -> u64 {
    (value + align - 1) & !(align - 1)
}
