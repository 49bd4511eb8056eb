//! The kernel side of structure of arrays: the views `P_soa`, `P_aos` and
//! `P_aos16` of a struct `P` (documented in [`header`](super)). Tiles of 32
//! elements are not emitted: the sector model prices them as columns.

use super::check::{check_columns, check_layout};
use super::emit::base_name;
use super::names::{check_type_name, Member};
use super::HeaderError;
use crate::align::const_round_up;
use crate::layout::{GpuField, GpuLayout};
use crate::rules::MAX_WORD;
use core::fmt::{self, Write};

// Where `carve` starts each column, as an arena does by default.
use crate::align::ARRAY_ALIGN as COLUMN_ALIGN;

/// The names of the three views of `name`, in emission order.
#[cfg_attr(not(feature = "alloc"), allow(dead_code))]
pub(crate) const VIEW_SUFFIXES: [&str; 3] = ["_soa", "_aos", "_aos16"];

/// Writes the [views](super#structure-of-arrays-and-array-of-structs-views-the-kernel-side)
/// of the struct `layout` describes, declared first
/// ([`write_struct`](super::write_struct)), and the first time their templates.
///
/// ```
/// use gpu_aligned::{GpuField, GpuLayout, GpuType, Scalar};
///
/// const F32: GpuType = GpuType::Scalar(Scalar::F32);
/// static BODY: GpuLayout = GpuLayout::new("Body", 8, 4, 0, &[
///     GpuField::new("mass", 0, 4, 4, false, F32),
///     GpuField::new("charge", 4, 4, 4, false, F32),
/// ]);
/// let mut text = String::new();
/// gpu_aligned::header::write_struct(&mut text, &BODY)?;
/// gpu_aligned::header::write_views(&mut text, &BODY)?;
/// assert!(text.contains("struct Body_soa {\n    gpu_aligned_column<float, 4> mass;"));
/// assert!(text.contains("struct Body_aos {\n    gpu_aligned_column<float, 8> mass;"));
/// # Ok::<(), gpu_aligned::header::HeaderError>(())
/// ```
///
/// # Errors
///
/// [`HeaderError::NotAColumn`] for a data field that is not one GPU word,
/// [`HeaderError::NoColumns`], [`HeaderError::ReservedMember`], other
/// [`HeaderError`]s as for [`write_struct`](super::write_struct).
pub fn write_views(out: &mut impl Write, layout: &'static GpuLayout) -> Result<(), HeaderError> {
    check_type_name(layout.name)?;
    check_layout(layout)?;
    check_columns(layout)?;
    Ok(views_text(out, layout.name, layout, layout.fields)?)
}

const SUPPORT: &str = r#"
#ifndef GPU_ALIGNED_VIEWS
#define GPU_ALIGNED_VIEWS
// Element i of a column of a structure of arrays, or of one field of an
// array of structs: Stride bytes after element i - 1. It is one pointer, so a
// view made of columns passes to a kernel by value.
template <class F, unsigned long long Stride>
struct gpu_aligned_column {
    F* ptr;
    __host__ __device__ __forceinline__ F& operator[](unsigned long long i) const {
        return *reinterpret_cast<F*>(reinterpret_cast<char*>(ptr) + i * Stride);
    }
};
// The word a 1, 2, 4, 8 or 16-byte value moves as. A kernel may write a field
// through a column and then load the element as words: the words may alias
// any type, or an optimizer that trusts types could reorder the two.
#if defined(__GNUC__) || defined(__clang__)
#define GPU_ALIGNED_MAY_ALIAS __attribute__((__may_alias__))
#else
#define GPU_ALIGNED_MAY_ALIAS
#endif
template <unsigned long long Bytes> struct gpu_aligned_word;
template <> struct gpu_aligned_word<1> { typedef unsigned char GPU_ALIGNED_MAY_ALIAS type; };
template <> struct gpu_aligned_word<2> { typedef unsigned short GPU_ALIGNED_MAY_ALIAS type; };
template <> struct gpu_aligned_word<4> { typedef unsigned int GPU_ALIGNED_MAY_ALIAS type; };
struct GPU_ALIGNED_MAY_ALIAS gpu_aligned_word8 { uint2 v; };
struct GPU_ALIGNED_MAY_ALIAS gpu_aligned_word16 { uint4 v; };
template <> struct gpu_aligned_word<8> { typedef gpu_aligned_word8 type; };
template <> struct gpu_aligned_word<16> { typedef gpu_aligned_word16 type; };
// One instruction for a naturally aligned 1, 2, 4, 8 or 16-byte value: nvcc
// may split a struct copy into per-field accesses, it cannot split one word.
template <class T>
__host__ __device__ __forceinline__ T gpu_aligned_load(const T* p) {
    typedef typename gpu_aligned_word<sizeof(T)>::type W;
    static_assert(alignof(T) == sizeof(T), "gpu-aligned: a column element is one GPU word");
    union { W word; T value; } u;
    u.word = *reinterpret_cast<const W*>(p);
    return u.value;
}
template <class T>
__host__ __device__ __forceinline__ void gpu_aligned_store(T* p, const T& value) {
    typedef typename gpu_aligned_word<sizeof(T)>::type W;
    union { W word; T value; } u;
    u.value = value;
    *reinterpret_cast<W*>(p) = u.word;
}
#endif
"#;

/// The data fields of `columns`, in the views' column order.
fn data(columns: &[GpuField]) -> impl Iterator<Item = &GpuField> + Clone {
    columns.iter().filter(|field| !field.is_padding)
}

/// The views of a checked layout declared as `name`, members in the order of `columns`.
pub(crate) fn views_text(
    f: &mut impl Write,
    name: &str,
    layout: &GpuLayout,
    columns: &[GpuField],
) -> fmt::Result {
    f.write_str(SUPPORT)?;
    soa_text(f, name, columns)?;
    let word = layout.align.min(MAX_WORD);
    aos_text(f, name, layout, columns, "_aos", layout.size, word)?;
    aos_text(
        f,
        name,
        layout,
        columns,
        "_aos16",
        const_round_up(layout.size, MAX_WORD),
        MAX_WORD,
    )
}

/// The column members, `stride` bytes apart, and `len`.
fn members(f: &mut impl Write, columns: &[GpuField], stride: Option<usize>) -> fmt::Result {
    for field in data(columns) {
        writeln!(
            f,
            "    gpu_aligned_column<{ty}, {stride}> {member};",
            ty = base_name(&field.ty),
            stride = stride.unwrap_or(field.size),
            member = Member(field.name),
        )?;
    }
    f.write_str("    unsigned long long len;\n")
}

/// `static_assert`s of a view's size and member offsets (Rust passes the same struct by value).
fn view_asserts(f: &mut impl Write, columns: &[GpuField], view: ViewName<'_>) -> fmt::Result {
    let count = data(columns).count();
    writeln!(
        f,
        "static_assert(sizeof({view}) == {size}, \"gpu-aligned: {view} is one 8-byte pointer per column and a length\");",
        size = 8 * (count + 1),
    )?;
    for (index, field) in data(columns).enumerate() {
        writeln!(
            f,
            "static_assert(GPU_ALIGNED_OFFSETOF({view}, {member}) == {offset}, \"gpu-aligned: {view}::{member} must be at offset {offset}\");",
            member = Member(field.name),
            offset = 8 * index,
        )?;
    }
    writeln!(
        f,
        "static_assert(GPU_ALIGNED_OFFSETOF({view}, len) == {offset}, \"gpu-aligned: {view}::len must be at offset {offset}\");",
        offset = 8 * count,
    )
}

fn soa_text(f: &mut impl Write, name: &str, columns: &[GpuField]) -> fmt::Result {
    let view = ViewName(name, "_soa");
    write!(
        f,
        "\n// {name} as a structure of arrays: one column per data field, each element\n\
         // moved by one instruction.\nstruct {view} {{\n"
    )?;
    members(f, columns, None)?;
    write!(
        f,
        "    __host__ __device__ __forceinline__ {name} load(unsigned long long i) const {{\n\
         \x20       {name} v = {{}};\n"
    )?;
    for field in data(columns) {
        let m = Member(field.name);
        writeln!(f, "        v.{m} = gpu_aligned_load(&{m}[i]);")?;
    }
    write!(
        f,
        "        return v;\n    }}\n\
         \x20   __host__ __device__ __forceinline__ void store(unsigned long long i, const {name}& v) const {{\n"
    )?;
    for field in data(columns) {
        let m = Member(field.name);
        writeln!(f, "        gpu_aligned_store(&{m}[i], v.{m});")?;
    }
    write!(
        f,
        "    }}\n\
         \x20   // Bytes of one buffer that holds len elements as columns, each starting\n\
         \x20   // on a multiple of {COLUMN_ALIGN} bytes.\n\
         \x20   __host__ __device__ static unsigned long long bytes(unsigned long long len) {{\n\
         \x20       return 0"
    )?;
    for field in data(columns) {
        write!(
            f,
            "\n            + (len * {size} + {mask}) / {COLUMN_ALIGN} * {COLUMN_ALIGN}",
            size = field.size,
            mask = COLUMN_ALIGN - 1,
        )?;
    }
    write!(
        f,
        ";\n    }}\n\
         \x20   // The columns of len elements laid out in buffer, as bytes(len) counts them.\n\
         \x20   __host__ __device__ static {view} carve(void* buffer, unsigned long long len) {{\n\
         \x20       {view} v;\n\
         \x20       char* at = static_cast<char*>(buffer);\n"
    )?;
    for field in data(columns) {
        writeln!(
            f,
            "        v.{m}.ptr = reinterpret_cast<{ty}*>(at);\n        at += (len * {size} + {mask}) / {COLUMN_ALIGN} * {COLUMN_ALIGN};",
            m = Member(field.name),
            ty = base_name(&field.ty),
            size = field.size,
            mask = COLUMN_ALIGN - 1,
        )?;
    }
    f.write_str("        v.len = len;\n        return v;\n    }\n};\n")?;
    view_asserts(f, columns, view)
}

fn aos_text(
    f: &mut impl Write,
    name: &str,
    layout: &GpuLayout,
    columns: &[GpuField],
    suffix: &str,
    stride: usize,
    word_bytes: usize,
) -> fmt::Result {
    let view = ViewName(name, suffix);
    let words = stride / word_bytes;
    let word = WordType(word_bytes);
    let padded = stride > layout.size;
    let slot = if padded {
        "in 16-aligned slots"
    } else {
        "one after another"
    };
    write!(
        f,
        "\n// {name} as an array of structs {slot}: element i at i * {stride} bytes, moved\n\
         // as {words} word(s) of {word_bytes} bytes.\nstruct {view} {{\n"
    )?;
    members(f, columns, Some(stride))?;
    // Every column points into element 0; the first one finds its start.
    let first = data(columns).next();
    let (first_member, first_offset) = first.map_or((Member("len"), 0), |field| {
        (Member(field.name), field.offset)
    });
    write!(
        f,
        "    __host__ __device__ __forceinline__ {name} load(unsigned long long i) const {{\n\
         \x20       union {{ {word} words[{words}]; {name} value; }} u;\n\
         \x20       const {word}* from = reinterpret_cast<const {word}*>(\n\
         \x20           reinterpret_cast<const char*>({first_member}.ptr) - {first_offset} + i * {stride});\n\
         \x20       for (unsigned k = 0; k < {words}; ++k) u.words[k] = from[k];\n\
         \x20       return u.value;\n\
         \x20   }}\n\
         \x20   __host__ __device__ __forceinline__ void store(unsigned long long i, const {name}& v) const {{\n\
         \x20       union {{ {word} words[{words}]; {name} value; }} u = {{}};\n\
         \x20       u.value = v;\n\
         \x20       {word}* to = reinterpret_cast<{word}*>(\n\
         \x20           reinterpret_cast<char*>({first_member}.ptr) - {first_offset} + i * {stride});\n\
         \x20       for (unsigned k = 0; k < {words}; ++k) to[k] = u.words[k];\n\
         \x20   }}\n\
         \x20   // Bytes of len elements.\n\
         \x20   __host__ __device__ static unsigned long long bytes(unsigned long long len) {{\n\
         \x20       return len * {stride};\n\
         \x20   }}\n"
    )?;
    let (param, doc) = if padded {
        ("void*", "16-aligned storage of bytes(len) bytes")
    } else {
        (
            "void*",
            "an array of len elements (alignment of the struct or more)",
        )
    };
    let min_align = if padded { 16 } else { word_bytes };
    write!(
        f,
        "    // The view of {doc};\n\
         \x20   // its start must be a multiple of {min_align} bytes.\n\
         \x20   __host__ __device__ static {view} over({param} elements, unsigned long long len) {{\n\
         \x20       {view} v;\n\
         \x20       char* base = static_cast<char*>(elements);\n"
    )?;
    for field in data(columns) {
        writeln!(
            f,
            "        v.{m}.ptr = reinterpret_cast<{ty}*>(base + {offset});",
            m = Member(field.name),
            ty = base_name(&field.ty),
            offset = field.offset,
        )?;
    }
    f.write_str("        v.len = len;\n        return v;\n    }\n};\n")?;
    writeln!(
        f,
        "static_assert(sizeof({name}) <= {stride}, \"gpu-aligned: {view} slots hold one {name}\");"
    )?;
    view_asserts(f, columns, view)
}

/// A view's name, `P_soa` for the struct `P`, written without allocating.
#[derive(Clone, Copy)]
pub(crate) struct ViewName<'a>(pub &'a str, pub &'a str);

impl fmt::Display for ViewName<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0)?;
        f.write_str(self.1)
    }
}

#[cfg_attr(not(feature = "alloc"), allow(dead_code))]
impl ViewName<'_> {
    /// Whether this view's name is `other`.
    pub(crate) fn is(&self, other: &str) -> bool {
        other
            .strip_prefix(self.0)
            .is_some_and(|rest| rest == self.1)
    }
}

/// The aliasing word type of `size` bytes the support templates define.
#[derive(Clone, Copy)]
struct WordType(usize);

impl fmt::Display for WordType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "gpu_aligned_word<{}>::type", self.0)
    }
}
