//! Random programs of alloc / free / reset / grow / shrink / dead-handle
//! frees against the
//! sub-allocator, checked after every step against a model: offsets aligned
//! and in bounds, no two live allocations overlap, the counters equal the
//! model's, every internal invariant holds, out of memory only when nothing
//! fits, dead handles refused, and freeing everything leaves one block.
#![no_main]

use gpu_aligned::alloc::{AllocError, Allocation, Allocator, HandleError, SEARCH_LIMIT};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((head, program)) = data.split_first_chunk::<4>() else {
        return;
    };
    // Capacities from 1 byte to 1 MiB (small ones exhaust often),
    // granularities from 1 to 256.
    // The low 20 bits of the first three bytes.
    let mut capacity =
        (usize::from(head[0]) | usize::from(head[1]) << 8 | usize::from(head[2] & 0x0f) << 16) + 1;
    let granularity = 1usize << (head[3] % 9);
    let mut allocator = Allocator::with_granularity(capacity, granularity).unwrap();
    // The block an allocation occupies: rounded up to the granularity,
    // cut short only by the end of the buffer.
    let reserved = |a: &Allocation, capacity: usize| {
        let rounded = a.size().div_ceil(granularity) * granularity;
        let start = usize::try_from(a.offset()).unwrap();
        (start, start + rounded.min(capacity - start))
    };
    let mut live: Vec<Allocation> = Vec::new();
    let mut dead: Vec<Allocation> = Vec::new();

    for op in program.chunks_exact(4) {
        let pick = usize::from(u16::from_le_bytes([op[1], op[2]]));
        match op[0] % 16 {
            0..=7 => {
                // Sizes 1..=65536, alignments 2^0..2^15 (beyond 4096 too).
                let size = usize::from(u16::from_le_bytes([op[1], op[2]])) + 1;
                let align = 1usize << (op[3] % 16);
                match allocator.alloc(size, align) {
                    Ok(a) => {
                        assert_eq!(a.size(), size);
                        assert_eq!(a.offset() % align as u64, 0, "{a:?} misaligned");
                        assert_eq!(
                            a.offset() % granularity as u64,
                            0,
                            "{a:?} off the granule"
                        );
                        assert!(a.end() <= capacity as u64, "{a:?} past {capacity}");
                        let (start, end) = reserved(&a, capacity);
                        for other in &live {
                            let (other_start, other_end) = reserved(other, capacity);
                            assert!(
                                end <= other_start || other_end <= start,
                                "{a:?} overlaps {other:?}"
                            );
                        }
                        live.push(a);
                    }
                    Err(AllocError::OutOfMemory {
                        free, largest_fit, ..
                    }) => {
                        let used: usize = live
                            .iter()
                            .map(|a| reserved(a, capacity))
                            .map(|(s, e)| e - s)
                            .sum();
                        assert_eq!(free, capacity - used);
                        assert!(largest_fit < size, "{largest_fit} fit, {size} refused");
                        let exact = allocator.largest_allocatable(align).unwrap();
                        assert!(largest_fit <= exact);
                        if allocator.stats().free_blocks <= SEARCH_LIMIT {
                            assert_eq!(largest_fit, exact);
                        }
                    }
                    Err(AllocError::SizeExceedsCapacity { .. }) => assert!(size > capacity),
                    Err(other) => panic!("unexpected {other:?}"),
                }
            }
            8..=13 => {
                if !live.is_empty() {
                    let a = live.swap_remove(pick % live.len());
                    assert_eq!(allocator.free(a), Ok(()));
                    dead.push(a);
                }
            }
            14 => {
                if !dead.is_empty() {
                    let before = allocator.stats();
                    let handle = dead[pick % dead.len()];
                    let outcome = allocator
                        .free(handle)
                        .map_err(|e| (e.kind(), e.into_allocation()));
                    assert!(
                        matches!(
                            outcome,
                            Err((HandleError::DoubleFree | HandleError::StaleHandle, back)) if back == handle
                        ),
                        "dead handle gave {outcome:?}"
                    );
                    assert_eq!(allocator.stats(), before);
                }
            }
            15 if op[3] < 128 => {
                // Grow by up to 64 KiB.
                capacity += usize::from(u16::from_le_bytes([op[1], op[2]])) + 1;
                assert_eq!(allocator.grow_to(capacity), Ok(()));
                for a in &live {
                    assert_eq!(allocator.check_handle(a), Ok(()));
                }
            }
            15 if op[3] < 192 => {
                // Shrink by part of the free tail.
                let tail = allocator.free_tail();
                if tail < capacity {
                    assert!(allocator.shrink_to(capacity - tail - 1).is_err());
                }
                capacity -= tail / 4 * usize::from(op[1] % 4 + 1);
                assert_eq!(allocator.shrink_to(capacity), Ok(()));
            }
            _ => {
                allocator.reset();
                dead.append(&mut live);
            }
        }
        let stats = allocator.stats();
        let used: usize = live
            .iter()
            .map(|a| reserved(a, capacity))
            .map(|(s, e)| e - s)
            .sum();
        let requested: usize = live.iter().map(Allocation::size).sum();
        assert_eq!(
            (stats.used, stats.requested, stats.allocations),
            (used, requested, live.len())
        );
        assert_eq!(stats.alignment_waste, used - requested);
        assert_eq!(stats.capacity, capacity);
        if let Err(error) = allocator.check_invariants() {
            panic!("{error}");
        }
    }
    for a in live {
        assert_eq!(allocator.free(a), Ok(()));
    }
    let stats = allocator.stats();
    assert_eq!(
        (stats.free_blocks, stats.largest_free_block),
        (usize::from(capacity > 0), capacity)
    );
});
