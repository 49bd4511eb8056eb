//! Why a type cannot be put in a header; names are `'static`, so no allocation.

use super::names::Member;
use super::MAX_DEPTH;
use core::fmt;

/// Why a type cannot be put in a header.
///
/// ```
/// use gpu_aligned::header::HeaderError;
///
/// let error = HeaderError::ReservedName { name: "float4" };
/// assert!(error.to_string().contains("already a name in CUDA C++"));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum HeaderError {
    /// A type or field name that is not an ASCII C++ identifier.
    InvalidName {
        /// The name as given.
        name: &'static str,
    },
    /// A type name that CUDA C++ or the header already uses.
    ReservedName {
        /// The name as given.
        name: &'static str,
    },
    /// Two different layouts share one name.
    NameClash {
        /// The shared name.
        name: &'static str,
    },
    /// Two fields of one struct map to the same C++ member name (`0` and `_0`, say).
    DuplicateField {
        /// The struct.
        ty: &'static str,
        /// The Rust name of the second field.
        field: &'static str,
    },
    /// A layout that no C++ struct can reproduce.
    BadLayout {
        /// The struct.
        ty: &'static str,
        /// What is wrong with it.
        fault: LayoutFault,
    },
    /// The columns given for a type's views are not its data fields, each
    /// once, or differ from the order given before.
    ColumnsNotFields {
        /// The struct.
        ty: &'static str,
    },
    /// One-instruction accessors were asked for a type that is not one GPU word.
    NotOneWord {
        /// The struct.
        ty: &'static str,
        /// Its size.
        size: usize,
        /// Its alignment.
        align: usize,
    },
    /// Views were asked for a struct with a field that is not one GPU word
    /// (a `float3`: use `float3_16_t`; an array: split it).
    NotAColumn {
        /// The struct.
        ty: &'static str,
        /// The field.
        field: &'static str,
    },
    /// Views were asked for a struct with no data fields.
    NoColumns {
        /// The struct.
        ty: &'static str,
    },
    /// A field named like one of the views' own members (`len`, `load`...).
    ReservedMember {
        /// The struct.
        ty: &'static str,
        /// The field.
        field: &'static str,
    },
    /// A view's name (`P_soa`...) is taken by another declared struct.
    ViewNameTaken {
        /// The struct whose views were asked for.
        ty: &'static str,
        /// The declared struct that has the view's name.
        taken_by: &'static str,
    },
    /// [`CudaHeader::name`](super::CudaHeader::name) was given a type that is not a struct.
    NotAStruct {
        /// The name the header was asked to give it.
        name: &'static str,
    },
    /// Structs nested deeper than 32 levels (or nested in a cycle).
    TooDeep {
        /// The struct at which the limit was hit.
        ty: &'static str,
    },
    /// The writer the header was written into failed.
    Write,
}

/// What makes a [`GpuLayout`](crate::GpuLayout) impossible to declare in C++.
///
/// ```
/// use gpu_aligned::header::LayoutFault;
///
/// let fault = LayoutFault::Misaligned { field: "y", offset: 2 };
/// assert_eq!(fault.to_string(), "field `y` at offset 2 is not aligned for its type");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum LayoutFault {
    /// Alignment is not a power of two, or size is zero or not a multiple of the alignment.
    SizeOrAlign {
        /// `size`.
        size: usize,
        /// `align`.
        align: usize,
    },
    /// A field's size or alignment disagrees with its type's, its alignment
    /// exceeds the struct's, or its type is a zero-sized marker.
    FieldType {
        /// The field.
        field: &'static str,
    },
    /// A field's offset is not a multiple of its alignment.
    Misaligned {
        /// The field.
        field: &'static str,
        /// Its offset.
        offset: usize,
    },
    /// A field starts before the previous one ends, or ends past the struct.
    Overlap {
        /// The field.
        field: &'static str,
        /// Its offset.
        offset: usize,
    },
}

impl From<fmt::Error> for HeaderError {
    fn from(_: fmt::Error) -> Self {
        HeaderError::Write
    }
}

impl fmt::Display for HeaderError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HeaderError::InvalidName { name } => {
                write!(f, "`{name}` is not an ASCII C++ identifier")
            }
            HeaderError::ReservedName { name } => {
                write!(
                    f,
                    "`{name}` is already a name in CUDA C++; rename the Rust type"
                )
            }
            HeaderError::NameClash { name } => write!(
                f,
                "two different types are both called `{name}`; C++ needs distinct names \
                 (name each instantiation of a generic struct with `CudaHeader::name`)"
            ),
            HeaderError::NotAStruct { name } => write!(
                f,
                "only a struct can be declared as `{name}`: scalars, CUDA vector types and \
                 arrays keep the names CUDA gives them"
            ),
            HeaderError::DuplicateField { ty, field } => write!(
                f,
                "`{ty}` has two fields that are both `{}` in C++",
                Member(field)
            ),
            HeaderError::BadLayout { ty, .. } => {
                write!(f, "`{ty}` has a layout no C++ struct can reproduce")
            }
            HeaderError::NotOneWord { ty, size, align } => write!(
                f,
                "`{ty}` ({size} bytes, align {align}) is not one GPU word: one-instruction \
                 accessors need size 1, 2, 4, 8 or 16, alignment equal to size, no holes"
            ),
            HeaderError::NotAColumn { ty, field } => write!(
                f,
                "`{ty}::{field}` is not one GPU word, so its column cannot move an element in \
                 one instruction: use a word-sized type (`float3_16_t` for a `float3`, `u8` for \
                 a `bool`) or split the field"
            ),
            HeaderError::ColumnsNotFields { ty } => write!(
                f,
                "the columns given for `{ty}`'s views are not its data fields, each once, in \
                 one order"
            ),
            HeaderError::NoColumns { ty } => {
                write!(f, "`{ty}` has no data fields to make columns of")
            }
            HeaderError::ReservedMember { ty, field } => write!(
                f,
                "`{ty}::{field}` is spelled `{}` in C++, a member the views already have; \
                 rename the field",
                Member(field)
            ),
            HeaderError::ViewNameTaken { ty, taken_by } => write!(
                f,
                "the views of `{ty}` would be called like the declared struct `{taken_by}`"
            ),
            HeaderError::TooDeep { ty } => {
                write!(f, "`{ty}` nests structs more than {MAX_DEPTH} levels deep")
            }
            HeaderError::Write => f.write_str("the writer the header was written into failed"),
        }
    }
}

impl fmt::Display for LayoutFault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LayoutFault::SizeOrAlign { size, align } => write!(
                f,
                "size {size} with alignment {align}: need a power-of-two alignment dividing a \
                 nonzero size"
            ),
            LayoutFault::FieldType { field } => write!(
                f,
                "field `{field}` has a size or alignment that its type, or the struct, contradicts"
            ),
            LayoutFault::Misaligned { field, offset } => {
                write!(
                    f,
                    "field `{field}` at offset {offset} is not aligned for its type"
                )
            }
            LayoutFault::Overlap { field, offset } => write!(
                f,
                "field `{field}` at offset {offset} overlaps the previous field or the end"
            ),
        }
    }
}

// A bad layout's fault is its source, not part of its message (a reporter
// walking the chain would print it twice otherwise).
impl core::error::Error for HeaderError {
    fn source(&self) -> Option<&(dyn core::error::Error + 'static)> {
        match self {
            HeaderError::BadLayout { fault, .. } => Some(fault),
            _ => None,
        }
    }
}

impl core::error::Error for LayoutFault {}

// `?` turns both into a `Box<dyn Error + Send + Sync>`.
const _: () = {
    fn is_boxable<T: core::error::Error + Send + Sync + 'static>() {}
    let _ = is_boxable::<HeaderError>;
    let _ = is_boxable::<LayoutFault>;
};
