//! The arithmetic of C's struct layout over `(size, align)` pairs, in `const fn`s: what
//! `#[gpu_aligned::padded]` sizes its pad fields and width with, and what the derive rebuilds a
//! struct's layout from once its `#[repr]` is fixed. Plumbing of the macros' generated code, which
//! reaches it through `__private`; the rule itself is [`super`]'s.

use super::{word_for, MAX_WORD};
use crate::align::const_round_up;

/// The hole `repr(C)` leaves before field `index` of a struct whose fields have the `(size, align)`
/// pairs `shapes`: the length of the explicit pad field `#[gpu_aligned::padded]` puts there.
pub const fn pad_before(shapes: &[(usize, usize)], index: usize) -> usize {
    let end = repr_c_end(shapes, index);
    const_round_up(end, shapes[index].1) - end
}

/// The width `#[gpu_aligned::padded]` gives a struct with fields `shapes`:
/// the smallest word size that holds them. Capped at [`MAX_WORD`], so that an
/// oversized struct is reported as too large by the derive.
pub const fn padded_width(shapes: &[(usize, usize)]) -> usize {
    match word_for(repr_c_end(shapes, shapes.len())) {
        Some(word) => word,
        None => MAX_WORD,
    }
}

/// The trailing pad that makes a struct with fields `shapes` exactly as large as its alignment
/// requires: up to `width`, or up to the largest field alignment if that is more, so no byte is
/// left as an implicit hole even when the result breaks another rule.
pub const fn tail_pad(shapes: &[(usize, usize)], width: usize) -> usize {
    let end = repr_c_end(shapes, shapes.len());
    const_round_up(end, max_align(shapes, width)) - end
}

/// The `(size, align)` C gives a struct whose fields have the `(size, align)` pairs `shapes`, at
/// least `align`-aligned (an `align(N)` written on it, or 1).
pub const fn repr_c_size(shapes: &[(usize, usize)], align: usize) -> (usize, usize) {
    let max = max_align(shapes, if align == 0 { 1 } else { align });
    (const_round_up(repr_c_end(shapes, shapes.len()), max), max)
}

/// The offset C gives field `index` of a struct whose fields have the
/// `(size, align)` pairs `shapes`.
pub const fn repr_c_offset(shapes: &[(usize, usize)], index: usize) -> usize {
    const_round_up(repr_c_end(shapes, index), shapes[index].1)
}

// The largest of `floor` and the fields' alignments.
const fn max_align(shapes: &[(usize, usize)], floor: usize) -> usize {
    let mut max = floor;
    let mut i = 0;
    while i < shapes.len() {
        if shapes[i].1 > max {
            max = shapes[i].1;
        }
        i += 1;
    }
    max
}

// Where the first `count` fields of `shapes` end when `repr(C)` lays them out.
const fn repr_c_end(shapes: &[(usize, usize)], count: usize) -> usize {
    let mut end = 0;
    let mut i = 0;
    while i < count {
        end = const_round_up(end, shapes[i].1) + shapes[i].0;
        i += 1;
    }
    end
}
