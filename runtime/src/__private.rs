//! Items that exist only for the code `#[derive(GpuAligned)]` and
//! `#[gpu_aligned::padded]` emit. Not public API: no semver guarantees.
//!
//! Two kinds of helpers live here. The `const fn`s build the layout facts and
//! compute padding from `(size_of, align_of)` pairs, because a proc macro sees
//! only tokens and cannot know a field's size. The traits are the layout rules
//! as bounds: the derive writes `(): Rule<Type, {size}, {align}, ...>` with
//! numbers the compiler fills in, each trait is implemented only for the legal
//! values, and its `#[diagnostic::on_unimplemented]` message prints the
//! numbers it was given, so a broken rule reads as "`Float3` is 12 bytes"
//! rather than as a failed assertion.
#![allow(missing_docs)]

pub use bytemuck;
pub use core;

use crate::layout::{GpuData, GpuField, GpuLayout, GpuType};

/// Builds a [`GpuLayout`] from outside this crate (it is `#[non_exhaustive]`).
pub const fn layout(
    name: &'static str,
    size: usize,
    align: usize,
    padding: usize,
    fields: &'static [GpuField],
) -> GpuLayout {
    GpuLayout {
        name,
        size,
        align,
        padding,
        fields,
    }
}

/// Builds a [`GpuField`] from outside this crate (it is `#[non_exhaustive]`).
pub const fn field(
    name: &'static str,
    offset: usize,
    size: usize,
    align: usize,
    is_padding: bool,
    ty: GpuType,
) -> GpuField {
    GpuField {
        name,
        offset,
        size,
        align,
        is_padding,
        ty,
    }
}

/// How many of `fields` have a nonzero size (zero-sized fields, such as the
/// alignment marker of a padded type, are not listed in a layout).
pub const fn sized_field_count(fields: &[GpuField]) -> usize {
    let mut count = 0;
    let mut i = 0;
    while i < fields.len() {
        if fields[i].size != 0 {
            count += 1;
        }
        i += 1;
    }
    count
}

/// The fields of nonzero size, in order. `N` must be
/// [`sized_field_count`]`(fields)`; the derive computes it that way.
pub const fn sized_fields<const N: usize>(fields: &[GpuField]) -> [GpuField; N] {
    const UNUSED: GpuField = field("", 0, 0, 1, false, GpuType::AlignMarker(1));
    let mut out = [UNUSED; N];
    let mut next = 0;
    let mut i = 0;
    while i < fields.len() {
        if fields[i].size != 0 {
            out[next] = fields[i];
            next += 1;
        }
        i += 1;
    }
    assert!(
        next == N,
        "sized_fields: N is not the number of sized fields"
    );
    out
}

/// Bytes of fields marked `#[gpu_aligned(padding)]`.
pub const fn padding_bytes(fields: &[GpuField]) -> usize {
    let mut sum = 0;
    let mut i = 0;
    while i < fields.len() {
        if fields[i].is_padding {
            sum += fields[i].size;
        }
        i += 1;
    }
    sum
}

/// A value whose every byte is zero, usable in `const fn`s (the constructors
/// `#[gpu_aligned::padded]` writes fill pad fields with it).
pub const fn zeroed<T: bytemuck::Zeroable>() -> T {
    // SAFETY: `Zeroable` promises that the all-zero bit pattern is a valid `T`.
    unsafe { core::mem::zeroed() }
}

const fn align_up(offset: usize, align: usize) -> usize {
    offset.div_ceil(align) * align
}

/// Where the field after `shapes` starts when `shapes` (`(size, align)` of
/// each field so far) are laid out by `repr(C)`, ignoring the next field's
/// own alignment: the end of the last field.
const fn end_of(shapes: &[(usize, usize)], count: usize) -> usize {
    let mut end = 0;
    let mut i = 0;
    while i < count {
        end = align_up(end, shapes[i].1) + shapes[i].0;
        i += 1;
    }
    end
}

/// The hole `repr(C)` would leave before field `index` of a struct whose
/// fields have the `(size, align)` pairs `shapes`; `#[gpu_aligned::padded]`
/// fills it with an explicit `[u8; pad_before(..)]` field.
pub const fn pad_before(shapes: &[(usize, usize)], index: usize) -> usize {
    let end = end_of(shapes, index);
    align_up(end, shapes[index].1) - end
}

/// The element width `#[gpu_aligned::padded]` picks: `forced` if nonzero,
/// else the smallest of 1, 2, 4, 8, 16 that holds the fields. Capped at 16 so
/// that an oversized struct reaches the derive's "over 16 bytes" rule rather
/// than a missing alignment marker.
pub const fn width(shapes: &[(usize, usize)], forced: usize) -> usize {
    if forced != 0 {
        return forced;
    }
    let end = end_of(shapes, shapes.len());
    let mut width = 1;
    while width < end && width < 16 {
        width *= 2;
    }
    width
}

/// The trailing pad that makes a padded struct exactly as large as its
/// alignment requires: up to `width` (or, if a field is aligned more than
/// `width`, up to that), so no byte is left to implicit padding even when the
/// result breaks a rule the derive then reports.
pub const fn tail_pad(shapes: &[(usize, usize)], width: usize) -> usize {
    let end = end_of(shapes, shapes.len());
    let mut align = width;
    let mut i = 0;
    while i < shapes.len() {
        if shapes[i].1 > align {
            align = shapes[i].1;
        }
        i += 1;
    }
    align_up(end, align) - end
}

/// Maps a width to a zero-sized type with that alignment, because
/// `#[repr(align(N))]` takes only a literal while `#[gpu_aligned::padded]`
/// learns the width from the compiler.
pub struct Width<const N: usize>;

/// Implemented by [`Width`] for 1, 2, 4, 8 and 16.
pub trait AlignMarker {
    /// A zero-sized type aligned to the width.
    type Marker: GpuData;
}

macro_rules! align_markers {
    ($($name:ident = $n:literal),*) => {$(
        /// A zero-sized field type that raises a struct's alignment.
        #[repr(C, align($n))]
        #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
        pub struct $name;

        // SAFETY: a zero-sized type has no bytes, so no invalid bit pattern.
        unsafe impl bytemuck::Zeroable for $name {}
        // SAFETY: as above; `repr(C)`, `Copy`, `'static`, no padding.
        unsafe impl bytemuck::Pod for $name {}
        // SAFETY: `TYPE` is zero-sized with this alignment, as asserted below.
        unsafe impl GpuData for $name {
            const TYPE: GpuType = GpuType::AlignMarker($n);
        }
        impl AlignMarker for Width<$n> {
            type Marker = $name;
        }
        const _: () = assert!(
            core::mem::size_of::<$name>() == 0 && core::mem::align_of::<$name>() == $n
        );
    )*};
}

align_markers!(Align1 = 1, Align2 = 2, Align4 = 4, Align8 = 8, Align16 = 16);

// The layout rules. Each takes the type and the numbers the compiler found,
// and a trailing `OK` flag computed by the derive: true when the rule holds,
// or when an earlier rule already reports the type (so a 12-byte float3 gets
// "12 bytes is not a GPU word" and not also "align 4 is not 12"). Each trait
// is implemented only for `OK = true`; one impl each keeps the compiler's
// "other types implement this trait" list out of the error.

/// Rule 1: at most 16 bytes, the widest global-memory access.
#[diagnostic::on_unimplemented(
    message = "`{T}` is {SIZE} bytes, more than the 16 bytes one GPU load or store can move",
    label = "{SIZE} bytes: every access to it takes several instructions",
    note = "a GPU element must be 1, 2, 4, 8 or 16 bytes, aligned to its size, with no holes",
    note = "fix: split it into a structure of arrays (one array per field, or per group of fields that fits in 16 bytes)"
)]
pub trait AtMostSixteenBytes<T: ?Sized, const SIZE: usize, const OK: bool> {}
impl<T: ?Sized, const SIZE: usize> AtMostSixteenBytes<T, SIZE, true> for () {}

/// Rule 2: the size is a GPU word size.
#[diagnostic::on_unimplemented(
    message = "`{T}` is {SIZE} bytes (align {ALIGN}): a GPU element must be 1, 2, 4, 8 or 16 bytes",
    label = "{SIZE} bytes is not one of the GPU word sizes",
    note = "CUDA loads or stores an element in one instruction only when it is 1, 2, 4, 8 or 16 bytes, aligned to its size, with no holes",
    note = "fix: put `#[gpu_aligned::padded]` on the struct (above its derives) to round it up to the next word with explicit zeroed padding, or use `#[repr(C, align(N))]` plus a pad field marked `#[gpu_aligned(padding)]`"
)]
pub trait WordSize<T: ?Sized, const SIZE: usize, const ALIGN: usize, const OK: bool> {}
impl<T: ?Sized, const SIZE: usize, const ALIGN: usize> WordSize<T, SIZE, ALIGN, true> for () {}

/// Rule 3: aligned to its size.
#[diagnostic::on_unimplemented(
    message = "`{T}` is {SIZE} bytes but aligned to {ALIGN}: a GPU element must be aligned to its size",
    label = "align {ALIGN}, needs align {SIZE}",
    note = "an array of it would put elements at addresses that are not multiples of {SIZE}, so CUDA splits each access into narrower ones",
    note = "fix: `#[repr(C, align({SIZE}))]`, or put `#[gpu_aligned::padded]` on the struct to choose the alignment and padding"
)]
pub trait NaturallyAligned<T: ?Sized, const SIZE: usize, const ALIGN: usize, const OK: bool> {}
impl<T: ?Sized, const SIZE: usize, const ALIGN: usize> NaturallyAligned<T, SIZE, ALIGN, true>
    for ()
{
}

/// Rule 4a: no hole between a field and the one before it.
#[diagnostic::on_unimplemented(
    message = "`{T}` has a hole of {HOLE} byte(s) before this field: a GPU element must have no implicit padding",
    label = "{HOLE} byte(s) of implicit padding before this field",
    note = "holes are uninitialised bytes, and on the GPU they cost bandwidth (partly written sectors)",
    note = "fix: add an explicit field of {HOLE} byte(s) marked `#[gpu_aligned(padding)]` before this one, reorder the fields, or put `#[gpu_aligned::padded]` on the struct"
)]
pub trait NoHoleBeforeField<T: ?Sized, const HOLE: usize, const OK: bool> {}
impl<T: ?Sized, const HOLE: usize> NoHoleBeforeField<T, HOLE, true> for () {}

/// Rule 4b: no hole after the last field.
#[diagnostic::on_unimplemented(
    message = "`{T}` has {HOLE} byte(s) of trailing padding ({SIZE} bytes, align {ALIGN}): a GPU element must have no implicit padding",
    label = "{HOLE} byte(s) after the last field are implicit padding",
    note = "holes are uninitialised bytes, and on the GPU they cost bandwidth (partly written sectors)",
    note = "fix: add a last field of {HOLE} byte(s) marked `#[gpu_aligned(padding)]`, or put `#[gpu_aligned::padded]` on the struct"
)]
pub trait NoTrailingPadding<
    T: ?Sized,
    const SIZE: usize,
    const ALIGN: usize,
    const HOLE: usize,
    const OK: bool,
>
{
}
impl<T: ?Sized, const SIZE: usize, const ALIGN: usize, const HOLE: usize>
    NoTrailingPadding<T, SIZE, ALIGN, HOLE, true> for ()
{
}

/// Whether `size` is a GPU word size; when it is not, the alignment and
/// hole rules step aside (rule 1 or 2 already reports the type).
pub const fn is_word_size(size: usize) -> bool {
    matches!(size, 1 | 2 | 4 | 8 | 16)
}

/// Bytes between the end of one field (`end`) and the start of the next
/// (`start`). Saturating, so that a layout the rules reject anyway cannot add
/// an arithmetic-overflow error on top.
pub const fn gap(end: usize, start: usize) -> usize {
    start.saturating_sub(end)
}

/// Implemented by the derive for each type, with the layout rules as its
/// `where` clause: the impl exists only to make the compiler check them.
pub trait LayoutRules {}
