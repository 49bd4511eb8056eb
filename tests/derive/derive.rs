//! Every shape `#[derive(GpuAligned)]` accepts, with the layout facts the
//! compiler computed for it, offsets included.

use gpu_aligned::vector::{char2, float2, float3, float4, short2};
use gpu_aligned::{GpuAligned, GpuData, GpuType, Scalar};

#[derive(Clone, Copy, GpuAligned)]
#[repr(C)]
struct OneByte {
    value: u8,
}

#[derive(Clone, Copy, GpuAligned)]
#[repr(C, align(2))]
struct TwoBytes {
    lo: u8,
    hi: i8,
}

#[derive(Clone, Copy, GpuAligned)]
#[repr(C, align(4))]
struct Rgba8 {
    r: u8,
    g: u8,
    b: u8,
    a: u8,
}

#[derive(Clone, Copy, GpuAligned)]
#[repr(C, align(8))]
struct Vec2 {
    x: f32,
    y: f32,
}

#[derive(Clone, Copy, GpuAligned)]
#[repr(C, align(16))]
struct Particle {
    position: float3,
    mass: f32,
}

#[derive(Clone, Copy, GpuAligned)]
#[repr(C, align(16))]
struct PointAndIndex {
    point: [f32; 2],
    index: u64,
}

#[derive(Clone, Copy, GpuAligned)]
#[repr(C)]
struct Wide {
    value: f64,
}

#[derive(Clone, Copy, GpuAligned)]
#[repr(C)]
struct OneVector {
    xyzw: float4,
}

#[derive(Clone, Copy, GpuAligned)]
#[repr(C, align(8))]
struct Mixed {
    a: u16,
    b: u16,
    c: short2,
}

#[derive(Clone, Copy, GpuAligned)]
#[repr(C, align(4))]
struct Tuple(u16, char2);

#[derive(Clone, Copy, GpuAligned)]
#[repr(transparent)]
struct Meters(f32);

#[derive(Clone, Copy, GpuAligned)]
#[repr(transparent)]
struct Wrapped {
    inner: Vec2,
}

#[derive(Clone, Copy, GpuAligned)]
#[repr(C, align(16))]
struct Nested {
    first: Vec2,
    second: float2,
}

#[derive(Clone, Copy, GpuAligned)]
#[repr(C, align(16))]
struct ExplicitPad {
    x: f32,
    #[gpu_aligned(padding)]
    _pad: u32,
    y: f64,
}

#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
#[derive(Clone, Copy, GpuAligned)]
#[repr(C)]
struct Big {
    value: u128,
}

#[derive(Clone, Copy, GpuAligned)]
#[repr(C, align(4))]
struct WithZeroSized {
    a: u16,
    nothing: [u16; 0],
    b: u16,
}

fn offsets<T: GpuAligned>() -> Vec<(&'static str, usize, usize)> {
    T::LAYOUT
        .fields
        .iter()
        .map(|f| (f.name, f.offset, f.size))
        .collect()
}

fn size_align_padding<T: GpuAligned>() -> (usize, usize, usize) {
    (T::LAYOUT.size, T::LAYOUT.align, T::LAYOUT.padding)
}

#[test]
fn word_sizes_from_one_to_sixteen_bytes_are_accepted() {
    assert_eq!(size_align_padding::<OneByte>(), (1, 1, 0));
    assert_eq!(size_align_padding::<TwoBytes>(), (2, 2, 0));
    assert_eq!(size_align_padding::<Rgba8>(), (4, 4, 0));
    assert_eq!(size_align_padding::<Vec2>(), (8, 8, 0));
    assert_eq!(size_align_padding::<Wide>(), (8, 8, 0));
    assert_eq!(size_align_padding::<Particle>(), (16, 16, 0));
    assert_eq!(size_align_padding::<OneVector>(), (16, 16, 0));
}

#[test]
fn layout_lists_fields_at_their_offsets() {
    assert_eq!(
        offsets::<Rgba8>(),
        [("r", 0, 1), ("g", 1, 1), ("b", 2, 1), ("a", 3, 1)]
    );
    assert_eq!(
        offsets::<Particle>(),
        [("position", 0, 12), ("mass", 12, 4)]
    );
    assert_eq!(
        offsets::<PointAndIndex>(),
        [("point", 0, 8), ("index", 8, 8)]
    );
    assert_eq!(offsets::<Mixed>(), [("a", 0, 2), ("b", 2, 2), ("c", 4, 4)]);
    assert_eq!(offsets::<Nested>(), [("first", 0, 8), ("second", 8, 8)]);
}

#[test]
fn tuple_struct_fields_are_named_by_index() {
    assert_eq!(size_align_padding::<Tuple>(), (4, 4, 0));
    assert_eq!(offsets::<Tuple>(), [("0", 0, 2), ("1", 2, 2)]);
}

#[test]
fn transparent_wrappers_take_their_field_layout() {
    assert_eq!(size_align_padding::<Meters>(), (4, 4, 0));
    assert_eq!(offsets::<Meters>(), [("0", 0, 4)]);
    assert_eq!(size_align_padding::<Wrapped>(), (8, 8, 0));
}

#[test]
fn explicit_pad_fields_are_counted_as_padding() {
    assert_eq!(size_align_padding::<ExplicitPad>(), (16, 16, 4));
    let pad = ExplicitPad::LAYOUT.field("_pad").expect("pad field listed");
    assert!(pad.is_padding);
    assert_eq!((pad.offset, pad.size), (4, 4));
    assert!(!ExplicitPad::LAYOUT.field("y").expect("y listed").is_padding);
    assert_eq!(ExplicitPad::LAYOUT.data_bytes(), 12);
}

#[test]
fn zero_sized_fields_are_left_out_of_the_layout() {
    assert_eq!(size_align_padding::<WithZeroSized>(), (4, 4, 0));
    assert_eq!(offsets::<WithZeroSized>(), [("a", 0, 2), ("b", 2, 2)]);
}

#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
#[test]
fn sixteen_byte_integers_are_words_where_aligned_to_sixteen() {
    assert_eq!(size_align_padding::<Big>(), (16, 16, 0));
    assert_eq!(Big::LAYOUT.fields[0].ty, GpuType::Scalar(Scalar::U128));
}

#[test]
fn field_types_are_recorded() {
    let fields = Particle::LAYOUT.fields;
    assert_eq!(fields[0].ty, <float3 as GpuData>::TYPE);
    assert_eq!(fields[1].ty, GpuType::Scalar(Scalar::F32));
    assert_eq!(Nested::LAYOUT.fields[0].ty, GpuType::Struct(&Vec2::LAYOUT));
    match PointAndIndex::LAYOUT.fields[0].ty {
        GpuType::Array { elem, len } => {
            assert_eq!((*elem, len), (GpuType::Scalar(Scalar::F32), 2));
        }
        other => panic!("expected an array, got {other:?}"),
    }
}

#[test]
fn derived_types_are_gpu_data_structs() {
    assert_eq!(
        <Particle as GpuData>::TYPE,
        GpuType::Struct(&Particle::LAYOUT)
    );
    assert_eq!(<Particle as GpuData>::TYPE.size(), 16);
    assert!(Particle::LAYOUT.is_one_word());
    assert_eq!(Particle::LAYOUT.name, "Particle");
}

#[test]
fn layout_is_usable_in_const_context() {
    const SIZE: usize = Particle::LAYOUT.size;
    const FIRST_FIELD_OFFSET: usize = Particle::LAYOUT.fields[1].offset;
    let buffer = [0u8; SIZE];
    assert_eq!(buffer.len(), 16);
    assert_eq!(FIRST_FIELD_OFFSET, 12);
}

#[test]
fn derived_types_cast_with_bytemuck() {
    let particles = [
        Particle {
            position: float3::new(1.0, 2.0, 3.0),
            mass: 4.0,
        },
        Particle {
            position: float3::new(5.0, 6.0, 7.0),
            mass: 8.0,
        },
    ];
    let floats: &[f32] = bytemuck::cast_slice(&particles);
    assert_eq!(floats, [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]);
    let back: &[Particle] = bytemuck::cast_slice(floats);
    assert_eq!(back[1].mass, 8.0);
    let zero: Rgba8 = bytemuck::Zeroable::zeroed();
    assert_eq!([zero.r, zero.g, zero.b, zero.a], [0; 4]);
}

/// `r#repr` is `repr` to rustc, so it is to the derive.
#[derive(Clone, Copy, GpuAligned)]
#[r#repr(C)]
struct RawRepr {
    a: u32,
}

#[test]
fn a_raw_repr_c_alone_is_accepted() {
    assert_eq!(RawRepr::LAYOUT.size, 4);
    assert!(RawRepr::LAYOUT.is_one_word());
}
