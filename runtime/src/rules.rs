//! The one layout rule every GPU element obeys, why it exists, and the
//! `const fn`s that apply it. The derive's compile-time check, the sizes
//! `#[gpu_aligned::padded]` computes, [`GpuLayout::is_one_word`], the
//! coalescing model and the layout report all ask this module, so the rule
//! is written once.
//!
//! # The rule
//!
//! An *element* (the type of one array item) is **1, 2, 4, 8 or 16 bytes,
//! aligned to its size, with no holes**: every byte belongs to a field, and
//! bytes that carry no data are explicit padding fields.
//!
//! # Why
//!
//! - **One instruction per element.** CUDA has global loads and stores of 1,
//!   2, 4, 8 and 16 bytes. A struct compiles to one of them only when it has
//!   one of those sizes, is aligned to it and has no holes: a 12-byte
//!   `{float x, y, z}` (align 4) costs three loads per element, the same
//!   fields in a 16-aligned struct with 4 pad bytes one 16-byte load.
//! - **A misaligned access is a fault, not a slowdown.** An 8- or 16-byte
//!   access at an address that is not a multiple of its size launches fine;
//!   the next synchronize returns `CUDA_ERROR_MISALIGNED_ADDRESS` (716), and
//!   the error is sticky: the context is dead and every later call fails.
//!   An element aligned to its size sits at such an address in every array
//!   slot.
//! - **Holes are uninitialised, and can cost bandwidth.** A hole is memory
//!   no field writes, so the type could not be `bytemuck::Pod`; a kernel
//!   that writes the fields but not the hole can leave partly written
//!   sectors that the memory system must read first. Explicit pad fields
//!   are written like any other field.
//!
//! The rule buys single instructions and fault-free access, not bandwidth:
//! padding a 12-byte float3 to 16 moves 33% more bytes, and streaming it
//! took 1.31x as long per element on an H100. The
//! [`report`](crate::report) says what padding costs; where bandwidth
//! matters, a structure of arrays avoids it.
//!
//! ```
//! use gpu_aligned::rules;
//! use gpu_aligned::vector::float3_16_t;
//! use gpu_aligned::GpuAligned;
//!
//! assert!(rules::is_legal(16, 16, 16)); // float4
//! assert!(!rules::is_legal(12, 4, 12)); // float3: 3 loads
//! assert_eq!(rules::check(&float3_16_t::LAYOUT), Ok(()));
//! assert_eq!(rules::word_for(12), Some(16));
//! ```

use crate::layout::{GpuField, GpuLayout};
use core::fmt;

pub(crate) mod message;

pub use message::Message;

/// The sizes a GPU element may have: the widths of CUDA's global-memory
/// loads and stores.
///
/// ```
/// assert_eq!(gpu_aligned::rules::WORD_SIZES, [1, 2, 4, 8, 16]);
/// ```
pub const WORD_SIZES: [usize; 5] = [1, 2, 4, 8, 16];

/// The widest element: one instruction moves at most 16 bytes.
///
/// ```
/// assert_eq!(gpu_aligned::rules::MAX_WORD, 16);
/// ```
pub const MAX_WORD: usize = 16;

/// Whether `size` is one of [`WORD_SIZES`].
///
/// ```
/// use gpu_aligned::rules::is_word_size;
/// assert!(is_word_size(8));
/// assert!(!is_word_size(12) && !is_word_size(0) && !is_word_size(32));
/// ```
pub const fn is_word_size(size: usize) -> bool {
    matches!(size, 1 | 2 | 4 | 8 | 16)
}

/// Whether a type of `size` bytes, aligned to `align`, whose fields cover
/// `covered` bytes, obeys the rule: a word size, aligned to it, every byte
/// covered. For a struct (whose fields never overlap) `covered` is the sum of
/// its fields' sizes; for an opaque scalar it is its size.
///
/// This is all the compiler evaluates for a legal derived type; [`check`]
/// says which rule a layout breaks.
///
/// ```
/// use gpu_aligned::rules::is_legal;
/// assert!(is_legal(16, 16, 16)); // float4, or float3 + 4 pad bytes
/// assert!(!is_legal(16, 16, 12)); // float3 in 16 bytes, the 4 left as a hole
/// assert!(!is_legal(8, 4, 8)); // two floats aligned to 4: a split access
/// ```
pub const fn is_legal(size: usize, align: usize, covered: usize) -> bool {
    is_word_size(size) && align == size && covered == size
}

/// The smallest word size that holds `size` bytes, or `None` above
/// [`MAX_WORD`]: what padding rounds a type up to.
///
/// ```
/// use gpu_aligned::rules::word_for;
/// assert_eq!(word_for(0), Some(1));
/// assert_eq!(word_for(3), Some(4));
/// assert_eq!(word_for(12), Some(16));
/// assert_eq!(word_for(17), None);
/// ```
pub const fn word_for(size: usize) -> Option<usize> {
    if size > MAX_WORD {
        return None;
    }
    let mut word = 1;
    while word < size {
        word *= 2;
    }
    Some(word)
}

/// One broken part of the rule, with the numbers that break it. `Display`
/// gives a short fact (`size 12 is not 1, 2, 4, 8 or 16`);
/// [`Violation::describe`] the full message with the rule and the fix.
///
/// ```
/// use gpu_aligned::rules::Violation;
/// let v = Violation::NotWordSized { size: 12, align: 4 };
/// assert_eq!(v.to_string(), "size 12 is not 1, 2, 4, 8 or 16");
/// assert!(v.describe("Float3").as_str().contains("#[gpu_aligned::padded]"));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Violation {
    /// More than [`MAX_WORD`] bytes: no padding can make it one access.
    TooLarge {
        /// The type's size.
        size: usize,
        /// The type's alignment.
        align: usize,
    },
    /// At most 16 bytes, but not 1, 2, 4, 8 or 16.
    NotWordSized {
        /// The type's size.
        size: usize,
        /// The type's alignment.
        align: usize,
    },
    /// A word size, aligned to something else.
    Misaligned {
        /// The type's size.
        size: usize,
        /// The type's alignment.
        align: usize,
    },
    /// Bytes no field covers, before a field.
    InteriorHole {
        /// The field after the hole.
        field: &'static str,
        /// That field's offset.
        offset: usize,
        /// Bytes in the hole.
        bytes: usize,
    },
    /// Bytes no field covers, after the last field.
    TrailingHole {
        /// The type's size.
        size: usize,
        /// The type's alignment.
        align: usize,
        /// Bytes in the hole.
        bytes: usize,
    },
}

impl Violation {
    /// The part of the rule this breaks, in one sentence.
    ///
    /// ```
    /// use gpu_aligned::rules::Violation;
    /// let v = Violation::Misaligned { size: 8, align: 4 };
    /// assert_eq!(v.rule(), "a GPU element is aligned to its size");
    /// ```
    pub const fn rule(&self) -> &'static str {
        match self {
            Violation::TooLarge { .. } => "a GPU element is at most 16 bytes, one load or store",
            Violation::NotWordSized { .. } => "a GPU element is 1, 2, 4, 8 or 16 bytes",
            Violation::Misaligned { .. } => "a GPU element is aligned to its size",
            Violation::InteriorHole { .. } | Violation::TrailingHole { .. } => {
                "a GPU element has no holes: every byte belongs to a field"
            }
        }
    }

    /// Whether the type's alignment (an `align(N)` if one was written)
    /// decides this violation: the place a compile error should point to.
    ///
    /// ```
    /// use gpu_aligned::rules::Violation;
    /// assert!(Violation::TrailingHole { size: 16, align: 16, bytes: 4 }.is_about_alignment());
    /// assert!(!Violation::NotWordSized { size: 12, align: 4 }.is_about_alignment());
    /// ```
    pub const fn is_about_alignment(&self) -> bool {
        matches!(
            self,
            Violation::Misaligned { .. } | Violation::TrailingHole { .. }
        )
    }

    /// The full message about type `name`: what is wrong with which numbers,
    /// the rule, and the fix. A `const fn`, so the derive's compile error
    /// carries it.
    ///
    /// ```
    /// use gpu_aligned::rules::Violation;
    /// let v = Violation::InteriorHole { field: "value", offset: 4, bytes: 3 };
    /// let text = v.describe("Tagged");
    /// assert!(text.as_str().starts_with(
    ///     "`Tagged` has 3 bytes of implicit padding before field `value` (offset 4)"
    /// ));
    /// ```
    pub const fn describe(&self, name: &str) -> Message {
        message::describe(Message::new(), name, self)
    }
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Violation::TooLarge { size, .. } | Violation::NotWordSized { size, .. } => {
                write!(f, "size {size} is not 1, 2, 4, 8 or 16")
            }
            Violation::Misaligned { align, .. } => write!(f, "align {align} differs from size"),
            Violation::InteriorHole {
                field,
                offset,
                bytes,
            } => write!(
                f,
                "{bytes}-byte hole before field `{field}` (offset {offset})"
            ),
            Violation::TrailingHole { bytes, .. } => {
                write!(f, "{bytes}-byte hole after the last field")
            }
        }
    }
}

/// The first rule `layout` breaks, in the order of [`violations`], or `Ok`.
/// A layout without fields (a scalar's) is one opaque value with no holes.
///
/// ```
/// use gpu_aligned::rules::{check, Violation};
/// use gpu_aligned::vector::float4;
/// use gpu_aligned::{GpuAligned, GpuLayout};
///
/// assert_eq!(check(&float4::LAYOUT), Ok(()));
/// let float3 = GpuLayout::new("float3", 12, 4, 0, &[]);
/// assert_eq!(check(&float3), Err(Violation::NotWordSized { size: 12, align: 4 }));
/// ```
pub const fn check(layout: &GpuLayout) -> Result<(), Violation> {
    match next_violation(layout.size, layout.align, layout.fields, 0) {
        Some((violation, _)) => Err(violation),
        None => Ok(()),
    }
}

/// Every rule `layout` breaks: the size, then the alignment, then each hole
/// in offset order. The report lists them all; the derive's message stops
/// after a size violation, since padding fixes the rest along with it.
///
/// ```
/// use gpu_aligned::rules::{violations, Violation};
/// use gpu_aligned::GpuLayout;
/// // A 12-byte, 4-aligned layout breaks the size rule and the alignment rule.
/// let layout = GpuLayout::new("F", 12, 4, 0, &[]);
/// let found: Vec<Violation> = violations(&layout).collect();
/// assert_eq!(
///     found,
///     [
///         Violation::NotWordSized { size: 12, align: 4 },
///         Violation::Misaligned { size: 12, align: 4 },
///     ]
/// );
/// ```
pub fn violations(layout: &GpuLayout) -> Violations<'_> {
    Violations { layout, stage: 0 }
}

/// The iterator [`violations`] returns.
#[derive(Clone, Debug)]
pub struct Violations<'a> {
    layout: &'a GpuLayout,
    stage: usize,
}

impl Iterator for Violations<'_> {
    type Item = Violation;

    fn next(&mut self) -> Option<Violation> {
        let layout = self.layout;
        let (violation, next) =
            next_violation(layout.size, layout.align, layout.fields, self.stage)?;
        self.stage = next;
        Some(violation)
    }
}

/// The whole compile-time message for `layout`: each violation described, a
/// size violation alone (padding to a word size also fixes the alignment
/// and holes), or an empty message if the layout is legal.
///
/// ```
/// let layout = gpu_aligned::GpuLayout::new("Float3", 12, 4, 0, &[]);
/// let text = gpu_aligned::rules::explain(&layout);
/// assert!(text.as_str().starts_with("`Float3` is 12 bytes (align 4)"));
/// ```
pub const fn explain(layout: &GpuLayout) -> Message {
    explain_parts(layout.name, layout.size, layout.align, layout.fields)
}

/// [`explain`] over a layout's parts, whose fields need not be `'static`
/// (the derive builds them on the stack of a failing check).
pub(crate) const fn explain_parts(
    name: &str,
    size: usize,
    align: usize,
    fields: &[GpuField],
) -> Message {
    let mut text = Message::new();
    let mut stage = 0;
    while let Some((violation, next)) = next_violation(size, align, fields, stage) {
        if !text.is_empty() {
            text = text.text("\n");
        }
        text = message::describe(text, name, &violation);
        if matches!(
            violation,
            Violation::TooLarge { .. } | Violation::NotWordSized { .. }
        ) {
            break;
        }
        stage = next;
    }
    text
}

/// What a compile error about a layout should point at.
///
/// ```
/// use gpu_aligned::rules::{blame, Blame};
/// use gpu_aligned::{vector::float4, GpuAligned};
/// assert_eq!(blame(&float4::LAYOUT), Blame::Nothing);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Blame {
    /// The layout is legal.
    Nothing,
    /// The first field with a hole before it.
    Field(&'static str),
    /// What sets the alignment (`align(N)`): the element is aligned to less
    /// than its size, or has a hole after its last field, and no hole before
    /// a field.
    Alignment,
    /// The type as a whole (its size).
    Type,
}

/// Where the error about `layout` belongs, consistent with [`explain`]: a
/// size violation blames the type (padding it fixes everything), else the
/// first hole before a field blames that field, else the alignment.
///
/// ```
/// use gpu_aligned::rules::{blame, Blame};
/// use gpu_aligned::{GpuField, GpuLayout, GpuType, Scalar};
/// const FIELDS: [GpuField; 2] = [
///     GpuField::new("tag", 0, 1, 1, false, GpuType::Scalar(Scalar::U8)),
///     GpuField::new("value", 4, 4, 4, false, GpuType::Scalar(Scalar::U32)),
/// ];
/// assert_eq!(blame(&GpuLayout::new("T", 8, 4, 0, &FIELDS)), Blame::Field("value"));
/// assert_eq!(blame(&GpuLayout::new("T", 12, 4, 0, &[])), Blame::Type);
/// ```
pub const fn blame(layout: &GpuLayout) -> Blame {
    blame_parts(layout.size, layout.align, layout.fields)
}

/// [`blame`] over a layout's parts (see [`explain_parts`]).
pub(crate) const fn blame_parts(size: usize, align: usize, fields: &[GpuField]) -> Blame {
    let mut alignment = false;
    let mut stage = 0;
    while let Some((violation, next)) = next_violation(size, align, fields, stage) {
        match violation {
            Violation::TooLarge { .. } | Violation::NotWordSized { .. } => return Blame::Type,
            Violation::InteriorHole { field, .. } => return Blame::Field(field),
            Violation::Misaligned { .. } | Violation::TrailingHole { .. } => alignment = true,
        }
        stage = next;
    }
    if alignment {
        Blame::Alignment
    } else {
        Blame::Nothing
    }
}

// The stages, in order: 0 the size, 1 the alignment, 2 + i a hole before
// field i, 2 + fields.len() a hole after the last field. Returns the first
// violation at or after `stage` and the stage to resume from. Zero-sized
// fields hold no bytes, so no hole is before them.
const fn next_violation(
    size: usize,
    align: usize,
    fields: &[GpuField],
    mut stage: usize,
) -> Option<(Violation, usize)> {
    while stage <= 2 + fields.len() {
        let found = if stage == 0 {
            if size > MAX_WORD {
                Some(Violation::TooLarge { size, align })
            } else if !is_word_size(size) {
                Some(Violation::NotWordSized { size, align })
            } else {
                None
            }
        } else if stage == 1 {
            if align != size {
                Some(Violation::Misaligned { size, align })
            } else {
                None
            }
        } else if fields.is_empty() {
            // One opaque value: no field list to have holes in.
            None
        } else {
            let index = stage - 2;
            let end = end_of_fields(fields, index);
            if index < fields.len() {
                let field = &fields[index];
                if field.size != 0 && field.offset > end {
                    Some(Violation::InteriorHole {
                        field: field.name,
                        offset: field.offset,
                        bytes: field.offset - end,
                    })
                } else {
                    None
                }
            } else if size > end {
                Some(Violation::TrailingHole {
                    size,
                    align,
                    bytes: size - end,
                })
            } else {
                None
            }
        };
        stage += 1;
        if let Some(violation) = found {
            return Some((violation, stage));
        }
    }
    None
}

// The furthest byte covered by the first `count` fields (a zero-sized one
// covers none, wherever it is).
const fn end_of_fields(fields: &[GpuField], count: usize) -> usize {
    let mut end = 0;
    let mut i = 0;
    while i < count {
        let field = &fields[i];
        let field_end = field.offset.saturating_add(field.size);
        if field.size != 0 && field_end > end {
            end = field_end;
        }
        i += 1;
    }
    end
}

/// The hole `repr(C)` leaves before field `index` of a struct whose fields
/// have the `(size, align)` pairs `shapes`: the length of the explicit pad
/// field `#[gpu_aligned::padded]` puts there.
///
/// ```
/// use gpu_aligned::rules::pad_before;
/// // { tag: u8, value: u32 }: 3 bytes before `value`.
/// assert_eq!(pad_before(&[(1, 1), (4, 4)], 1), 3);
/// ```
pub const fn pad_before(shapes: &[(usize, usize)], index: usize) -> usize {
    let end = repr_c_end(shapes, index);
    align_up(end, shapes[index].1) - end
}

/// The width `#[gpu_aligned::padded]` gives a struct with fields `shapes`:
/// the smallest word size that holds them. Capped at [`MAX_WORD`], so that an
/// oversized struct is reported as too large by the derive.
///
/// ```
/// use gpu_aligned::rules::padded_width;
/// assert_eq!(padded_width(&[(4, 4), (4, 4), (4, 4)]), 16); // float3
/// assert_eq!(padded_width(&[(1, 1), (4, 4)]), 8);
/// ```
pub const fn padded_width(shapes: &[(usize, usize)]) -> usize {
    match word_for(repr_c_end(shapes, shapes.len())) {
        Some(word) => word,
        None => MAX_WORD,
    }
}

/// The trailing pad that makes a struct with fields `shapes` exactly as large
/// as its alignment requires: up to `width`, or up to the largest field
/// alignment if that is more, so no byte is left as an implicit hole even
/// when the result breaks another rule.
///
/// ```
/// use gpu_aligned::rules::tail_pad;
/// assert_eq!(tail_pad(&[(4, 4), (4, 4), (4, 4)], 16), 4);
/// ```
pub const fn tail_pad(shapes: &[(usize, usize)], width: usize) -> usize {
    let end = repr_c_end(shapes, shapes.len());
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

const fn align_up(offset: usize, align: usize) -> usize {
    offset.div_ceil(align) * align
}

/// Whether `layout` is exactly what C gives its field list: every field of
/// nonzero size at the offset C gives it (the end of the fields before it,
/// rounded up to its alignment), and the size C gives the struct (the end
/// of the last field, rounded up to `layout.align`).
///
/// The derive checks this on the layout the compiler computed
/// (`offset_of!`, `size_of`, `align_of`), whatever produced the struct's
/// `#[repr]`: the layout a type claims is the layout it has.
///
/// ```
/// use gpu_aligned::rules::is_repr_c;
/// use gpu_aligned::{GpuField, GpuLayout, GpuType, Scalar};
/// const U8: GpuType = GpuType::Scalar(Scalar::U8);
/// const U32: GpuType = GpuType::Scalar(Scalar::U32);
/// // { tag: u8, value: u32 } as C lays it out: 8 bytes, `value` at 4 ...
/// const C: [GpuField; 2] =
///     [GpuField::new("tag", 0, 1, 1, false, U8), GpuField::new("value", 4, 4, 4, false, U32)];
/// assert!(is_repr_c(&GpuLayout::new("Tagged", 8, 4, 0, &C)));
/// // ... and as Rust may reorder it: `value` first.
/// const RUST: [GpuField; 2] =
///     [GpuField::new("tag", 4, 1, 1, false, U8), GpuField::new("value", 0, 4, 4, false, U32)];
/// assert!(!is_repr_c(&GpuLayout::new("Tagged", 8, 4, 0, &RUST)));
/// ```
pub const fn is_repr_c(layout: &GpuLayout) -> bool {
    repr_c_mismatch(layout.size, layout.align, layout.fields).is_none()
}

/// The first fault of a layout against C's, as [`is_repr_c`] judges it:
/// `Some(i)` for field `i` at another offset than C's, `Some(fields.len())`
/// for another size, `None` if it is C's. Zero-sized fields hold no bytes,
/// so only their alignment counts.
pub(crate) const fn repr_c_mismatch(
    size: usize,
    align: usize,
    fields: &[GpuField],
) -> Option<usize> {
    if !align.is_power_of_two() {
        return Some(fields.len());
    }
    let mut end = 0usize;
    let mut i = 0;
    while i < fields.len() {
        let field = &fields[i];
        if !field.align.is_power_of_two() {
            return Some(i);
        }
        let Some(start) = end.checked_next_multiple_of(field.align) else {
            return Some(i);
        };
        if field.size != 0 && field.offset != start {
            return Some(i);
        }
        let Some(next) = start.checked_add(field.size) else {
            return Some(i);
        };
        end = next;
        i += 1;
    }
    match end.checked_next_multiple_of(align) {
        Some(c_size) if c_size == size => None,
        _ => Some(fields.len()),
    }
}

/// The `(size, align)` C gives a struct whose fields have the `(size,
/// align)` pairs `shapes`, at least `align`-aligned (an `align(N)` written
/// on it, or 1).
///
/// ```
/// use gpu_aligned::rules::repr_c_size;
/// assert_eq!(repr_c_size(&[(1, 1), (4, 4)], 1), (8, 4));
/// assert_eq!(repr_c_size(&[(4, 4), (4, 4), (4, 4)], 16), (16, 16));
/// ```
pub const fn repr_c_size(shapes: &[(usize, usize)], align: usize) -> (usize, usize) {
    let mut max = if align == 0 { 1 } else { align };
    let mut i = 0;
    while i < shapes.len() {
        if shapes[i].1 > max {
            max = shapes[i].1;
        }
        i += 1;
    }
    (align_up(repr_c_end(shapes, shapes.len()), max), max)
}

/// The offset C gives field `index` of a struct whose fields have the
/// `(size, align)` pairs `shapes`.
///
/// ```
/// use gpu_aligned::rules::repr_c_offset;
/// assert_eq!(repr_c_offset(&[(1, 1), (4, 4)], 1), 4);
/// ```
pub const fn repr_c_offset(shapes: &[(usize, usize)], index: usize) -> usize {
    align_up(repr_c_end(shapes, index), shapes[index].1)
}

/// The offset C gives field `index` of `fields` (as [`repr_c_mismatch`]
/// reads them, saturating on absurd input).
pub(crate) const fn repr_c_offset_of(fields: &[GpuField], index: usize) -> usize {
    let mut end = 0usize;
    let mut i = 0;
    while i <= index && i < fields.len() {
        let align = if fields[i].align == 0 {
            1
        } else {
            fields[i].align
        };
        let start = match end.checked_next_multiple_of(align) {
            Some(start) => start,
            None => usize::MAX,
        };
        if i == index {
            return start;
        }
        end = start.saturating_add(fields[i].size);
        i += 1;
    }
    end
}

// Where the first `count` fields of `shapes` end when `repr(C)` lays them out.
const fn repr_c_end(shapes: &[(usize, usize)], count: usize) -> usize {
    let mut end = 0;
    let mut i = 0;
    while i < count {
        end = align_up(end, shapes[i].1) + shapes[i].0;
        i += 1;
    }
    end
}
