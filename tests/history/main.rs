//! The arena's history (`gpu_aligned::history`): a random program against
//! a simple model and the allocator's own counts (`model`), the project's
//! two recorded traces (`traces`), and the exports read back as their
//! viewers read them (`exports`). The GPU side is `tests/cuda/history.rs`.

#[path = "../support/mod.rs"]
mod support;

mod exports;
mod model;
pub mod traces;

use gpu_aligned::arena::Arena;
use gpu_aligned::backend::Backend;
use gpu_aligned::history::Ledger;

/// Every ledger of `arena`'s history sums to the reserved bytes, and the
/// last agrees with the arena: the blocks in use and the free bytes with
/// the allocator's counts, the largest free block with its own, the bytes
/// with memory with [`Arena::committed`]. Returns the last ledger.
pub fn check_ledger<B: Backend>(arena: &Arena<B>, context: &str) -> Ledger {
    let history = arena.history().expect("recording");
    let ledger = history.ledger();
    for (i, part) in ledger.iter().enumerate() {
        assert_eq!(part.sum(), part.reserved, "{context}: event {i}: {part:?}");
    }
    let Some(&last) = ledger.last() else {
        return Ledger::default();
    };
    let stats = arena.allocator().stats();
    let in_use = last.payload + last.element_padding + last.rounding + last.red_zones;
    let past_span = last.reserved - arena.capacity() as u64;
    let free = last.free + last.alignment_gap + last.mapped_unused + last.unmapped - past_span;
    let expected = (
        stats.used as u64,
        stats.free as u64,
        stats.largest_free_block as u64,
    );
    assert_eq!(
        (in_use + last.pending, free, last.largest_free),
        expected,
        "{context}: {last:?} against {stats:?}"
    );
    assert_eq!(
        last.reserved - last.unmapped,
        arena.committed() as u64,
        "{context}"
    );
    last
}
