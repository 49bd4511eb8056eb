//! `#[gpu_aligned::padded]`: the classic results from the CUDA alignment
//! guide, the explicit pad fields, and that pad bytes are zero on upload.

use gpu_aligned::vector::{float3, short3};
use gpu_aligned::GpuAligned;

#[gpu_aligned::padded]
#[derive(Clone, Copy, Debug, PartialEq)]
struct Float3 {
    x: f32,
    y: f32,
    z: f32,
}

#[gpu_aligned::padded]
#[derive(Clone, Copy, Debug, PartialEq)]
struct Int8x3 {
    x: i8,
    y: i8,
    z: i8,
}

#[gpu_aligned::padded]
#[derive(Clone, Copy, Debug, PartialEq)]
struct ByteThenWord {
    tag: u8,
    value: u32,
}

#[gpu_aligned::padded]
#[derive(Clone, Copy, Debug, PartialEq)]
struct FloatThenDouble {
    x: f32,
    y: f64,
}

#[gpu_aligned::padded]
#[derive(Clone, Copy, Debug, PartialEq)]
struct FromVector {
    position: float3,
}

#[gpu_aligned::padded]
#[derive(Clone, Copy, Debug, PartialEq)]
struct ShortsThenByte {
    normal: short3,
    flags: u8,
}

#[gpu_aligned::padded]
#[derive(Clone, Copy, Debug, PartialEq)]
struct AlreadyAWord {
    x: f32,
    y: f32,
}

#[gpu_aligned::padded]
#[derive(Clone, Copy, Debug, PartialEq)]
struct OneByte {
    value: u8,
}

#[gpu_aligned::padded(align = 16)]
#[derive(Clone, Copy, Debug, PartialEq)]
struct ForcedWide {
    x: f32,
}

#[gpu_aligned::padded]
#[derive(Clone, Copy, Debug, PartialEq)]
struct OfPadded {
    inner: Int8x3,
    weight: f32,
}

/// Documented fields survive the rewrite.
#[gpu_aligned::padded]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Public {
    /// A public field stays public.
    pub value: u16,
    /// So does its documentation.
    pub flag: u8,
}

fn size_align_padding<T: GpuAligned>() -> (usize, usize, usize) {
    (T::LAYOUT.size, T::LAYOUT.align, T::LAYOUT.padding)
}

/// `(name, offset, size, is_padding)` of every field with a size.
fn fields<T: GpuAligned>() -> Vec<(&'static str, usize, usize, bool)> {
    T::LAYOUT
        .fields
        .iter()
        .map(|f| (f.name, f.offset, f.size, f.is_padding))
        .collect()
}

#[test]
fn float3_becomes_float3_16_t() {
    assert_eq!(size_align_padding::<Float3>(), (16, 16, 4));
    assert_eq!(
        fields::<Float3>(),
        [
            ("x", 0, 4, false),
            ("y", 4, 4, false),
            ("z", 8, 4, false),
            ("__pad_tail", 12, 4, true)
        ]
    );
    assert_eq!(core::mem::size_of::<Float3>(), 16);
    assert_eq!(core::mem::align_of::<Float3>(), 16);
}

#[test]
fn int8x3_becomes_int8_3_4_t() {
    assert_eq!(size_align_padding::<Int8x3>(), (4, 4, 1));
    assert_eq!(fields::<Int8x3>().last(), Some(&("__pad_tail", 3, 1, true)));
}

#[test]
fn interior_hole_becomes_an_explicit_field() {
    assert_eq!(size_align_padding::<ByteThenWord>(), (8, 8, 3));
    assert_eq!(
        fields::<ByteThenWord>(),
        [
            ("tag", 0, 1, false),
            ("__pad_before_value", 1, 3, true),
            ("value", 4, 4, false)
        ]
    );
}

#[test]
fn holes_inside_and_at_the_end_are_both_filled() {
    assert_eq!(size_align_padding::<FloatThenDouble>(), (16, 16, 4));
    assert_eq!(
        FloatThenDouble::LAYOUT
            .field("__pad_before_y")
            .map(|f| f.size),
        Some(4)
    );
    assert_eq!(
        FloatThenDouble::LAYOUT.field("y").map(|f| f.offset),
        Some(8)
    );
    assert_eq!(FloatThenDouble::LAYOUT.field("__pad_tail"), None);
    assert_eq!(FloatThenDouble::LAYOUT.implicit_padding(), 0);
}

#[test]
fn vector_fields_are_sized_by_the_compiler() {
    assert_eq!(size_align_padding::<FromVector>(), (16, 16, 4));
    assert_eq!(size_align_padding::<ShortsThenByte>(), (8, 8, 1));
    assert_eq!(fields::<ShortsThenByte>()[1], ("flags", 6, 1, false));
}

#[test]
fn word_sized_structs_get_only_their_alignment_raised() {
    assert_eq!(size_align_padding::<AlreadyAWord>(), (8, 8, 0));
    assert_eq!(size_align_padding::<OneByte>(), (1, 1, 0));
    assert_eq!(fields::<AlreadyAWord>().len(), 2);
}

#[test]
fn forced_width_pads_to_it() {
    assert_eq!(size_align_padding::<ForcedWide>(), (16, 16, 12));
}

#[test]
fn padded_types_nest() {
    // The 1 pad byte of `Int8x3` counts: padding includes nested padding.
    assert_eq!(size_align_padding::<OfPadded>(), (8, 8, 1));
    assert_eq!(
        fields::<OfPadded>(),
        [("inner", 0, 4, false), ("weight", 4, 4, false)]
    );
}

#[test]
fn public_fields_stay_public() {
    let value = Public {
        value: 7,
        ..Public::new(0, 1)
    };
    assert_eq!((value.value, value.flag), (7, 1));
    assert_eq!(size_align_padding::<Public>(), (4, 4, 1));
}

#[test]
fn new_takes_the_real_fields_in_order_and_zeroes_padding() {
    let v = Float3::new(1.0, 2.0, 3.0);
    assert_eq!((v.x, v.y, v.z), (1.0, 2.0, 3.0));
    let bytes: &[u8] = bytemuck::bytes_of(&v);
    assert_eq!(&bytes[12..], [0; 4]);
}

#[test]
fn new_is_const() {
    const ORIGIN: Float3 = Float3::new(0.0, 0.0, 0.0);
    assert_eq!(ORIGIN, Float3::default());
}

#[test]
fn default_is_all_zero_bytes() {
    let value = FloatThenDouble::default();
    assert!(bytemuck::bytes_of(&value).iter().all(|&b| b == 0));
    assert_eq!((value.x, value.y), (0.0, 0.0));
}

#[test]
fn cast_slice_round_trips_with_zero_pad_bytes() {
    let items: Vec<ByteThenWord> = (0..64u32)
        .map(|i| ByteThenWord::new(i as u8 | 0x80, i.wrapping_mul(0x9e37_79b9)))
        .collect();
    let bytes: &[u8] = bytemuck::cast_slice(&items);
    assert_eq!(bytes.len(), 64 * 8);
    for (i, element) in bytes.chunks_exact(8).enumerate() {
        assert_eq!(element[0], i as u8 | 0x80);
        assert_eq!(&element[1..4], [0, 0, 0], "pad bytes of element {i}");
        assert_eq!(
            u32::from_ne_bytes(element[4..8].try_into().unwrap()),
            (i as u32).wrapping_mul(0x9e37_79b9)
        );
    }
    let back: &[ByteThenWord] = bytemuck::cast_slice(bytes);
    assert_eq!(back, &items[..]);

    let floats = [Float3::new(1.0, 2.0, 3.0), Float3::new(4.0, 5.0, 6.0)];
    let words: &[u32] = bytemuck::cast_slice(&floats);
    assert_eq!(words[3], 0);
    assert_eq!(words[7], 0);
    assert_eq!(f32::from_bits(words[4]), 4.0);
    let back: &[Float3] = bytemuck::cast_slice(words);
    assert_eq!(back, floats);
}

mod names_in_scope {
    // A constant and a unit struct named like the fields below: as parameter
    // patterns of `new`, these names would match against them instead of
    // binding.
    #[allow(non_upper_case_globals)]
    const value: u32 = 7;
    #[allow(non_camel_case_types)]
    #[derive(Clone, Copy)]
    struct tag;

    #[gpu_aligned::padded]
    #[derive(Clone, Copy, Debug, PartialEq)]
    struct NamedLikeConstants {
        tag: u8,
        value: u32,
    }

    #[test]
    fn new_takes_fields_named_like_items_in_scope() {
        let _ = tag;
        let made = NamedLikeConstants::new(1, 2);
        assert_eq!((made.tag, made.value), (1, 2));
        assert_eq!(value, 7);
    }
}

#[gpu_aligned::padded(align = 16u8)]
#[derive(Clone, Copy, Debug, PartialEq)]
struct SuffixedAlign {
    x: f32,
}

#[test]
fn a_suffixed_forced_alignment_means_the_same_number() {
    assert_eq!(size_align_padding::<SuffixedAlign>(), (16, 16, 12));
}

/// A padded type users compare, hash and order: the derives that would read
/// the pad fields are written by `padded` over the real fields only.
#[gpu_aligned::padded]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Keyed {
    /// The key.
    pub key: u8,
    /// The payload.
    pub payload: u32,
}

/// `value` with its pad bytes set to `byte`, as safe code can through `Pod`
/// (or a kernel writing whole words).
fn with_pads<T: GpuAligned>(mut value: T, byte: u8) -> T {
    let layout = T::LAYOUT;
    let bytes = bytemuck::bytes_of_mut(&mut value);
    for pad in layout.fields.iter().filter(|field| field.is_padding) {
        bytes[pad.offset..pad.offset + pad.size].fill(byte);
    }
    value
}

#[test]
fn debug_shows_the_fields_and_not_the_pads() {
    assert_eq!(
        format!("{:?}", ByteThenWord::new(1, 2)),
        "ByteThenWord { tag: 1, value: 2 }"
    );
    assert_eq!(
        format!("{:?}", Float3::new(1.0, 2.0, 3.0)),
        "Float3 { x: 1.0, y: 2.0, z: 3.0 }"
    );
}

#[test]
fn comparisons_and_hashes_ignore_pad_bytes_written_through_pod() {
    use std::collections::hash_map::DefaultHasher;
    use std::hash::{Hash, Hasher};
    let hash = |value: &Keyed| {
        let mut hasher = DefaultHasher::new();
        value.hash(&mut hasher);
        hasher.finish()
    };
    let clean = Keyed::new(3, 4);
    let dirty = with_pads(clean, 0xff);
    assert_ne!(bytemuck::bytes_of(&clean), bytemuck::bytes_of(&dirty));
    assert_eq!(clean, dirty);
    assert_eq!(hash(&clean), hash(&dirty));
    assert_eq!(clean.cmp(&dirty), std::cmp::Ordering::Equal);
    assert_eq!(clean.partial_cmp(&dirty), Some(std::cmp::Ordering::Equal));
    // Fields still order in declaration order.
    assert!(Keyed::new(1, 9) < Keyed::new(2, 0));
    assert!(Keyed::new(1, 1) < Keyed::new(1, 2));
    assert_ne!(Keyed::new(1, 1), Keyed::new(1, 2));
}

#[test]
fn a_struct_literal_of_the_fields_builds_one_with_zeroed_pads() {
    let made = Keyed::from(KeyedFields { key: 5, payload: 6 });
    assert_eq!((made.key, made.payload), (5, 6));
    assert!(bytemuck::bytes_of(&made)[1..4].iter().all(|&b| b == 0));
    // Struct-update syntax works on the plain struct, and it converts back.
    let moved = Keyed::from(KeyedFields {
        payload: 7,
        ..KeyedFields::from(made)
    });
    assert_eq!((moved.key, moved.payload), (5, 7));
    assert_eq!(Keyed::default(), Keyed::new(0, 0));
}

/// The `repr(C)` arithmetic `padded` sizes its pad fields and width with.
#[test]
fn padded_computations_follow_repr_c() {
    use gpu_aligned::__private::{pad_before, padded_width, repr_c_offset, repr_c_size, tail_pad};
    // { tag: u8, value: u32 }: 3 bytes before `value`, 8 bytes in all.
    let tagged = [(1, 1), (4, 4)];
    assert_eq!(pad_before(&tagged, 1), 3);
    assert_eq!(padded_width(&tagged), 8);
    assert_eq!(tail_pad(&tagged, 8), 0);
    assert_eq!(repr_c_size(&tagged, 1), (8, 4));
    assert_eq!(repr_c_offset(&tagged, 1), 4);
    // float3: 16 wide, 4 bytes of tail.
    let float3 = [(4, 4), (4, 4), (4, 4)];
    assert_eq!(padded_width(&float3), 16);
    assert_eq!(tail_pad(&float3, 16), 4);
    assert_eq!(repr_c_size(&float3, 16), (16, 16));
    // Above one word: capped, so the derive reports it as too large.
    assert_eq!(padded_width(&[(16, 16), (16, 16)]), 16);
}
