//! `GpuLayout::padding` counts every byte of an element that carries no
//! data, the padding nested inside its fields included, and the facts built
//! on it (`data_bytes`, `ElementFacts`, the layout report) agree.

use gpu_aligned::coalesce::ElementFacts;
use gpu_aligned::report::LayoutReport;
use gpu_aligned::vector::{float3_16_t, float4};
use gpu_aligned::GpuAligned;

#[derive(Clone, Copy, GpuAligned)]
#[repr(C)]
struct Wrap {
    v: float3_16_t,
}

#[derive(Clone, Copy, GpuAligned)]
#[repr(transparent)]
struct Newtype(float3_16_t);

#[gpu_aligned::padded]
#[derive(Clone, Copy)]
struct PaddedAroundPadded {
    v: float3_16_t,
}

#[derive(Clone, Copy, GpuAligned)]
#[repr(C, align(8))]
struct TwoOfPadded {
    pair: [Tagged; 2],
}

#[gpu_aligned::padded]
#[derive(Clone, Copy)]
struct Tagged {
    tag: u8,
    value: u16,
}

fn padding_facts<T: GpuAligned>() -> (usize, usize, u64, u64) {
    let facts = ElementFacts::of(&T::LAYOUT);
    (
        T::LAYOUT.padding,
        T::LAYOUT.data_bytes(),
        facts.padding_bytes,
        facts.data_bytes,
    )
}

#[test]
fn a_struct_wrapping_a_padded_vector_counts_its_pad_bytes() {
    assert_eq!(padding_facts::<float3_16_t>(), (4, 12, 4, 12));
    assert_eq!(padding_facts::<Wrap>(), (4, 12, 4, 12));
}

#[test]
fn a_transparent_newtype_counts_the_pad_bytes_of_its_field() {
    assert_eq!(padding_facts::<Newtype>(), (4, 12, 4, 12));
}

#[test]
fn a_padded_type_around_a_padded_type_counts_both_levels() {
    assert_eq!(padding_facts::<PaddedAroundPadded>(), (4, 12, 4, 12));
}

#[test]
fn arrays_multiply_the_nested_padding() {
    // `Tagged` is u8, one pad byte, u16: 1 pad byte in 4.
    assert_eq!(padding_facts::<Tagged>(), (1, 3, 1, 3));
    assert_eq!(padding_facts::<TwoOfPadded>(), (2, 6, 2, 6));
}

#[test]
fn words_without_padding_report_none() {
    assert_eq!(padding_facts::<float4>(), (0, 16, 0, 16));
}

#[test]
fn the_report_of_a_wrapper_says_a_quarter_is_padding() {
    let text = LayoutReport::of::<Wrap>().to_string();
    assert!(
        text.contains("12 data bytes, 4 padding bytes: 75% of each element is data"),
        "{text}"
    );
    assert!(!text.contains("100% of each element is data"), "{text}");
    // The loads it counts and the bytes it calls data describe the same
    // three floats.
    assert!(text.contains("1 as one word, 3 field by field"), "{text}");
}
