//! The typed arena over host memory: aligned starts, safe views, no overlap.

use gpu_aligned::align::ARRAY_ALIGN;
use gpu_aligned::arena::Arena;
use gpu_aligned::arena::ArenaOptions;
use gpu_aligned::backend::{Buffer, HostBuffer};
use gpu_aligned::vector::{double2, float4};

use crate::support::address_of;
use crate::support::assert_consistent;

#[test]
fn arrays_start_on_the_minimum_alignment() {
    let mut arena = Arena::host(1 << 16).unwrap();
    let a = arena.alloc::<u8>(3).unwrap();
    let b = arena.alloc::<f64>(5).unwrap();
    let c = arena.alloc::<float4>(7).unwrap();
    let d = arena.alloc::<u16>(1).unwrap();
    let base = arena.backend().base_address();
    assert_eq!(base % ARRAY_ALIGN as u64, 0);
    for (offset, address) in [
        (arena.offset(&a).unwrap(), address_of(&arena, &a).unwrap()),
        (arena.offset(&b).unwrap(), address_of(&arena, &b).unwrap()),
        (arena.offset(&c).unwrap(), address_of(&arena, &c).unwrap()),
        (arena.offset(&d).unwrap(), address_of(&arena, &d).unwrap()),
    ] {
        assert_eq!(offset % 256, 0, "offset {offset}");
        assert_eq!(address, base + offset);
        assert_eq!(address % 256, 0, "address {address:#x}");
    }
    let stats = arena.allocator().stats();
    assert_eq!(stats.requested, 3 + 5 * 8 + 7 * 16 + 2);
    // Each array's block is rounded up to the minimum alignment.
    assert_eq!(stats.used, 4 * 256);
    assert_consistent(arena.allocator());
}

#[test]
fn minimum_alignment_is_configurable() {
    let defaults = ArenaOptions::new().host(4096).unwrap();
    assert_eq!((defaults.min_align(), defaults.pitch_align()), (256, 512));
    assert_eq!(defaults.capacity(), 4096);
    assert_eq!(Arena::host(1 << 20).unwrap().capacity(), 1 << 20);
    let narrow = ArenaOptions::new().pitch_align(128).host(4096).unwrap();
    assert_eq!((narrow.min_align(), narrow.pitch_align()), (256, 128));
    let over = ArenaOptions::new().min_align(64);
    let over = over.over(HostBuffer::new(4096, 256).unwrap()).unwrap();
    assert_eq!((over.min_align(), over.capacity()), (64, 4096));
    for min_align in [1, 2, 64, 512, 4096] {
        let mut arena = ArenaOptions::new()
            .min_align(min_align)
            .pitch_align(512)
            .host(1 << 18)
            .unwrap();
        assert_eq!(arena.min_align(), min_align);
        assert_eq!(
            arena.backend().base_address() % min_align.max(256) as u64,
            0
        );
        let mut handles = Vec::new();
        for len in 1..20 {
            handles.push(arena.alloc::<u8>(len).unwrap());
        }
        let wide = arena.alloc::<double2>(3).unwrap();
        for handle in &handles {
            assert_eq!(address_of(&arena, handle).unwrap() % min_align as u64, 0);
        }
        // The element's own alignment wins when it is larger.
        assert_eq!(
            address_of(&arena, &wide).unwrap() % min_align.max(16) as u64,
            0
        );
        assert_consistent(arena.allocator());
    }
}

#[test]
fn fresh_arrays_are_zeroed_and_views_round_trip() {
    let mut arena = Arena::host(1 << 14).unwrap();
    let mut points = arena.alloc::<float4>(10).unwrap();
    assert!(arena
        .get(&points)
        .unwrap()
        .iter()
        .all(|p| *p == float4::default()));
    for (i, point) in arena.get_mut(&mut points).unwrap().iter_mut().enumerate() {
        let i = i as f32;
        *point = float4 {
            x: i,
            y: i + 0.5,
            z: -i,
            w: 1.0,
        };
    }
    let copy = arena.get(&points).unwrap().to_vec();
    let view = &copy;
    assert_eq!(view.len(), 10);
    assert_eq!(
        view[9],
        float4 {
            x: 9.0,
            y: 9.5,
            z: -9.0,
            w: 1.0
        }
    );
    // The bytes sit where the offset says.
    let offset = arena.offset(&points).unwrap() as usize;
    let raw = &arena.bytes()[offset + 9 * 16..offset + 10 * 16];
    assert_eq!(raw, bytemuck::bytes_of(&view[9]));
}

#[test]
fn arrays_do_not_overlap() {
    let mut arena = Arena::host(1 << 14).unwrap();
    let mut arrays = Vec::new();
    for i in 0..20u32 {
        let len = (i % 7 + 1) as usize * 9;
        let mut array = arena.alloc::<u32>(len).unwrap();
        arena.get_mut(&mut array).unwrap().fill(i);
        arrays.push((i, array));
    }
    // Free every third and allocate into the holes.
    let mut kept = Vec::new();
    for (i, array) in arrays {
        if i % 3 == 0 {
            arena.free(array).unwrap();
        } else {
            kept.push((i, array));
        }
    }
    for i in 100..110u32 {
        let mut array = arena.alloc::<u32>(5).unwrap();
        arena.get_mut(&mut array).unwrap().fill(i);
        kept.push((i, array));
    }
    for (i, array) in &kept {
        assert!(
            arena.get(array).unwrap().iter().all(|v| v == i),
            "array {i} was overwritten"
        );
    }
    for (_, array) in kept {
        arena.free(array).unwrap();
    }
    let stats = arena.allocator().stats();
    assert_eq!((stats.allocations, stats.free_blocks), (0, 1));
    assert_eq!(stats.largest_free_block, 1 << 14);
    assert_consistent(arena.allocator());
}

#[test]
fn out_of_memory_in_the_arena_reports_the_allocators_numbers() {
    let mut arena = Arena::host(1024).unwrap();
    let a = arena.alloc::<u8>(600).unwrap();
    let error = arena.alloc::<u8>(300).unwrap_err();
    // The first array's block runs to 768; [768, 1024) is free.
    assert_eq!(
        error,
        gpu_aligned::arena::ArenaError::Alloc(gpu_aligned::alloc::AllocError::OutOfMemory {
            size: 300,
            align: 256,
            free: 256,
            largest_fit: 256
        })
    );
    arena.free(a).unwrap();
}
