//! What the CUDA backend decides without a GPU.

use gpu_aligned::align::{ARRAY_ALIGN, PITCH_ALIGN};
use gpu_aligned::arena::ArenaOptions;
use gpu_aligned::backend::cuda::{check_base, CudaError};

#[test]
fn base_off_a_256_byte_boundary_is_refused() {
    for base in [0x7f00_0000_0004u64, 0x7f00_0000_0010, 0x7f00_0000_0080] {
        match check_base(base, 256) {
            Err(CudaError::BaseMisaligned {
                base: b,
                required: 256,
            }) => assert_eq!(b, base),
            other => panic!("{base:#x}: {other:?}"),
        }
    }
}

#[test]
fn null_base_is_refused() {
    assert!(matches!(
        check_base(0, 256),
        Err(CudaError::BaseMisaligned { .. })
    ));
}

#[test]
fn base_alignment_is_recorded() {
    assert_eq!(check_base(0x7f00_0020_0000, 256).unwrap(), 0x20_0000);
    assert_eq!(check_base(0x7f00_0000_0100, 256).unwrap(), 256);
}

#[test]
fn a_larger_minimum_alignment_is_required_of_the_base() {
    assert!(check_base(0x7f00_0000_0100, 4096).is_err());
    assert_eq!(check_base(0x7f00_0000_1000, 4096).unwrap(), 4096);
    // Below the driver's promise, the driver's promise still applies.
    assert!(check_base(0x7f00_0000_0010, 16).is_err());
    assert_eq!(ARRAY_ALIGN, 256);
}

/// The pitches `cuMemAllocPitch` returned on an H100 (driver 580.159.04) for
/// element sizes 4, 8 and 16, the same for all three; the device test
/// `pitch_matches_cu_mem_alloc_pitch` compares against the live driver.
const H100_PITCHES: [(u64, u64); 16] = [
    (1, 512),
    (12, 512),
    (16, 512),
    (100, 512),
    (256, 512),
    (500, 512),
    (511, 512),
    (512, 512),
    (513, 1024),
    (1000, 1024),
    (1024, 1024),
    (1500, 1536),
    (2048, 2048),
    (4097, 4608),
    (7680, 7680),
    (65_536, 65_536),
];

#[test]
fn default_pitch_matches_what_the_h100_driver_returned() {
    let mut arena = ArenaOptions::new()
        .min_align(256)
        .pitch_align(PITCH_ALIGN)
        .host(1 << 22)
        .unwrap();
    for (width, pitch) in H100_PITCHES {
        let rows = arena.alloc_pitched::<u8>(width as usize, 3).unwrap();
        assert_eq!(rows.pitch() as u64, pitch, "width {width} B");
        arena.free(rows).unwrap();
        if width % 4 == 0 {
            let rows = arena.alloc_pitched::<f32>(width as usize / 4, 3).unwrap();
            assert_eq!(rows.pitch() as u64, pitch, "width {width} B of f32");
            arena.free(rows).unwrap();
        }
    }
}
