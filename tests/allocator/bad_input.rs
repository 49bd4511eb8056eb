//! Every bad input has its own named test and its own error; none panics,
//! and none changes the allocator.

use gpu_aligned::alloc::{AllocError, Allocator, HandleError};
use gpu_aligned::arena::ArenaOptions;
use gpu_aligned::arena::{Arena, ArenaError};
use gpu_aligned::backend::{HostBuffer, HostError};

use crate::support::assert_consistent;

/// Runs `request` on an allocator holding one allocation and checks that
/// it fails with `expected` and leaves everything as it was.
fn refused(capacity: usize, request: (usize, usize), expected: AllocError) {
    let mut allocator = Allocator::new(capacity);
    let kept = allocator.alloc(1, 1).expect("room for one byte");
    let before = allocator.stats();
    assert_eq!(allocator.alloc(request.0, request.1), Err(expected));
    assert_eq!(
        allocator.stats(),
        before,
        "a refused request changed the allocator"
    );
    assert_consistent(&allocator);
    allocator.free(kept).expect("still live");
}

#[test]
fn zero_size_is_an_error() {
    refused(1024, (0, 1), AllocError::ZeroSize);
}

#[test]
fn non_power_of_two_align_is_an_error() {
    refused(1024, (8, 3), AllocError::AlignNotPowerOfTwo { align: 3 });
    refused(
        1024,
        (8, 257),
        AllocError::AlignNotPowerOfTwo { align: 257 },
    );
}

#[test]
fn zero_align_is_an_error() {
    refused(1024, (8, 0), AllocError::AlignNotPowerOfTwo { align: 0 });
}

#[test]
fn align_larger_than_capacity_fits_at_offset_zero() {
    // Alignment is relative to the buffer's start: offset 0 satisfies any.
    let mut allocator = Allocator::with_granularity(100, 1).unwrap();
    let a = allocator.alloc(1, 128).unwrap();
    assert_eq!(a.offset(), 0);
    // Nothing else is a multiple of 128 below 100.
    assert!(matches!(
        allocator.alloc(1, 128),
        Err(AllocError::OutOfMemory {
            free: 99,
            largest_fit: 0,
            ..
        })
    ));
    let b = allocator.alloc(1, 64).unwrap();
    assert_eq!(b.offset(), 64);
    assert_consistent(&allocator);
    allocator.free(a).unwrap();
    allocator.free(b).unwrap();
    let whole = allocator.alloc(100, 1 << 63).unwrap();
    assert_eq!(whole.offset(), 0);
    allocator.free(whole).unwrap();
}

#[test]
fn size_larger_than_capacity_is_an_error() {
    refused(
        1000,
        (1001, 1),
        AllocError::SizeExceedsCapacity {
            size: 1001,
            capacity: 1000,
        },
    );
}

#[test]
fn sizes_and_aligns_near_usize_max_do_not_overflow() {
    let mut allocator = Allocator::with_granularity(usize::MAX, 1).unwrap();
    let first = allocator.alloc(1, 1).unwrap();
    // The only free block is [1, usize::MAX): an aligned start near the top
    // leaves no room, and padding arithmetic must not wrap.
    assert!(matches!(
        allocator.alloc(usize::MAX - 1, 1 << (usize::BITS - 1)),
        Err(AllocError::OutOfMemory { .. })
    ));
    assert!(matches!(
        allocator.alloc(usize::MAX, 1),
        Err(AllocError::OutOfMemory { .. })
    ));
    let rest = allocator.alloc(usize::MAX - 1, 1).unwrap();
    assert_eq!((rest.offset(), rest.end()), (1, usize::MAX as u64));
    assert_consistent(&allocator);
    allocator.free(first).unwrap();
    allocator.free(rest).unwrap();
    assert_eq!(allocator.stats().largest_free_block, usize::MAX);
}

#[test]
fn size_overflow_is_an_error() {
    let mut arena = Arena::host(4096).unwrap();
    assert_eq!(
        arena.alloc::<u64>(usize::MAX / 4).unwrap_err(),
        ArenaError::Alloc(AllocError::SizeOverflow)
    );
    assert_eq!(
        arena.alloc_pitched::<f32>(usize::MAX / 2, 2).unwrap_err(),
        ArenaError::Alloc(AllocError::SizeOverflow)
    );
    // The row itself fits in u64 but rounding it up to the pitch does not.
    assert_eq!(
        arena.alloc_pitched::<u8>(usize::MAX, 1).unwrap_err(),
        ArenaError::Alloc(AllocError::SizeOverflow)
    );
    assert_eq!(arena.allocator().stats().allocations, 0);
    assert_consistent(arena.allocator());
}

#[test]
fn out_of_memory_says_how_much_is_free_and_what_fits() {
    let mut allocator = Allocator::with_granularity(1024, 1).unwrap();
    let a = allocator.alloc(100, 1).unwrap();
    let b = allocator.alloc(500, 512).unwrap();
    assert_eq!((a.offset(), b.offset()), (0, 512));
    // Free now: [100, 512) and [1012, 1024): 424 bytes; at alignment 256 the
    // first holds [256, 512), the second nothing.
    let error = allocator.alloc(300, 256).unwrap_err();
    assert_eq!(
        error,
        AllocError::OutOfMemory {
            size: 300,
            align: 256,
            free: 424,
            largest_fit: 256
        }
    );
    let message = error.to_string();
    assert!(
        message.contains("424") && message.contains("256"),
        "{message}"
    );
    assert_eq!(allocator.largest_allocatable(1), Ok(412));
    assert_eq!(allocator.largest_allocatable(256), Ok(256));
    // What it says fits does fit.
    let c = allocator.alloc(256, 256).unwrap();
    assert_eq!(c.offset(), 256);
    assert_consistent(&allocator);
}

#[test]
fn zero_capacity_refuses_everything() {
    let mut allocator = Allocator::new(0);
    assert_eq!(
        allocator.alloc(1, 1),
        Err(AllocError::SizeExceedsCapacity {
            size: 1,
            capacity: 0
        })
    );
    assert_eq!(allocator.stats().free_blocks, 0);
    assert_consistent(&allocator);
}

#[test]
fn double_free_is_an_error() {
    let mut allocator = Allocator::new(1024);
    let a = allocator.alloc(64, 16).unwrap();
    let keep = allocator.alloc(64, 16).unwrap();
    allocator.free(a).unwrap();
    let before = allocator.stats();
    assert_eq!(
        allocator.free(a).map_err(|e| e.kind()),
        Err(HandleError::DoubleFree)
    );
    assert_eq!(allocator.stats(), before);
    assert_consistent(&allocator);
    allocator.free(keep).unwrap();
}

#[test]
fn stale_handle_is_an_error() {
    let mut allocator = Allocator::new(1024);
    // Taking the whole buffer reuses the one block's slot: the new
    // allocation sits where the old handle points, with a newer generation.
    let old = allocator.alloc(1024, 1).unwrap();
    allocator.free(old).unwrap();
    let new = allocator.alloc(1024, 1).unwrap();
    assert_eq!(new.offset(), old.offset());
    assert_eq!(
        allocator.free(old).map_err(|e| e.kind()),
        Err(HandleError::StaleHandle)
    );
    assert_eq!(allocator.check_handle(&old), Err(HandleError::StaleHandle));
    assert_eq!(
        allocator.stats().allocations,
        1,
        "the stale free touched the new allocation"
    );
    allocator.free(new).unwrap();
    assert_consistent(&allocator);
}

#[test]
fn stale_handle_to_a_recycled_slot_is_an_error() {
    // Slots of merged blocks are recycled for the free blocks split off
    // later; a recycled slot must keep counting generations, or a handle
    // from its first life matches an allocation in its third.
    let mut allocator = Allocator::new(1024);
    let first = allocator.alloc(100, 1).unwrap();
    let old = allocator.alloc(100, 1).unwrap();
    allocator.free(old).unwrap();
    allocator.free(first).unwrap();
    let again = allocator.alloc(100, 1).unwrap();
    let reused = allocator.alloc(100, 1).unwrap();
    assert_eq!(reused.offset(), old.offset());
    assert!(matches!(
        allocator.free(old).map_err(|e| e.kind()),
        Err(HandleError::StaleHandle | HandleError::DoubleFree)
    ));
    assert_eq!(
        allocator.stats().allocations,
        2,
        "the stale free freed a live allocation"
    );
    allocator.free(reused).unwrap();
    allocator.free(again).unwrap();
    assert_consistent(&allocator);
}

#[test]
fn handle_from_before_reset_is_stale() {
    let mut allocator = Allocator::new(1024);
    let a = allocator.alloc(100, 4).unwrap();
    allocator.reset();
    assert_eq!(allocator.stats().allocations, 0);
    assert_eq!(
        allocator.free(a).map_err(|e| e.kind()),
        Err(HandleError::StaleHandle)
    );
    let b = allocator.alloc(100, 4).unwrap();
    assert_eq!(
        allocator.free(a).map_err(|e| e.kind()),
        Err(HandleError::StaleHandle)
    );
    allocator.free(b).unwrap();
    assert_consistent(&allocator);
}

#[test]
fn foreign_handle_is_an_error() {
    let mut mine = Allocator::new(1024);
    let mut theirs = Allocator::new(1024);
    let a = mine.alloc(64, 1).unwrap();
    let b = theirs.alloc(64, 1).unwrap();
    assert_eq!(
        mine.free(b).map_err(|e| e.kind()),
        Err(HandleError::ForeignHandle)
    );
    assert_eq!(
        theirs.free(a).map_err(|e| e.kind()),
        Err(HandleError::ForeignHandle)
    );
    mine.free(a).unwrap();
    theirs.free(b).unwrap();
}

#[test]
fn foreign_arena_handle_is_an_error() {
    let mut mine = Arena::host(4096).unwrap();
    let mut theirs = Arena::host(4096).unwrap();
    let a = mine.alloc::<f32>(4).unwrap();
    assert_eq!(
        theirs.get(&a).unwrap_err(),
        ArenaError::Handle(HandleError::ForeignHandle)
    );
    let refused = theirs.free(a).unwrap_err();
    assert_eq!(
        refused.error,
        ArenaError::Handle(HandleError::ForeignHandle)
    );
    assert_eq!(mine.allocator().stats().allocations, 1);
    mine.free(refused.handle).unwrap();
}

#[test]
fn stale_arena_handle_is_an_error() {
    let mut arena = Arena::host(4096).unwrap();
    let mut a = arena.alloc::<u32>(4).unwrap();
    arena.reset().unwrap();
    assert_eq!(
        arena.get_mut(&mut a).unwrap_err(),
        ArenaError::Handle(HandleError::StaleHandle)
    );
    assert_eq!(
        arena.offset(&a).unwrap_err(),
        ArenaError::Handle(HandleError::StaleHandle)
    );
}

#[test]
fn non_power_of_two_min_align_is_an_error() {
    assert_eq!(
        ArenaOptions::new()
            .min_align(384)
            .pitch_align(512)
            .host(4096)
            .unwrap_err(),
        ArenaError::Alloc(AllocError::AlignNotPowerOfTwo { align: 384 })
    );
    assert_eq!(
        ArenaOptions::new()
            .min_align(256)
            .pitch_align(0)
            .host(4096)
            .unwrap_err(),
        ArenaError::Alloc(AllocError::AlignNotPowerOfTwo { align: 0 })
    );
}

#[test]
fn zero_length_host_buffer_is_an_error() {
    assert_eq!(HostBuffer::new(0, 256).unwrap_err(), HostError::ZeroLength);
    assert_eq!(
        Arena::host(0).unwrap_err(),
        ArenaError::Backend(HostError::ZeroLength)
    );
}

#[test]
fn non_power_of_two_host_alignment_is_an_error() {
    assert_eq!(
        HostBuffer::new(64, 48).unwrap_err(),
        HostError::AlignNotPowerOfTwo { align: 48 }
    );
}

#[test]
fn host_buffer_beyond_the_address_space_is_an_error() {
    assert_eq!(
        HostBuffer::new(usize::MAX, 256).unwrap_err(),
        HostError::TooLarge { len: usize::MAX }
    );
}

// Miri stops the whole run when a program asks for more memory than the
// machine has, instead of returning null, so this one only runs natively.
#[test]
#[cfg_attr(miri, ignore)]
fn host_allocation_failure_is_an_error() {
    let len = isize::MAX as usize - 4096;
    let refused = HostBuffer::new(len, 256).unwrap_err();
    assert!(
        matches!(refused, HostError::Reserve { len: asked, .. } if asked == len),
        "{refused:?}"
    );
}

#[test]
fn row_out_of_range_is_an_error() {
    let mut arena = Arena::host(1 << 16).unwrap();
    let mut image = arena.alloc_pitched::<f32>(10, 3).unwrap();
    assert!(arena.row(&image, 2).is_ok());
    assert_eq!(
        arena.row(&image, 3).unwrap_err(),
        ArenaError::OutOfRange {
            start: 3,
            end: 4,
            array_len: 3
        }
    );
    assert_eq!(
        arena.row_mut(&mut image, usize::MAX).unwrap_err(),
        ArenaError::OutOfRange {
            start: usize::MAX,
            end: usize::MAX,
            array_len: 3
        }
    );
}

#[test]
fn packed_length_mismatch_is_an_error() {
    let mut arena = Arena::host(1 << 16).unwrap();
    let mut image = arena.alloc_pitched::<u16>(10, 3).unwrap();
    assert_eq!(
        arena.write(&mut image, .., &[0u16; 29]).unwrap_err(),
        ArenaError::LengthMismatch {
            expected: 30,
            found: 29
        }
    );
    assert_eq!(
        arena.read(&image, .., &mut [0u16; 31]).unwrap_err(),
        ArenaError::LengthMismatch {
            expected: 30,
            found: 31
        }
    );
}

#[test]
fn every_error_has_a_message() {
    let errors: [&dyn std::error::Error; 5] = [
        &AllocError::ZeroSize,
        &AllocError::TooManyBlocks,
        &HandleError::DoubleFree,
        &HostError::ZeroLength,
        &ArenaError::<HostError>::AddressOverflow,
    ];
    for error in errors {
        assert!(!error.to_string().is_empty(), "{error:?}");
    }
}
