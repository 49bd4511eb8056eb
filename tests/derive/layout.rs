//! Layout facts of the built-in types: every primitive `GpuAligned` impl is
//! a one-word element of its own size, and arrays are `GpuData` fields.

use gpu_aligned::{GpuAligned, GpuData, GpuType, Scalar};

fn facts<T: GpuAligned>() -> (&'static str, usize, usize, bool) {
    (
        T::LAYOUT.name,
        T::LAYOUT.size,
        T::LAYOUT.align,
        T::LAYOUT.is_one_word(),
    )
}

#[test]
fn primitives_are_one_word_elements_of_their_own_size() {
    assert_eq!(facts::<u8>(), ("u8", 1, 1, true));
    assert_eq!(facts::<i8>(), ("i8", 1, 1, true));
    assert_eq!(facts::<u16>(), ("u16", 2, 2, true));
    assert_eq!(facts::<i16>(), ("i16", 2, 2, true));
    assert_eq!(facts::<u32>(), ("u32", 4, 4, true));
    assert_eq!(facts::<i32>(), ("i32", 4, 4, true));
    assert_eq!(facts::<f32>(), ("f32", 4, 4, true));
    assert_eq!(facts::<u64>(), ("u64", 8, 8, true));
    assert_eq!(facts::<i64>(), ("i64", 8, 8, true));
    assert_eq!(facts::<f64>(), ("f64", 8, 8, true));
}

#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
#[test]
fn sixteen_byte_integers_are_elements_where_aligned_to_sixteen() {
    assert_eq!(core::mem::align_of::<u128>(), 16);
    assert_eq!(facts::<u128>(), ("u128", 16, 16, true));
    assert_eq!(facts::<i128>(), ("i128", 16, 16, true));
}

#[test]
fn arrays_are_gpu_data_of_their_element() {
    let ty = <[u16; 3] as GpuData>::TYPE;
    assert_eq!((ty.size(), ty.align()), (6, 2));
    assert_eq!(
        ty,
        GpuType::Array {
            elem: &GpuType::Scalar(Scalar::U16),
            len: 3
        }
    );
    let nested = <[[f32; 2]; 2] as GpuData>::TYPE;
    assert_eq!((nested.size(), nested.align()), (16, 4));
}

#[test]
fn scalar_types_match_rust_sizes() {
    for (scalar, size) in [
        (Scalar::U8, 1),
        (Scalar::I16, 2),
        (Scalar::F32, 4),
        (Scalar::I64, 8),
        (Scalar::U128, 16),
    ] {
        assert_eq!(scalar.size(), size, "{}", scalar.rust_name());
    }
    assert_eq!(<f64 as GpuData>::TYPE, GpuType::Scalar(Scalar::F64));
    assert_eq!(
        (Scalar::I64.rust_name(), Scalar::U128.rust_name()),
        ("i64", "u128")
    );
    assert_eq!(
        (
            Scalar::I16.cuda_name(),
            Scalar::U128.cuda_name(),
            Scalar::F64.cuda_name()
        ),
        ("int16_t", "unsigned __int128", "double")
    );
}
