//! The CUDA vector types have CUDA's exact size and alignment (the table in
//! the CUDA C++ Programming Guide, "Alignment Requirements"), and the word-
//! sized ones are elements while the others are fields only.

use core::mem::{align_of, size_of};
use gpu_aligned::vector::*;
use gpu_aligned::{GpuAligned, GpuData, GpuType, Scalar};

/// `(name, size_of, align_of, GpuData::TYPE.size(), GpuData::TYPE.align())`.
macro_rules! facts {
    ($($ty:ident),* $(,)?) => {
        [$((
            stringify!($ty),
            size_of::<$ty>(),
            align_of::<$ty>(),
            <$ty as GpuData>::TYPE.size(),
            <$ty as GpuData>::TYPE.align(),
        )),*]
    };
}

#[test]
fn sizes_and_alignments_match_cuda() {
    // CUDA's table: name -> (size, align).
    let cuda = [
        ("char2", 2, 2),
        ("uchar2", 2, 2),
        ("char3", 3, 1),
        ("uchar3", 3, 1),
        ("char4", 4, 4),
        ("uchar4", 4, 4),
        ("short2", 4, 4),
        ("ushort2", 4, 4),
        ("short3", 6, 2),
        ("ushort3", 6, 2),
        ("short4", 8, 8),
        ("ushort4", 8, 8),
        ("int2", 8, 8),
        ("uint2", 8, 8),
        ("float2", 8, 8),
        ("int3", 12, 4),
        ("uint3", 12, 4),
        ("float3", 12, 4),
        ("int4", 16, 16),
        ("uint4", 16, 16),
        ("float4", 16, 16),
        ("longlong2", 16, 16),
        ("ulonglong2", 16, 16),
        ("double2", 16, 16),
        ("longlong3", 24, 8),
        ("ulonglong3", 24, 8),
        ("double3", 24, 8),
        ("float3_16_t", 16, 16),
        ("int8_3_4_t", 4, 4),
    ];
    let rust = facts!(
        char2,
        uchar2,
        char3,
        uchar3,
        char4,
        uchar4,
        short2,
        ushort2,
        short3,
        ushort3,
        short4,
        ushort4,
        int2,
        uint2,
        float2,
        int3,
        uint3,
        float3,
        int4,
        uint4,
        float4,
        longlong2,
        ulonglong2,
        double2,
        longlong3,
        ulonglong3,
        double3,
        float3_16_t,
        int8_3_4_t,
    );
    assert_eq!(rust.len(), cuda.len());
    for ((name, size, align, type_size, type_align), (cuda_name, cuda_size, cuda_align)) in
        rust.iter().zip(cuda)
    {
        assert_eq!(*name, cuda_name);
        assert_eq!(
            (*size, *align),
            (cuda_size, cuda_align),
            "{name}: Rust size/align"
        );
        assert_eq!(
            (*type_size, *type_align),
            (cuda_size, cuda_align),
            "{name}: GpuType"
        );
    }
}

#[test]
fn word_sized_vectors_are_elements_with_lanes_at_their_offsets() {
    assert!(float4::LAYOUT.is_one_word());
    let lanes: Vec<_> = float4::LAYOUT
        .fields
        .iter()
        .map(|f| (f.name, f.offset))
        .collect();
    assert_eq!(lanes, [("x", 0), ("y", 4), ("z", 8), ("w", 12)]);
    assert_eq!(short2::LAYOUT.fields[1].offset, 2);
    assert_eq!(double2::LAYOUT.fields[1].ty, GpuType::Scalar(Scalar::F64));
}

#[test]
fn vector_type_records_cuda_name_and_lanes() {
    match <float3 as GpuData>::TYPE {
        GpuType::Vector {
            cuda_name,
            lane,
            lanes,
            align,
        } => {
            assert_eq!(
                (cuda_name, lane, lanes, align),
                ("float3", Scalar::F32, 3, 4)
            );
        }
        other => panic!("float3 should be a vector type, got {other:?}"),
    }
}

#[test]
fn padded_forms_are_one_word_with_explicit_zeroed_padding() {
    assert!(float3_16_t::LAYOUT.is_one_word());
    assert_eq!(float3_16_t::LAYOUT.padding, 4);
    assert_eq!(float3_16_t::LAYOUT.data_bytes(), 12);
    assert_eq!(int8_3_4_t::LAYOUT.padding, 1);
    let v = float3_16_t::from(float3::new(1.0, 2.0, 3.0));
    assert_eq!(&bytemuck::bytes_of(&v)[12..], [0; 4]);
    assert_eq!(float3::from(v), float3::new(1.0, 2.0, 3.0));
    let c = int8_3_4_t::from(char3::new(-1, 2, -3));
    assert_eq!(bytemuck::bytes_of(&c), [0xff, 2, 0xfd, 0]);
    assert_eq!(char3::from(c), char3::new(-1, 2, -3));
}

#[test]
fn vectors_are_fields_of_derived_types() {
    #[gpu_aligned::padded]
    #[derive(Clone, Copy)]
    struct Normal {
        n: short3,
    }
    assert_eq!(
        (
            Normal::LAYOUT.size,
            Normal::LAYOUT.align,
            Normal::LAYOUT.padding
        ),
        (8, 8, 2)
    );
    assert_eq!(Normal::LAYOUT.fields[0].ty, <short3 as GpuData>::TYPE);
}
