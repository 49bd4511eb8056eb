//! CUDA C++ declarations generated from Rust types, so a struct is written
//! once and a `.cu` file `#include`s it instead of restating it. Each struct
//! comes out with its Rust alignment as `__align__(N)`, its fields in order
//! (padding included, as real members), nested structs declared first, and
//! `static_assert`s of its `sizeof`, `alignof` and every field's offset, so
//! any drift between the two sides stops the CUDA build instead of corrupting
//! data. Element types also get `gpu_load`/`gpu_store` overloads that move a
//! value with exactly one global-memory instruction: nvcc splits a struct
//! copy into per-field loads even when one wide load is legal
//! (`__align__(16) {float; pad; double}` becomes two `LDG.E.64`), while
//! reading one `uint4` word and reinterpreting it cannot be split.
//!
//! ```
//! use gpu_aligned::header::CudaHeader;
//! use gpu_aligned::vector::float4;
//!
//! let mut header = CudaHeader::new();
//! header.add::<float4>()?; // a CUDA built-in: nothing to declare
//! assert!(header.render().contains("#pragma once"));
//! # Ok::<(), gpu_aligned::header::HeaderError>(())
//! ```

use crate::layout::{GpuAligned, GpuData, GpuLayout, GpuType};
use alloc_crate::{format, string::String, vec::Vec};
use core::fmt::{self, Write};

/// Nesting deeper than this is refused: real types nest a few levels, and
/// hand-built layouts that refer to each other in a cycle must not recurse
/// forever.
const MAX_DEPTH: usize = 32;

/// A CUDA C++ header under construction: add types, then [`render`] it.
///
/// [`render`]: CudaHeader::render
#[derive(Clone, Debug, Default)]
pub struct CudaHeader {
    /// Declaration order: every struct after the structs it contains.
    entries: Vec<Entry>,
}

#[derive(Clone, Copy, Debug)]
struct Entry {
    layout: &'static GpuLayout,
    accessors: bool,
}

/// Why a type cannot be put in a header.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum HeaderError {
    /// A type or field name that is not an ASCII C++ identifier.
    InvalidName {
        /// The name as given.
        name: String,
    },
    /// A type name that CUDA C++ already uses (a keyword, a built-in vector
    /// type such as `float4`, a fixed-width integer name, or one of the
    /// names the header itself defines).
    ReservedName {
        /// The name as given.
        name: String,
    },
    /// Two different layouts share one name (two instantiations of a generic
    /// struct, say); C++ needs distinct names.
    NameClash {
        /// The shared name.
        name: String,
    },
    /// Two fields of one struct map to the same C++ member name (`0` and
    /// `_0`, say).
    DuplicateField {
        /// The struct.
        ty: String,
        /// The C++ member name both map to.
        field: String,
    },
    /// A layout that no C++ struct can reproduce.
    BadLayout {
        /// The struct.
        ty: String,
        /// What is wrong with it.
        fault: LayoutFault,
    },
    /// One-instruction accessors were asked for a type that is not one GPU
    /// word (size 1, 2, 4, 8 or 16, alignment equal to size, no holes).
    NotOneWord {
        /// The struct.
        ty: String,
        /// Its size.
        size: usize,
        /// Its alignment.
        align: usize,
    },
    /// Structs nested deeper than 32 levels (or nested in a cycle).
    TooDeep {
        /// The struct at which the limit was hit.
        ty: String,
    },
}

/// What makes a [`GpuLayout`] impossible to declare in C++.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum LayoutFault {
    /// Alignment is not a power of two, or size is zero or not a multiple of
    /// the alignment.
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
        field: String,
    },
    /// A field's offset is not a multiple of its alignment.
    Misaligned {
        /// The field.
        field: String,
        /// Its offset.
        offset: usize,
    },
    /// A field starts before the previous one ends (fields must be listed in
    /// offset order without overlap), or ends past the struct.
    Overlap {
        /// The field.
        field: String,
        /// Its offset.
        offset: usize,
    },
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
                "two different types are both called `{name}`; C++ needs distinct names"
            ),
            HeaderError::DuplicateField { ty, field } => {
                write!(f, "`{ty}` has two fields that are both `{field}` in C++")
            }
            HeaderError::BadLayout { ty, fault } => write!(f, "`{ty}`: {fault}"),
            HeaderError::NotOneWord { ty, size, align } => write!(
                f,
                "`{ty}` ({size} bytes, align {align}) is not one GPU word: one-instruction \
                 accessors need size 1, 2, 4, 8 or 16, alignment equal to size, no holes"
            ),
            HeaderError::TooDeep { ty } => {
                write!(f, "`{ty}` nests structs more than {MAX_DEPTH} levels deep")
            }
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

impl core::error::Error for HeaderError {}

impl CudaHeader {
    /// An empty header.
    pub fn new() -> Self {
        Self::default()
    }

    /// Declares the element type `T`, with the structs it contains and its
    /// `gpu_load`/`gpu_store` accessors. Adding a type twice, or a type
    /// already declared as part of another, is harmless. Scalars and CUDA
    /// vector types are built into CUDA and add nothing.
    ///
    /// # Errors
    ///
    /// [`HeaderError`] if a name cannot be spelled in C++ or clashes, or a
    /// layout cannot be reproduced; the header is then left unchanged.
    pub fn add<T: GpuAligned>(&mut self) -> Result<&mut Self, HeaderError> {
        self.add_type(&T::TYPE, true)
    }

    /// Declares the field type `T` (a struct that is [`GpuData`] but not an
    /// element, say) and the structs it contains, without accessors.
    ///
    /// # Errors
    ///
    /// As for [`CudaHeader::add`].
    pub fn add_data<T: GpuData>(&mut self) -> Result<&mut Self, HeaderError> {
        self.add_type(&T::TYPE, false)
    }

    /// Declares the struct described by `layout`, and the structs it
    /// contains; with `accessors`, also its `gpu_load`/`gpu_store`.
    ///
    /// # Errors
    ///
    /// As for [`CudaHeader::add`], and [`HeaderError::NotOneWord`] when
    /// `accessors` is asked for a layout that is not one GPU word.
    pub fn add_layout(
        &mut self,
        layout: &'static GpuLayout,
        accessors: bool,
    ) -> Result<&mut Self, HeaderError> {
        let mut entries = self.entries.clone();
        declare(&mut entries, layout, accessors, 0)?;
        self.entries = entries;
        Ok(self)
    }

    fn add_type(
        &mut self,
        ty: &'static GpuType,
        accessors: bool,
    ) -> Result<&mut Self, HeaderError> {
        match ty {
            GpuType::Struct(layout) => self.add_layout(layout, accessors),
            _ => {
                let mut entries = self.entries.clone();
                declare_within(&mut entries, ty, 0)?;
                self.entries = entries;
                Ok(self)
            }
        }
    }

    /// The names of the declared structs, in declaration order.
    pub fn type_names(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.entries.iter().map(|entry| entry.layout.name)
    }

    /// The header's text.
    pub fn render(&self) -> String {
        let mut text = String::new();
        // Writing into a `String` cannot fail.
        let _ = write!(text, "{self}");
        text
    }
}

/// Adds `layout` after everything it contains, unless it is already there.
fn declare(
    entries: &mut Vec<Entry>,
    layout: &'static GpuLayout,
    accessors: bool,
    depth: usize,
) -> Result<(), HeaderError> {
    if depth > MAX_DEPTH {
        return Err(HeaderError::TooDeep {
            ty: layout.name.into(),
        });
    }
    check_type_name(layout.name)?;
    if let Some(entry) = entries.iter_mut().find(|e| e.layout.name == layout.name) {
        if !core::ptr::eq(entry.layout, layout) && *entry.layout != *layout {
            return Err(HeaderError::NameClash {
                name: layout.name.into(),
            });
        }
        if accessors {
            check_one_word(layout)?;
            entry.accessors = true;
        }
        return Ok(());
    }
    check_layout(layout)?;
    if accessors {
        check_one_word(layout)?;
    }
    for field in layout.fields {
        declare_within(entries, &field.ty, depth + 1)?;
    }
    entries.push(Entry { layout, accessors });
    Ok(())
}

fn declare_within(
    entries: &mut Vec<Entry>,
    ty: &'static GpuType,
    depth: usize,
) -> Result<(), HeaderError> {
    match ty {
        GpuType::Struct(inner) => declare(entries, inner, false, depth),
        GpuType::Array { elem, .. } => declare_within(entries, elem, depth),
        _ => Ok(()),
    }
}

fn check_one_word(layout: &GpuLayout) -> Result<(), HeaderError> {
    if layout.is_one_word() {
        Ok(())
    } else {
        Err(HeaderError::NotOneWord {
            ty: layout.name.into(),
            size: layout.size,
            align: layout.align,
        })
    }
}

fn check_layout(layout: &GpuLayout) -> Result<(), HeaderError> {
    let bad = |fault| HeaderError::BadLayout {
        ty: layout.name.into(),
        fault,
    };
    if !layout.align.is_power_of_two() || layout.size == 0 || layout.size % layout.align != 0 {
        return Err(bad(LayoutFault::SizeOrAlign {
            size: layout.size,
            align: layout.align,
        }));
    }
    let mut end = 0;
    let mut members: Vec<String> = Vec::with_capacity(layout.fields.len());
    for field in layout.fields {
        let name = || String::from(field.name);
        let type_agrees = field.size == field.ty.size()
            && field.align == field.ty.align()
            && field.size > 0
            && field.align <= layout.align
            && !contains_marker(&field.ty);
        if !type_agrees {
            return Err(bad(LayoutFault::FieldType { field: name() }));
        }
        if field.offset % field.align != 0 {
            return Err(bad(LayoutFault::Misaligned {
                field: name(),
                offset: field.offset,
            }));
        }
        let fits = field
            .offset
            .checked_add(field.size)
            .is_some_and(|e| e <= layout.size);
        if field.offset < end || !fits {
            return Err(bad(LayoutFault::Overlap {
                field: name(),
                offset: field.offset,
            }));
        }
        end = field.offset + field.size;
        check_type_names_within(&field.ty)?;
        let member = member_name(field.name)?;
        if members.contains(&member) {
            return Err(HeaderError::DuplicateField {
                ty: layout.name.into(),
                field: member,
            });
        }
        members.push(member);
    }
    Ok(())
}

fn contains_marker(ty: &GpuType) -> bool {
    match ty {
        GpuType::AlignMarker(_) => true,
        GpuType::Array { elem, .. } => contains_marker(elem),
        _ => false,
    }
}

/// Vector types are emitted by their CUDA name, so it must at least be an
/// identifier; struct names are checked when the struct is declared.
fn check_type_names_within(ty: &GpuType) -> Result<(), HeaderError> {
    match ty {
        GpuType::Vector { cuda_name, .. } if !is_identifier(cuda_name) => {
            Err(HeaderError::InvalidName {
                name: (*cuda_name).into(),
            })
        }
        GpuType::Array { elem, .. } => check_type_names_within(elem),
        _ => Ok(()),
    }
}

fn is_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

fn check_type_name(name: &str) -> Result<(), HeaderError> {
    if !is_identifier(name) {
        return Err(HeaderError::InvalidName { name: name.into() });
    }
    if is_keyword(name) || is_cuda_builtin_type(name) || matches!(name, "gpu_load" | "gpu_store") {
        return Err(HeaderError::ReservedName { name: name.into() });
    }
    Ok(())
}

/// The C++ member name of a Rust field: tuple fields `0`, `1` become `_0`,
/// `_1`; a raw identifier loses its `r#`; a name that is a C++ keyword (a
/// Rust field may be called `class` or `float`) gets a trailing `_`.
///
/// # Errors
///
/// [`HeaderError::InvalidName`] when the result is still not an ASCII C++
/// identifier (a non-ASCII Rust name, say).
pub fn member_name(rust_name: &str) -> Result<String, HeaderError> {
    let member = spell_member(rust_name);
    if is_identifier(&member) {
        Ok(member)
    } else {
        Err(HeaderError::InvalidName {
            name: rust_name.into(),
        })
    }
}

fn spell_member(rust_name: &str) -> String {
    let raw = rust_name.strip_prefix("r#").unwrap_or(rust_name);
    if raw.starts_with(|c: char| c.is_ascii_digit()) {
        format!("_{raw}")
    } else if is_keyword(raw) {
        format!("{raw}_")
    } else {
        String::from(raw)
    }
}

fn is_keyword(name: &str) -> bool {
    const KEYWORDS: &[&str] = &[
        "alignas",
        "alignof",
        "and",
        "and_eq",
        "asm",
        "auto",
        "bitand",
        "bitor",
        "bool",
        "break",
        "case",
        "catch",
        "char",
        "char8_t",
        "char16_t",
        "char32_t",
        "class",
        "compl",
        "concept",
        "const",
        "consteval",
        "constexpr",
        "constinit",
        "const_cast",
        "continue",
        "co_await",
        "co_return",
        "co_yield",
        "decltype",
        "default",
        "delete",
        "do",
        "double",
        "dynamic_cast",
        "else",
        "enum",
        "explicit",
        "export",
        "extern",
        "false",
        "float",
        "for",
        "friend",
        "goto",
        "if",
        "inline",
        "int",
        "long",
        "mutable",
        "namespace",
        "new",
        "noexcept",
        "not",
        "not_eq",
        "nullptr",
        "operator",
        "or",
        "or_eq",
        "private",
        "protected",
        "public",
        "register",
        "reinterpret_cast",
        "requires",
        "return",
        "short",
        "signed",
        "sizeof",
        "static",
        "static_assert",
        "static_cast",
        "struct",
        "switch",
        "template",
        "this",
        "thread_local",
        "throw",
        "true",
        "try",
        "typedef",
        "typeid",
        "typename",
        "union",
        "unsigned",
        "using",
        "virtual",
        "void",
        "volatile",
        "wchar_t",
        "while",
        "xor",
        "xor_eq",
    ];
    KEYWORDS.contains(&name)
}

/// CUDA's vector types (`float4`, `ulonglong2`, `dim3`, ...), the
/// fixed-width integer typedefs and the other names CUDA code takes for
/// granted.
fn is_cuda_builtin_type(name: &str) -> bool {
    const LANE_TYPES: &[&str] = &[
        "char",
        "uchar",
        "short",
        "ushort",
        "int",
        "uint",
        "long",
        "ulong",
        "longlong",
        "ulonglong",
        "float",
        "double",
        "half",
        "bfloat",
    ];
    const OTHERS: &[&str] = &[
        "dim3",
        "size_t",
        "ptrdiff_t",
        "intptr_t",
        "uintptr_t",
        "nullptr_t",
        "__half",
        "__half2",
        "__nv_bfloat16",
        "__nv_bfloat162",
        "__int128",
    ];
    let vector = name
        .strip_suffix(['1', '2', '3', '4'])
        .is_some_and(|lane| LANE_TYPES.contains(&lane));
    let fixed_width = name
        .strip_suffix("_t")
        .and_then(|n| n.strip_prefix('u').or(Some(n)))
        .and_then(|n| n.strip_prefix("int"))
        .is_some_and(|bits| matches!(bits, "8" | "16" | "32" | "64"));
    vector || fixed_width || OTHERS.contains(&name)
}

/// The unsigned integer or vector word a `size`-byte element moves as.
fn word_type(size: usize) -> &'static str {
    match size {
        1 => "unsigned char",
        2 => "unsigned short",
        4 => "unsigned int",
        8 => "uint2",
        _ => "uint4",
    }
}

/// The element type and the array bounds of a field's declarator:
/// `[[f32; 3]; 2]` is `float m[2][3]`.
fn declarator(ty: &GpuType, name: &str, out: &mut impl Write) -> fmt::Result {
    let mut bounds: [usize; MAX_DEPTH] = [0; MAX_DEPTH];
    let mut rank = 0;
    let mut elem = ty;
    while let GpuType::Array { elem: inner, len } = elem {
        if rank < MAX_DEPTH {
            bounds[rank] = *len;
            rank += 1;
        }
        elem = inner;
    }
    let base = match elem {
        GpuType::Scalar(scalar) => scalar.cuda_name(),
        GpuType::Vector { cuda_name, .. } => cuda_name,
        GpuType::Struct(layout) => layout.name,
        // Refused by `check_layout`; the arm keeps the match total.
        GpuType::Array { .. } | GpuType::AlignMarker(_) => "uint8_t",
    };
    write!(out, "{base} {name}")?;
    for len in &bounds[..rank] {
        write!(out, "[{len}]")?;
    }
    Ok(())
}

impl fmt::Display for CudaHeader {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(PREAMBLE)?;
        for entry in &self.entries {
            write_struct(f, entry.layout)?;
            if entry.accessors {
                write_accessors(f, entry.layout.name, entry.layout.size)?;
            }
        }
        Ok(())
    }
}

const PREAMBLE: &str = concat!(
    "// Generated by gpu-aligned ",
    env!("CARGO_PKG_VERSION"),
    " from Rust types. Do not edit: regenerate it.\n",
    "// Every struct is checked against its Rust layout by the static_asserts that\n",
    "// follow it; gpu_load/gpu_store move an element with one global-memory\n",
    "// instruction whatever its fields.\n",
    "#pragma once\n",
    "\n",
    "#if defined(__CUDACC_RTC__)\n",
    "#if !defined(INT8_MAX)\n",
    "// NVRTC has no <cstdint> of its own; these are the definitions libcu++ uses there.\n",
    "typedef signed char int8_t;\n",
    "typedef unsigned char uint8_t;\n",
    "typedef signed short int16_t;\n",
    "typedef unsigned short uint16_t;\n",
    "typedef signed int int32_t;\n",
    "typedef unsigned int uint32_t;\n",
    "typedef signed long long int64_t;\n",
    "typedef unsigned long long uint64_t;\n",
    "#endif\n",
    "#else\n",
    "#include <cstdint>\n",
    "#endif\n",
    "\n",
    "#ifndef GPU_ALIGNED_OFFSETOF\n",
    "#if defined(__CUDACC_RTC__)\n",
    "// NVRTC before 13.4 has no __builtin_offsetof; EDG's __INTADDR__ keeps the\n",
    "// null-pointer form a constant expression. Define GPU_ALIGNED_OFFSETOF\n",
    "// before including this header to choose another spelling.\n",
    "#define GPU_ALIGNED_OFFSETOF(type, member) \\\n",
    "    ((unsigned long long)__INTADDR__(&(((type*)0)->member)))\n",
    "#else\n",
    "#define GPU_ALIGNED_OFFSETOF(type, member) __builtin_offsetof(type, member)\n",
    "#endif\n",
    "#endif\n",
);

fn write_struct(f: &mut fmt::Formatter<'_>, layout: &GpuLayout) -> fmt::Result {
    let name = layout.name;
    let shape = if layout.is_one_word() {
        ", one GPU word"
    } else {
        ""
    };
    write!(
        f,
        "\n// {name}: {size} bytes, align {align}{shape}.\nstruct __align__({align}) {name} {{\n",
        size = layout.size,
        align = layout.align,
    )?;
    let mut end = 0;
    for field in layout.fields {
        if field.offset > end {
            // Unreachable for types that keep the `GpuData` contract (no
            // implicit padding); a hand-built layout with a hole still gets a
            // C++ twin whose offsets match.
            writeln!(
                f,
                "    uint8_t gpu_aligned_gap_{end}[{}];",
                field.offset - end
            )?;
        }
        f.write_str("    ")?;
        let member = spell_member(field.name);
        declarator(&field.ty, &member, f)?;
        f.write_str(";")?;
        if field.is_padding {
            f.write_str(" // padding")?;
        }
        f.write_str("\n")?;
        end = field.offset + field.size;
    }
    if layout.size > end {
        writeln!(
            f,
            "    uint8_t gpu_aligned_gap_{end}[{}];",
            layout.size - end
        )?;
    }
    f.write_str("};\n")?;
    writeln!(
        f,
        "static_assert(sizeof({name}) == {size}, \"gpu-aligned: sizeof({name}) must be {size}, as in Rust\");\n\
         static_assert(alignof({name}) == {align}, \"gpu-aligned: alignof({name}) must be {align}, as in Rust\");",
        size = layout.size,
        align = layout.align,
    )?;
    for field in layout.fields {
        let member = spell_member(field.name);
        writeln!(
            f,
            "static_assert(GPU_ALIGNED_OFFSETOF({name}, {member}) == {offset}, \"gpu-aligned: {name}::{member} must be at offset {offset}, as in Rust\");",
            offset = field.offset,
        )?;
    }
    Ok(())
}

fn write_accessors(f: &mut fmt::Formatter<'_>, name: &str, size: usize) -> fmt::Result {
    let word = word_type(size);
    write!(
        f,
        "__device__ __forceinline__ {name} gpu_load(const {name}* p) {{\n\
         \x20   union {{ {word} word; {name} value; }} u;\n\
         \x20   u.word = *reinterpret_cast<const {word}*>(p);\n\
         \x20   return u.value;\n\
         }}\n\
         __device__ __forceinline__ void gpu_store({name}* p, const {name}& value) {{\n\
         \x20   union {{ {word} word; {name} value; }} u;\n\
         \x20   u.value = value;\n\
         \x20   *reinterpret_cast<{word}*>(p) = u.word;\n\
         }}\n"
    )
}
