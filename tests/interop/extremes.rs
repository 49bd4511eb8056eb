//! The layout tools on extreme input: sizes, strides, offsets and array
//! lengths near `u64::MAX` / `usize::MAX`. Each gives a result or a typed
//! error, in debug builds (where arithmetic overflow panics) and release
//! builds (where it wraps) alike, and returns promptly.

use gpu_aligned::coalesce::{
    advise, measure, predict, Access, AdviceError, Fields, Storage, WarpAccess,
};
use gpu_aligned::header::CudaHeader;
use gpu_aligned::{GpuField, GpuLayout, GpuType, Scalar};

use crate::support::Rng;

#[test]
fn lanes_over_the_whole_address_space_count_saturated_bytes() {
    // Two lanes, each covering half of the address space: 2^64 distinct
    // bytes, one more than u64 holds (this overflowed before).
    let half = 1u64 << 63;
    assert_eq!(measure(&[0, half], half).useful_bytes, u64::MAX);
    assert_eq!(measure(&[0, half], half).sectors, 1 << 59);
    let huge_stride = WarpAccess::strided(0, u64::MAX / 31, u64::MAX / 31);
    let cost = huge_stride.measure();
    assert_eq!(cost.useful_bytes, u64::MAX);
}

#[test]
fn the_sector_model_survives_extreme_addresses_widths_and_strides() {
    let mut rng = Rng(0x18);
    for _ in 0..2000 {
        let (base, stride, width) = (rng.extreme(), rng.extreme(), rng.extreme());
        let lanes: Vec<u64> = (0..1 + rng.below(32))
            .map(|lane| base.saturating_add(stride.saturating_mul(lane)))
            .collect();
        let cost = measure(&lanes, width);
        assert!(
            cost.sectors <= cost.useful_bytes.max(1) / 32 + 2 * lanes.len() as u64 || width > 32
        );
        let _ = cost.efficiency();
        let _ = WarpAccess::strided(base, stride, width).measure();
    }
}

/// A hand-written layout of `size` bytes whose fields' types and offsets
/// come from `rng`, leaked so the header can keep it.
fn random_layout(rng: &mut Rng, size: usize) -> &'static GpuLayout {
    static F32: GpuType = GpuType::Scalar(Scalar::F32);
    let fields: Vec<GpuField> = (0..1 + rng.below(3))
        .map(|index| {
            let len = rng.extreme() as usize;
            let ty = match rng.below(3) {
                0 => GpuType::Scalar(Scalar::U64),
                1 => GpuType::Array { elem: &F32, len },
                _ => GpuType::Vector {
                    cuda_name: "float4",
                    lane: Scalar::F32,
                    lanes: len,
                    align: 16,
                },
            };
            let name = ["a", "b", "c"][index as usize];
            let offset = rng.extreme() as usize;
            GpuField::new(name, offset, ty.size(), ty.align(), false, ty)
        })
        .collect();
    let fields: &'static [GpuField] = Box::leak(fields.into_boxed_slice());
    Box::leak(Box::new(GpuLayout::new(
        "Huge",
        size,
        1 << rng.below(8),
        0,
        fields,
    )))
}

#[test]
fn the_advisor_answers_or_refuses_layouts_of_any_size() {
    let mut rng = Rng(0xad);
    let accesses = [
        Access::streaming(Fields::All, Fields::All),
        Access::gather(Fields::All, Fields::All),
        Access::streaming(Fields::Only(&["a"]), Fields::Only(&["a"])),
        Access::uniform(Fields::All, Fields::All),
        Access::uniform(Fields::Only(&["a"]), Fields::None),
    ];
    for _ in 0..if cfg!(debug_assertions) { 60 } else { 300 } {
        let size = rng.extreme() as usize;
        let layout = random_layout(&mut rng, size);
        for access in &accesses {
            match advise(layout, access) {
                Ok(advice) => {
                    assert!(size <= isize::MAX as usize);
                    let _ = advice.to_string();
                }
                Err(AdviceError::TooLarge { size: refused }) => {
                    assert_eq!(refused, size);
                    assert!(size > isize::MAX as usize);
                }
                Err(AdviceError::Empty) => assert_eq!(size, 0),
                Err(error) => panic!("{error}"),
            }
        }
    }
}

#[test]
fn a_slot_of_a_billion_words_is_priced_without_walking_it() {
    // Before, a store of every field walked every 16-byte word of the slot:
    // minutes for a gigabyte, forever near usize::MAX.
    static FIELDS: [GpuField; 1] = [GpuField::new(
        "x",
        0,
        1 << 34,
        16,
        false,
        GpuType::Array {
            elem: &GpuType::Scalar(Scalar::U128),
            len: 1 << 30,
        },
    )];
    static BIG: GpuLayout = GpuLayout::new("Big", 1 << 34, 16, 0, &FIELDS);
    let access = Access::streaming(Fields::None, Fields::All);
    let cost = predict(&BIG, &access, Storage::Aos).unwrap();
    // Each 16-byte store of a warp, elements 16 GiB apart: 32 lines for 32
    // elements, one request each.
    assert_eq!(cost.store_requests, (1u64 << 30) as f64);
    // Read and written by a whole warp, the slot is 2^30 16-byte words,
    // each one sector and one line: counted a period at a time, not word by
    // word.
    let uniform = predict(
        &BIG,
        &Access::uniform(Fields::All, Fields::All),
        Storage::Aos,
    )
    .unwrap();
    assert_eq!(uniform.instructions, 2 << 30);
    assert_eq!(uniform.store_requests, (1u64 << 30) as f64);
    assert_eq!(uniform.read_bytes, (1u64 << 30) as f64 * 32.0);
    let huge = GpuLayout::new("Huge", usize::MAX - 7, 8, 0, &FIELDS);
    assert_eq!(
        predict(&huge, &access, Storage::PaddedAos),
        Err(AdviceError::TooLarge {
            size: usize::MAX - 7
        })
    );
}

#[test]
fn the_header_refuses_fields_whose_type_overflows() {
    let mut rng = Rng(0x4ead);
    for _ in 0..300 {
        let size = rng.extreme() as usize;
        let layout = random_layout(&mut rng, size);
        // A typed error or a header; never a panic.
        let mut header = CudaHeader::new();
        if header.add_layout(layout, rng.below(2) == 0).is_ok() {
            let _ = header.render();
        }
    }
    static F32: GpuType = GpuType::Scalar(Scalar::F32);
    static FIELDS: [GpuField; 1] = [GpuField::new(
        "a",
        0,
        usize::MAX,
        4,
        false,
        GpuType::Array {
            elem: &F32,
            len: usize::MAX / 2,
        },
    )];
    static OVERFLOWING: GpuLayout = GpuLayout::new("Overflowing", 16, 16, 0, &FIELDS);
    assert!(CudaHeader::new().add_layout(&OVERFLOWING, false).is_err());
}
