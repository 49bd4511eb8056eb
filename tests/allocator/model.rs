//! The allocator against a model: random programs of alloc / free / reset /
//! grow / shrink (and frees of dead handles), checked after every step.
//!
//! `ALLOC_MODEL_CASES` sets the number of 1,000-op programs: 100 by default
//! (10^5 ops, what CI runs), 2 of 100 ops under Miri. The 10^7-op run is
//! `ALLOC_MODEL_CASES=10000 cargo test --release -p gpu-aligned-tests --test
//! allocator model`.

use gpu_aligned::alloc::{AllocError, Allocation, Allocator, HandleError, SEARCH_LIMIT};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};

use crate::support::assert_consistent;

#[derive(Clone, Copy, Debug)]
enum Op {
    Alloc {
        size: usize,
        align: usize,
        /// Placed at the top of its free block (`alloc_high`).
        high: bool,
    },
    /// Frees the live allocation at `pick % live.len()`.
    Free {
        pick: usize,
    },
    /// Frees a dead (freed or reset) handle again: must be refused.
    FreeDead {
        pick: usize,
    },
    Reset,
    /// Grows the capacity by `by` bytes.
    Grow {
        by: usize,
    },
    /// Shrinks the capacity by `(pick % 4 + 1) / 4` of the free tail.
    Shrink {
        pick: usize,
    },
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        50 => (1..=4096usize, 0..=12u32, any::<bool>())
            .prop_map(|(size, log2, high)| Op::Alloc { size, align: 1 << log2, high }),
        40 => any::<usize>().prop_map(|pick| Op::Free { pick }),
        6 => any::<usize>().prop_map(|pick| Op::FreeDead { pick }),
        1 => Just(Op::Reset),
        2 => (1..=1usize << 16).prop_map(|by| Op::Grow { by }),
        1 => any::<usize>().prop_map(|pick| Op::Shrink { pick }),
    ]
}

fn capacity() -> impl Strategy<Value = usize> {
    // Small buffers run out of memory often (the error path and the
    // exhaustive search); large ones build long free lists.
    prop_oneof![
        Just(4096usize),
        Just(1 << 16),
        Just(1 << 20),
        1..200_000usize
    ]
}

fn granularity() -> impl Strategy<Value = usize> {
    prop_oneof![3 => Just(1usize), 1 => Just(16), 1 => Just(256)]
}

/// What the allocator should hold.
struct Model {
    capacity: usize,
    granularity: usize,
    live: Vec<Allocation>,
    dead: Vec<Allocation>,
}

impl Model {
    /// The block an allocation occupies: its size rounded up to the
    /// granularity, cut short only by the end of the buffer.
    fn reserved(&self, a: &Allocation) -> (usize, usize) {
        let rounded = a.size().div_ceil(self.granularity) * self.granularity;
        let start = usize::try_from(a.offset()).unwrap();
        (start, start + rounded.min(self.capacity - start))
    }

    fn used(&self) -> usize {
        self.live
            .iter()
            .map(|a| self.reserved(a))
            .map(|(start, end)| end - start)
            .sum()
    }

    fn requested(&self) -> usize {
        self.live.iter().map(Allocation::size).sum()
    }

    fn bury(&mut self, allocation: Allocation) {
        // A bounded graveyard keeps the dead-handle checks cheap.
        if self.dead.len() == 64 {
            let _forgotten = self.dead.swap_remove(0);
        }
        self.dead.push(allocation);
    }
}

/// `alloc`, or `alloc_high` when `high`: both must keep every invariant.
fn place(
    allocator: &mut Allocator,
    size: usize,
    align: usize,
    high: bool,
) -> Result<gpu_aligned::alloc::Allocation, AllocError> {
    match high {
        true => allocator.alloc_high(size, align),
        false => allocator.alloc(size, align),
    }
}

fn run_program(capacity: usize, granularity: usize, ops: &[Op]) -> Result<(), TestCaseError> {
    let mut allocator = Allocator::with_granularity(capacity, granularity).unwrap();
    let mut model = Model {
        capacity,
        granularity,
        live: Vec::new(),
        dead: Vec::new(),
    };
    for &op in ops {
        match op {
            Op::Alloc { size, align, high } => match place(&mut allocator, size, align, high) {
                Ok(a) => {
                    prop_assert_eq!(a.size(), size);
                    prop_assert_eq!(a.offset() % align as u64, 0, "misaligned {:?}", a);
                    prop_assert_eq!(
                        a.offset() % granularity as u64,
                        0,
                        "off the granule {:?}",
                        a
                    );
                    prop_assert!(a.end() <= model.capacity as u64, "{:?} past the end", a);
                    let (start, end) = model.reserved(&a);
                    for other in &model.live {
                        let (other_start, other_end) = model.reserved(other);
                        prop_assert!(
                            end <= other_start || other_end <= start,
                            "{:?} overlaps {:?}",
                            a,
                            other
                        );
                    }
                    model.live.push(a);
                }
                Err(AllocError::OutOfMemory {
                    size: s,
                    align: al,
                    free,
                    largest_fit,
                }) => {
                    prop_assert_eq!((s, al), (size, align));
                    prop_assert_eq!(free, model.capacity - model.used());
                    prop_assert!(
                        largest_fit < size,
                        "{} fit but {} was refused",
                        largest_fit,
                        size
                    );
                    let exact = allocator.largest_allocatable(align).unwrap();
                    prop_assert!(largest_fit <= exact);
                    // Few free blocks: the bounded search saw them all, so
                    // it refuses only when nothing fits.
                    if allocator.stats().free_blocks <= SEARCH_LIMIT {
                        prop_assert_eq!(largest_fit, exact);
                    }
                }
                Err(AllocError::SizeExceedsCapacity { .. }) => {
                    prop_assert!(size > model.capacity)
                }
                Err(other) => prop_assert!(false, "unexpected {:?}", other),
            },
            Op::Free { pick } => {
                if !model.live.is_empty() {
                    let a = model.live.swap_remove(pick % model.live.len());
                    prop_assert_eq!(allocator.free(a), Ok(()));
                    model.bury(a);
                }
            }
            Op::FreeDead { pick } => {
                if !model.dead.is_empty() {
                    let a = model.dead[pick % model.dead.len()];
                    let before = allocator.stats();
                    let outcome = allocator
                        .free(a)
                        .map_err(|e| (e.kind(), e.into_allocation()));
                    prop_assert!(
                        matches!(
                            outcome,
                            Err((HandleError::DoubleFree | HandleError::StaleHandle, back)) if back == a
                        ),
                        "freeing dead {:?} gave {:?}",
                        a,
                        outcome
                    );
                    prop_assert_eq!(allocator.stats(), before);
                }
            }
            Op::Reset => {
                allocator.reset();
                for a in std::mem::take(&mut model.live) {
                    model.bury(a);
                }
            }
            Op::Grow { by } => {
                let before = allocator.stats();
                model.capacity += by;
                prop_assert_eq!(allocator.grow_to(model.capacity), Ok(()));
                prop_assert_eq!(allocator.capacity(), model.capacity);
                // The new bytes join the free tail: no new free block
                // unless the old end was in use.
                let after = allocator.stats();
                prop_assert!(after.free_blocks <= before.free_blocks + 1);
                for a in &model.live {
                    prop_assert_eq!(allocator.check_handle(a), Ok(()));
                }
            }
            Op::Shrink { pick } => {
                let tail = allocator.free_tail();
                let cut = tail / 4 * (pick % 4 + 1);
                if tail < model.capacity {
                    let too_far = model.capacity - tail - 1;
                    prop_assert!(
                        allocator.shrink_to(too_far).is_err(),
                        "cut into a used block"
                    );
                }
                model.capacity -= cut;
                prop_assert_eq!(allocator.shrink_to(model.capacity), Ok(()));
                prop_assert_eq!(allocator.capacity(), model.capacity);
            }
        }
        let stats = allocator.stats();
        prop_assert_eq!(stats.used, model.used());
        prop_assert_eq!(stats.requested, model.requested());
        prop_assert_eq!(stats.allocations, model.live.len());
        prop_assert_eq!(stats.free, model.capacity - model.used());
        prop_assert_eq!(stats.alignment_waste, model.used() - model.requested());
        if let Err(error) = allocator.check_invariants() {
            prop_assert!(false, "{}", error);
        }
    }
    // Freeing everything leaves one block of the whole capacity.
    for a in model.live.drain(..) {
        prop_assert_eq!(allocator.free(a), Ok(()));
    }
    let stats = allocator.stats();
    prop_assert_eq!(stats.free_blocks, usize::from(model.capacity > 0));
    prop_assert_eq!(stats.largest_free_block, model.capacity);
    prop_assert_eq!(allocator.largest_allocatable(1), Ok(model.capacity));
    assert_consistent(&allocator);
    Ok(())
}

#[test]
fn allocator_matches_the_model() {
    let (default_cases, ops) = if cfg!(miri) { (2, 100) } else { (100, 1000) };
    let cases = std::env::var("ALLOC_MODEL_CASES")
        .ok()
        .and_then(|value| value.parse().ok())
        .unwrap_or(default_cases);
    let config = Config {
        cases,
        // Under Miri nothing may touch the file system; natively a failure
        // prints the minimal program, which is what matters.
        failure_persistence: None,
        ..Config::default()
    };
    let mut runner = TestRunner::new(config);
    let program = (capacity(), granularity(), prop::collection::vec(op(), ops));
    let result = runner.run(&program, |(capacity, granularity, ops)| {
        run_program(capacity, granularity, &ops)
    });
    if let Err(failure) = result {
        panic!("{failure}");
    }
    eprintln!(
        "allocator_matches_the_model: {} programs of {ops} ops passed",
        cases
    );
}
