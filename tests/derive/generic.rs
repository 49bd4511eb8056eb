//! Generic structs: the shapes that have no padding for any type argument
//! (`repr(transparent)` over `T`, `repr(C)` over `T`s and arrays of `T`)
//! are accepted, and each instantiation is checked where its `LAYOUT` is
//! needed. The refused shapes and instantiations are ui-tests.

use core::marker::PhantomData;

use gpu_aligned::arena::Arena;
use gpu_aligned::header::CudaHeader;
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
