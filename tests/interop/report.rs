//! The layout report: what it shows for word-sized, padded, nested and
//! field-only types.

use crate::cuda_types::*;
use crate::{field, layout};
use gpu_aligned::coalesce::ElementFacts;
use gpu_aligned::report::LayoutReport;
use gpu_aligned::vector::float4;
use gpu_aligned::{GpuLayout, GpuType, Scalar};

fn report(layout: &GpuLayout) -> String {
    LayoutReport::new(layout).to_string()
}

#[test]
fn a_padded_element_shows_its_map_and_costs() {
    let text = report(&MIXED);
    assert!(
        text.starts_with("Mixed: 16 bytes, align 16: one GPU word, moved by one LDG.E.128"),
        "{text}"
    );
    assert!(text.contains("       0  aaaa ____ bbbb bbbb\n"), "{text}");
    assert!(
        text.contains("12 data bytes, 4 padding bytes: 75% of each element is data"),
        "{text}"
    );
    assert!(
        text.contains("moves 33.3% more bytes than the data alone"),
        "{text}"
    );
    assert!(
        text.contains("loads per element: 1 as one word, 2 field by field"),
        "{text}"
    );
    assert!(text.contains("a warp reading 32 consecutive elements: 16 sectors, 75% efficient"));
    assert!(
        text.contains("x  16 sectors, 25% efficient (4 sectors, 100% as its own array)"),
        "{text}"
    );
    assert!(
        text.contains("y  16 sectors, 50% efficient (8 sectors, 100% as its own array)"),
        "{text}"
    );
}

#[test]
fn the_padded_macro_output_reads_the_same_as_hand_padding() {
    let text = report(&FLOAT_THEN_DOUBLE);
    assert!(text.contains("       0  aaaa ____ bbbb bbbb\n"), "{text}");
    assert!(text.contains("__pad_before_y (padding)"), "{text}");
    assert!(text.contains("[u8; 4]"), "{text}");
    let position = report(&POSITION);
    assert!(
        position.contains("       0  aaaa aaaa aaaa ____\n"),
        "{position}"
    );
    assert!(
        position.contains("moves 33.3% more bytes than the data alone"),
        "{position}"
    );
}

#[test]
fn the_field_table_gives_offsets_and_both_spellings() {
    let text = report(&MIXED);
    let rows: Vec<&str> = text
        .lines()
        .filter(|l| l.trim_start().starts_with(['0', '4', '8']))
        .collect();
    assert_eq!(rows.len(), 4, "{text}"); // three fields and the byte map's row
    assert!(
        rows[0]
            .split_whitespace()
            .eq(["0", "4", "a", "x", "f32", "float"]),
        "{rows:?}"
    );
    assert!(
        rows[1]
            .split_whitespace()
            .eq(["4", "4", "_", "pad", "(padding)", "u32", "uint32_t"]),
        "{rows:?}"
    );
    assert!(
        rows[2]
            .split_whitespace()
            .eq(["8", "8", "b", "y", "f64", "double"]),
        "{rows:?}"
    );
}

#[test]
fn nested_arrays_and_vectors_are_spelled_for_both_languages() {
    let text = report(&GRID);
    assert!(text.contains("[[u16; 2]; 2]"), "{text}");
    assert!(text.contains("uint16_t[2][2]"), "{text}");
    assert!(text.contains("int2"), "{text}");
    assert!(text.contains("       0  aaaa aaaa bbbb bbbb\n"), "{text}");
    let pairs = report(&PAIRS);
    assert!(
        pairs.contains("[Pair; 2]") && pairs.contains("Pair[2]"),
        "{pairs}"
    );
}

#[test]
fn a_type_that_is_not_one_word_says_why() {
    let text = report(&FRAME);
    assert!(
        text.starts_with(
            "Frame: 40 bytes, align 8: not one GPU word (size 40 is not 1, 2, 4, 8 or 16, \
             align 8 differs from size)"
        ),
        "{text}"
    );
    assert!(
        text.contains("loads per element: 7 field by field"),
        "{text}"
    );
    assert!(!text.contains("as one word"), "{text}");
    // 40 bytes: three rows, the last one half full.
    assert!(text.contains("      32  cccc cccc\n"), "{text}");
}

#[test]
fn holes_are_marked_apart_from_padding() {
    const HOLEY: GpuLayout = layout(
        "Holey",
        16,
        8,
        0,
        &[
            field("a", 0, 4, 4, false, GpuType::Scalar(Scalar::U32)),
            field("b", 8, 4, 4, false, GpuType::Scalar(Scalar::F32)),
        ],
    );
    let text = report(&HOLEY);
    assert!(text.contains("aaaa .... bbbb ....\n"), "{text}");
    assert!(text.contains(". = hole nobody owns"), "{text}");
    assert!(text.contains("8 bytes of holes"), "{text}");
    assert!(
        text.contains("8 data bytes, 8 padding bytes: 50% of each element is data"),
        "{text}"
    );
}

#[test]
fn a_vector_element_reports_full_efficiency() {
    let text = LayoutReport::of::<float4>().to_string();
    assert!(
        text.starts_with("float4: 16 bytes, align 16: one GPU word"),
        "{text}"
    );
    assert!(text.contains("aaaa bbbb cccc dddd"), "{text}");
    assert!(text.contains("16 sectors, 100% efficient"), "{text}");
    assert!(
        text.contains("16 data bytes, 0 padding bytes: 100% of each element is data"),
        "{text}"
    );
    assert!(!text.contains("more bytes than the data alone"), "{text}");
}

#[test]
fn a_scalar_is_one_opaque_word() {
    let text = LayoutReport::of::<u16>().to_string();
    assert!(
        text.starts_with("u16: 2 bytes, align 2: one GPU word, moved by one LDG.E.U16"),
        "{text}"
    );
    assert!(!text.contains("byte map"), "{text}");
    assert!(text.contains("a warp reading 32 consecutive elements: 2 sectors, 100% efficient"));
}

#[test]
fn big_types_are_cut_short() {
    const BIG: GpuLayout = layout(
        "Big",
        1024,
        4,
        0,
        &[field(
            "v",
            0,
            1024,
            4,
            false,
            GpuType::Array {
                elem: &GpuType::Scalar(Scalar::F32),
                len: 256,
            },
        )],
    );
    let text = report(&BIG);
    assert_eq!(
        text.lines()
            .filter(|l| l.contains("aaaa aaaa aaaa aaaa"))
            .count(),
        16
    );
    assert!(text.contains("... 768 more bytes"), "{text}");
}

#[test]
fn more_fields_than_letters_still_map() {
    const FIELDS: [gpu_aligned::GpuField; 70] = {
        let mut fields = [field("f", 0, 1, 1, false, GpuType::Scalar(Scalar::U8)); 70];
        let mut i = 0;
        while i < 70 {
            fields[i] = field("f", i, 1, 1, false, GpuType::Scalar(Scalar::U8));
            i += 1;
        }
        fields
    };
    const MANY: GpuLayout = layout("Many", 70, 1, 0, &FIELDS);
    let text = report(&MANY);
    assert!(text.contains("abcd efgh ijkl mnop"), "{text}");
    assert!(text.contains("WXYZ 0123 4567 89**\n"), "{text}");
    assert!(text.contains("      64  **** **\n"), "{text}");
}

#[test]
fn the_report_uses_the_same_facts_as_the_model() {
    let facts = LayoutReport::new(&NESTED).facts();
    assert_eq!(facts, ElementFacts::of(&NESTED));
    // Pair's two fields plus one load for the float2.
    assert_eq!(facts.loads_field_by_field, 3);
    assert_eq!(ElementFacts::of(&GRID).loads_field_by_field, 4 + 1);
    assert_eq!(ElementFacts::of(&PAIRS).loads_field_by_field, 4);
    assert_eq!(ElementFacts::of(&MIXED).loads_field_by_field, 2);
    // float3 is three loads, double3 three more, plus m.
    assert_eq!(ElementFacts::of(&FRAME).loads_field_by_field, 7);
}
