//! `gpu_aligned::rules`, the one statement of the layout rule, agrees with
//! what the derive accepts and rejects.

use gpu_aligned::rules::{self, Blame, Violation};
use gpu_aligned::vector::{float3_16_t, float4, int2};
use gpu_aligned::{GpuAligned, GpuField, GpuLayout, GpuType, Scalar};

const F32: GpuType = GpuType::Scalar(Scalar::F32);
const F64: GpuType = GpuType::Scalar(Scalar::F64);

#[test]
fn the_word_sizes_are_the_widths_of_cudas_loads() {
    assert_eq!(rules::WORD_SIZES, [1, 2, 4, 8, 16]);
    assert_eq!(rules::MAX_WORD, 16);
    assert!(rules::WORD_SIZES
        .iter()
        .all(|&size| rules::is_word_size(size)));
}

#[test]
fn every_derived_and_vector_element_is_legal() {
    for layout in [
        &float4::LAYOUT,
        &int2::LAYOUT,
        &float3_16_t::LAYOUT,
        &u8::LAYOUT,
        &f64::LAYOUT,
    ] {
        assert_eq!(layout.check(), Ok(()), "{}", layout.name);
        assert!(rules::is_legal(layout.size, layout.align, layout.size));
        assert!(layout.explain().as_str().is_empty());
        assert_eq!(layout.blame(), Blame::Nothing);
    }
}

#[test]
fn a_float_then_a_double_with_a_hole_lists_every_violation() {
    const FIELDS: [GpuField; 2] = [
        GpuField::new("x", 0, 4, 4, false, F32),
        GpuField::new("y", 8, 8, 8, false, F64),
    ];
    let layout = GpuLayout::new("Mixed", 16, 8, 0, &FIELDS);
    let found: Vec<Violation> = layout.violations().collect();
    assert_eq!(
        found,
        [
            Violation::Misaligned { size: 16, align: 8 },
            Violation::InteriorHole {
                field: "y",
                offset: 8,
                bytes: 4
            },
        ]
    );
    assert_eq!(layout.blame(), Blame::Field("y"));
    assert_eq!(found[0].rule(), "a GPU element is aligned to its size");
    let text = layout.explain();
    assert!(
        text.as_str()
            .starts_with("`Mixed` is 16 bytes but aligned to 8"),
        "{text}"
    );
    assert!(
        text.as_str()
            .contains("`Mixed` has 4 bytes of implicit padding before field `y` (offset 8)"),
        "{text}"
    );
}

#[test]
fn a_size_violation_is_reported_alone() {
    const FIELDS: [GpuField; 3] = [
        GpuField::new("x", 0, 4, 4, false, F32),
        GpuField::new("y", 4, 4, 4, false, F32),
        GpuField::new("z", 8, 4, 4, false, F32),
    ];
    let layout = GpuLayout::new("Float3", 12, 4, 0, &FIELDS);
    assert_eq!(
        layout.check(),
        Err(Violation::NotWordSized { size: 12, align: 4 })
    );
    assert_eq!(layout.blame(), Blame::Type);
    let text = layout.explain().to_string();
    assert_eq!(text.matches("`Float3`").count(), 1, "{text}");
    assert!(text.contains("round it up to 16 bytes"), "{text}");
}

#[test]
fn a_trailing_hole_blames_the_alignment() {
    const FIELDS: [GpuField; 1] = [GpuField::new("x", 0, 4, 4, false, F32)];
    let layout = GpuLayout::new("Wide", 8, 8, 0, &FIELDS);
    assert_eq!(
        layout.check(),
        Err(Violation::TrailingHole {
            size: 8,
            align: 8,
            bytes: 4
        })
    );
    assert_eq!(layout.blame(), Blame::Alignment);
    assert!(!layout.is_one_word());
}
