//! Items that exist only for the code `#[derive(GpuAligned)]` and
//! `#[gpu_aligned::padded]` emit. Not public API: no semver guarantees.
//!
//! A proc macro sees only tokens and cannot know a field's size, so
//! everything that needs one is a `const fn` here, evaluated by the compiler:
//! building the layout facts, computing `#[gpu_aligned::padded]`'s pad lengths
//! and width from `(size_of, align_of)` pairs, and [`check`]ing the layout
//! rules, whose message is formatted in `const` so that a broken rule reads
//! as "`Float3` is 12 bytes (align 4)" rather than as a failed assertion.
#![allow(missing_docs)]

pub use bytemuck;
pub use core;

use crate::layout::{GpuAligned, GpuData, GpuField, GpuLayout, GpuType};

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

/// A derived type's fields, in declaration order, with the zero-sized ones
/// (such as a padded type's alignment marker) moved behind the others, so
/// that [`Fields::sized`] can hand out the rest as a `'static` slice.
///
/// The derive builds it inside `LAYOUT` with `&const { Fields::new([..]) }`,
/// not in a `const` item of its own: the compiler evaluates every `const`
/// item eagerly, but `LAYOUT` (and so this) only when something uses it,
/// which keeps the derive cheap to compile.
pub struct Fields<const N: usize> {
    fields: [GpuField; N],
    sized: usize,
    padding: usize,
}

impl<const N: usize> Fields<N> {
    pub const fn new(all: [GpuField; N]) -> Self {
        const UNUSED: GpuField = field("", 0, 0, 1, false, GpuType::AlignMarker(1));
        let mut fields = [UNUSED; N];
        let mut sized = 0;
        let mut padding = 0;
        let mut i = 0;
        while i < N {
            if all[i].size != 0 {
                fields[sized] = all[i];
                sized += 1;
            }
            if all[i].is_padding {
                padding += all[i].size;
            }
            i += 1;
        }
        let mut zero_sized = sized;
        let mut i = 0;
        while i < N {
            if all[i].size == 0 {
                fields[zero_sized] = all[i];
                zero_sized += 1;
            }
            i += 1;
        }
        Fields {
            fields,
            sized,
            padding,
        }
    }

    /// The fields of nonzero size, in declaration order.
    pub const fn sized(&'static self) -> &'static [GpuField] {
        self.fields.split_at(self.sized).0
    }

    /// Bytes of fields marked `#[gpu_aligned(padding)]`.
    pub const fn padding(&self) -> usize {
        self.padding
    }
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

// The layout rules, checked by one `const` per derived type that evaluates
// `check(&LAYOUT)` and panics with the message it returns. A proc macro cannot
// know sizes, so the numbers come from the compiler, through `LAYOUT` (built
// from `size_of`, `align_of` and `offset_of!`); the message is formatted here,
// in `const fn`s, so it can say which sizes broke which rule. One evaluation
// per type (rather than one trait bound per rule and field, zerocopy's way) is
// what keeps the derive's compile time close to bytemuck's.

/// What [`check`] found: empty if the layout is legal, else the message and
/// what to point at.
pub struct Verdict {
    buf: [u8; MESSAGE_CAPACITY],
    len: usize,
    // The first field with a hole before it, if any.
    hole_before: Option<&'static str>,
    // Set by the rules that the alignment (`align(N)`, if written) decides.
    alignment_at_fault: bool,
}

const MESSAGE_CAPACITY: usize = 2048;

impl Verdict {
    const EMPTY: Verdict = Verdict {
        buf: [0; MESSAGE_CAPACITY],
        len: 0,
        hole_before: None,
        alignment_at_fault: false,
    };

    /// Whether a rule is broken.
    pub const fn failed(&self) -> bool {
        self.len != 0
    }

    /// Whether the error should point at field `name` (the first field
    /// with a hole before it).
    pub const fn blames_field(&self, name: &str) -> bool {
        match self.hole_before {
            Some(field) => str_eq(field, name),
            None => false,
        }
    }

    /// Whether the error should point at what sets the alignment (an
    /// alignment below the size, or a trailing hole, and no interior hole).
    pub const fn blames_alignment(&self) -> bool {
        self.alignment_at_fault && self.hole_before.is_none()
    }

    /// The error message (empty if no rule is broken).
    pub const fn message(&self) -> &str {
        match core::str::from_utf8(self.buf.split_at(self.len).0) {
            Ok(message) => message,
            Err(_) => "gpu-aligned: invalid layout (message truncated)",
        }
    }

    // By value rather than `&mut self`: mutable references in `const fn`
    // need Rust 1.83, and the workspace supports 1.81.
    const fn text(mut self, text: &str) -> Self {
        let bytes = text.as_bytes();
        let mut i = 0;
        // Truncation can only cut a long type or field name; it stops at a
        // char boundary so `message` stays valid UTF-8.
        while i < bytes.len() && self.len < MESSAGE_CAPACITY {
            if self.len + 4 >= MESSAGE_CAPACITY && (bytes[i] & 0xC0) != 0x80 {
                break;
            }
            self.buf[self.len] = bytes[i];
            self.len += 1;
            i += 1;
        }
        self
    }

    const fn number(mut self, value: usize) -> Self {
        let mut digits = [0u8; 20];
        let mut count = 0;
        let mut rest = value;
        loop {
            digits[count] = b'0' + (rest % 10) as u8;
            count += 1;
            rest /= 10;
            if rest == 0 {
                break;
            }
        }
        while count > 0 && self.len < MESSAGE_CAPACITY {
            count -= 1;
            self.buf[self.len] = digits[count];
            self.len += 1;
        }
        self
    }

    const fn bytes(self, value: usize) -> Self {
        let this = self.number(value);
        if value == 1 {
            this.text(" byte")
        } else {
            this.text(" bytes")
        }
    }

    // Rules after the first start on a new line.
    const fn rule(self) -> Self {
        if self.len == 0 {
            self
        } else {
            self.text("\n")
        }
    }

    const fn named(self, layout: &GpuLayout) -> Self {
        self.text("`").text(layout.name).text("`")
    }
}

/// Checks the rules of a GPU element against the facts the compiler found;
/// the derive turns a failed [`Verdict`] into a compile error. Each rule has
/// a comment saying why it exists. Later rules step aside when an earlier one
/// already condemns the type, so a 12-byte `float3` gets "12 bytes", not also
/// "aligned to 4".
pub const fn check(layout: &GpuLayout) -> Verdict {
    let v = Verdict::EMPTY;
    // One global-memory instruction moves at most 16 bytes; a bigger element
    // takes several, and no padding can fix that.
    if layout.size > 16 {
        return v
            .named(layout)
            .text(" is ")
            .bytes(layout.size)
            .text(", more than the 16 bytes one GPU load or store can move")
            .text("\n  = rule: a GPU element is 1, 2, 4, 8 or 16 bytes, aligned to its size, with no holes")
            .text("\n  = fix: split it into a structure of arrays (one array per field, or per group of fields that fits in 16 bytes)");
    }
    // CUDA has instructions for 1, 2, 4, 8 and 16 bytes only; any other size
    // is split into several narrower accesses.
    if !is_word_size(layout.size) {
        let word = next_word(layout.size);
        return v
            .named(layout)
            .text(" is ")
            .bytes(layout.size)
            .text(" (align ")
            .number(layout.align)
            .text("): a GPU element must be 1, 2, 4, 8 or 16 bytes")
            .text("\n  = rule: CUDA loads or stores an element in one instruction only when it is 1, 2, 4, 8 or 16 bytes, aligned to its size, with no holes")
            .text("\n  = fix: put `#[gpu_aligned::padded]` on the struct to round it up to ")
            .bytes(word)
            .text(" with explicit zeroed padding, or write `#[repr(C, align(")
            .number(word)
            .text("))]` and add a ")
            .number(word - layout.size)
            .text("-byte pad field marked `#[gpu_aligned(padding)]`");
    }
    let mut v = v;
    // An array of elements aligned to less than their size puts some at
    // addresses that are not multiples of the size, and CUDA then splits each
    // access (or, for a misaligned 8- or 16-byte access, faults).
    if layout.align != layout.size {
        v.alignment_at_fault = true;
        v = v
            .rule()
            .named(layout)
            .text(" is ")
            .bytes(layout.size)
            .text(" but aligned to ")
            .number(layout.align)
            .text(": a GPU element must be aligned to its size")
            .text("\n  = fix: `#[repr(C, align(")
            .number(layout.size)
            .text("))]`, or `#[gpu_aligned::padded]` on the struct to choose the alignment and padding");
    }
    // Holes are bytes no field owns: uninitialised, so the type could not be
    // `Pod`, and on the GPU they cost bandwidth (partly written sectors:
    // 53% of peak instead of 68.8% in GPU-FACTS.md).
    let mut end = 0;
    let mut i = 0;
    while i < layout.fields.len() {
        let field = &layout.fields[i];
        if field.offset > end {
            if v.hole_before.is_none() {
                v.hole_before = Some(field.name);
            }
            v = v
                .rule()
                .named(layout)
                .text(" has ")
                .bytes(field.offset - end)
                .text(" of implicit padding before field `")
                .text(field.name)
                .text("` (offset ")
                .number(field.offset)
                .text("): a GPU element must have no holes")
                .text("\n  = fix: add a field `_pad: [u8; ")
                .number(field.offset - end)
                .text("]` marked `#[gpu_aligned(padding)]` before `")
                .text(field.name)
                .text("`, reorder the fields, or put `#[gpu_aligned::padded]` on the struct");
        }
        if field.offset + field.size > end {
            end = field.offset + field.size;
        }
        i += 1;
    }
    if layout.size > end {
        v.alignment_at_fault = true;
        v = v
            .rule()
            .named(layout)
            .text(" has ")
            .bytes(layout.size - end)
            .text(" of implicit padding after its last field (")
            .bytes(layout.size)
            .text(", align ")
            .number(layout.align)
            .text("): a GPU element must have no holes")
            .text("\n  = fix: add a last field `_pad: [u8; ")
            .number(layout.size - end)
            .text("]` marked `#[gpu_aligned(padding)]`, or put `#[gpu_aligned::padded]` on the struct");
    }
    v
}

const fn str_eq(a: &str, b: &str) -> bool {
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

/// Stops compilation with [`check`]'s message if it blames field `name`.
/// `#[track_caller]`: the error points at the derive's call, which is
/// spanned at that field. A function call rather than a `panic!` expanded in
/// the user's crate keeps each derive cheap to compile.
#[track_caller]
pub const fn blame_field<T: GpuAligned>(name: &str) {
    let verdict = check(&T::LAYOUT);
    if verdict.blames_field(name) {
        panic!("{}", verdict.message())
    }
}

/// Stops compilation with [`check`]'s message if it blames the alignment.
#[track_caller]
pub const fn blame_alignment<T: GpuAligned>() {
    let verdict = check(&T::LAYOUT);
    if verdict.blames_alignment() {
        panic!("{}", verdict.message())
    }
}

/// Stops compilation with [`check`]'s message.
#[track_caller]
pub const fn blame_type<T: GpuAligned>() {
    let verdict = check(&T::LAYOUT);
    if verdict.failed() {
        panic!("{}", verdict.message())
    }
}

/// Whether a `repr(C)` or `repr(transparent)` type of `size` and `align`
/// whose fields' sizes add up to `field_bytes` obeys every rule: a word size,
/// aligned to it, and (since the fields of such a type never overlap) no
/// byte outside a field. This is all the compiler evaluates for a legal
/// type; [`check`], which walks `LAYOUT` to say what is wrong and where, runs
/// only when this fails.
pub const fn is_legal(size: usize, align: usize, field_bytes: usize) -> bool {
    is_word_size(size) && align == size && field_bytes == size
}

const fn next_word(size: usize) -> usize {
    let mut word = 1;
    while word < size {
        word *= 2;
    }
    word
}

/// Whether `size` is a GPU word size; when it is not, the alignment and
/// hole rules step aside (rule 1 or 2 already reports the type).
pub const fn is_word_size(size: usize) -> bool {
    matches!(size, 1 | 2 | 4 | 8 | 16)
}
