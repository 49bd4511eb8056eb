//! `gpu-aligned` as `ga`: the derive and the attribute macro name the crate
//! through the path given with `crate = "..."`, so they work when the
//! dependency is renamed (where `::gpu_aligned` does not exist).

use ga::GpuAligned;

/// A derived element, its crate named explicitly.
#[derive(Clone, Copy, Debug, PartialEq, GpuAligned)]
#[gpu_aligned(crate = "ga")]
#[repr(C, align(8))]
pub struct Pair {
    /// First.
    pub a: f32,
    /// Second.
    pub b: f32,
}

/// A generic element, its crate named explicitly.
#[derive(Clone, Copy, Debug, PartialEq, GpuAligned)]
#[gpu_aligned(crate = "ga")]
#[repr(transparent)]
pub struct Meters<T>(pub T);

/// A padded element, its crate named explicitly.
#[ga::padded(crate = "ga")]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Tagged {
    /// A byte.
    pub tag: u8,
    /// A word after a hole.
    pub value: u32,
}

/// Both at once, forced wide.
#[ga::padded(crate = "ga", align = 16)]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Wide {
    /// The one field.
    pub x: f32,
    /// A padded type inside.
    pub inner: Tagged,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_renamed_dependency_derives_through_the_crate_path() {
        assert_eq!((Pair::LAYOUT.size, Pair::LAYOUT.align), (8, 8));
        assert!(Pair::LAYOUT.is_one_word());
        let bytes = ga::__private::bytemuck::bytes_of(&Pair { a: 1.0, b: 2.0 });
        assert_eq!(bytes.len(), 8);
        assert_eq!(Meters::<f64>::LAYOUT.size, 8);
    }

    #[test]
    fn a_renamed_dependency_pads_through_the_crate_path() {
        assert_eq!(Tagged::LAYOUT.size, 8);
        assert_eq!(Tagged::LAYOUT.padding, 3);
        assert_eq!(Tagged::new(1, 2).value, 2);
        assert_eq!((Wide::LAYOUT.size, Wide::LAYOUT.align), (16, 16));
        assert_eq!(Wide::LAYOUT.padding, 4 + 3);
        assert_eq!(Wide::default().inner, Tagged::new(0, 0));
    }
}
