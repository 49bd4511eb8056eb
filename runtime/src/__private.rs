//! What the code of `#[derive(GpuAligned)]` and `#[gpu_aligned::padded]`
//! names, and nothing else: re-exports, and shims that turn
//! [`rules`](crate::rules) into compile errors. Not public API, no semver
//! guarantees. The rule itself and its message live in [`crate::rules`].
//!
//! **The rule for the exported macros that write an `unsafe impl`** (here:
//! `__gpu_aligned_derive!` and `__gpu_aligned_cuda_traits!`; in
//! [`soa::derive`](crate::soa::derive): `__gpu_soa_derive!`). Safe code
//! can call them by hand, and `#![forbid(unsafe_code)]` does not see their
//! `unsafe`, which is theirs. So each takes identifiers, literals and
//! types only, never token trees or a `where` list pasted between its
//! `unsafe impl` and the trait (a `{}` or `#[cfg(any())]` in them would
//! hand the macro's `unsafe` to the caller's own impl), and proves every
//! claim its impls make with code the compiler checks (`offset_of!`,
//! `size_of`, a struct literal that names every field) or bounds them on a
//! trait the caller cannot forge (`GpuData`). Each has ui-tests that call
//! it by hand with forged input (`ui-tests/ui/*hidden-macro*`,
//! `ui-tests/ui-cuda/`).
#![allow(missing_docs)]

pub use crate::layout::{AlignMarker, Fields, Width};
pub use bytemuck;
pub use core;
// Shorter paths for the derive's code: a path's every segment is resolved
// again for each of a thousand structs.
pub use core::mem::{align_of, offset_of, size_of};

/// A value of any type, for the derive's proof that a field list is the
/// struct's own, which type-checks expressions built from it and never runs.
pub const fn never<T>() -> T {
    panic!("the derive's field-list proof is never run")
}
#[cfg(feature = "cuda")]
pub use cudarc;

use crate::layout::{self, GpuAligned, GpuData, GpuField, GpuLayout, GpuType};
use crate::rules::{self, Blame};

/// [`GpuLayout::new`], under the name generated code and older tests use.
pub const fn layout(
    name: &'static str,
    size: usize,
    align: usize,
    padding: usize,
    fields: &'static [GpuField],
) -> GpuLayout {
    GpuLayout::new(name, size, align, padding, fields)
}

/// [`GpuField::new`], under the name generated code and older tests use.
pub const fn field(
    name: &'static str,
    offset: usize,
    size: usize,
    align: usize,
    is_padding: bool,
    ty: GpuType,
) -> GpuField {
    GpuField::new(name, offset, size, align, is_padding, ty)
}

/// A value whose every byte is zero, usable in `const fn`s (the constructors
/// `#[gpu_aligned::padded]` writes fill pad fields with it).
pub const fn zeroed<T: bytemuck::Zeroable>() -> T {
    // SAFETY: `Zeroable` promises that the all-zero bit pattern is a valid `T`.
    unsafe { core::mem::zeroed() }
}

/// The layout a failing derive check reads: the struct's name, size and
/// alignment and every field's name, offset, size and alignment, without the
/// fields' types, so that the size, alignment and hole checks report even
/// when a field's type is not `GpuData` (reported on its own) or the struct
/// is not `Copy`: every fault in one compile. The derive's macro builds it
/// on the stack, only on the branch where a check failed.
pub struct Shape<'a> {
    /// The type's name.
    pub name: &'static str,
    /// `size_of` the type (or the size C gives its fields).
    pub size: usize,
    /// `align_of` the type (or the alignment C gives it).
    pub align: usize,
    /// Every field in declaration order, zero-sized ones included, each
    /// typed as bytes (see [`shape_field`]).
    pub fields: &'a [GpuField],
}

/// A field of a [`Shape`]: the messages of [`rules`] read its name, offset,
/// size and alignment, never its type, which is given as bytes.
pub const fn shape_field(
    name: &'static str,
    offset: usize,
    size: usize,
    align: usize,
    is_padding: bool,
) -> GpuField {
    const BYTE: GpuType = GpuType::Scalar(crate::Scalar::U8);
    GpuField::new(
        name,
        offset,
        size,
        align,
        is_padding,
        GpuType::Array {
            elem: &BYTE,
            len: size,
        },
    )
}

impl Shape<'static> {
    /// The shape of a derived type, from its [`Derived::FACTS`] (whose
    /// fields leave out the zero-sized ones).
    pub const fn of<T: Derived>() -> Self {
        let layout = T::FACTS;
        Shape {
            name: layout.name,
            size: layout.size,
            align: layout.align,
            fields: layout.fields,
        }
    }
}

/// Stops compilation if `T` (named `name`) is not 1, 2, 4, 8 or 16 bytes,
/// with the rules' message. It reads only `size_of` and `align_of`, not
/// `LAYOUT`, so it reports even when a field's type is not `GpuData` (an
/// error of its own, which leaves `LAYOUT` unevaluated): both in one
/// compile. The derive spans the call at the struct's name.
#[track_caller]
pub const fn blame_size<T>(name: &str) {
    let (size, align) = (core::mem::size_of::<T>(), core::mem::align_of::<T>());
    if !crate::rules::is_word_size(size) {
        fail(
            &Shape {
                name: "",
                size,
                align,
                fields: &[],
            },
            name,
        )
    }
}

/// [`blame_field_in`] over `T`'s shape. `#[track_caller]`, as are all the
/// `blame_*` functions: the error points at the call, which the derive spans
/// at what it blames.
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
    if layout::repr_c_mismatch(shape.size, shape.align, shape.fields).is_some() {
        return;
    }
    if let Blame::Field(field) = layout::blame_parts(shape.size, shape.align, shape.fields) {
        if str_eq(field, name) {
            fail(shape, shape.name)
        }
    }
}

/// Stops compilation with the rules' message if they blame the alignment
/// (its `align(N)`, where the derive spans the call), if the layout is C's.
#[track_caller]
pub const fn blame_alignment_in(shape: &Shape<'_>) {
    if layout::repr_c_mismatch(shape.size, shape.align, shape.fields).is_some() {
        return;
    }
    if let Blame::Alignment = layout::blame_parts(shape.size, shape.align, shape.fields) {
        fail(shape, shape.name)
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

/// The slow path of the derive's check, after the fast one failed: stops
/// compilation if the struct is not laid out as C lays out its fields, or
/// if it breaks the rule (the derive's spanned `blame_*` calls come first
/// and say where; this one makes the failure independent of them).
#[track_caller]
pub const fn reject_in(shape: &Shape<'_>) {
    not_repr_c_in(shape);
    let covered = {
        let mut covered = 0usize;
        let mut i = 0;
        while i < shape.fields.len() {
            covered = covered.saturating_add(shape.fields[i].size);
            i += 1;
        }
        covered
    };
    if !rules::is_legal(shape.size, shape.align, covered) {
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

/// Stops compilation with the message about holes if the first hole is
/// before field `name` (and the layout is C's: else [`reject_holes_in`],
/// after it, says so).
#[track_caller]
pub const fn blame_hole_in(shape: &Shape<'_>, name: &str) {
    if layout::repr_c_mismatch(shape.size, shape.align, shape.fields).is_some() {
        return;
    }
    if let Some(field) = layout::first_hole_before(shape.fields) {
        if str_eq(field, name) {
            reject_holes_in(shape)
        }
    }
}

/// Stops compilation if the compiler did not lay the struct out as C lays
/// out its field list.
#[track_caller]
pub const fn not_repr_c_in(shape: &Shape<'_>) {
    if let Some(index) = layout::repr_c_mismatch(shape.size, shape.align, shape.fields) {
        panic!(
            "{}",
            layout::not_repr_c(shape.name, shape.fields, shape.size, shape.align, index).as_str()
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
    let mut fields = [shape_field("", 0, 0, 1, false); N];
    let mut i = 0;
    while i < N {
        let (size, align) = shapes[i];
        fields[i] = shape_field(
            names[i].0,
            rules::repr_c_offset(shapes, i),
            size,
            align,
            names[i].1,
        );
        i += 1;
    }
    fields
}

/// `T: Copy`, with a message that names the fix. Every arm of the derive's
/// macro asks for it with this trait, once (a supertrait of [`Derived`],
/// and through [`derives_copy`] where there is no `Derived` impl): the
/// impls that need `Copy` are
/// left unusable rather than in error when it is missing (`GpuData` and
/// `GpuAligned` are blanket impls bounded by it, `Pod`'s bound is under
/// `for<'__a>`), so a struct without `Copy` gets this one error instead of
/// one per impl, each pointing into this crate or bytemuck.
#[diagnostic::on_unimplemented(
    message = "`{Self}` must derive `Clone, Copy` to be a GPU element",
    label = "add `#[derive(Clone, Copy)]` to this struct",
    note = "GPU elements are copied byte for byte between host and device (`bytemuck::Pod` requires `Copy`)"
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

/// The field `name` of type `F` at `offset`: its size, alignment and
/// [`GpuData::TYPE`], read through one bound, for the same reason as
/// [`type_of`]. One generic function rather than the three reads written
/// out per field: its instantiations are shared by every field of the same
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

/// The layout of a struct named `name`, of `size` and `align`, with the
/// fields `fields`.
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

/// `F` is `T` or an array of `T`: the fields a generic struct may have
/// besides `PhantomData`s. Proven inside a function generic over `T`, where
/// `T` is opaque and only these two impls can apply, so a field of any
/// other type (`u8`, `U`, `(T, T)`) fails to compile. A struct whose fields
/// are all `T` or arrays of `T` has no padding for any `T`: every field's
/// size is a multiple of `T`'s alignment, and so is every field's offset.
pub trait Element<T> {}
impl<T> Element<T> for T {}
impl<T, const N: usize> Element<T> for [T; N] {}

/// Compiles only if `F` is `T` or an array of `T` (see [`Element`]).
pub const fn is_element<T, F: Element<T>>() {}

/// What `#[derive(GpuAligned)]` and `#[derive(GpuData)]` implement: the
/// layout facts of the struct, and what kind of GPU data it is, from which
/// the blanket impls below give it [`GpuData`], and [`GpuAligned`] and
/// [`GpuWords`](crate::GpuWords) where its kind allows.
///
/// Why blanket impls rather than an impl of each trait per struct: they are
/// written here, where `#[diagnostic::do_not_recommend]` resolves (a
/// `#![no_implicit_prelude]` module has no tool prelude, so the attribute
/// cannot be emitted into the user's code), which keeps the derived types
/// out of rustc's "the following other types implement `GpuData`" list when
/// a field is refused; the compiler checks one trait per struct instead of
/// three, and a struct that is not `Copy` gets none of them (no error of
/// theirs), so `DerivesCopy` reports it once. And only a blanket impl can
/// depend on what the compiler computes: `Kind` is chosen from `size_of`
/// and `align_of` (see [`kind::of`]), which a proc macro cannot know.
///
/// # Safety
///
/// `FACTS` describes `Self` exactly (from `size_of`, `align_of` and
/// `offset_of!` of `Self`), every field of `Self` is [`GpuData`], `Self`
/// has no padding, and `Kind` is [`kind::Element`] only if `ELEMENT`
/// compiles only when `Self` obeys the GPU layout rule (the derive's
/// checks, per type or per instantiation), [`kind::Whole`] only if `Self`
/// is aligned to a multiple of 16.
///
/// `DerivesCopy` is a supertrait so that the impl itself asks for `Copy`,
/// once, with the fix: cheaper to compile than a call that asks for it.
pub unsafe trait Derived: DerivesCopy + 'static {
    /// [`kind::Element`], [`kind::Whole`] or [`kind::Data`].
    type Kind;
    /// The layout, as the compiler laid the struct out.
    const FACTS: GpuLayout;
    /// [`GpuAligned::LAYOUT`]: `FACTS`, checked where the checks are per
    /// instantiation (a generic struct, see [`checked_layout`]).
    const ELEMENT: GpuLayout = Self::FACTS;
    /// Whether the fields follow each other from offset 0 in declaration
    /// order without a hole and cover the whole struct: read by the generic
    /// arm at the definition, of the instantiation with `u8` for every
    /// parameter.
    const CONTIGUOUS: bool = true;
}

/// The kinds of derived GPU data, as types, so that a blanket impl can
/// depend on them: an element (one word), a whole struct aligned to 16
/// (16-byte words), or any other struct without holes.
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

    /// The kind of a struct without holes of `size` bytes aligned to
    /// `align`: 1 an element, 2 a whole struct of 16-byte words, 0 other
    /// data. Evaluated by the compiler in the `Kind` of `#[derive(GpuData)]`'s
    /// impl, where the struct's size is known.
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

/// The blanket impls, in a module of their own so that compilers before
/// `do_not_recommend` (Rust 1.85; the crate supports 1.81) skip it without
/// a warning: their lint is emitted where the attribute's parent item sets
/// no level.
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

    // SAFETY: `Kind` is `Element` only if `ELEMENT` compiles only if `T`
    // obeys the rule (`Derived`), and every entry point that relies on the
    // rule reads `LAYOUT` first.
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

/// `layout` if it is C's layout of its fields; else a compile error that
/// says where it is not, raised where the instantiation's layout is first
/// read: a generic struct's `#[repr]` cannot be seen per instantiation (an
/// attribute after the derive may strip it, the hidden macro can be called
/// by hand), so its `FACTS` are checked here, for each one.
#[track_caller]
pub const fn c_layout(layout: GpuLayout) -> GpuLayout {
    not_repr_c_in(&Shape {
        name: layout.name,
        size: layout.size,
        align: layout.align,
        fields: layout.fields,
    });
    layout
}

/// `layout` if it obeys the GPU layout rule as laid out in C order; else a
/// compile error with the rules' message, raised where the instantiation's
/// `LAYOUT` is first needed (an arena allocation, a header, a view).
///
/// A generic struct has no padding (see [`Element`]), so only the size and
/// the alignment can break the rule; the fix it names is a concrete wrapper,
/// since a generic struct may not take `align(N)`.
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

/// Stops compilation unless the generic struct `name` has no padding: the
/// instantiation with `u8` for every parameter (`contiguous`, from
/// [`Derived::CONTIGUOUS`]) is then padding-free, and so is every
/// other (an `align(N)` that pads nothing at 1 byte per `T` pads nothing at
/// any size, since `N` then divides the number of `T`s).
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

/// `u8`, whatever it is given: the probe instantiation of a generic struct
/// (`Pair<u8>`), spelled in a `macro_rules!` repetition over its parameters.
#[doc(hidden)]
#[macro_export]
macro_rules! __gpu_aligned_u8 {
    ($param:ident) => {
        $crate::__private::core::primitive::u8
    };
}

pub use crate::__gpu_aligned_cuda_traits as cuda_traits;
pub use crate::__gpu_aligned_derive as derive_impls;

/// Every impl `#[derive(GpuAligned)]` gives a struct, together with the
/// checks that make them sound; the derive's output is one invocation of
/// this, and nothing else it emits is `unsafe`.
///
/// Why the checks and the impls cannot be separated: they are expanded
/// together, here, through `$crate` paths, which name this crate however the
/// user's crate names it. A crate that redirects the path the derive uses
/// (`extern crate self as gpu_aligned;`, or `crate = "..."`) reaches either
/// this macro, which checks, or a macro of its own, which has to spell out
/// `unsafe impl` itself. And this macro trusts nothing it is given: the
/// field list is proven to be the struct's (see `__fields` below), the
/// offsets, sizes and alignments come from `offset_of!`, `size_of` and
/// `align_of`, and the blame calls only choose where the error points, with
/// [`reject`] after them failing the build regardless.
///
/// The first check is the layout itself: whatever `#[repr]` the derive saw
/// (an attribute macro after it may rewrite the struct, and this macro can
/// be called by hand), the impls exist only if the compiler laid the struct
/// out exactly as C lays out its field list (what [`GpuLayout::is_repr_c`] says of
/// a layout), which is
/// the layout CUDA code, the header and `bytemuck` assume.
///
/// The second arm, `checks_only`, is what the derive emits next to a
/// rejected `#[repr]`: no impls (there is no layout to trust), but the rule
/// checked on the C layout of the field list, each field checked as
/// `GpuData`, and `Copy` checked, so that every fault of the struct is
/// reported in the same compile.
#[doc(hidden)]
#[macro_export]
macro_rules! __gpu_aligned_derive {
    (
        rule: $rule:ident;
        type: $ty:ident;
        name: $name:literal;
        count: $count:literal;
        fields: [
            { $member0:tt: $fty0:ty, $fname0:literal, $padding0:literal }
            $({ $member:tt: $fty:ty, $fname:literal, $padding:literal })*
        ];
        size: { $($size:tt)* };
        blame: { $($blame:tt)* };
    ) => {
        #[doc(hidden)]
        #[allow(unused_qualifications, clippy::all)]
        const _: () = {
            // The layout of `$ty` as the compiler computed it: every field's
            // offset (`offset_of!`), size and alignment, and its type's
            // `TYPE`, in declaration order. One constant serves the check
            // below and `FACTS`: each `offset_of!` is a constant the
            // compiler evaluates on its own, and most of what a legal type
            // costs to compile.
            const __GPU_ALIGNED_FIELDS: $crate::__private::Fields<$count> =
                $crate::__private::Fields::new([
                    $crate::__private::field_of::<$fty0>(
                        $fname0,
                        $crate::__private::offset_of!($ty, $member0),
                        $padding0,
                    ),
                    $($crate::__private::field_of::<$fty>(
                        $fname,
                        $crate::__private::offset_of!($ty, $member),
                        $padding,
                    )),*
                ]);

            // The fast path, all a legal type costs: the fields follow each
            // other in declaration order from offset 0, with no hole, and
            // the rule holds. For a layout without holes that is exactly
            // C's: each field's offset is aligned (the compiler put it
            // there) and where the previous one ends.
            if !$crate::__gpu_aligned_rule!(holds $rule, __GPU_ALIGNED_FIELDS, $ty) {
                // The slow path says what is wrong, at the spans the derive
                // chose: not C's layout, or which rule. The blame functions
                // read `FACTS`, which is evaluated only here. In a block of
                // their own, so that nothing in them reaches the rejection
                // after it (an attribute left dangling, a local item named
                // like `$ty`): it runs whatever they are.
                { $($blame)* }
                $crate::__gpu_aligned_rule!(reject $rule, $ty);
            }

            // The field list above is the struct's own: a struct expression
            // without `..` names every field exactly once (a missing or
            // repeated field does not compile), and each value has the
            // field's exact type (a value of a GPU type never coerces to
            // another). A union expression names one field, whichever, so
            // `$ty` must not be a union, whose fields overlap (one of them
            // may leave bytes uninitialised that another covers): reading a
            // union's field is `unsafe`, and this function is not (its body
            // is not in any `unsafe` block the macro is called from). Never
            // called; the parameter is the cheapest way to a value to read.
            #[allow(dead_code)]
            fn __fields(__gpu_aligned_value: $ty) -> $ty {
                let _ = __gpu_aligned_value.$member0;
                $ty {
                    $member0: $crate::__private::never::<$fty0>(),
                    $($member: $crate::__private::never::<$fty>()),*
                }
            }

            // Why the impls below are sound: the checks above hold, so
            // `$ty` is laid out as C lays out its fields, is 1, 2, 4, 8 or
            // 16 bytes, aligned to its size, and its fields cover every
            // byte; each field is `GpuData` (required by `field_of`), hence
            // `Pod`: any bit pattern, all zeroes included, is a valid value
            // of every field and so of `$ty`.

            // SAFETY: `FACTS` is built from `size_of`, `align_of` and
            // `offset_of!` of `$ty` itself, every field is `GpuData`, and the
            // checks above (no padding, the rule) run for this very type.
            // `GpuData` and `GpuAligned` follow from the blanket impls.
            #[automatically_derived]
            unsafe impl $crate::__private::Derived for $ty {
                type Kind = $crate::__gpu_aligned_rule!(kind $rule, $ty);
                const FACTS: $crate::GpuLayout = $crate::__private::facts(
                    $name,
                    $crate::__private::size_of::<Self>(),
                    $crate::__private::align_of::<Self>(),
                    &__GPU_ALIGNED_FIELDS,
                );
            }

            // SAFETY: every field is `Pod`, so all zeroes is a valid `$ty`.
            #[automatically_derived]
            unsafe impl $crate::__private::bytemuck::Zeroable for $ty {}

            // SAFETY: no padding, every field `Pod`, laid out as C lays out
            // its fields; `Copy + 'static` the compiler checks. The bound is
            // under `for<'__a>` so that a struct without `Copy` leaves the
            // impl unusable rather than in error: the `Derived` impl
            // (`DerivesCopy` is its supertrait) says it once, with the fix.
            #[automatically_derived]
            unsafe impl $crate::__private::bytemuck::Pod for $ty
            where
                for<'__a> $ty: $crate::__private::core::marker::Copy,
            {
            }

            $crate::__private::cuda_traits!($ty);
        };

        // The size, from `size_of` alone, in a constant of its own: a field
        // that is not GPU data leaves `__GPU_ALIGNED_FIELDS` in error, and
        // with it the constant above, and this still reports.
        #[doc(hidden)]
        const _: () = { $($size)* };
    };
    (
        generic;
        rule: $rule:ident;
        type: $ty:ident;
        params: [$($param:ident),+];
        element: $elem:ident;
        name: $name:literal;
        count: $count:literal;
        fields: [$({ $member:tt: $fty:ty, $fname:literal, $padding:literal })*];
        phantoms: [$($phantom:tt)*];
    ) => {
        #[doc(hidden)]
        #[allow(unused_qualifications, clippy::all)]
        const _: () = {
            // Padding-free for every instantiation, by construction: every
            // field is `$elem` or an array of it (proven below, where
            // `$elem` is opaque) or a `PhantomData`, and the instantiation
            // with `u8` everywhere has no hole, so the `#[repr]` adds none
            // (see `generic_has_no_padding`). That is all `Zeroable`, `Pod`,
            // `GpuData` and cudarc's traits need, for every `$elem: GpuData`.
            $crate::__private::generic_has_no_padding(
                <$ty<$($crate::__gpu_aligned_u8!($param)),+>
                    as $crate::__private::Derived>::CONTIGUOUS,
            );

            // The field list is the struct's own (as in the first arm, with
            // each `PhantomData` written as one), and each field not listed
            // as a `PhantomData` is `$elem` or an array of it. No bounds
            // here: a `where` clause could make `Element` hold for other
            // types.
            #[allow(dead_code)]
            fn __fields<$($param),+>() -> ($ty<$($param),+>, $ty<$($param),+>) {
                $($crate::__private::is_element::<$elem, $fty>();)*
                (
                    $ty {
                        $($member: $crate::__private::never::<$fty>(),)*
                        $($phantom: $crate::__private::core::marker::PhantomData,)*
                    },
                    $ty { ..$crate::__private::never::<$ty<$($param),+>>() },
                )
            }

            // SAFETY: `FACTS` is built from `size_of`, `align_of` and
            // `offset_of!` of each instantiation, every field is `$elem:
            // GpuData` (or a `PhantomData`), no instantiation has padding
            // (see above), and `ELEMENT` checks the rule per instantiation.
            #[automatically_derived]
            unsafe impl<$($param: 'static),+> $crate::__private::Derived for $ty<$($param),+>
            where
                $elem: $crate::GpuData,
                Self: $crate::__private::DerivesCopy,
            {
                type Kind = $crate::__gpu_aligned_rule!(generic $rule);
                const ELEMENT: $crate::GpuLayout = $crate::__private::checked_layout(
                    <Self as $crate::__private::Derived>::FACTS,
                );
                const CONTIGUOUS: $crate::__private::core::primitive::bool = {
                    let mut end = 0;
                    let mut contiguous = true;
                    $(
                        contiguous &= $crate::__private::offset_of!(Self, $member) == end;
                        end += $crate::__private::size_of::<$fty>();
                    )*
                    contiguous & (end == $crate::__private::size_of::<Self>())
                };
                const FACTS: $crate::GpuLayout = $crate::__private::c_layout($crate::__private::facts(
                    $name,
                    $crate::__private::size_of::<Self>(),
                    $crate::__private::align_of::<Self>(),
                    &$crate::__private::Fields::new([$(
                        $crate::__private::field_of::<$fty>(
                            $fname,
                            $crate::__private::offset_of!(Self, $member),
                            $padding,
                        )
                    ),*]),
                ));
            }

            // SAFETY: every field is `Pod` (`$elem: GpuData`) or a
            // `PhantomData`, so all zeroes is a valid value.
            #[automatically_derived]
            unsafe impl<$($param: 'static),+> $crate::__private::bytemuck::Zeroable
                for $ty<$($param),+>
            where
                $elem: $crate::GpuData,
            {
            }

            // SAFETY: no instantiation has padding, every field is `Pod` or
            // a `PhantomData`; `Copy + 'static` the compiler checks.
            #[automatically_derived]
            unsafe impl<$($param: 'static),+> $crate::__private::bytemuck::Pod
                for $ty<$($param),+>
            where
                $elem: $crate::GpuData,
                Self: $crate::__private::core::marker::Copy,
            {
            }

            $crate::__private::cuda_traits!(generic [$($param),+] $elem $ty);
        };
    };
    (
        checks_only;
        rule: $rule:ident;
        type: $ty:ident;
        name: $name:literal;
        count: $count:literal;
        align: $align:literal;
        fields: [$({ $member:tt: $fty:ty, $fname:literal, $padding:literal })*];
        shape: $shape:ident;
        blame: { $($blame:tt)* };
    ) => {
        #[doc(hidden)]
        #[allow(unused_qualifications, clippy::all)]
        const _: () = {
            $crate::__private::derives_copy::<$ty>();

            // The rule, over the layout C gives the field list (with the
            // `align(N)` written, if any): what the struct will be once its
            // `#[repr]` is fixed. Only evaluated next to another error.
            let shapes = [$((
                $crate::__private::size_of::<$fty>(),
                $crate::__private::align_of::<$fty>(),
            )),*];
            let (size, align) = $crate::rules::repr_c_size(&shapes, $align);
            let fields = $crate::__private::c_fields(&shapes, [$(($fname, $padding)),*]);
            let $shape = $crate::__private::Shape { name: $name, size, align, fields: &fields };
            $($blame)*
            $crate::__gpu_aligned_rule!(reject_in $rule, $shape);

            #[allow(dead_code)]
            fn __field_types() {
                $(let _: $crate::GpuType = $crate::__private::type_of::<$fty>();)*
            }
        };
    };
}

/// The rule `__gpu_aligned_derive!` checks, `element` (1, 2, 4, 8 or 16
/// bytes, aligned to its size, no holes: `#[derive(GpuAligned)]`) or `data`
/// (no holes, any size: `#[derive(GpuData)]`), and the kind of data it
/// proves: each check and the kind it allows are chosen by the same word,
/// here, so no caller can pair a kind with a weaker check. Nothing here is
/// `unsafe`; any other word does not expand.
#[doc(hidden)]
#[macro_export]
macro_rules! __gpu_aligned_rule {
    (holds element, $fields:ident, $ty:ident) => {
        $fields.follow_rule(
            $crate::__private::size_of::<$ty>(),
            $crate::__private::align_of::<$ty>(),
        )
    };
    (holds data, $fields:ident, $ty:ident) => {
        $fields.no_holes($crate::__private::size_of::<$ty>())
    };
    (reject element, $ty:ident) => {
        $crate::__private::reject::<$ty>()
    };
    (reject data, $ty:ident) => {
        $crate::__private::reject_holes::<$ty>()
    };
    (reject_in element, $shape:ident) => {
        $crate::__private::reject_in(&$shape)
    };
    (reject_in data, $shape:ident) => {
        $crate::__private::reject_holes_in(&$shape)
    };
    (kind element, $ty:ident) => {
        $crate::__private::kind::Element
    };
    // Chosen by the compiler from the size and alignment it laid out.
    (kind data, $ty:ident) => {
        <$crate::__private::kind::Of<
            {
                $crate::__private::kind::of(
                    $crate::__private::size_of::<$ty>(),
                    $crate::__private::align_of::<$ty>(),
                )
            },
        > as $crate::__private::kind::Pick>::Kind
    };
    // A generic struct's kind cannot depend on its type arguments: an
    // element checked per instantiation (`ELEMENT`), or data.
    (generic element) => {
        $crate::__private::kind::Element
    };
    (generic data) => {
        $crate::__private::kind::Data
    };
}

/// cudarc's `DeviceRepr` and `ValidAsZeroBits` for a GPU type, when this
/// crate is built with `cuda`; nothing otherwise. The derive cannot see this
/// crate's features, so it expands this macro, which was defined knowing
/// them.
#[cfg(feature = "cuda")]
#[doc(hidden)]
#[macro_export]
macro_rules! __gpu_aligned_cuda_traits {
    ($ty:ident) => {
        // SAFETY: the impl holds only where `$ty` is `GpuData` (the bound,
        // which the caller cannot forge: `GpuData` is an `unsafe trait`,
        // implemented by this crate for its own types and by the blanket
        // impl for a checked `Derived`), so `Pod`: `Copy`, no padding,
        // every bit pattern (all zeroes included) valid, so its bytes can be
        // copied to the device or passed as a kernel argument as they are,
        // and a zeroed allocation holds valid values. Its layout is C's and
        // matches CUDA's, by the layout rules. The bound is under
        // `for<'__a>` so that a type that is not `GpuData` leaves the impl
        // unusable rather than in error: the derive reports why, once.
        unsafe impl $crate::__private::cudarc::driver::DeviceRepr for $ty where
            for<'__a> $ty: $crate::GpuData
        {
        }
        // SAFETY: as above: all zeroes is a valid `$ty` (`Zeroable`).
        unsafe impl $crate::__private::cudarc::driver::ValidAsZeroBits for $ty where
            for<'__a> $ty: $crate::GpuData
        {
        }
    };
    (generic [$($param:ident),+] $elem:ident $ty:ident) => {
        // SAFETY: as above, for every instantiation that is `GpuData`
        // (the bound; see the generic arm of `__gpu_aligned_derive`).
        unsafe impl<$($param: 'static),+> $crate::__private::cudarc::driver::DeviceRepr
            for $ty<$($param),+>
        where
            $elem: $crate::GpuData,
            Self: $crate::GpuData,
        {
        }
        // SAFETY: as above: all zeroes is a valid value (`Zeroable`).
        unsafe impl<$($param: 'static),+> $crate::__private::cudarc::driver::ValidAsZeroBits
            for $ty<$($param),+>
        where
            $elem: $crate::GpuData,
            Self: $crate::GpuData,
        {
        }
    };
}

/// Without the `cuda` feature there is no cudarc to implement traits of.
#[cfg(not(feature = "cuda"))]
#[doc(hidden)]
#[macro_export]
macro_rules! __gpu_aligned_cuda_traits {
    ($ty:ident) => {};
    (generic [$($param:ident),+] $elem:ident $ty:ident) => {};
}
