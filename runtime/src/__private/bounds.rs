//! The facts the derive's code reads through one bound each (`T: Copy`, `T: GpuData`, `T:
//! GpuAligned`, a generic struct's fields being `T` or arrays of `T`), so that a struct that lacks
//! one gets one error that names the fix, not one per impl or per supertrait.

use crate::layout::{Fields, GpuAligned, GpuData, GpuField, GpuLayout, GpuType};

/// `T: Copy`, with a message that names the fix. Every arm of the derive's macro asks for it with
/// this trait, once (a supertrait of [`Derived`](super::Derived), else through [`derives_copy`]);
/// the impls that need `Copy` are left unusable rather than in error without it, so a struct
/// without `Copy` gets this one error instead of one per impl.
#[diagnostic::on_unimplemented(
    message = "`{Self}` must derive `Clone, Copy` to be GPU data",
    label = "add `#[derive(Clone, Copy)]` to this struct",
    note = "GPU data is copied byte for byte between host and device (`bytemuck::Pod` requires `Copy`)"
)]
pub trait DerivesCopy {}
impl<T: Copy> DerivesCopy for T {}

/// Fails to compile, with [`DerivesCopy`]'s message, unless `T: Copy`.
pub const fn derives_copy<T: DerivesCopy>() {}

/// `T::TYPE`, read through a bound: a field whose type is not `GpuData` is
/// then one error, `T: GpuData` (naming `<T as GpuData>::TYPE` directly
/// would also require, and report, each supertrait of `GpuData` on its own).
pub const fn type_of<T: GpuData>() -> GpuType {
    T::TYPE
}

/// The field `name` of type `F` at `offset`: its size, alignment and [`GpuData::TYPE`], read
/// through one bound, for the same reason as [`type_of`]. One generic function rather than the
/// three reads written out per field: its instantiations are shared by every field of the same
/// type, which keeps the derive cheap to compile.
pub const fn field_of<F: GpuData>(name: &'static str, offset: usize, is_padding: bool) -> GpuField {
    GpuField::new(
        name,
        offset,
        core::mem::size_of::<F>(),
        core::mem::align_of::<F>(),
        is_padding,
        F::TYPE,
    )
}

/// The layout of a struct named `name`, of `size` and `align`, with the fields `fields`.
pub const fn facts<const N: usize>(
    name: &'static str,
    size: usize,
    align: usize,
    fields: &'static Fields<N>,
) -> GpuLayout {
    GpuLayout::new(name, size, align, fields.padding(), fields.sized())
}

/// `T::LAYOUT`, read through a bound, for the same reason as [`type_of`].
pub const fn layout_of<T: GpuAligned>() -> GpuLayout {
    T::LAYOUT
}

/// `F` is `T` or an array of `T`: the fields a generic struct may have besides `PhantomData`s.
/// Proven inside a function generic over `T`, where `T` is opaque and only these two impls can
/// apply, so a field of any other type (`u8`, `U`, `(T, T)`) fails to compile. A struct whose
/// fields are all `T` or arrays of `T` has no padding for any `T`: every field's size is a multiple
/// of `T`'s alignment, and so is every field's offset.
pub trait Element<T> {}
impl<T> Element<T> for T {}
impl<T, const N: usize> Element<T> for [T; N] {}

/// Compiles only if `F` is `T` or an array of `T` (see [`Element`]).
pub const fn is_element<T, F: Element<T>>() {}
