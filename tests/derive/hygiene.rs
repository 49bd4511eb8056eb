//! The macros' output must compile anywhere: here there is no prelude, and
//! the primitive types, `core`, `gpu_aligned`, `Default`, `Copy`, `Option`,
//! `size_of` and the derive's own helper names are all shadowed by local
//! items. Generated code that named any of them without an absolute path
//! would pick up the wrong item and fail to compile.
#![no_implicit_prelude]
#![allow(non_camel_case_types, dead_code, unused_macros)]

mod core {}
mod gpu_aligned {}
mod bytemuck {}
mod rules {}
struct u8;
struct u16;
struct u32;
struct u64;
struct usize;
struct f32;
struct f64;
struct bool;
struct str;
struct Option;
struct Default;
struct Copy;
struct Clone;
struct Sized;
struct GpuField;
struct GpuLayout;
struct GpuType;
fn size_of() {}
fn align_of() {}
macro_rules! offset_of {
    () => {};
}

#[derive(
    ::core::clone::Clone,
    ::core::marker::Copy,
    ::core::fmt::Debug,
    ::core::cmp::PartialEq,
    ::gpu_aligned::GpuAligned,
)]
#[repr(C, align(8))]
struct Derived {
    a: ::core::primitive::f32,
    b: [::core::primitive::u16; 2],
}

#[derive(::core::clone::Clone, ::core::marker::Copy, ::gpu_aligned::GpuAligned)]
#[repr(transparent)]
struct Wrapper(::core::primitive::u32);

#[derive(::core::clone::Clone, ::core::marker::Copy, ::gpu_aligned::GpuAligned)]
#[repr(transparent)]
struct Generic<T, Unit>(T, ::core::marker::PhantomData<Unit>);

#[derive(::core::clone::Clone, ::core::marker::Copy, ::gpu_aligned::GpuAligned)]
#[repr(C)]
struct GenericPair<T> {
    a: T,
    b: [T; 1],
}

#[::gpu_aligned::padded]
#[derive(
    ::core::clone::Clone, ::core::marker::Copy, ::core::fmt::Debug, ::core::cmp::PartialEq,
)]
struct Padded {
    tag: ::core::primitive::u8,
    value: ::core::primitive::f32,
    more: ::core::primitive::u8,
}

#[::gpu_aligned::padded(align = 16)]
#[derive(::core::clone::Clone, ::core::marker::Copy)]
struct Forced {
    x: ::core::primitive::f32,
}

#[::core::prelude::v1::test]
fn derive_and_padded_expand_without_a_prelude() {
    ::core::assert_eq!(<Derived as ::gpu_aligned::GpuAligned>::LAYOUT.size, 8);
    ::core::assert_eq!(<Wrapper as ::gpu_aligned::GpuAligned>::LAYOUT.size, 4);
    ::core::assert_eq!(<Padded as ::gpu_aligned::GpuAligned>::LAYOUT.size, 16);
    ::core::assert_eq!(<Padded as ::gpu_aligned::GpuAligned>::LAYOUT.padding, 10);
    ::core::assert_eq!(<Forced as ::gpu_aligned::GpuAligned>::LAYOUT.size, 16);
    ::core::assert_eq!(
        <Generic<::core::primitive::u16, Padded> as ::gpu_aligned::GpuAligned>::LAYOUT.size,
        2
    );
    ::core::assert_eq!(
        <GenericPair<::core::primitive::u8> as ::gpu_aligned::GpuData>::TYPE.size(),
        2
    );
    let padded = Padded::new(1, 2.0, 3);
    ::core::assert_eq!(
        padded,
        Padded {
            tag: 1,
            value: 2.0,
            more: 3,
            ..<Padded as ::core::default::Default>::default()
        }
    );
}
