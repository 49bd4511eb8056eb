//! Code the macros generate must not trip the lints a strict crate denies:
//! if it did, users would have to weaken their lint settings to use us.
#![deny(
    warnings,
    nonstandard_style,
    rust_2018_idioms,
    unused,
    unused_qualifications,
    unused_results,
    unused_import_braces,
    unused_lifetimes,
    unreachable_pub,
    trivial_casts,
    trivial_numeric_casts,
    single_use_lifetimes,
    missing_copy_implementations,
    missing_debug_implementations,
    missing_docs,
    variant_size_differences,
    elided_lifetimes_in_paths,
    explicit_outlives_requirements,
    meta_variable_misuse,
    unsafe_code,
    let_underscore_drop,
    clippy::all,
    clippy::pedantic,
    clippy::nursery
)]

use gpu_aligned::vector::float3;
use gpu_aligned::GpuAligned;

/// A derived element.
#[derive(Clone, Copy, Debug, GpuAligned)]
#[repr(C, align(16))]
struct Derived {
    /// Where.
    position: float3,
    /// How heavy.
    mass: f32,
}

/// A derived tuple element.
#[derive(Clone, Copy, Debug, GpuAligned)]
#[repr(transparent)]
struct Meters(f32);

/// A generic element.
#[derive(Clone, Copy, Debug, GpuAligned)]
#[repr(transparent)]
struct Tagged<T, Unit>(T, core::marker::PhantomData<Unit>);

/// A generic field type.
#[derive(Clone, Copy, Debug, GpuAligned)]
#[repr(C)]
struct Pair<T> {
    /// First.
    a: T,
    /// The rest.
    b: [T; 2],
}

/// A padded element.
#[gpu_aligned::padded]
#[derive(Clone, Copy, Debug, PartialEq)]
struct Padded {
    /// A byte.
    tag: u8,
    /// A word after a hole.
    value: u32,
}

/// A padded element that is never constructed through `new`.
#[gpu_aligned::padded(align = 4)]
#[derive(Clone, Copy, Debug)]
struct Unused {
    /// Two bytes.
    half: u16,
}

#[test]
fn generated_code_passes_strict_lints() {
    let derived = Derived {
        position: float3::new(1.0, 2.0, 3.0),
        mass: 4.0,
    };
    assert_eq!(
        (derived.position.z.to_bits(), derived.mass.to_bits()),
        (3.0f32.to_bits(), 4.0f32.to_bits())
    );
    assert_eq!(Derived::LAYOUT.size, 16);
    assert_eq!(Meters(2.0).0.to_bits(), 2.0f32.to_bits());
    assert_eq!(Meters::LAYOUT.size, 4);
    assert_eq!(Tagged::<u64, Meters>::LAYOUT.size, 8);
    assert_eq!(Tagged(1u8, core::marker::PhantomData::<Meters>).0, 1);
    let pair = Pair { a: 1u8, b: [2, 3] };
    assert_eq!((pair.a, pair.b), (1, [2, 3]));
    assert_eq!(<Pair<u8> as gpu_aligned::GpuData>::TYPE.size(), 3);
    assert_eq!(
        Padded::new(1, 2),
        Padded {
            tag: 1,
            value: 2,
            ..Padded::default()
        }
    );
    assert_eq!(Unused::LAYOUT.padding, 2);
}
