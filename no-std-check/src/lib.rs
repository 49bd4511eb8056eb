//! A `#![no_std]` crate that shares GPU types with host code: if this builds,
//! the trait, the layout facts, the vector types, the derive's output and the
//! CUDA header emitter need neither `std` nor `alloc`. It depends on
//! `gpu-aligned` with
//! `default-features = false`; `cargo build -p gpu-aligned-no-std-check`
//! (a CI step) builds it without the runtime's `std` and `alloc` features,
//! which a workspace-wide build would switch on through feature unification.
//!
//! It also builds for the GPU itself, so the same types can be shared with
//! Rust kernels (the `const` assertions below then hold on the device's
//! layout too): `cargo +nightly build -p gpu-aligned-no-std-check --target
//! nvptx64-nvidia-cuda -Zbuild-std=core` (needs the nightly `rust-src`
//! component; not in CI for that reason).
#![no_std]
#![deny(missing_docs)]

use core::mem::{align_of, size_of};
use gpu_aligned::vector::{float3, float3_16_t, float4, int8_3_4_t};
use gpu_aligned::{GpuAligned, GpuLayout};

/// A particle as both the host and a GPU kernel see it.
#[derive(Clone, Copy, GpuAligned)]
#[repr(C, align(16))]
pub struct Particle {
    /// Where it is.
    pub position: float3,
    /// How heavy it is.
    pub mass: f32,
}

/// A tagged value whose hole the attribute makes explicit.
#[gpu_aligned::padded]
#[derive(Clone, Copy)]
pub struct Tagged {
    /// What kind of value.
    pub tag: u8,
    /// The value.
    pub value: u32,
}

/// A color in one GPU word.
#[derive(Clone, Copy, GpuAligned)]
#[repr(transparent)]
pub struct Color(pub int8_3_4_t);

/// The layout facts, available in `const` context without `alloc`.
pub const LAYOUTS: [&GpuLayout; 5] = [
    &Particle::LAYOUT,
    &Tagged::LAYOUT,
    &Color::LAYOUT,
    &float4::LAYOUT,
    &float3_16_t::LAYOUT,
];

const _: () = {
    assert!(size_of::<Particle>() == 16 && align_of::<Particle>() == 16);
    assert!(Particle::LAYOUT.fields[1].offset == 12);
    assert!(size_of::<Tagged>() == 8 && Tagged::LAYOUT.padding == 3);
    assert!(Color::LAYOUT.size == 4);
    let mut i = 0;
    while i < LAYOUTS.len() {
        assert!(LAYOUTS[i].is_one_word());
        i += 1;
    }
};

/// Builds a padded value in a `const fn`, as GPU-side code would.
pub const fn tagged(tag: u8, value: u32) -> Tagged {
    Tagged::new(tag, value)
}

/// Writes the CUDA declaration of `Particle` with its one-instruction
/// accessors: the header emitter needs no allocator either.
///
/// # Errors
///
/// What the emitter returns, [`HeaderError::Write`] if `out` fails.
///
/// [`HeaderError::Write`]: gpu_aligned::header::HeaderError::Write
pub fn declare_particle(
    out: &mut impl core::fmt::Write,
) -> Result<(), gpu_aligned::header::HeaderError> {
    gpu_aligned::header::write_preamble(out)?;
    gpu_aligned::header::write_struct(out, &Particle::LAYOUT)?;
    gpu_aligned::header::write_accessors(out, &Particle::LAYOUT)
}
