//! A layout report to look at: a type's fields, a byte map of its data and
//! padding, and what it costs on the GPU in the [`coalesce`](crate::coalesce)
//! model. It is `Display`, so it works in `no_std`:
//!
//! ```
//! use gpu_aligned::report::LayoutReport;
//! use gpu_aligned::GpuAligned;
//!
//! #[derive(Clone, Copy, GpuAligned)]
//! #[repr(C, align(16))]
//! struct Sample {
//!     value: f32,
//!     #[gpu_aligned(padding)]
//!     pad: u32,
//!     time: f64,
//! }
//!
//! let report = LayoutReport::of::<Sample>().to_string();
//! assert_eq!(report, r"Sample: 16 bytes, align 16: one GPU word, moved by one LDG.E.128 (gpu_load/gpu_store in a generated header)
//!
//!   offset  size  map  field          Rust  CUDA
//!        0     4   a   value          f32   float
//!        4     4   _   pad (padding)  u32   uint32_t
//!        8     8   b   time           f64   double
//!
//!   byte map, 16 bytes a row (_ = padding):
//!        0  aaaa ____ bbbb bbbb
//!
//!   12 data bytes, 4 padding bytes: 75% of each element is data
//!     (streaming whole elements moves 33.3% more bytes than the data alone)
//!   loads per element: 1 as one word, 2 field by field
//!   a warp reading 32 consecutive elements: 16 sectors, 75% efficient
//!   a warp reading one field of 32 consecutive elements:
//!     value  16 sectors, 25% efficient (4 sectors, 100% as its own array)
//!     time   16 sectors, 50% efficient (8 sectors, 100% as its own array)
//! ");
//! ```

use crate::coalesce::{Access, Advice, AdviceError, ElementFacts, WarpAccess, WARP_LANES};
use crate::layout::{GpuAligned, GpuField, GpuLayout, GpuType};
use crate::rules::Violation;
use core::fmt::{self, Write};

/// Bytes shown per row of the byte map.
const ROW_BYTES: usize = 16;
/// Rows shown before the byte map is cut short.
const MAX_ROWS: usize = 16;
/// What marks a padding byte in the byte map.
const PAD: char = '_';
/// What marks a byte no field covers.
const HOLE: char = '.';

/// The report of one layout; see the module docs. `Display` prints it.
///
/// ```
/// use gpu_aligned::report::LayoutReport;
/// use gpu_aligned::vector::int8_3_4_t;
///
/// let report = LayoutReport::of::<int8_3_4_t>().to_string();
/// assert!(report.starts_with("int8_3_4_t: 4 bytes, align 4: one GPU word"));
/// assert!(report.contains("abc_")); // three data bytes, one pad byte
/// // 32 bytes of one lane, as an array of their own: one sector.
/// assert!(report.contains("x  4 sectors, 25% efficient (1 sector, 100% as its own array)"));
/// ```
#[derive(Clone, Copy, Debug)]
pub struct LayoutReport<'a> {
    layout: &'a GpuLayout,
}

impl LayoutReport<'static> {
    /// The report of the element type `T`.
    ///
    /// ```
    /// use gpu_aligned::report::LayoutReport;
    /// use gpu_aligned::vector::double2;
    ///
    /// println!("{}", LayoutReport::of::<double2>());
    /// assert!(LayoutReport::of::<double2>().to_string().contains("LDG.E.128"));
    /// ```
    pub fn of<T: GpuAligned>() -> Self {
        Self::new(&T::LAYOUT)
    }
}

impl<'a> LayoutReport<'a> {
    /// The report of any layout, a nested field type's included.
    ///
    /// ```
    /// use gpu_aligned::report::LayoutReport;
    /// use gpu_aligned::{GpuAligned, GpuType};
    ///
    /// #[derive(Clone, Copy, GpuAligned)]
    /// #[repr(C, align(8))]
    /// struct Pair { a: u32, b: u32 }
    ///
    /// #[derive(Clone, Copy, GpuAligned)]
    /// #[repr(C, align(16))]
    /// struct Edge { from: Pair, to: Pair }
    ///
    /// let GpuType::Struct(inner) = Edge::LAYOUT.fields[0].ty else { unreachable!() };
    /// assert!(LayoutReport::new(inner).to_string().starts_with("Pair: 8 bytes"));
    /// ```
    pub fn new(layout: &'a GpuLayout) -> Self {
        Self { layout }
    }

    /// The facts the report prints.
    ///
    /// ```
    /// use gpu_aligned::report::LayoutReport;
    /// use gpu_aligned::vector::float3_16_t;
    ///
    /// let facts = LayoutReport::of::<float3_16_t>().facts();
    /// assert_eq!((facts.data_bytes, facts.padding_bytes), (12, 4));
    /// ```
    pub fn facts(&self) -> ElementFacts {
        ElementFacts::of(self.layout)
    }

    /// The layout advisor's prediction for a kernel doing `access` over
    /// this type ([`advise`](crate::coalesce::advise)).
    ///
    /// ```
    /// use gpu_aligned::coalesce::{Access, Fields, Storage};
    /// use gpu_aligned::report::LayoutReport;
    /// use gpu_aligned::vector::float4;
    ///
    /// let advice = LayoutReport::of::<float4>().advise(&Access::streaming(Fields::All, Fields::None))?;
    /// assert_eq!(advice.best, Storage::Aos);
    /// assert!(advice.to_string().contains("recommended: array of structs"));
    /// # Ok::<(), gpu_aligned::coalesce::AdviceError<'static>>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As for [`advise`](crate::coalesce::advise).
    pub fn advise<'b>(&self, access: &Access<'b>) -> Result<Advice<'b>, AdviceError<'b>>
    where
        'a: 'b,
    {
        crate::coalesce::advise(self.layout, access)
    }
}

/// The byte-map mark of the `index`-th data field: a-z, A-Z, 0-9, then `*`.
fn mark(index: usize) -> char {
    const MARKS: &[u8] = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    MARKS.get(index).map_or('*', |&b| char::from(b))
}

/// The mark of every listed field, in order: padding fields share one.
fn marks(fields: &[GpuField]) -> impl Iterator<Item = (char, &GpuField)> {
    let mut data_index = 0;
    fields.iter().map(move |field| {
        if field.is_padding {
            (PAD, field)
        } else {
            data_index += 1;
            (mark(data_index - 1), field)
        }
    })
}

/// Counts the characters written, to size table columns without allocating.
#[derive(Default)]
struct Width(usize);

impl Write for Width {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        self.0 += s.chars().count();
        Ok(())
    }
}

fn width_of(show: impl Fn(&mut Width) -> fmt::Result) -> usize {
    let mut width = Width::default();
    // A `Width` never fails.
    let _ = show(&mut width);
    width.0
}

fn pad(f: &mut fmt::Formatter<'_>, written: usize, column: usize) -> fmt::Result {
    for _ in written..column {
        f.write_char(' ')?;
    }
    Ok(())
}

fn rust_type(ty: &GpuType, out: &mut impl Write) -> fmt::Result {
    match ty {
        GpuType::Scalar(scalar) => out.write_str(scalar.rust_name()),
        GpuType::Array { elem, len } => {
            out.write_char('[')?;
            rust_type(elem, out)?;
            write!(out, "; {len}]")
        }
        GpuType::Vector { cuda_name, .. } => out.write_str(cuda_name),
        GpuType::Struct(layout) => out.write_str(layout.name),
        GpuType::AlignMarker(align) => write!(out, "AlignMarker({align})"),
    }
}

fn cuda_type(ty: &GpuType, out: &mut impl Write) -> fmt::Result {
    let mut elem = ty;
    while let GpuType::Array { elem: inner, .. } = elem {
        elem = inner;
    }
    match elem {
        GpuType::Scalar(scalar) => out.write_str(scalar.cuda_name())?,
        GpuType::Vector { cuda_name, .. } => out.write_str(cuda_name)?,
        GpuType::Struct(layout) => out.write_str(layout.name)?,
        GpuType::AlignMarker(_) | GpuType::Array { .. } => out.write_str("(none)")?,
    }
    let mut dims = ty;
    while let GpuType::Array { elem: inner, len } = dims {
        write!(out, "[{len}]")?;
        dims = inner;
    }
    Ok(())
}

/// The instruction nvcc emits for one word of `size` bytes.
fn load_instruction(size: u64) -> &'static str {
    match size {
        1 => "LDG.E.U8",
        2 => "LDG.E.U16",
        4 => "LDG.E",
        8 => "LDG.E.64",
        _ => "LDG.E.128",
    }
}

/// A ratio printed as a whole percentage, or with one decimal when that
/// would hide a fraction (12.5%).
struct Percent(f64);

impl fmt::Display for Percent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let tenths = (self.0 * 1000.0 + 0.5) as u64;
        if tenths % 10 == 0 {
            write!(f, "{}%", tenths / 10)
        } else {
            write!(f, "{}.{}%", tenths / 10, tenths % 10)
        }
    }
}

/// A sector count with its noun: "1 sector", "16 sectors".
struct Sectors(u64);

impl fmt::Display for Sectors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            1 => f.write_str("1 sector"),
            n => write!(f, "{n} sectors"),
        }
    }
}

impl fmt::Display for LayoutReport<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let layout = self.layout;
        let facts = self.facts();
        self.headline(f, &facts)?;
        if !layout.fields.is_empty() {
            self.field_table(f)?;
            self.byte_map(f)?;
        }
        self.costs(f, &facts)
    }
}

impl LayoutReport<'_> {
    fn headline(&self, f: &mut fmt::Formatter<'_>, facts: &ElementFacts) -> fmt::Result {
        let layout = self.layout;
        write!(
            f,
            "{}: {} bytes, align {}",
            layout.name, layout.size, layout.align
        )?;
        if facts.one_word {
            return writeln!(
                f,
                ": one GPU word, moved by one {} (gpu_load/gpu_store in a generated header)",
                load_instruction(facts.size)
            );
        }
        f.write_str(": not one GPU word (")?;
        let mut reasons = 0;
        let mut reason = |f: &mut fmt::Formatter<'_>, text: fmt::Arguments<'_>| {
            if reasons > 0 {
                f.write_str(", ")?;
            }
            reasons += 1;
            f.write_fmt(text)
        };
        // Holes are summed into one reason; the size and alignment facts
        // come from the rules as they are.
        for violation in layout.violations() {
            match violation {
                Violation::InteriorHole { .. } | Violation::TrailingHole { .. } => {}
                other => reason(f, format_args!("{other}"))?,
            }
        }
        let holes = layout.implicit_padding(); // none without fields
        if holes > 0 {
            reason(f, format_args!("{holes} bytes of holes"))?;
        }
        f.write_str(")\n")
    }

    fn field_table(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let fields = self.layout.fields;
        let padding = |field: &GpuField| if field.is_padding { " (padding)" } else { "" };
        let name_width =
            |field: &GpuField| width_of(|w| write!(w, "{}{}", field.name, padding(field)));
        let names = fields
            .iter()
            .map(name_width)
            .max()
            .unwrap_or(0)
            .max("field".len());
        let rusts = fields
            .iter()
            .map(|field| width_of(|w| rust_type(&field.ty, w)))
            .max()
            .unwrap_or(0)
            .max("Rust".len());
        writeln!(
            f,
            "\n  offset  size  map  {:<names$}  {:<rusts$}  CUDA",
            "field", "Rust"
        )?;
        for (mark, field) in marks(fields) {
            write!(
                f,
                "  {:>6}  {:>4}   {mark}   {}{}",
                field.offset,
                field.size,
                field.name,
                padding(field)
            )?;
            pad(f, name_width(field), names + 2)?;
            rust_type(&field.ty, f)?;
            pad(f, width_of(|w| rust_type(&field.ty, w)), rusts + 2)?;
            cuda_type(&field.ty, f)?;
            f.write_char('\n')?;
        }
        Ok(())
    }

    fn byte_map(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let layout = self.layout;
        write!(f, "\n  byte map, {ROW_BYTES} bytes a row")?;
        let has_padding = layout.fields.iter().any(|field| field.is_padding);
        match (has_padding, layout.implicit_padding() > 0) {
            (true, true) => writeln!(f, " ({PAD} = padding, {HOLE} = hole nobody owns):"),
            (true, false) => writeln!(f, " ({PAD} = padding):"),
            (false, true) => writeln!(f, " ({HOLE} = hole nobody owns):"),
            (false, false) => writeln!(f, ":"),
        }?;
        let shown = layout.size.min(ROW_BYTES * MAX_ROWS);
        for row in (0..shown).step_by(ROW_BYTES) {
            write!(f, "  {row:>6}  ")?;
            for byte in row..(row + ROW_BYTES).min(shown) {
                if byte > row && byte % 4 == 0 {
                    f.write_char(' ')?;
                }
                f.write_char(self.owner(byte))?;
            }
            f.write_char('\n')?;
        }
        if shown < layout.size {
            writeln!(f, "          ... {} more bytes", layout.size - shown)?;
        }
        Ok(())
    }

    /// The mark of the field that owns `byte`, or [`HOLE`].
    fn owner(&self, byte: usize) -> char {
        marks(self.layout.fields)
            .find(|(_, field)| field.offset <= byte && byte - field.offset < field.size)
            .map_or(HOLE, |(mark, _)| mark)
    }

    fn costs(&self, f: &mut fmt::Formatter<'_>, facts: &ElementFacts) -> fmt::Result {
        let layout = self.layout;
        writeln!(
            f,
            "\n  {} data bytes, {} padding bytes: {} of each element is data",
            facts.data_bytes,
            facts.padding_bytes,
            Percent(facts.useful_ratio()),
        )?;
        if facts.padding_bytes > 0 {
            writeln!(
                f,
                "    (streaming whole elements moves {} more bytes than the data alone)",
                Percent(facts.padding_overhead())
            )?;
        }
        f.write_str("  loads per element: ")?;
        if facts.one_word {
            f.write_str("1 as one word, ")?;
        }
        writeln!(f, "{} field by field", facts.loads_field_by_field)?;
        let warp = facts.warp_of_elements();
        writeln!(
            f,
            "  a warp reading {WARP_LANES} consecutive elements: {}, {} efficient",
            Sectors(warp.sectors),
            Percent(warp.efficiency())
        )?;
        let data_fields = layout.fields.iter().filter(|field| !field.is_padding);
        if data_fields.clone().count() < 2 {
            return Ok(());
        }
        writeln!(
            f,
            "  a warp reading one field of {WARP_LANES} consecutive elements:"
        )?;
        let names = data_fields
            .clone()
            .map(|field| field.name.len())
            .max()
            .unwrap_or(0);
        for field in data_fields {
            let strided = WarpAccess::field_of(0, layout, field).measure();
            let alone = WarpAccess::contiguous(0, field.size as u64).measure();
            writeln!(
                f,
                "    {:<names$}  {}, {} efficient ({}, {} as its own array)",
                field.name,
                Sectors(strided.sectors),
                Percent(strided.efficiency()),
                Sectors(alone.sectors),
                Percent(alone.efficiency()),
            )?;
        }
        Ok(())
    }
}
