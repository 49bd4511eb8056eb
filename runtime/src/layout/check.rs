//! The rule of [`crate::rules`] applied to a [`GpuLayout`]: which parts it breaks, in order, the
//! compile-time message and where it points, and whether the layout is the one C gives its field
//! list. `rules` knows sizes and alignments only; the field lists are this module's (rules below
//! layout, so neither imports the other both ways).

use super::{GpuField, GpuLayout};
use crate::rules::{Blame, Message, Violation, MAX_WORD};

/// The iterator [`GpuLayout::violations`] returns.
#[derive(Clone, Debug)]
pub struct Violations<'a> {
    pub(super) layout: &'a GpuLayout,
    pub(super) stage: usize,
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

pub(crate) const fn explain_parts(
    name: &str,
    size: usize,
    align: usize,
    fields: &[GpuField],
) -> Message {
    explain_from(name, size, align, fields, 0, "a GPU element")
}

/// The message of `#[derive(GpuData)]`'s check: every hole, each
/// described (the size and alignment are free), or an empty message.
pub(crate) const fn explain_holes(
    name: &str,
    size: usize,
    align: usize,
    fields: &[GpuField],
) -> Message {
    // Stage 2 is the first hole; the size and the alignment are stages 0 and 1.
    explain_from(name, size, align, fields, 2, "GPU data")
}

/// Every violation from `stage` on, each described of `subject`; after a
/// size that is no word, the rest would only repeat it.
const fn explain_from(
    name: &str,
    size: usize,
    align: usize,
    fields: &[GpuField],
    mut stage: usize,
    subject: &str,
) -> Message {
    let mut text = Message::new();
    while let Some((violation, next)) = next_violation(size, align, fields, stage) {
        if !text.is_empty() {
            text = text.text("\n");
        }
        text = crate::rules::describe_as(text, name, &violation, subject);
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

/// The field the first hole of `fields` is before, if any hole is before a field.
pub(crate) const fn first_hole_before(fields: &[GpuField]) -> Option<&'static str> {
    match next_violation(usize::MAX, 1, fields, 2) {
        Some((Violation::InteriorHole { field, .. }, _)) => Some(field),
        _ => None,
    }
}

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

// The stages, in order: 0 the size, 1 the alignment, 2 + i a hole before field i, 2 + fields.len()
// a hole after the last field. Returns the first violation at or after `stage` and the stage to
// resume from. Zero-sized fields hold no bytes, so no hole is before them.
pub(super) const fn next_violation(
    size: usize,
    align: usize,
    fields: &[GpuField],
    mut stage: usize,
) -> Option<(Violation, usize)> {
    while stage <= 2 + fields.len() {
        let found = if stage == 0 {
            if size > MAX_WORD {
                Some(Violation::TooLarge { size, align })
            } else if !crate::rules::is_word_size(size) {
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
                let bytes = size - end;
                Some(Violation::TrailingHole { size, align, bytes })
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

/// Where the layout first differs from C's layout of its field list: the
/// index of the first field at another offset with the offset C gives it,
/// or `fields.len()` for another size (or an alignment C cannot have).
pub(crate) const fn repr_c_mismatch(
    size: usize,
    align: usize,
    fields: &[GpuField],
) -> Option<(usize, usize)> {
    if !align.is_power_of_two() {
        return Some((fields.len(), 0));
    }
    let mut end = 0usize;
    let mut i = 0;
    while i < fields.len() {
        let field = &fields[i];
        let Some(start) = end.checked_next_multiple_of(field.align) else {
            return Some((i, usize::MAX));
        };
        let (next, overflow) = start.overflowing_add(field.size);
        let misplaced = field.size != 0 && field.offset != start;
        if !field.align.is_power_of_two() || misplaced || overflow {
            return Some((i, start));
        }
        end = next;
        i += 1;
    }
    match end.checked_next_multiple_of(align) {
        Some(c_size) if c_size == size => None,
        _ => Some((fields.len(), 0)),
    }
}

/// The message for a struct the compiler did not lay out as C lays out its
/// field list, `(index, c_offset)` as [`repr_c_mismatch`] says.
pub(crate) const fn not_repr_c(
    name: &str,
    fields: &[GpuField],
    size: usize,
    align: usize,
    (index, c_offset): (usize, usize),
) -> Message {
    let m = Message::new()
        .named(name)
        .text(" is not laid out as `#[repr(C)]` lays out its fields: ");
    let m = if index < fields.len() {
        m.text("field `")
            .text(fields[index].name)
            .text("` is at offset ")
            .number(fields[index].offset)
            .text(", where C puts it at ")
            .number(c_offset)
    } else {
        m.text("it is ")
            .bytes(size)
            .text(" (align ")
            .number(align)
            .text("), not the size C gives its fields")
    };
    m.text("; CUDA code reads the fields where C puts them")
        .text("\n  = fix: `#[repr(C)]` on the struct, and no attribute macro after `#[derive(GpuAligned)]` that rewrites its `#[repr]`")
}
