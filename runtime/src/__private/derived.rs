//! The one trait the derives implement, [`Derived`], the kinds of GPU data as types, and the
//! blanket impls that give a derived struct `GpuData`, `GpuAligned` and `GpuWords` from it.

use super::DerivesCopy;
use crate::layout::{GpuAligned, GpuData, GpuLayout, GpuType};

/// What `#[derive(GpuAligned)]` and `#[derive(GpuData)]` implement: the layout facts of the struct,
/// and what kind of GPU data it is, from which the blanket impls below give it [`GpuData`], and
/// [`GpuAligned`] and [`GpuWords`](crate::GpuWords) where its kind allows.
///
/// Why blanket impls rather than an impl of each trait per struct: they are written here, where
/// `#[diagnostic::do_not_recommend]` resolves (a `#![no_implicit_prelude]` module has no tool
/// prelude, so the attribute cannot be emitted into the user's code), which keeps the derived types
/// out of rustc's "the following other types implement `GpuData`" list when a field is refused; the
/// compiler checks one trait per struct instead of three, and a struct that is not `Copy` gets none
/// of them (no error of theirs), so `DerivesCopy` reports it once. And only a blanket impl can
/// depend on what the compiler computes: `Kind` is chosen from `size_of` and `align_of` (see
/// [`kind::of`]), which a proc macro cannot know.
///
/// # Safety
///
/// `FACTS` describes `Self` exactly (from `size_of`, `align_of` and `offset_of!` of `Self`), every
/// field of `Self` is [`GpuData`], `Self` has no padding, and `Kind` is [`kind::Element`] only if
/// `ELEMENT` compiles only when `Self` obeys the GPU layout rule (the derive's checks, per type or
/// per instantiation), [`kind::Whole`] only if `Self` is aligned to a multiple of 16.
///
/// `DerivesCopy` is a supertrait (rather than a call) because that is cheaper to compile.
pub unsafe trait Derived: DerivesCopy + 'static {
    /// [`kind::Element`], [`kind::Whole`] or [`kind::Data`].
    type Kind;
    /// The layout, as the compiler laid the struct out.
    const FACTS: GpuLayout;
    /// [`GpuAligned::LAYOUT`]: `FACTS`, checked where the checks are per
    /// instantiation (a generic struct, see [`checked_layout`](super::checked_layout)).
    const ELEMENT: GpuLayout = Self::FACTS;
    /// Whether the fields follow each other from offset 0 in declaration order without a hole and
    /// cover the whole struct: read by the generic arm at the definition, of the instantiation with
    /// `u8` for every parameter.
    const CONTIGUOUS: bool = true;
}

/// The kinds of derived GPU data, as types, so that a blanket impl can depend on them: an element
/// (one word), a whole struct aligned to 16 (16-byte words), or any other struct without holes.
pub mod kind {
    /// One GPU word: 1, 2, 4, 8 or 16 bytes, aligned to its size.
    pub struct Element;
    /// Aligned to a multiple of 16, so a multiple of 16 bytes: 16-byte words.
    pub struct Whole;
    /// Any other struct without holes: a field or a kernel parameter.
    pub struct Data;

    /// The kinds an arena array holds ([`GpuWords`](crate::GpuWords)).
    pub trait Stored {}
    impl Stored for Element {}
    impl Stored for Whole {}

    /// The kind numbered `KIND` by [`of`], as a type ([`Pick::Kind`]).
    pub struct Of<const KIND: u8>;
    /// The type of a kind number.
    pub trait Pick {
        /// The kind.
        type Kind;
    }
    impl Pick for Of<0> {
        type Kind = Data;
    }
    impl Pick for Of<1> {
        type Kind = Element;
    }
    impl Pick for Of<2> {
        type Kind = Whole;
    }

    /// The kind of a struct without holes of `size` bytes aligned to `align`: 1 an element, 2 a
    /// whole struct of 16-byte words, 0 other data. Evaluated by the compiler in the `Kind` of
    /// `#[derive(GpuData)]`'s impl, where the struct's size is known.
    pub const fn of(size: usize, align: usize) -> u8 {
        if crate::rules::is_legal(size, align, size) {
            1
        } else if align % 16 == 0 {
            2
        } else {
            0
        }
    }
}

/// The blanket impls, in a module of their own so that compilers before `do_not_recommend`
/// (Rust 1.85; the crate supports 1.81) skip it without a warning: their lint is emitted where the
/// attribute's parent item sets no level.
#[allow(unknown_or_malformed_diagnostic_attributes)]
mod blanket {
    use super::{kind, Derived, GpuAligned, GpuData, GpuLayout, GpuType};
    use crate::GpuWords;

    // SAFETY: `Derived` promises that `FACTS` describes `T` and that `T` has
    // no padding; `Pod + Copy + 'static` are bounds.
    #[diagnostic::do_not_recommend]
    unsafe impl<T: Derived + Copy + bytemuck::Pod> GpuData for T {
        const TYPE: GpuType = GpuType::Struct(&T::FACTS);
    }

    // SAFETY: `Kind` is `Element` only if `ELEMENT` compiles only if `T` obeys the rule
    // (`Derived`), and every entry point that relies on the rule reads `LAYOUT` first.
    #[diagnostic::do_not_recommend]
    unsafe impl<T: Derived<Kind = kind::Element> + Copy + bytemuck::Pod> GpuAligned for T {
        const LAYOUT: GpuLayout = T::ELEMENT;
    }

    // SAFETY: no padding (`Derived`); an element as above, or aligned to a
    // multiple of 16 (`Kind` is `Whole`); `ELEMENT` is read first, as above.
    #[diagnostic::do_not_recommend]
    unsafe impl<T: Derived + Copy + bytemuck::Pod> GpuWords for T
    where
        T::Kind: kind::Stored,
    {
        const CHECKED: GpuLayout = T::ELEMENT;
    }
}
