//! Every shape `#[derive(GpuData)]` accepts: structs of any size without
//! holes, with the kind the compiler's layout gives them (an element, a
//! whole struct of 16-byte words, or other data), and `padded` above 16
//! bytes.

use core::marker::PhantomData;
use core::mem::{align_of, offset_of, size_of};
use gpu_aligned::vector::{float3, float4};
use gpu_aligned::{GpuAligned, GpuData, GpuType, GpuWords};

/// A by-value kernel parameter block: 144 bytes, aligned to 4.
#[derive(Clone, Copy, GpuData)]
#[repr(C)]
struct Camera {
    origin: float3,
    lower_left: float3,
    horizontal: float3,
    vertical: float3,
    basis: [float3; 3],
    lens_radius: f32,
    time: [f32; 2],
    size: [u32; 2],
    samples: u32,
    depth: u32,
    sky: [f32; 8],
}

/// 32 bytes, aligned to 16 by its fields: stored whole.
#[derive(Clone, Copy, Debug, PartialEq, GpuData)]
#[repr(C)]
struct Sphere {
    center_radius: float4,
    albedo: float4,
}

/// 48 bytes, aligned to 16 by its `repr`, with an explicit pad.
#[derive(Clone, Copy, GpuData)]
#[repr(C, align(16))]
struct Node {
    min: float3,
    left: u32,
    max: float3,
    right: u32,
    count: u32,
    #[gpu_aligned(padding)]
    pad: [u32; 3],
}

/// Aligned to 64: a whole struct too (each 16-byte word aligned).
#[derive(Clone, Copy, GpuData)]
#[repr(C, align(64))]
struct Line {
    words: [float4; 4],
}

/// 8 bytes aligned to 8: the compiler finds an element.
#[derive(Clone, Copy, GpuData)]
#[repr(C, align(8))]
struct Pair {
    a: f32,
    b: f32,
}

/// A tuple struct, and a struct holding other derived data.
#[derive(Clone, Copy, GpuData)]
#[repr(C)]
struct Frame(Camera, u32);

#[derive(Clone, Copy, GpuData)]
#[repr(C)]
struct Scene {
    camera: Camera,
    spheres: [Sphere; 2],
}

/// Generic, in the shapes `GpuAligned` accepts.
#[derive(Clone, Copy, GpuData)]
#[repr(C)]
struct Triple<T>([T; 3], PhantomData<T>);

#[gpu_aligned::padded]
#[derive(Clone, Copy, Debug, PartialEq)]
struct Ball {
    center_radius: float4,
    material: u32,
    roughness: f32,
}

fn is_stored<T: GpuWords>() -> usize {
    size_of::<T>()
}

fn is_element<T: GpuAligned>() -> usize {
    T::LAYOUT.size
}

fn layout_of<T: GpuData>() -> &'static gpu_aligned::GpuLayout {
    match &T::TYPE {
        GpuType::Struct(layout) => layout,
        other => panic!("not a struct: {other:?}"),
    }
}

#[test]
fn a_struct_over_16_bytes_is_gpu_data_with_the_compilers_layout() {
    let layout = layout_of::<Camera>();
    assert_eq!((layout.name, layout.size, layout.align), ("Camera", 144, 4));
    assert_eq!((size_of::<Camera>(), align_of::<Camera>()), (144, 4));
    for field in layout.fields {
        let offset = match field.name {
            "origin" => offset_of!(Camera, origin),
            "lower_left" => offset_of!(Camera, lower_left),
            "horizontal" => offset_of!(Camera, horizontal),
            "vertical" => offset_of!(Camera, vertical),
            "basis" => offset_of!(Camera, basis),
            "lens_radius" => offset_of!(Camera, lens_radius),
            "time" => offset_of!(Camera, time),
            "size" => offset_of!(Camera, size),
            "samples" => offset_of!(Camera, samples),
            "depth" => offset_of!(Camera, depth),
            "sky" => offset_of!(Camera, sky),
            other => panic!("unexpected field {other}"),
        };
        assert_eq!(field.offset, offset, "{}", field.name);
    }
    assert_eq!(layout.fields.len(), 11);
    assert_eq!((layout.padding, layout.implicit_padding()), (0, 0));
    let camera: Camera = gpu_aligned::bytemuck::Zeroable::zeroed();
    assert_eq!(gpu_aligned::bytemuck::bytes_of(&camera).len(), 144);
}

#[test]
fn a_struct_aligned_to_16_is_stored_whole() {
    assert_eq!(is_stored::<Sphere>(), 32);
    assert_eq!(is_stored::<Node>(), 48);
    assert_eq!(is_stored::<Line>(), 64);
    assert_eq!(layout_of::<Node>().padding, 12);
    assert_eq!(layout_of::<Line>().align, 64);
}

#[test]
fn a_struct_the_compiler_lays_out_as_an_element_is_one() {
    assert_eq!(is_element::<Pair>(), 8);
    assert_eq!(is_stored::<Pair>(), 8);
}

#[test]
fn nested_tuple_and_generic_data() {
    let frame = layout_of::<Frame>();
    assert_eq!(
        (frame.size, frame.fields[1].name, frame.fields[1].offset),
        (148, "1", 144)
    );
    let scene = layout_of::<Scene>();
    assert_eq!((scene.size, scene.align), (208, 16));
    assert_eq!(scene.fields[1].offset, 144);
    assert_eq!(layout_of::<Triple<f64>>().size, 24);
    assert_eq!(layout_of::<Triple<u8>>().size, 3);
}

#[test]
fn padded_makes_a_near_miss_over_16_bytes_a_whole_struct() {
    // {float4, u32, f32}: 24 bytes of fields, padded to 32 and aligned to 16.
    assert_eq!((size_of::<Ball>(), align_of::<Ball>()), (32, 16));
    assert_eq!(is_stored::<Ball>(), 32);
    let layout = layout_of::<Ball>();
    assert_eq!(layout.padding, 8);
    let ball = Ball::new(float4::new(1.0, 2.0, 3.0, 0.5), 7, 0.25);
    assert_eq!(&gpu_aligned::bytemuck::bytes_of(&ball)[24..], &[0; 8]);
    assert_eq!(
        ball,
        Ball::from(BallFields {
            center_radius: float4::new(1.0, 2.0, 3.0, 0.5),
            material: 7,
            roughness: 0.25
        })
    );
}

#[test]
fn whole_structs_are_arrays_of_an_arena() -> Result<(), Box<dyn std::error::Error>> {
    let mut arena = gpu_aligned::arena::Arena::host(1 << 16)?;
    let spheres: Vec<Sphere> = (0..5)
        .map(|i| Sphere {
            center_radius: float4::new(i as f32, 0.0, 0.0, 1.0),
            albedo: float4::new(0.5, 0.5, 0.5, 1.0),
        })
        .collect();
    let stored = arena.alloc_from(&spheres)?;
    assert_eq!(arena.offset(&stored)? % 256, 0);
    assert_eq!(arena.get(&stored)?, &spheres[..]);
    let balls = arena.alloc_zeros::<Ball>(3)?;
    assert_eq!(arena.to_vec(&balls)?, vec![Ball::default(); 3]);
    Ok(())
}

/// One type, stored whole or as columns: the Rust side picks when it
/// allocates, and one header declares both views for one kernel source.
#[derive(Clone, Copy, Debug, PartialEq, gpu_aligned::GpuData, gpu_aligned::GpuSoa)]
#[repr(C, align(16))]
struct Marble {
    center: gpu_aligned::vector::float4,
    color: gpu_aligned::vector::float4,
}

#[test]
fn one_type_is_stored_whole_or_as_columns() {
    let mut arena = gpu_aligned::arena::Arena::host(1 << 16).unwrap();
    let marbles: Vec<Marble> = (0..10)
        .map(|i| Marble {
            center: gpu_aligned::vector::float4::new(i as f32, 0.0, 0.0, 1.0),
            color: gpu_aligned::vector::float4::new(0.0, i as f32, 0.0, 1.0),
        })
        .collect();
    let whole = arena.alloc_from(&marbles).unwrap();
    let mut columns = arena.alloc_soa::<Marble>(10).unwrap();
    arena.write_soa(&mut columns, &marbles).unwrap();
    assert_eq!(whole.size_bytes(), 10 * 32);
    assert_eq!(arena.to_vec(&whole).unwrap(), marbles);
    assert_eq!(arena.read_soa(&columns).unwrap(), marbles);
    let mut header = gpu_aligned::header::CudaHeader::new();
    header.add::<Marble>().unwrap().add_soa::<Marble>().unwrap();
    let text = header.render();
    assert_eq!(text.matches("struct Marble_aos16 ").count(), 1, "{text}");
    assert_eq!(text.matches("struct Marble_soa ").count(), 1, "{text}");
}
