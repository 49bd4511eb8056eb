//! The derive's checks as `const fn`s: each reads a struct's [`Shape`] (or a generic
//! instantiation's layout) and stops compilation with the message of [`rules`](crate::rules) when
//! the struct breaks a rule, spanned by the derive at what it blames. The rule and its message live
//! in `rules`; this turns them into compile errors.

use super::Derived;
use crate::layout::{self, GpuField, GpuLayout, GpuType};
use crate::rules::{self, Blame};

/// The layout a failing derive check reads: the struct's name, size and alignment and every field's
/// name, offset, size and alignment, without the fields' types, so that the size, alignment and
/// hole checks report even when a field's type is not `GpuData` (reported on its own) or the struct
/// is not `Copy`: every fault in one compile. The derive's macro builds it on the stack, only on
/// the branch where a check failed.
pub struct Shape<'a> {
    /// The type's name.
    pub name: &'static str,
    /// `size_of` the type (or the size C gives its fields).
    pub size: usize,
    /// `align_of` the type (or the alignment C gives it).
    pub align: usize,
    /// Every field in declaration order, zero-sized ones included. The messages of [`rules`] read
    /// their names, offsets, sizes and alignments, never their types (bytes, in [`c_fields`]).
    pub fields: &'a [GpuField],
}

impl Shape<'static> {
    /// The shape of a derived type, from its [`Derived::FACTS`] (whose
    /// fields leave out the zero-sized ones).
    pub const fn of<T: Derived>() -> Self {
        Self::of_layout(T::FACTS)
    }

    const fn of_layout(layout: GpuLayout) -> Self {
        Shape {
            name: layout.name,
            size: layout.size,
            align: layout.align,
            fields: layout.fields,
        }
    }
}

impl Shape<'_> {
    /// Whether the fields are where C puts them: the rules' messages assume
    /// so, and `not_repr_c_in` reports it otherwise.
    const fn is_c(&self) -> bool {
        layout::repr_c_mismatch(self.size, self.align, self.fields).is_none()
    }
}

/// Stops compilation if `T` (named `name`) is not 1, 2, 4, 8 or 16 bytes, with the rules' message.
/// It reads only `size_of` and `align_of`, not `LAYOUT`, so it reports even when a field's type is
/// not `GpuData` (an error of its own, which leaves `LAYOUT` unevaluated): both in one compile. The
/// derive spans the call at the struct's name.
#[track_caller]
pub const fn blame_size<T>(name: &str) {
    let (size, align) = (core::mem::size_of::<T>(), core::mem::align_of::<T>());
    if !crate::rules::is_word_size(size) {
        fail(
            &Shape::of_layout(GpuLayout::new("", size, align, 0, &[])),
            name,
        )
    }
}

/// [`blame_field_in`] over `T`'s shape. `#[track_caller]`, as are all the `blame_*` functions: the
/// error points at the call, which the derive spans at what it blames.
#[track_caller]
pub const fn blame_field<T: Derived>(name: &str) {
    blame_field_in(&Shape::of::<T>(), name)
}

/// [`blame_alignment_in`] over `T`'s shape.
#[track_caller]
pub const fn blame_alignment<T: Derived>() {
    blame_alignment_in(&Shape::of::<T>())
}

/// [`blame_type_in`] over `T`'s shape.
#[track_caller]
pub const fn blame_type<T: Derived>() {
    blame_type_in(&Shape::of::<T>())
}

/// [`reject_in`] over `T`'s shape.
#[track_caller]
pub const fn reject<T: Derived>() {
    reject_in(&Shape::of::<T>())
}

/// Stops compilation with the rules' message if they blame field `name`
/// (and the layout is C's: else [`blame_type_in`], after it, says so).
#[track_caller]
pub const fn blame_field_in(shape: &Shape<'_>, name: &str) {
    if let Blame::Field(field) = layout::blame_parts(shape.size, shape.align, shape.fields) {
        if shape.is_c() && str_eq(field, name) {
            fail(shape, shape.name)
        }
    }
}

/// Stops compilation with the rules' message if they blame the alignment
/// (its `align(N)`, where the derive spans the call), if the layout is C's.
#[track_caller]
pub const fn blame_alignment_in(shape: &Shape<'_>) {
    if let Blame::Alignment = layout::blame_parts(shape.size, shape.align, shape.fields) {
        if shape.is_c() {
            fail(shape, shape.name)
        }
    }
}

/// Stops compilation if the layout is not C's, or with the rules' message
/// if it breaks any rule: one call for both, spanned at the struct's name,
/// after [`blame_field_in`] and [`blame_alignment_in`], which skip a layout
/// that is not C's (so that no hole is named by a rule that assumes C's).
#[track_caller]
pub const fn blame_type_in(shape: &Shape<'_>) {
    not_repr_c_in(shape);
    if !matches!(
        layout::blame_parts(shape.size, shape.align, shape.fields),
        Blame::Nothing
    ) {
        fail(shape, shape.name)
    }
}

#[track_caller]
const fn fail(shape: &Shape<'_>, name: &str) -> ! {
    let message = layout::explain_parts(name, shape.size, shape.align, shape.fields);
    if message.is_empty() {
        panic!("the type breaks the GPU layout rule: 1, 2, 4, 8 or 16 bytes, aligned to its size, no holes")
    }
    panic!("{}", message.as_str())
}

pub(crate) const fn str_eq(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

/// The slow path of the derive's check, after the fast one failed: stops compilation if the struct
/// is not laid out as C lays out its fields, or if it breaks the rule (the derive's spanned
/// `blame_*` calls come first and say where; this one makes the failure independent of them).
#[track_caller]
pub const fn reject_in(shape: &Shape<'_>) {
    not_repr_c_in(shape);
    if !rules::is_legal(shape.size, shape.align, layout::covered(shape.fields)) {
        fail(shape, shape.name)
    }
}

/// [`reject_holes_in`] over `T`'s shape.
#[track_caller]
pub const fn reject_holes<T: Derived>() {
    reject_holes_in(&Shape::of::<T>())
}

/// [`blame_hole_in`] over `T`'s shape.
#[track_caller]
pub const fn blame_hole<T: Derived>(name: &str) {
    blame_hole_in(&Shape::of::<T>(), name)
}

/// The slow path of `#[derive(GpuData)]`'s check: stops compilation if the
/// struct is not laid out as C lays out its fields, or has a hole (spanned
/// at the struct's name, after [`blame_hole_in`] for each field).
#[track_caller]
pub const fn reject_holes_in(shape: &Shape<'_>) {
    not_repr_c_in(shape);
    let message = layout::explain_holes(shape.name, shape.size, shape.align, shape.fields);
    if !message.is_empty() {
        panic!("{}", message.as_str())
    }
}

/// Stops compilation with the message about holes if the first hole is before field `name` (and the
/// layout is C's: else [`reject_holes_in`], after it, says so).
#[track_caller]
pub const fn blame_hole_in(shape: &Shape<'_>, name: &str) {
    if let Some(field) = layout::first_hole_before(shape.fields) {
        if shape.is_c() && str_eq(field, name) {
            reject_holes_in(shape)
        }
    }
}

/// Stops compilation if the compiler did not lay the struct out as C lays out its field list.
#[track_caller]
pub const fn not_repr_c_in(shape: &Shape<'_>) {
    if let Some(at) = layout::repr_c_mismatch(shape.size, shape.align, shape.fields) {
        panic!(
            "{}",
            layout::not_repr_c(shape.name, shape.fields, shape.size, shape.align, at).as_str()
        )
    }
}

/// The fields C gives a struct whose fields have the `(size, align)` pairs
/// `shapes`, named as in `names` (with whether each is padding): the
/// [`Shape`] the derive checks next to a rejected `#[repr]`.
pub const fn c_fields<const N: usize>(
    shapes: &[(usize, usize); N],
    names: [(&'static str, bool); N],
) -> [GpuField; N] {
    const BYTE: GpuType = GpuType::Scalar(crate::Scalar::U8);
    let mut fields = [GpuField::new("", 0, 0, 1, false, BYTE); N];
    let mut i = 0;
    while i < N {
        let ((size, align), (name, is_padding)) = (shapes[i], names[i]);
        let offset = crate::rules::repr_c::repr_c_offset(shapes, i);
        let (elem, len) = (&BYTE, size);
        let bytes = GpuType::Array { elem, len };
        fields[i] = GpuField::new(name, offset, size, align, is_padding, bytes);
        i += 1;
    }
    fields
}

/// `layout` if it is C's layout of its fields; else a compile error that says where it is not,
/// raised where the instantiation's layout is first read: a generic struct's `#[repr]` cannot be
/// seen per instantiation (an attribute after the derive may strip it, the hidden macro can be
/// called by hand), so its `FACTS` are checked here, for each one.
#[track_caller]
pub const fn c_layout(layout: GpuLayout) -> GpuLayout {
    not_repr_c_in(&Shape::of_layout(layout));
    layout
}

/// `layout` if it obeys the GPU layout rule as laid out in C order; else a
/// compile error with the rules' message, raised where the instantiation's
/// `LAYOUT` is first needed (an arena allocation, a header, a view).
///
/// A generic struct has no padding (see [`Element`](super::Element)), so
/// only the size and the alignment can break the rule; the fix it names is a
/// concrete wrapper, since a generic struct may not take `align(N)`.
#[track_caller]
pub const fn checked_layout(layout: GpuLayout) -> GpuLayout {
    let layout = c_layout(layout);
    let (size, align) = (layout.size, layout.align);
    if rules::is_legal(size, align, size) {
        return layout;
    }
    let message = crate::rules::Message::new()
        .text("this instantiation of ")
        .named(layout.name)
        .text(" is not a GPU element: it is ")
        .bytes(size)
        .text(" aligned to ")
        .number(align)
        .text(", and a GPU element is 1, 2, 4, 8 or 16 bytes, aligned to its size\n= fix: ");
    let message = if rules::is_word_size(size) {
        message
            .text("a generic struct cannot take `align(N)`; wrap the instantiation in a concrete struct that does: `#[derive(Clone, Copy, GpuAligned)] #[repr(C, align(")
            .number(size)
            .text("))] struct Wrapper(")
            .text(layout.name)
            .text("<..>);`")
    } else {
        message.text(
            "use type arguments that make it a word, or use the instantiation as a field, \
             or store it with `#[derive(GpuSoa)]`",
        )
    };
    panic!("{}", message.as_str())
}

/// Stops compilation unless the generic struct `name` has no padding: the instantiation with `u8`
/// for every parameter (`contiguous`, from [`Derived::CONTIGUOUS`]) is then padding-free, and so is
/// every other (an `align(N)` that pads nothing at 1 byte per `T` pads nothing at any size, since
/// `N` then divides the number of `T`s).
#[track_caller]
pub const fn generic_has_no_padding(contiguous: bool) {
    if !contiguous {
        panic!(
            "a generic GPU struct must have no padding for every type argument: `#[repr(C)]` \
             or `#[repr(transparent)]` without `align(N)` or `packed`, over fields that are \
             the parameter `T`, arrays of `T` or `PhantomData`"
        )
    }
}
