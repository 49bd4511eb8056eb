//! The sector model: aligned, shifted and scattered floats, the edge cases of the
//! primitive, and the per-pattern and per-type helpers built on it.

use gpu_aligned::coalesce::{measure, ElementFacts, WarpAccess, SECTOR_BYTES, WARP_LANES};
use gpu_aligned::vector::{float4, uchar2};
use gpu_aligned::GpuAligned;

fn warp(base: u64, stride: u64) -> Vec<u64> {
    (0..WARP_LANES as u64)
        .map(|lane| base + lane * stride)
        .collect()
}

#[test]
fn aligned_consecutive_floats_take_four_sectors_at_full_efficiency() {
    let lanes = warp(256, 4);
    let cost = measure(&lanes, 4);
    assert_eq!(cost.sectors, 4);
    assert_eq!(cost.useful_bytes, 128);
    assert_eq!(cost.efficiency(), 1.0);
}

#[test]
fn shifting_by_four_bytes_costs_a_fifth_sector() {
    let lanes = warp(256 + 4, 4);
    let cost = measure(&lanes, 4);
    assert_eq!(cost.sectors, 5);
    assert_eq!(cost.efficiency(), 0.8);
}

#[test]
fn scattered_floats_take_one_sector_each() {
    // A pseudo-random gather: every lane in its own sector, none adjacent.
    let lanes: Vec<u64> = (0..32u64)
        .map(|lane| (lane * 7919 % 32) * 4096 + 12)
        .collect();
    let cost = measure(&lanes, 4);
    assert_eq!(cost.sectors, 32);
    assert_eq!(cost.efficiency(), 0.125);
}

#[test]
fn a_stride_of_eight_floats_is_as_bad_as_scattering() {
    assert_eq!(WarpAccess::strided(0, 32, 4).measure().sectors, 32);
    assert_eq!(WarpAccess::strided(0, 32, 4).measure().efficiency(), 0.125);
    // Two floats per sector: half the sectors.
    assert_eq!(WarpAccess::strided(0, 16, 4).measure().sectors, 16);
}

#[test]
fn sector_count_does_not_depend_on_lane_order() {
    let mut lanes = warp(4, 4);
    let in_order = measure(&lanes, 4).sectors;
    lanes.reverse();
    lanes.swap(3, 17);
    assert_eq!(measure(&lanes, 4).sectors, in_order);
}

#[test]
fn a_broadcast_touches_one_sector_and_one_useful_word() {
    let lanes = [1000u64; 32];
    assert_eq!(measure(&lanes, 4).sectors, 1);
    assert_eq!(measure(&lanes, 4).useful_bytes, 4);
}

#[test]
fn an_access_straddling_a_sector_boundary_touches_both() {
    assert_eq!(measure(&[30], 4).sectors, 2);
    assert_eq!(measure(&[28], 4).sectors, 1);
    assert_eq!(measure(&[0], 64).sectors, 2);
    assert_eq!(measure(&[1], 64).sectors, 3);
}

#[test]
fn overlapping_wide_accesses_merge() {
    // Lane spans [0, 40) and [20, 100): sectors 0..=3 once each.
    assert_eq!(measure(&[0, 20], 80).sectors, 4);
    assert_eq!(measure(&[0, 20], 80).useful_bytes, 100);
    // Disjoint runs with a gap between them are counted separately.
    assert_eq!(measure(&[0, 200], 40).sectors, 2 + 2);
}

#[test]
fn nothing_touched_costs_nothing() {
    assert_eq!(measure(&[], 4).sectors, 0);
    assert_eq!(measure(&[0, 64], 0).sectors, 0);
    let empty = measure(&[], 16);
    assert_eq!(empty.fetched_bytes(), 0);
    assert_eq!(empty.efficiency(), 1.0);
}

#[test]
fn accesses_at_the_top_of_the_address_space_do_not_overflow() {
    assert_eq!(measure(&[u64::MAX], 1).sectors, 1);
    assert_eq!(measure(&[u64::MAX - 3], 4).sectors, 1);
    // Runs past the end: counted up to the last sector there is.
    assert_eq!(measure(&[u64::MAX - 40], 1000).sectors, 2);
    assert_eq!(measure(&[u64::MAX - 3], 8).useful_bytes, 4);
    assert_eq!(
        measure(&[u64::MAX, 0], u64::MAX).sectors,
        u64::MAX / SECTOR_BYTES + 1
    );
}

#[test]
fn the_model_matches_a_byte_by_byte_count() {
    // Brute force: mark every touched sector in a table, for many patterns.
    for base in [0u64, 1, 4, 7, 16, 30, 100, 256] {
        for stride in [0u64, 1, 2, 4, 8, 12, 16, 24, 33, 64] {
            for width in [1u64, 2, 4, 8, 12, 16, 40] {
                let lanes = warp(base, stride);
                // The widest pattern ends below 256 + 31 * 64 + 40 < 4096.
                let mut touched = [false; 4096 / 32];
                let mut bytes = [false; 4096];
                for &address in &lanes {
                    for byte in address..address + width {
                        touched[(byte / 32) as usize] = true;
                        bytes[byte as usize] = true;
                    }
                }
                let expected_sectors = touched.iter().filter(|&&t| t).count() as u64;
                let expected_bytes = bytes.iter().filter(|&&t| t).count() as u64;
                assert_eq!(
                    measure(&lanes, width).sectors,
                    expected_sectors,
                    "{base} {stride} {width}"
                );
                assert_eq!(
                    measure(&lanes, width).useful_bytes,
                    expected_bytes,
                    "{base} {stride} {width}"
                );
                let pattern = WarpAccess::strided(base, stride, width);
                assert_eq!(pattern.measure().sectors, expected_sectors);
            }
        }
    }
}

#[test]
fn partial_warps_count_only_their_lanes() {
    let half = WarpAccess {
        lanes: 16,
        ..WarpAccess::contiguous(0, 4)
    };
    assert_eq!(half.measure().sectors, 2);
    let too_many = WarpAccess {
        lanes: 1000,
        ..WarpAccess::contiguous(0, 4)
    };
    assert_eq!(too_many.measure().sectors, 4);
}

#[test]
fn wider_words_need_more_sectors_for_the_same_efficiency() {
    for (width, expected) in [(1u64, 1u64), (2, 2), (4, 4), (8, 8), (16, 16)] {
        let access = WarpAccess::contiguous(0, width);
        assert_eq!(access.measure().sectors, expected, "width {width}");
        assert_eq!(access.measure().efficiency(), 1.0);
    }
    // float4 shifted by 16 bytes: one extra sector of 17.
    assert_eq!(WarpAccess::contiguous(16, 16).measure().sectors, 17);
}

#[test]
fn reading_one_field_of_an_array_of_structs_wastes_the_rest() {
    let layout = &<float4 as GpuAligned>::LAYOUT;
    let x = layout.field("x").expect("float4 has x");
    let w = layout.field("w").expect("float4 has w");
    let x_only = WarpAccess::field_of(0, layout, x);
    assert_eq!(x_only.measure().sectors, 16);
    assert_eq!(x_only.measure().efficiency(), 0.25);
    // The same for the last lane, shifted by its offset.
    assert_eq!(WarpAccess::field_of(0, layout, w).addresses()[1], 16 + 12);
    assert_eq!(WarpAccess::field_of(0, layout, w).measure().sectors, 16);
}

#[test]
fn element_facts_of_a_word_sized_vector() {
    let facts = ElementFacts::of(&<float4 as GpuAligned>::LAYOUT);
    assert_eq!(facts.size, 16);
    assert_eq!(facts.data_bytes, 16);
    assert_eq!(facts.padding_bytes, 0);
    assert!(facts.one_word);
    assert_eq!(facts.loads_field_by_field, 4);
    assert_eq!(facts.useful_ratio(), 1.0);
    assert_eq!(facts.padding_overhead(), 0.0);
    let warp = facts.warp_of_elements();
    assert_eq!(warp.sectors, 16);
    assert_eq!(warp.efficiency(), 1.0);

    let pair = ElementFacts::of(&<uchar2 as GpuAligned>::LAYOUT);
    assert_eq!((pair.size, pair.loads_field_by_field), (2, 2));
    assert_eq!(pair.warp_of_elements().sectors, 2);
}

#[test]
fn element_facts_of_a_scalar_treat_it_as_one_value() {
    let facts = ElementFacts::of(&<f64 as GpuAligned>::LAYOUT);
    assert_eq!(
        (facts.size, facts.data_bytes, facts.padding_bytes),
        (8, 8, 0)
    );
    assert_eq!(facts.loads_field_by_field, 1);
    assert!(facts.one_word);
}
