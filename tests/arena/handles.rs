//! Handles that cannot be lost or misused: a refused free hands the handle
//! back, leaks can be counted, views borrow one array, not the arena, and a
//! range outside an array, reversed or overflowing is an error, not a
//! panic.

use std::ops::Bound;

use gpu_aligned::alloc::HandleError;
use gpu_aligned::arena::{Arena, ArenaError, Plan};
use gpu_aligned::vector::float4;

use crate::generic::every_verb;

#[test]
fn the_generic_function_runs_on_the_host() {
    let mut arena = Arena::host(1 << 20).unwrap();
    every_verb(&mut arena);
    assert_eq!(arena.allocator().stats().allocations, 0);
}

#[test]
fn a_foreign_free_hands_the_handle_back() {
    let mut mine = Arena::host(1 << 16).unwrap();
    let mut theirs = Arena::host(1 << 16).unwrap();
    let mut a = mine.alloc::<u32>(4).unwrap();
    mine.write(&mut a, .., &[1, 2, 3, 4]).unwrap();
    let refused = theirs.free(a).unwrap_err();
    assert_eq!(
        refused.error,
        ArenaError::Handle(HandleError::ForeignHandle)
    );
    assert_eq!(theirs.live(), 0);
    // Still live and intact where it belongs.
    let a = refused.handle;
    assert_eq!(mine.to_vec(&a).unwrap(), [1, 2, 3, 4]);
    mine.free(a).unwrap();
    assert_eq!(mine.live(), 0);

    let image = mine.alloc_pitched::<u8>(10, 2).unwrap();
    let refused = theirs.free(image).unwrap_err();
    mine.free(refused.handle).unwrap();

    let mut plan = Plan::new();
    let _key = plan.array::<u8>(4);
    let carving = mine.carve(&plan).unwrap();
    let refused = theirs.free(carving).unwrap_err();
    mine.free(refused.handle).unwrap();
    assert_eq!(mine.live(), 0);
}

#[test]
fn a_stale_free_hands_the_handle_back() {
    let mut arena = Arena::host(1 << 16).unwrap();
    let before = arena.alloc::<u8>(4).unwrap();
    arena.reset().unwrap();
    assert_eq!(arena.live(), 0);
    assert!(arena.offset(&before).is_err());
    let refused = arena.free(before).unwrap_err();
    assert!(matches!(refused.error, ArenaError::Handle(_)));
    // The `?` operator turns a refused free into the arena's error.
    fn free_it(arena: &mut Arena<gpu_aligned::backend::HostBuffer>) -> Result<(), ArenaError> {
        let stale = arena.alloc::<u8>(1)?;
        arena.reset()?;
        arena.free(stale)?;
        Ok(())
    }
    assert!(matches!(free_it(&mut arena), Err(ArenaError::Handle(_))));
}

#[test]
fn dropped_arrays_and_carvings_are_given_back() {
    // Three arrays' room.
    let mut arena = Arena::host(3 * 256).unwrap();
    let kept = arena.alloc::<u8>(4).unwrap();
    let dropped = arena.alloc::<float4>(4).unwrap();
    drop(dropped);
    let mut plan = Plan::new();
    let _never_taken = plan.array::<u32>(8);
    let carving = arena.carve(&plan).unwrap();
    drop(carving);
    // The dropped handle and the dropped carving's array wait for the
    // arena to need them. Only `kept` is live, and the only leak.
    assert_eq!(arena.live(), 1);
    assert_eq!(arena.pending_frees(), 2);
    assert_eq!(arena.leaks(), [(0, 4)]);
    // Nothing else fits: both come back, and the first is reused.
    let again = arena.alloc::<float4>(4).unwrap();
    assert_eq!(arena.offset(&again).unwrap(), 256);
    assert_eq!(arena.pending_frees(), 0);
    assert_eq!(arena.allocator().stats().allocations, 2);
    arena.free(kept).unwrap();
    drop(again);
    arena.reset().unwrap();
    assert_eq!(arena.live(), 0);
    assert_eq!(arena.allocator().stats().free_blocks, 1);
}

#[test]
fn leaks_are_listed_in_address_order() {
    let mut arena = Arena::host(1 << 16).unwrap();
    let arrays: Vec<_> = (0..6).map(|_| arena.alloc::<u32>(16).unwrap()).collect();
    let mut offsets: Vec<u64> = arrays.iter().map(|a| arena.offset(a).unwrap()).collect();
    // Free the first half, then allocate into the holes in reverse: the
    // newest blocks lie at the lowest addresses.
    let mut arrays = arrays.into_iter();
    for array in arrays.by_ref().take(3) {
        arena.free(array).unwrap();
    }
    let refill: Vec<_> = (0..3)
        .map(|len| arena.alloc::<u8>(1 + len).unwrap())
        .collect();
    let kept: Vec<_> = arrays.collect();
    offsets = offsets.split_off(3);
    offsets.extend(refill.iter().map(|a| arena.offset(a).unwrap()));
    // Arrays still held are what `leaks` lists (dropped ones come back).
    let leaks = arena.leaks();
    drop((kept, refill));
    let mut sorted = leaks.clone();
    sorted.sort_unstable();
    assert_eq!(leaks, sorted);
    offsets.sort_unstable();
    assert_eq!(
        leaks.iter().map(|&(offset, _)| offset).collect::<Vec<_>>(),
        offsets
    );
}

#[test]
fn a_view_of_one_array_lives_while_another_is_written() {
    let mut arena = Arena::host(1 << 16).unwrap();
    let mut a = arena.alloc::<u32>(4).unwrap();
    let mut b = arena.alloc::<u32>(4).unwrap();
    arena.write(&mut a, .., &[1, 2, 3, 4]).unwrap();
    let view_a = arena.get(&a).unwrap();
    let view_b = arena.get_mut(&mut b).unwrap();
    view_b.copy_from_slice(&[5, 6, 7, 8]);
    arena.write(&mut b, ..1, &[9]).unwrap();
    arena.zero(&mut b).unwrap();
    assert_eq!(view_a, &[1, 2, 3, 4]);
    assert_eq!(arena.to_vec(&b).unwrap(), [0; 4]);
    arena.free(a).unwrap();
    arena.free(b).unwrap();
}

#[test]
fn every_form_of_range_reaches_the_elements_it_names() {
    let mut arena = Arena::host(1 << 16).unwrap();
    let mut a = arena.alloc_from(&[0u16; 10]).unwrap();
    arena.write(&mut a, 9.., &[1]).unwrap();
    arena.write(&mut a, ..1, &[2]).unwrap();
    arena.write(&mut a, 3..=4, &[3, 4]).unwrap();
    arena.write(&mut a, 5..5, &[]).unwrap();
    let excluded_start = (Bound::Excluded(5), Bound::Included(6));
    arena.write(&mut a, excluded_start, &[6]).unwrap();
    assert_eq!(arena.to_vec(&a).unwrap(), [2, 0, 0, 3, 4, 0, 6, 0, 0, 1]);
    let mut two = [0; 2];
    arena.read(&a, 8.., &mut two).unwrap();
    assert_eq!(two, [0, 1]);
    // The range's length, not the array's, is what the slice must hold.
    assert_eq!(
        arena.write(&mut a, 2..4, &[1]).unwrap_err(),
        ArenaError::LengthMismatch {
            expected: 2,
            found: 1
        }
    );
    arena.free(a).unwrap();
}

#[test]
fn a_range_outside_the_array_reversed_or_overflowing_is_out_of_range_not_a_panic() {
    use Bound::{Excluded, Included, Unbounded};
    let mut arena = Arena::host(1 << 16).unwrap();
    let mut a = arena.alloc::<u16>(10).unwrap();
    let mut image = arena.alloc_pitched::<u16>(3, 2).unwrap();
    // Each range, with the start and end the error reports: `usize::MAX`
    // where a bound overflows.
    let flat = [
        ((Included(10), Excluded(11)), (10, 11)),
        ((Included(9), Included(10)), (9, 11)),
        ((Included(usize::MAX), Unbounded), (usize::MAX, 10)),
        ((Unbounded, Excluded(11)), (0, 11)),
        ((Included(4), Excluded(2)), (4, 2)),
        ((Included(3), Included(1)), (3, 2)),
        ((Excluded(5), Excluded(5)), (6, 5)),
        ((Unbounded, Included(usize::MAX)), (0, usize::MAX)),
        ((Included(5), Included(usize::MAX)), (5, usize::MAX)),
        ((Excluded(usize::MAX), Unbounded), (usize::MAX, 10)),
    ];
    for (range, (start, end)) in flat {
        let error = ArenaError::OutOfRange {
            start,
            end,
            array_len: 10,
        };
        assert_eq!(arena.write(&mut a, range, &[]), Err(error), "{range:?}");
        assert_eq!(arena.read(&a, range, &mut []), Err(error), "{range:?}");
    }
    let rows = [
        ((Included(1), Excluded(3)), (1, 3)),
        ((Included(3), Unbounded), (3, 2)),
        ((Included(2), Excluded(1)), (2, 1)),
        ((Included(1), Included(usize::MAX)), (1, usize::MAX)),
    ];
    for (range, (start, end)) in rows {
        let error = ArenaError::OutOfRange {
            start,
            end,
            array_len: 2,
        };
        assert_eq!(arena.write(&mut image, range, &[]), Err(error), "{range:?}");
        assert_eq!(arena.read(&image, range, &mut []), Err(error), "{range:?}");
    }
    let error = |start, end| ArenaError::OutOfRange {
        start,
        end,
        array_len: 2,
    };
    assert_eq!(arena.row(&image, 2).unwrap_err(), error(2, 3));
    let end = usize::MAX;
    assert_eq!(arena.row_mut(&mut image, end).unwrap_err(), error(end, end));
    // An empty range at the end is one, as for slices; nothing was written.
    arena.read(&image, 2.., &mut []).unwrap();
    assert_eq!(arena.to_vec(&a).unwrap(), [0; 10]);
    assert_eq!(arena.to_vec(&image).unwrap(), [0; 6]);
    arena.free(a).unwrap();
    arena.free(image).unwrap();
}
