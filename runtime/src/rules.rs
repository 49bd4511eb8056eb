//! The one layout rule every GPU element obeys, why it exists, and the `const fn`s that apply it,
//! written once for the derive, the report and the models.
//!
//! # The rule
//!
//! An *element* (the type of one array item) is **1, 2, 4, 8 or 16 bytes,
//! aligned to its size, with no holes**: every byte belongs to a field, and
//! bytes that carry no data are explicit padding fields.
//!
//! # Why
//!
//! - **One instruction per element.** CUDA loads and stores 1, 2, 4, 8 and
//!   16 bytes; a 12-byte `{float x, y, z}` costs three loads, the same fields
//!   with 4 pad bytes in a 16-aligned struct one.
//! - **A misaligned access is a sticky fault** (`CUDA_ERROR_MISALIGNED_ADDRESS`),
//!   not a slowdown: the context is dead.
//! - **Holes are uninitialised**, so the type could not be `bytemuck::Pod`.
//!
//! The rule buys single instructions, not bandwidth: padding moves more bytes (the
//! [`report`](crate::report) says how many); a structure of arrays avoids it.
//!
//! ```
//! use gpu_aligned::rules;
//! use gpu_aligned::vector::float3_16_t;
//! use gpu_aligned::GpuAligned;
//!
//! assert!(rules::is_legal(16, 16, 16)); // float4
//! assert!(!rules::is_legal(12, 4, 12)); // float3: 3 loads
//! assert_eq!(float3_16_t::LAYOUT.check(), Ok(()));
//! assert_eq!(rules::word_for(12), Some(16));
//! ```

use core::fmt;

pub(crate) mod message;
pub(crate) mod repr_c;

pub(crate) use message::describe_as;
pub use message::Message;

/// The sizes a GPU element may have: the widths of CUDA's global-memory loads and stores.
pub const WORD_SIZES: [usize; 5] = [1, 2, 4, 8, 16];

/// The widest element: one instruction moves at most 16 bytes.
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

/// Whether a type of `size` bytes, aligned to `align`, whose fields cover `covered` bytes, obeys
/// the rule (all the compiler evaluates for a legal derived type;
/// [`GpuLayout::check`](crate::GpuLayout::check) says which part a layout breaks).
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

/// One broken part of the rule, with its numbers. `Display` gives a short
/// fact; [`Violation::describe`] the full message with the rule and the fix.
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

    /// The full message about type `name`: what is wrong, the rule, and the
    /// fix (`const`, for the derive's compile error).
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
        describe_as(Message::new(), name, self, "a GPU element")
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

/// What a compile error about a layout should point at
/// ([`GpuLayout::blame`](crate::GpuLayout::blame)).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Blame {
    /// The layout is legal.
    Nothing,
    /// The first field with a hole before it.
    Field(&'static str),
    /// What sets the alignment (`align(N)`): misaligned, or a trailing hole.
    Alignment,
    /// The type as a whole (its size).
    Type,
}
