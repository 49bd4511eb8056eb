//! Pitched 2D arrays: row pitch, row access, device addresses, padding.

use gpu_aligned::align::PITCH_ALIGN;
use gpu_aligned::arena::Arena;
use gpu_aligned::arena::ArenaOptions;
use gpu_aligned::backend::Buffer;

use crate::support::address_of;
use crate::support::{align_up, assert_consistent, StandIn};

#[test]
fn row_padding_is_rows_times_the_shortfall_to_the_pitch() {
    // X rows of Y one-byte elements, rows aligned to 64 bytes, waste
    // X * (64 - Y % 64) bytes when Y is not already a multiple of 64.
    let mut arena = ArenaOptions::new()
        .min_align(64)
        .pitch_align(64)
        .host(1 << 20)
        .unwrap();
    for (x, y) in [
        (1usize, 1usize),
        (3, 63),
        (10, 65),
        (7, 100),
        (760, 760),
        (2, 1000),
    ] {
        let image = arena.alloc_pitched::<u8>(y, x).unwrap();
        assert_eq!(image.padding_bytes(), x * (64 - y % 64), "X = {x}, Y = {y}");
        assert_eq!(image.pitch() % 64, 0);
        assert_eq!(image.size_bytes(), image.pitch() * x);
        arena.free(image).unwrap();
    }
    // The case the formula leaves out: rows already aligned waste nothing.
    let aligned = arena.alloc_pitched::<u8>(128, 5).unwrap();
    assert_eq!(aligned.padding_bytes(), 0);
    arena.free(aligned).unwrap();
    assert_consistent(arena.allocator());
}

#[test]
fn every_row_starts_on_the_pitch_alignment() {
    let mut arena = Arena::host(1 << 20).unwrap();
    let _skew = arena.alloc::<u8>(1).unwrap();
    let image = arena.alloc_pitched::<f32>(100, 7).unwrap();
    assert_eq!(image.pitch() as u64, align_up(400, PITCH_ALIGN as u64));
    assert_eq!(image.padding_bytes(), (512 - 400) * 7);
    let base = arena.backend().base_address();
    let offset = arena.offset(&image).unwrap();
    for row in 0..7 {
        let address = arena.row(&image, row).unwrap().as_ptr() as u64;
        assert_eq!(address, base + offset + (row * image.pitch()) as u64);
        assert_eq!(address % PITCH_ALIGN as u64, 0, "row {row}");
    }
}

#[test]
fn rows_round_trip_and_padding_stays_untouched() {
    let mut arena = Arena::host(1 << 16).unwrap();
    let mut image = arena.alloc_pitched::<u16>(5, 4).unwrap();
    let packed: Vec<u16> = (1..=20).collect();
    arena.write(&mut image, .., &packed).unwrap();
    assert_eq!(arena.row(&image, 2).unwrap(), &[11, 12, 13, 14, 15]);
    arena.row_mut(&mut image, 3).unwrap()[0] = 99;
    let mut back = vec![0u16; 20];
    arena.read(&image, .., &mut back).unwrap();
    let mut expected = packed.clone();
    expected[15] = 99;
    assert_eq!(back, expected);
    // The padding after each row is still zero.
    let offset = arena.offset(&image).unwrap() as usize;
    let pitch = image.pitch();
    for row in 0..4 {
        let padding = &arena.bytes()[offset + row * pitch + 10..offset + (row + 1) * pitch];
        assert!(padding.iter().all(|&b| b == 0), "row {row} padding written");
    }
}

#[test]
fn a_pitched_array_on_a_device_has_what_cuda_memcpy_2d_takes() {
    // `cudaMemcpy2D(dst, dpitch, src, spitch, width, height)` into the
    // array: its address, its pitch, and its rows' width in bytes.
    let device = StandIn::at(0x7f00_0000_0000, 1 << 22);
    let mut arena = ArenaOptions::new().over(device).unwrap();
    let _first = arena.alloc::<u8>(10).unwrap();
    let image = arena.alloc_pitched::<f32>(760, 760).unwrap();
    let offset = arena.offset(&image).unwrap();
    assert_eq!(offset % 512, 0);
    assert_eq!(
        address_of(&arena, &image).unwrap(),
        0x7f00_0000_0000 + offset
    );
    assert_eq!(
        (image.pitch(), image.row_bytes(), image.height()),
        (3072, 760 * 4, 760)
    );
}

#[test]
fn misaligned_base_is_an_error() {
    use gpu_aligned::arena::ArenaError;
    let odd = StandIn::at(0x1000 + 128, 4096);
    assert_eq!(
        ArenaOptions::new().over(odd).unwrap_err(),
        ArenaError::MisalignedBase {
            base: 0x1080,
            align: 256
        }
    );
    // Aligned for array starts but not for the pitch alignment.
    let device = StandIn::at(0x1000 + 256, 1 << 16);
    let mut arena = ArenaOptions::new().over(device).unwrap();
    assert!(arena.alloc::<f32>(4).is_ok());
    assert_eq!(
        arena.alloc_pitched::<f32>(4, 4).unwrap_err(),
        ArenaError::MisalignedBase {
            base: 0x1100,
            align: 512
        }
    );
}

/// The fake device asks to retire every array (the default), so its frees
/// take the checked path: a foreign free still hands the handle back.
#[test]
fn a_backend_that_retires_arrays_hands_back_foreign_handles() {
    use gpu_aligned::arena::ArenaError;
    let device = |base| StandIn::at(base, 1 << 16);
    let mut mine = ArenaOptions::new().over(device(0x10_0000)).unwrap();
    let mut theirs = ArenaOptions::new().over(device(0x20_0000)).unwrap();
    let a = mine.alloc::<u32>(4).unwrap();
    let image = mine.alloc_pitched::<u8>(8, 2).unwrap();
    let refused = theirs.free(a).unwrap_err();
    assert!(matches!(refused.error, ArenaError::Handle(_)));
    mine.free(refused.handle).unwrap();
    let refused = theirs.free(image).unwrap_err();
    mine.free(refused.handle).unwrap();
    assert_eq!((mine.live(), theirs.live()), (0, 0));
}
