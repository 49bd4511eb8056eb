//! Generic structs: the shapes that have no padding for any type argument
//! (`repr(transparent)` over `T`, `repr(C)` over `T`s and arrays of `T`)
//! are accepted, and each instantiation is checked where its `LAYOUT` is
//! needed. The refused shapes and instantiations are ui-tests.

use core::marker::PhantomData;

use gpu_aligned::arena::Arena;
use gpu_aligned::header::{CudaHeader, HeaderError};
use gpu_aligned::vector::float2;
use gpu_aligned::{GpuAligned, GpuData, GpuType};

#[derive(Clone, Copy, Debug, PartialEq, GpuAligned)]
#[repr(transparent)]
struct Meters<T>(T);

#[derive(Clone, Copy, Debug, PartialEq, GpuAligned)]
#[repr(C)]
struct Pair<T> {
    a: T,
    b: T,
}

#[derive(Clone, Copy, Debug, PartialEq, GpuAligned)]
#[repr(C)]
struct Quad<T> {
    head: T,
    rest: [T; 3],
}

/// A unit tag that occupies no bytes: `Tagged<f32, Kelvin>`.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Kelvin;

#[derive(Clone, Copy, Debug, PartialEq, GpuAligned)]
#[repr(transparent)]
struct Tagged<T, Unit> {
    value: T,
    unit: PhantomData<Unit>,
}

#[test]
fn each_instantiation_has_its_own_layout() {
    assert_eq!(
        (Meters::<u32>::LAYOUT.size, Meters::<u32>::LAYOUT.align),
        (4, 4)
    );
    assert_eq!(
        (Meters::<f64>::LAYOUT.size, Meters::<f64>::LAYOUT.align),
        (8, 8)
    );
    assert_eq!(Meters::<float2>::LAYOUT.fields[0].ty, float2::TYPE);
    let tagged = Tagged::<f32, Kelvin>::LAYOUT;
    assert_eq!(
        (tagged.name, tagged.size, tagged.fields.len()),
        ("Tagged", 4, 1)
    );
}

/// A struct of two or more `T`s is `n * size_of::<T>()` bytes aligned to
/// `T`: never an element (that is a ui-test), always a field.
#[test]
fn a_struct_of_several_ts_is_a_field_for_every_t() {
    let GpuType::Struct(pair) = <Pair<f32> as GpuData>::TYPE else {
        panic!("a struct")
    };
    assert_eq!((pair.name, pair.size, pair.align), ("Pair", 8, 4));
    let offsets: Vec<(&str, usize)> = pair.fields.iter().map(|f| (f.name, f.offset)).collect();
    assert_eq!(offsets, [("a", 0), ("b", 4)]);
    let GpuType::Struct(quad) = <Quad<u16> as GpuData>::TYPE else {
        panic!("a struct")
    };
    assert_eq!(
        (quad.size, quad.fields[1].offset, quad.fields[1].size),
        (8, 2, 6)
    );
    assert_eq!(Wrapped::LAYOUT.size, 8);
}

/// The fix the refused `Pair<f32>` names: a concrete wrapper.
#[derive(Clone, Copy, Debug, PartialEq, GpuAligned)]
#[repr(C, align(8))]
struct Wrapped(Pair<f32>);

#[test]
fn a_generic_struct_nests_and_casts_like_any_other() {
    // A field of a generic type is any padding-free `GpuData`, word-sized
    // or not: `Pair<[u8; 3]>` is no element, but a fine field.
    assert_eq!(<Pair<[u8; 3]> as GpuData>::TYPE.size(), 6);
    let GpuType::Struct(inner) = <Pair<float2> as GpuData>::TYPE else {
        panic!("a struct")
    };
    assert_eq!(inner.size, 16);
    let pair = Pair { a: 1u32, b: 2 };
    let bytes: &[u8] = bytemuck::bytes_of(&pair);
    assert_eq!(bytes.len(), 8);
    assert_eq!(bytemuck::pod_read_unaligned::<Pair<u32>>(bytes), pair);
    let zero: Tagged<f32, Kelvin> = bytemuck::Zeroable::zeroed();
    assert_eq!(zero.value, 0.0);
}

#[test]
fn instantiations_go_into_an_arena() -> Result<(), Box<dyn std::error::Error>> {
    let mut arena = Arena::host(4096)?;
    let pairs = arena.alloc_from(&[
        Wrapped(Pair { a: 1.0, b: 2.0 }),
        Wrapped(Pair { a: 3.0, b: 4.0 }),
    ])?;
    assert_eq!(arena.to_vec(&pairs)?[1], Wrapped(Pair { a: 3.0, b: 4.0 }));
    let meters = arena.alloc_zeros::<Meters<u64>>(3)?;
    assert_eq!(arena.to_vec(&meters)?, [Meters(0); 3]);
    Ok(())
}

#[test]
fn instantiations_go_into_a_header() -> Result<(), Box<dyn std::error::Error>> {
    let mut header = CudaHeader::new();
    header.add::<Meters<f32>>()?;
    assert!(header.to_string().contains("Meters {"), "{header}");
    Ok(())
}

/// The header names each instantiation as the user says, alone and inside
/// another struct, with its checks.
#[test]
fn the_header_declares_each_instantiation_under_the_name_given() -> Result<(), HeaderError> {
    let mut header = CudaHeader::new();
    header
        .name::<Pair<f32>>("PairF32")?
        .name::<Pair<u16>>("PairU16")?
        .name::<Meters<u32>>("MetersU32")?;
    header
        .add::<Wrapped>()?
        .add::<Meters<u32>>()?
        .add_data::<Pair<u16>>()?;
    let text = header.render();
    for expected in [
        "struct __align__(4) PairF32 {\n    float a;\n    float b;\n};",
        "static_assert(sizeof(PairF32) == 8,",
        "static_assert(GPU_ALIGNED_OFFSETOF(PairF32, b) == 4,",
        "struct __align__(8) Wrapped {\n    PairF32 _0;\n};",
        "struct __align__(2) PairU16 {\n    uint16_t a;\n    uint16_t b;\n};",
        "MetersU32 gpu_load(const MetersU32* p)",
    ] {
        assert!(text.contains(expected), "{expected:?} not in\n{text}");
    }
    assert!(!text.contains("struct __align__(4) Pair {"), "{text}");
    let names: Vec<&str> = header.type_names().collect();
    assert_eq!(names, ["PairF32", "Wrapped", "MetersU32", "PairU16"]);
    Ok(())
}

#[test]
fn two_instantiations_under_one_name_are_refused() {
    let mut header = CudaHeader::new();
    assert!(header.add_data::<Pair<f32>>().is_ok());
    // Declared as `Pair` already: a second `Pair` clashes, and so does
    // naming the first one now.
    let clash = Err(HeaderError::NameClash { name: "Pair" });
    assert_eq!(header.add_data::<Pair<u32>>().map(|_| ()), clash);
    assert_eq!(header.name::<Pair<f32>>("PairF32").map(|_| ()), clash);
    let mut header = CudaHeader::new();
    assert!(header.name::<Pair<f32>>("Twin").is_ok());
    assert_eq!(
        header.name::<Pair<u32>>("Twin").map(|_| ()),
        Err(HeaderError::NameClash { name: "Twin" })
    );
    assert_eq!(
        header.name::<f32>("Float").map(|_| ()),
        Err(HeaderError::NotAStruct { name: "Float" })
    );
}
