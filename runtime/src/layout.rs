//! The contract between a Rust type and the GPU: [`GpuAligned`] marks a type one CUDA global-memory
//! instruction moves whole, [`GpuLayout`] records the facts that make it so in `const` form,
//! [`GpuData`] is what may be a field, and [`GpuWords`] is what an arena array holds.

use core::mem::{align_of, size_of};

use crate::rules::{Blame, Message, Violation};

mod check;

pub use check::Violations;
pub(crate) use check::{
    blame_parts, explain_holes, explain_parts, first_hole_before, not_repr_c, repr_c_mismatch,
};

/// A type whose values CUDA moves to or from global memory in exactly one
/// instruction: its size is 1, 2, 4, 8 or 16 bytes, its alignment equals its
/// size, and every byte belongs to a field (holes are explicit padding fields).
///
/// Implement it with `#[derive(GpuAligned)]` or `#[gpu_aligned::padded]`,
/// never by hand: the derive proves the rules above at compile time.
///
/// # Safety
///
/// An implementation promises that `size_of::<Self>()` is 1, 2, 4, 8 or 16,
/// that `align_of::<Self>() == size_of::<Self>()`, that the type has no
/// implicit padding, and that [`GpuAligned::LAYOUT`] describes it exactly.
/// Code that hands out typed views of raw device memory relies on all four.
///
/// A derived generic type implements this for every `T`, but its `LAYOUT`
/// fails to compile for an instantiation that breaks the rule, so code that
/// relies on the promises reads `T::LAYOUT` in a constant first.
///
/// ```
/// use gpu_aligned::vector::float4;
/// use gpu_aligned::GpuAligned;
///
/// // Code generic over elements can rely on the rule.
/// fn words_per_element<T: GpuAligned>() -> usize {
///     T::LAYOUT.size / T::LAYOUT.align
/// }
/// assert_eq!(words_per_element::<float4>(), 1);
/// assert_eq!(words_per_element::<u16>(), 1);
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a GPU element (`GpuAligned`)",
    label = "not `GpuAligned`",
    note = "a GPU element is a `#[repr(C)]` struct with `#[derive(Clone, Copy, GpuAligned)]` (or `#[gpu_aligned::padded]`), or one of u8..u64, i8..i64, f32, f64 and the word-sized `gpu_aligned::vector` types"
)]
pub unsafe trait GpuAligned: GpuWords + GpuData + Copy + bytemuck::Pod + 'static {
    /// The layout facts of this type.
    const LAYOUT: GpuLayout;
}

/// A type an arena array holds, moved as whole naturally aligned words: a
/// [`GpuAligned`] element, or a `#[derive(GpuData)]` struct aligned to 16
/// read as 16-byte words. Implemented by the derives only.
///
/// # Safety
///
/// An implementation promises that `Self` has no implicit padding, and that
/// it is either a [`GpuAligned`] element or aligned to a multiple of 16
/// (so its size is a multiple of 16); `CHECKED` compiles only if so.
///
/// ```
/// use gpu_aligned::arena::Arena;
/// use gpu_aligned::vector::float4;
/// use gpu_aligned::GpuData;
///
/// // 32 bytes aligned to 16: two 16-byte words, stored whole.
/// #[derive(Clone, Copy, GpuData)]
/// #[repr(C)]
/// struct Sphere { center_radius: float4, albedo: float4 }
///
/// let mut arena = Arena::host(1 << 16)?;
/// let spheres = arena.alloc_zeros::<Sphere>(485)?;
/// assert_eq!(spheres.size_bytes(), 485 * 32);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be stored in an arena array (`GpuWords`)",
    label = "not `GpuWords`",
    note = "an arena array holds GPU elements (`GpuAligned`: 1, 2, 4, 8 or 16 bytes, aligned to their size) or whole structs aligned to 16 (`#[derive(GpuData)]` with `#[repr(C, align(16))]`, or `#[gpu_aligned::padded]`), moved as 16-byte words",
    note = "for a struct whose fields a kernel reads apart, store one column per field instead: `#[derive(GpuSoa)]`"
)]
pub unsafe trait GpuWords: GpuData {
    /// The layout, read before an array of `Self` is made: for a derived generic element it fails
    /// to compile for an instantiation that breaks the rule (see [`GpuAligned`]).
    #[doc(hidden)]
    const CHECKED: GpuLayout;
}

/// A type allowed as a field of a [`GpuAligned`] type: plain old data valid on both sides of the
/// bus, with a CUDA counterpart ([`GpuData::TYPE`]). `bool`, `char`, `usize` and pointers are
/// absent on purpose: their validity or meaning differs between host and device.
///
/// # Safety
///
/// An implementation promises that [`GpuData::TYPE`] describes `Self` (its size and alignment equal
/// `Self`'s) and that `Self` has no implicit padding.
///
/// ```
/// use gpu_aligned::vector::float3;
/// use gpu_aligned::{GpuData, GpuType, Scalar};
///
/// assert_eq!(<f64 as GpuData>::TYPE, GpuType::Scalar(Scalar::F64));
/// // float3 is GPU data (a legal field) but not a GPU element.
/// assert_eq!(<float3 as GpuData>::TYPE.size(), 12);
/// assert_eq!(<[u16; 3] as GpuData>::TYPE.align(), 2);
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not plain GPU data, so it cannot be a field of a GPU struct",
    label = "not GPU data",
    note = "GPU fields are u8..u64, i8..i64, f32, f64, arrays of them, `gpu_aligned::vector` types, and other `#[derive(GpuData)]`, `#[derive(GpuAligned)]` or `#[gpu_aligned::padded]` types",
    note = "`bool` and `char` have invalid bit patterns (use `u8` / `u32`); `usize`/`isize` change width between host and device (use `u32` / `u64`); references, pointers, `Vec` and `Box` hold host addresses the GPU cannot follow (store an index or a device offset as `u32` / `u64`)"
)]
pub unsafe trait GpuData: Copy + bytemuck::Pod + 'static {
    /// What this type is, in terms CUDA C++ can spell.
    const TYPE: GpuType;
}

/// Reads `T::CHECKED` in a constant, so a refused generic instantiation is
/// a compile error at every entry point.
#[cfg(feature = "alloc")]
#[inline(always)]
pub(crate) fn require_layout<T: GpuWords>() {
    let _: GpuLayout = const { T::CHECKED };
}

/// The layout facts of a [`GpuAligned`] or other struct-like [`GpuData`]
/// type, computed by the compiler.
///
/// ```
/// use gpu_aligned::GpuAligned;
///
/// #[gpu_aligned::padded]
/// #[derive(Clone, Copy)]
/// struct Tagged { tag: u8, value: u32 }
///
/// let layout = Tagged::LAYOUT;
/// assert_eq!((layout.name, layout.size, layout.align, layout.padding), ("Tagged", 8, 8, 3));
/// let names: Vec<&str> = layout.fields.iter().map(|f| f.name).collect();
/// assert_eq!(names, ["tag", "__pad_before_value", "value"]);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct GpuLayout {
    /// The type's name as written in its definition (no module path).
    pub name: &'static str,
    /// `size_of::<T>()`.
    pub size: usize,
    /// `align_of::<T>()`.
    pub align: usize,
    /// Bytes that carry no data: explicit padding fields and the padding
    /// nested in fields' types (holes are [`GpuLayout::implicit_padding`]).
    pub padding: usize,
    /// Every field with a nonzero size, in declaration order.
    pub fields: &'static [GpuField],
}

/// One field of a [`GpuLayout`].
///
/// ```
/// use gpu_aligned::vector::float3_16_t;
/// use gpu_aligned::GpuAligned;
/// let z = float3_16_t::LAYOUT.field("z").unwrap();
/// assert_eq!((z.offset, z.size, z.is_padding), (8, 4, false));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct GpuField {
    /// The field's name (`"0"`, `"1"`, ... for tuple structs).
    pub name: &'static str,
    /// Byte offset from the start of the struct.
    pub offset: usize,
    /// `size_of` the field's type.
    pub size: usize,
    /// `align_of` the field's type.
    pub align: usize,
    /// Whether the field exists only to fill what would be a hole.
    pub is_padding: bool,
    /// The field's type.
    pub ty: GpuType,
}

impl GpuField {
    /// A field described by hand (see [`GpuLayout::new`]).
    pub const fn new(
        name: &'static str,
        offset: usize,
        size: usize,
        align: usize,
        is_padding: bool,
        ty: GpuType,
    ) -> Self {
        GpuField {
            name,
            offset,
            size,
            align,
            is_padding,
            ty,
        }
    }
}

/// A scalar type with the same meaning in Rust and CUDA C++.
///
/// ```
/// use gpu_aligned::{GpuData, GpuType, Scalar};
///
/// let GpuType::Scalar(scalar) = <u32 as GpuData>::TYPE else { unreachable!() };
/// assert_eq!((scalar, scalar.rust_name(), scalar.cuda_name()), (Scalar::U32, "u32", "uint32_t"));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Scalar {
    /// `u8` / `uint8_t`
    U8,
    /// `i8` / `int8_t`
    I8,
    /// `u16` / `uint16_t`
    U16,
    /// `i16` / `int16_t`
    I16,
    /// `u32` / `uint32_t`
    U32,
    /// `i32` / `int32_t`
    I32,
    /// `u64` / `uint64_t`
    U64,
    /// `i64` / `int64_t`
    I64,
    /// `u128` / `unsigned __int128`
    U128,
    /// `i128` / `__int128`
    I128,
    /// `f32` / `float`
    F32,
    /// `f64` / `double`
    F64,
}

// Each scalar's size, Rust spelling and CUDA spelling, in declaration order.
const SCALARS: [(usize, &str, &str); 12] = [
    (1, "u8", "uint8_t"),
    (1, "i8", "int8_t"),
    (2, "u16", "uint16_t"),
    (2, "i16", "int16_t"),
    (4, "u32", "uint32_t"),
    (4, "i32", "int32_t"),
    (8, "u64", "uint64_t"),
    (8, "i64", "int64_t"),
    (16, "u128", "unsigned __int128"),
    (16, "i128", "__int128"),
    (4, "f32", "float"),
    (8, "f64", "double"),
];

impl Scalar {
    /// Size in bytes.
    pub const fn size(self) -> usize {
        SCALARS[self as usize].0
    }

    /// The Rust spelling.
    pub const fn rust_name(self) -> &'static str {
        SCALARS[self as usize].1
    }

    /// The CUDA C++ spelling (`<cstdint>` names; `__int128` for 128 bits).
    pub const fn cuda_name(self) -> &'static str {
        SCALARS[self as usize].2
    }
}

/// What a [`GpuData`] type is, in terms CUDA C++ can spell.
///
/// ```
/// use gpu_aligned::vector::double3;
/// use gpu_aligned::{GpuData, GpuType, Scalar};
///
/// let GpuType::Vector { cuda_name, lane, lanes, align } = <double3 as GpuData>::TYPE else {
///     unreachable!()
/// };
/// assert_eq!((cuda_name, lane, lanes, align), ("double3", Scalar::F64, 3, 8));
/// let GpuType::Array { elem, len } = <[f32; 4] as GpuData>::TYPE else { unreachable!() };
/// assert_eq!((*elem, len), (GpuType::Scalar(Scalar::F32), 4));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum GpuType {
    /// A fixed-width integer or float.
    Scalar(Scalar),
    /// `[elem; len]`.
    Array {
        /// The element type.
        elem: &'static GpuType,
        /// The number of elements.
        len: usize,
    },
    /// A CUDA built-in vector type such as `float4` (or `float3`, which is
    /// legal as a field but not as an element).
    Vector {
        /// CUDA's name for it, e.g. `"float4"`.
        cuda_name: &'static str,
        /// The lane type.
        lane: Scalar,
        /// The number of lanes (2, 3 or 4).
        lanes: usize,
        /// `alignof` in CUDA (and in Rust).
        align: usize,
    },
    /// A struct with its own layout (a derived or padded type, or one of the
    /// padded vector types such as `float3_16_t`).
    Struct(&'static GpuLayout),
    /// A zero-sized marker that raises a struct's alignment; never listed in [`GpuLayout::fields`].
    AlignMarker(usize),
}

impl GpuType {
    /// Size in bytes.
    ///
    /// ```
    /// use gpu_aligned::vector::double3;
    /// use gpu_aligned::GpuData;
    /// // CUDA rounds double3 up to a multiple of its alignment: 24 bytes.
    /// assert_eq!(<double3 as GpuData>::TYPE.size(), 24);
    /// assert_eq!(<[u8; 5] as GpuData>::TYPE.size(), 5);
    /// ```
    pub const fn size(&self) -> usize {
        match self {
            GpuType::Scalar(s) => s.size(),
            // Saturating: a hand-written `GpuType` may be absurdly large.
            GpuType::Array { elem, len } => elem.size().saturating_mul(*len),
            GpuType::Vector {
                lane, lanes, align, ..
            } => {
                // CUDA rounds a vector's size up to its alignment (double3: 24/8).
                let raw = lane.size().saturating_mul(*lanes);
                match *align {
                    0 => raw,
                    align => raw.div_ceil(align).saturating_mul(align),
                }
            }
            GpuType::Struct(layout) => layout.size,
            GpuType::AlignMarker(_) => 0,
        }
    }

    /// Bytes of a value of this type that carry no data, through arrays and structs.
    ///
    /// ```
    /// use gpu_aligned::vector::float3_16_t;
    /// use gpu_aligned::GpuData;
    /// assert_eq!(<[float3_16_t; 3]>::TYPE.padding(), 12);
    /// assert_eq!(f32::TYPE.padding(), 0);
    /// ```
    pub const fn padding(&self) -> usize {
        match self {
            GpuType::Scalar(_) | GpuType::AlignMarker(_) => 0,
            GpuType::Array { elem, len } => elem.padding().saturating_mul(*len),
            GpuType::Vector { lane, lanes, .. } => self.size().saturating_sub(lane.size() * *lanes),
            GpuType::Struct(layout) => layout.total_padding(),
        }
    }

    /// Whether one instruction moves a value of this type whole. Arrays
    /// never are, even `[u32; 1]`: a column of them is not a column of values.
    ///
    /// ```
    /// use gpu_aligned::vector::{float3, float4};
    /// use gpu_aligned::GpuData;
    /// assert!(float4::TYPE.is_one_word() && u16::TYPE.is_one_word());
    /// assert!(!float3::TYPE.is_one_word() && !<[u32; 1]>::TYPE.is_one_word());
    /// ```
    pub const fn is_one_word(&self) -> bool {
        match self {
            GpuType::Scalar(_) | GpuType::Vector { .. } => {
                crate::rules::is_legal(self.size(), self.align(), self.size())
            }
            GpuType::Struct(layout) => layout.is_one_word(),
            GpuType::Array { .. } | GpuType::AlignMarker(_) => false,
        }
    }

    /// Alignment in bytes.
    pub const fn align(&self) -> usize {
        match self {
            GpuType::Scalar(s) => s.size(),
            GpuType::Array { elem, .. } => elem.align(),
            GpuType::Vector { align, .. } => *align,
            GpuType::Struct(layout) => layout.align,
            GpuType::AlignMarker(align) => *align,
        }
    }
}

impl GpuLayout {
    /// The facts of a type described by hand (a C++ struct with no Rust
    /// twin); `fields` lists the fields of nonzero size in offset order.
    ///
    /// ```
    /// use gpu_aligned::{GpuField, GpuLayout, GpuType, Scalar};
    /// const FIELDS: [GpuField; 2] = [
    ///     GpuField::new("x", 0, 4, 4, false, GpuType::Scalar(Scalar::F32)),
    ///     GpuField::new("pad", 4, 4, 4, true, GpuType::Scalar(Scalar::U32)),
    /// ];
    /// const PAIR: GpuLayout = GpuLayout::new("Pair", 8, 8, 4, &FIELDS);
    /// assert!(PAIR.is_one_word());
    /// assert_eq!(PAIR.data_bytes(), 4);
    /// ```
    pub const fn new(
        name: &'static str,
        size: usize,
        align: usize,
        padding: usize,
        fields: &'static [GpuField],
    ) -> Self {
        GpuLayout {
            name,
            size,
            align,
            padding,
            fields,
        }
    }

    /// Whether the layout obeys [the rule](crate::rules), so one instruction moves the whole value.
    pub const fn is_one_word(&self) -> bool {
        self.check().is_ok()
    }

    /// The first part of [the rule](crate::rules) this layout breaks, in
    /// the order of [`GpuLayout::violations`], or `Ok`.
    ///
    /// ```
    /// use gpu_aligned::rules::Violation;
    /// use gpu_aligned::vector::float4;
    /// use gpu_aligned::{GpuAligned, GpuLayout};
    ///
    /// assert_eq!(float4::LAYOUT.check(), Ok(()));
    /// let float3 = GpuLayout::new("float3", 12, 4, 0, &[]);
    /// assert_eq!(float3.check(), Err(Violation::NotWordSized { size: 12, align: 4 }));
    /// ```
    pub const fn check(&self) -> Result<(), Violation> {
        match check::next_violation(self.size, self.align, self.fields, 0) {
            Some((violation, _)) => Err(violation),
            None => Ok(()),
        }
    }

    /// Every part of the rule this layout breaks: the size, then the
    /// alignment, then each hole in offset order.
    ///
    /// ```
    /// use gpu_aligned::rules::Violation;
    /// use gpu_aligned::GpuLayout;
    /// // A 12-byte, 4-aligned layout breaks the size rule and the alignment rule.
    /// let layout = GpuLayout::new("F", 12, 4, 0, &[]);
    /// let found: Vec<Violation> = layout.violations().collect();
    /// assert_eq!(
    ///     found,
    ///     [
    ///         Violation::NotWordSized { size: 12, align: 4 },
    ///         Violation::Misaligned { size: 12, align: 4 },
    ///     ]
    /// );
    /// ```
    pub fn violations(&self) -> Violations<'_> {
        let (layout, stage) = (self, 0);
        Violations { layout, stage }
    }

    /// The compile-time message for this layout (a size violation alone,
    /// since padding fixes the rest), empty if it is legal.
    ///
    /// ```
    /// let layout = gpu_aligned::GpuLayout::new("Float3", 12, 4, 0, &[]);
    /// assert!(layout.explain().as_str().starts_with("`Float3` is 12 bytes (align 4)"));
    /// ```
    pub const fn explain(&self) -> Message {
        explain_parts(self.name, self.size, self.align, self.fields)
    }

    /// Where a compile error about this layout belongs: the type for a size
    /// violation, else the field after the first hole, else the alignment.
    ///
    /// ```
    /// use gpu_aligned::rules::Blame;
    /// use gpu_aligned::{GpuField, GpuLayout, GpuType, Scalar};
    /// const FIELDS: [GpuField; 2] = [
    ///     GpuField::new("tag", 0, 1, 1, false, GpuType::Scalar(Scalar::U8)),
    ///     GpuField::new("value", 4, 4, 4, false, GpuType::Scalar(Scalar::U32)),
    /// ];
    /// assert_eq!(GpuLayout::new("T", 8, 4, 0, &FIELDS).blame(), Blame::Field("value"));
    /// assert_eq!(GpuLayout::new("T", 12, 4, 0, &[]).blame(), Blame::Type);
    /// ```
    pub const fn blame(&self) -> Blame {
        blame_parts(self.size, self.align, self.fields)
    }

    /// Whether this layout is exactly what C gives its field list: every
    /// offset and the size as C computes them.
    ///
    /// ```
    /// use gpu_aligned::{GpuField, GpuLayout, GpuType, Scalar};
    /// const U8: GpuType = GpuType::Scalar(Scalar::U8);
    /// const U32: GpuType = GpuType::Scalar(Scalar::U32);
    /// // { tag: u8, value: u32 } as C lays it out: 8 bytes, `value` at 4 ...
    /// const C: [GpuField; 2] =
    ///     [GpuField::new("tag", 0, 1, 1, false, U8), GpuField::new("value", 4, 4, 4, false, U32)];
    /// assert!(GpuLayout::new("Tagged", 8, 4, 0, &C).is_repr_c());
    /// // ... and as Rust may reorder it: `value` first.
    /// const RUST: [GpuField; 2] =
    ///     [GpuField::new("tag", 4, 1, 1, false, U8), GpuField::new("value", 0, 4, 4, false, U32)];
    /// assert!(!GpuLayout::new("Tagged", 8, 4, 0, &RUST).is_repr_c());
    /// ```
    pub const fn is_repr_c(&self) -> bool {
        repr_c_mismatch(self.size, self.align, self.fields).is_none()
    }

    /// Bytes not covered by any listed field; none in a layout without fields (a scalar's).
    ///
    /// ```
    /// use gpu_aligned::{GpuField, GpuLayout, GpuType, Scalar};
    ///
    /// // C++'s `struct { uint8_t tag; uint32_t value; }`: 3 bytes nobody wrote.
    /// static FIELDS: [GpuField; 2] = [
    ///     GpuField::new("tag", 0, 1, 1, false, GpuType::Scalar(Scalar::U8)),
    ///     GpuField::new("value", 4, 4, 4, false, GpuType::Scalar(Scalar::U32)),
    /// ];
    /// let layout = GpuLayout::new("Tagged", 8, 4, 0, &FIELDS);
    /// assert_eq!((layout.implicit_padding(), layout.data_bytes()), (3, 5));
    /// assert!(!layout.is_one_word()); // 8 bytes aligned to 4
    /// ```
    pub const fn implicit_padding(&self) -> usize {
        if self.fields.is_empty() {
            return 0;
        }
        self.size.saturating_sub(covered(self.fields))
    }

    /// [`GpuLayout::padding`] plus [`GpuLayout::implicit_padding`].
    ///
    /// ```
    /// use gpu_aligned::vector::float3_16_t;
    /// use gpu_aligned::GpuAligned;
    /// assert_eq!(float3_16_t::LAYOUT.total_padding(), 4);
    /// ```
    pub const fn total_padding(&self) -> usize {
        self.padding.saturating_add(self.implicit_padding())
    }

    /// Bytes of real data: the size less [`GpuLayout::total_padding`].
    pub const fn data_bytes(&self) -> usize {
        self.size.saturating_sub(self.total_padding())
    }

    /// The field called `name`, if any.
    ///
    /// ```
    /// use gpu_aligned::vector::float4;
    /// use gpu_aligned::GpuAligned;
    /// assert_eq!(float4::LAYOUT.field("w").map(|w| w.offset), Some(12));
    /// assert!(float4::LAYOUT.field("v").is_none());
    /// ```
    pub fn field(&self, name: &str) -> Option<&'static GpuField> {
        self.fields.iter().find(|f| f.name == name)
    }
}

/// The bytes `fields` cover, which never overlap.
pub(crate) const fn covered(fields: &[GpuField]) -> usize {
    let mut covered = 0usize;
    let mut i = 0;
    while i < fields.len() {
        covered = covered.saturating_add(fields[i].size);
        i += 1;
    }
    covered
}

macro_rules! scalars {
    ($($ty:ty => $scalar:ident),* $(,)?) => {$(
        // SAFETY: a primitive integer or float has no padding, its size is its `Scalar::size()`,
        // and (const-asserted below) its alignment equals its size on every target we build for.
        unsafe impl GpuData for $ty {
            const TYPE: GpuType = GpuType::Scalar(Scalar::$scalar);
        }
        // SAFETY: as above; the assertion below checks size == align.
        unsafe impl GpuAligned for $ty {
            const LAYOUT: GpuLayout =
                GpuLayout::new(stringify!($ty), size_of::<$ty>(), align_of::<$ty>(), 0, &[]);
        }
        // SAFETY: an element (above).
        unsafe impl GpuWords for $ty {
            const CHECKED: GpuLayout = <$ty as GpuAligned>::LAYOUT;
        }
        const _: () = assert!(
            size_of::<$ty>() == Scalar::$scalar.size() && align_of::<$ty>() == size_of::<$ty>()
        );
    )*};
}

scalars!(
    u8 => U8, i8 => I8, u16 => U16, i16 => I16, u32 => U32, i32 => I32,
    f32 => F32, u64 => U64, i64 => I64, f64 => F64,
);

// `u128`/`i128` are 16-aligned (as CUDA's `__int128`) only on these
// targets; the `scalars!` assertion makes a mismatch a build error.
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
scalars!(u128 => U128, i128 => I128);

// SAFETY: an array of `GpuData` has no padding between elements (size is a
// multiple of alignment for every Rust type), and `TYPE` describes it.
unsafe impl<T: GpuData, const N: usize> GpuData for [T; N] {
    const TYPE: GpuType = GpuType::Array {
        elem: &T::TYPE,
        len: N,
    };
}

/// A derived type's fields sorted out once per struct by the derive: the sized ones as a `'static`
/// slice, and the padding as [`GpuLayout::padding`] counts it.
#[doc(hidden)]
pub struct Fields<const N: usize> {
    fields: [GpuField; N],
    sized: usize,
    padding: usize,
    contiguous: bool,
    covered: usize,
}

impl<const N: usize> Fields<N> {
    /// Sorts out `all`, the fields in declaration order.
    pub const fn new(all: [GpuField; N]) -> Self {
        const UNUSED: GpuField = GpuField::new("", 0, 0, 1, false, GpuType::AlignMarker(1));
        let mut fields = [UNUSED; N];
        let mut sized = 0;
        let mut padding = 0usize;
        let mut contiguous = true;
        let mut covered = 0usize;
        let mut i = 0;
        while i < N {
            contiguous &= all[i].offset == covered;
            covered = covered.saturating_add(all[i].size);
            if all[i].size != 0 {
                fields[sized] = all[i];
                sized += 1;
            }
            let pad = if all[i].is_padding {
                all[i].size
            } else {
                all[i].ty.padding()
            };
            padding = padding.saturating_add(pad);
            i += 1;
        }
        Fields {
            fields,
            sized,
            padding,
            contiguous,
            covered,
        }
    }

    /// Whether the fields tile a struct of `size` bytes from offset 0, in declaration order.
    pub const fn no_holes(&self, size: usize) -> bool {
        self.contiguous && self.covered == size
    }

    /// Whether the fields follow each other with no hole and a struct of
    /// `size` and `align` made of them obeys the rule.
    pub const fn follow_rule(&self, size: usize, align: usize) -> bool {
        self.contiguous && crate::rules::is_legal(size, align, self.covered)
    }

    /// The fields of nonzero size, in declaration order.
    pub const fn sized(&'static self) -> &'static [GpuField] {
        self.fields.split_at(self.sized).0
    }

    /// Every padding byte of the fields, nested ones included.
    pub const fn padding(&self) -> usize {
        self.padding
    }
}

/// Maps a width to a zero-sized type with that alignment: `#[repr(align(N))]` takes only a literal.
#[doc(hidden)]
pub struct Width<const N: usize>;

/// Implemented by [`Width`] for each of [`crate::rules::WORD_SIZES`].
#[doc(hidden)]
pub trait AlignMarker {
    /// A zero-sized type aligned to the width.
    type Marker: GpuData;
}

macro_rules! align_markers {
    ($($name:ident = $n:literal),*) => {$(
        /// A zero-sized field type that raises a struct's alignment.
        #[doc(hidden)]
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
        const _: () = assert!(size_of::<$name>() == 0 && align_of::<$name>() == $n);
    )*};
}

align_markers!(Align1 = 1, Align2 = 2, Align4 = 4, Align8 = 8, Align16 = 16);
