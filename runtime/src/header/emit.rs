//! Writing C++: the preamble, one struct with its `static_assert`s, and the
//! one-instruction `gpu_load`/`gpu_store` of an element. Everything writes
//! into a [`core::fmt::Write`], so it works without `alloc`.

use super::check::{check_layout, check_one_word};
use super::names::{check_type_name, Member};
use super::HeaderError;
use crate::layout::{GpuLayout, GpuType};
use core::fmt::{self, Write};

/// Writes what every header starts with: `#pragma once`, the fixed-width
/// integer names under NVRTC and `<cstdint>` elsewhere, and the `offsetof`
/// spelling the `static_assert`s use.
///
/// ```
/// let mut text = String::new();
/// gpu_aligned::header::write_preamble(&mut text)?;
/// assert!(text.contains("#pragma once"));
/// # Ok::<(), gpu_aligned::header::HeaderError>(())
/// ```
///
/// # Errors
///
/// [`HeaderError::Write`] if `out` fails.
pub fn write_preamble(out: &mut impl Write) -> Result<(), HeaderError> {
    Ok(out.write_str(PREAMBLE)?)
}

/// Writes the declaration of the struct `layout` describes, with its
/// `static_assert`s. The structs its fields use must be declared before it;
/// [`CudaHeader`](super::CudaHeader) orders them itself.
///
/// ```
/// use gpu_aligned::GpuAligned;
///
/// #[derive(Clone, Copy, GpuAligned)]
/// #[repr(C, align(8))]
/// struct Pair { a: f32, b: f32 }
///
/// let mut text = String::new();
/// gpu_aligned::header::write_struct(&mut text, &Pair::LAYOUT)?;
/// assert!(text.contains("struct __align__(8) Pair {\n    float a;\n    float b;\n};"));
/// # Ok::<(), gpu_aligned::header::HeaderError>(())
/// ```
///
/// # Errors
///
/// [`HeaderError`] if the name cannot be spelled or is taken, the layout
/// cannot be reproduced in C++, or `out` fails.
pub fn write_struct(out: &mut impl Write, layout: &'static GpuLayout) -> Result<(), HeaderError> {
    check_type_name(layout.name)?;
    check_layout(layout)?;
    Ok(struct_text(out, layout, Names::default())?)
}

/// Writes `gpu_load`/`gpu_store` for the element `layout` describes, after
/// its declaration.
///
/// ```
/// use gpu_aligned::GpuAligned;
///
/// #[derive(Clone, Copy, GpuAligned)]
/// #[repr(C, align(8))]
/// struct Pair { a: f32, b: f32 }
///
/// let mut text = String::new();
/// gpu_aligned::header::write_accessors(&mut text, &Pair::LAYOUT)?;
/// assert!(text.contains("u.word = *reinterpret_cast<const uint2*>(p);"));
/// # Ok::<(), gpu_aligned::header::HeaderError>(())
/// ```
///
/// # Errors
///
/// [`HeaderError::NotOneWord`] if the layout is not one GPU word, other
/// [`HeaderError`]s as for [`write_struct`].
pub fn write_accessors(
    out: &mut impl Write,
    layout: &'static GpuLayout,
) -> Result<(), HeaderError> {
    check_type_name(layout.name)?;
    check_one_word(layout)?;
    Ok(accessors_text(out, layout.name, layout.size)?)
}

/// The unsigned integer or vector word a `size`-byte value moves as.
pub(crate) fn word_type(size: usize) -> &'static str {
    match size {
        1 => "unsigned char",
        2 => "unsigned short",
        4 => "unsigned int",
        8 => "uint2",
        _ => "uint4",
    }
}

/// The C++ name of a type with its array bounds stripped.
pub(crate) fn base_name(ty: &GpuType) -> &'static str {
    match ty {
        GpuType::Scalar(scalar) => scalar.cuda_name(),
        GpuType::Vector { cuda_name, .. } => cuda_name,
        GpuType::Struct(layout) => layout.name,
        GpuType::Array { elem, .. } => base_name(elem),
        // Refused by `check_layout`; the arm keeps the match total.
        GpuType::AlignMarker(_) => "uint8_t",
    }
}

/// The names a header gives struct layouts: their own, or the one the user
/// chose with [`CudaHeader::name`](super::CudaHeader::name). A generic
/// type's instantiations share its name (`Pair`), so each one a header
/// declares needs a name of its own (`PairF32`). Layouts are matched by
/// value: each instantiation's `LAYOUT` may be a distinct constant.
#[derive(Clone, Copy, Default)]
pub(crate) struct Names<'a>(pub(crate) &'a [(&'static GpuLayout, &'static str)]);

impl Names<'_> {
    /// The C++ name of `layout`.
    pub(crate) fn of(self, layout: &GpuLayout) -> &'static str {
        self.0
            .iter()
            .find(|(named, _)| core::ptr::eq(*named, layout) || **named == *layout)
            .map_or(layout.name, |(_, name)| name)
    }

    /// [`base_name`], with the structs named as in this header.
    fn base(self, ty: &GpuType) -> &'static str {
        match ty {
            GpuType::Struct(layout) => self.of(layout),
            GpuType::Array { elem, .. } => self.base(elem),
            ty => base_name(ty),
        }
    }
}

/// The array bounds of a declarator, outermost first: `[[f32; 3]; 2]` is
/// `[2][3]`, however many dimensions there are.
fn bounds(ty: &GpuType, out: &mut impl Write) -> fmt::Result {
    if let GpuType::Array { elem, len } = ty {
        write!(out, "[{len}]")?;
        bounds(elem, out)?;
    }
    Ok(())
}

/// The element type and the array bounds of a field's declarator:
/// `[[f32; 3]; 2]` is `float m[2][3]`.
fn declarator(ty: &GpuType, name: &str, names: Names<'_>, out: &mut impl Write) -> fmt::Result {
    write!(out, "{} {}", names.base(ty), Member(name))?;
    bounds(ty, out)
}

pub(crate) const PREAMBLE: &str = concat!(
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

/// The declaration of a checked layout, its structs named by `names`.
pub(crate) fn struct_text(f: &mut impl Write, layout: &GpuLayout, names: Names<'_>) -> fmt::Result {
    let name = names.of(layout);
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
        declarator(&field.ty, field.name, names, f)?;
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
        writeln!(
            f,
            "static_assert(GPU_ALIGNED_OFFSETOF({name}, {member}) == {offset}, \"gpu-aligned: {name}::{member} must be at offset {offset}, as in Rust\");",
            member = Member(field.name),
            offset = field.offset,
        )?;
    }
    Ok(())
}

/// `gpu_load`/`gpu_store` of a checked one-word element.
pub(crate) fn accessors_text(f: &mut impl Write, name: &str, size: usize) -> fmt::Result {
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
