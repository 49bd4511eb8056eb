//! [`CudaHeader`]: the types a header declares, in an order C++ accepts.

use super::check::{check_columns, check_layout, check_one_word};
use super::emit::{accessors_text, struct_text, Names, PREAMBLE};
use super::names::check_type_name;
use super::views::{views_text, ViewName, VIEW_SUFFIXES};
use super::{HeaderError, MAX_DEPTH};
use crate::layout::{GpuData, GpuField, GpuLayout, GpuType, GpuWords};
use crate::rules;
use alloc_crate::{string::String, vec::Vec};
use core::fmt::{self, Write};

/// A CUDA C++ header under construction: add types, then [`render`] it.
///
/// ```
/// use gpu_aligned::header::CudaHeader;
/// use gpu_aligned::GpuAligned;
///
/// #[derive(Clone, Copy, GpuAligned)]
/// #[repr(C, align(8))]
/// struct Pair { a: f32, b: f32 }
///
/// let mut header = CudaHeader::new();
/// header.add::<Pair>()?;
/// assert!(header.render().contains("Pair gpu_load(const Pair* p)"));
/// # Ok::<(), gpu_aligned::header::HeaderError>(())
/// ```
///
/// [`render`]: CudaHeader::render
#[derive(Clone, Debug, Default)]
pub struct CudaHeader {
    /// Declaration order: every struct after the structs it contains.
    entries: Vec<Entry>,
    /// The names given with [`CudaHeader::name`].
    names: Vec<(&'static GpuLayout, &'static str)>,
}

#[derive(Clone, Copy, Debug)]
struct Entry {
    layout: &'static GpuLayout,
    /// Its C++ name: its own, or the one given with [`CudaHeader::name`].
    name: &'static str,
    accessors: bool,
    /// The views' columns, in their order, if it has views.
    views: Option<&'static [GpuField]>,
}

/// What a declaration comes with.
#[derive(Clone, Copy)]
struct Wants {
    accessors: bool,
    views: Option<&'static [GpuField]>,
}

const PLAIN: Wants = Wants {
    accessors: false,
    views: None,
};

impl CudaHeader {
    /// An empty header.
    ///
    /// ```
    /// let header = gpu_aligned::header::CudaHeader::new();
    /// assert_eq!(header.type_names().count(), 0);
    /// ```
    pub fn new() -> Self {
        Self::default()
    }

    /// Declares `T`, a type an arena array holds, with the structs it contains and its accessors
    /// (an element) or
    /// [views](super#structure-of-arrays-and-array-of-structs-views-the-kernel-side) (a whole
    /// struct). Adding a type twice is harmless; CUDA built-ins add nothing.
    ///
    /// ```
    /// use gpu_aligned::header::CudaHeader;
    /// use gpu_aligned::vector::float4;
    ///
    /// #[derive(Clone, Copy, gpu_aligned::GpuData)]
    /// #[repr(C)]
    /// struct Sphere { center_radius: float4, albedo: float4 }
    ///
    /// let mut header = CudaHeader::new();
    /// header.add::<float4>()?; // a CUDA built-in: nothing to declare
    /// header.add::<Sphere>()?; // 32 bytes, aligned to 16: stored whole
    /// let text = header.render();
    /// assert!(text.contains("struct Sphere_aos16"));
    /// assert!(!text.contains("Sphere gpu_load("));
    /// # Ok::<(), gpu_aligned::header::HeaderError>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`HeaderError`] if a name cannot be spelled in C++ or clashes, or a
    /// layout cannot be reproduced; the header is then left unchanged.
    pub fn add<T: GpuWords>(&mut self) -> Result<&mut Self, HeaderError> {
        crate::layout::require_layout::<T>();
        let (accessors, views) = match T::TYPE {
            // A whole struct: more than one word, so no one-word accessors.
            GpuType::Struct(layout) if !rules::is_legal(layout.size, layout.align, layout.size) => {
                (false, Some(layout.fields))
            }
            _ => (true, None),
        };
        self.add_type(&T::TYPE, Wants { accessors, views })
    }

    /// Declares the field type `T` and the structs it contains, without accessors.
    ///
    /// ```
    /// use gpu_aligned::header::CudaHeader;
    /// use gpu_aligned::vector::float3;
    ///
    /// let mut header = CudaHeader::new();
    /// header.add_data::<[float3; 2]>()?;
    /// assert_eq!(header.type_names().count(), 0);
    /// # Ok::<(), gpu_aligned::header::HeaderError>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As for [`CudaHeader::add`].
    pub fn add_data<T: GpuData>(&mut self) -> Result<&mut Self, HeaderError> {
        self.add_type(&T::TYPE, PLAIN)
    }

    /// Declares the struct described by `layout`, and the structs it
    /// contains; with `accessors`, also its `gpu_load`/`gpu_store`.
    ///
    /// ```
    /// use gpu_aligned::header::CudaHeader;
    /// use gpu_aligned::GpuAligned;
    ///
    /// #[derive(Clone, Copy, GpuAligned)]
    /// #[repr(C, align(8))]
    /// struct Pair { a: f32, b: f32 }
    ///
    /// let mut header = CudaHeader::new();
    /// header.add_layout(&Pair::LAYOUT, false)?; // declared, no gpu_load
    /// assert!(!header.render().contains("Pair gpu_load("));
    /// # Ok::<(), gpu_aligned::header::HeaderError>(())
    /// ```
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
        let views = None;
        self.add_declared(layout, Wants { accessors, views })
    }

    /// Declares the struct described by `layout` (any size), the structs it contains, and its
    /// [views](super#structure-of-arrays-and-array-of-structs-views-the-kernel-side), whose columns
    /// are `columns`: the data fields of `layout`, each once, in the order they are laid out.
    ///
    /// ```
    /// use gpu_aligned::header::CudaHeader;
    /// use gpu_aligned::{GpuField, GpuLayout, GpuType, Scalar};
    ///
    /// const ID: GpuField = GpuField::new("id", 0, 8, 8, false, GpuType::Scalar(Scalar::U64));
    /// const KIND: GpuField = GpuField::new("kind", 8, 1, 1, false, GpuType::Scalar(Scalar::U8));
    /// // Declared `kind` first; laid out `id` first.
    /// static HIT: GpuLayout = GpuLayout::new("Hit", 16, 8, 7, &[ID, KIND]);
    /// let mut header = CudaHeader::new();
    /// header.add_soa_layout(&HIT, &[KIND, ID])?;
    /// let text = header.render();
    /// assert!(text.contains("struct Hit_soa {\n    gpu_aligned_column<uint8_t, 1> kind;"));
    /// assert!(text.contains("struct Hit_aos16 {"));
    /// # Ok::<(), gpu_aligned::header::HeaderError>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As for [`CudaHeader::add`]; [`HeaderError::NotAColumn`], [`HeaderError::NoColumns`],
    /// [`HeaderError::ReservedMember`] or [`HeaderError::ViewNameTaken`] when the views cannot be
    /// made; [`HeaderError::ColumnsNotFields`] when `columns` is not the data fields of `layout`,
    /// each once, or the type already has views with its columns in another order.
    pub fn add_soa_layout(
        &mut self,
        layout: &'static GpuLayout,
        columns: &'static [GpuField],
    ) -> Result<&mut Self, HeaderError> {
        check_column_order(layout, columns)?;
        let (accessors, views) = (false, Some(columns));
        self.add_declared(layout, Wants { accessors, views })
    }

    /// Declares the struct `T` as `name` wherever this header declares it: how a generic struct's
    /// instantiations get a name each. Call it before adding the types that contain `T`.
    ///
    /// ```
    /// use gpu_aligned::header::CudaHeader;
    /// use gpu_aligned::GpuAligned;
    ///
    /// #[derive(Clone, Copy, GpuAligned)]
    /// #[repr(transparent)]
    /// struct Meters<T>(T);
    ///
    /// let mut header = CudaHeader::new();
    /// header.name::<Meters<f32>>("MetersF32")?.name::<Meters<u16>>("MetersU16")?;
    /// header.add::<Meters<f32>>()?.add::<Meters<u16>>()?;
    /// let text = header.render();
    /// assert!(text.contains("struct __align__(4) MetersF32 {\n    float _0;"));
    /// assert!(text.contains("static_assert(sizeof(MetersU16) == 2,"));
    /// # Ok::<(), gpu_aligned::header::HeaderError>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`HeaderError::NotAStruct`] if `T` is not a struct, [`HeaderError::InvalidName`] or
    /// [`HeaderError::ReservedName`] if `name` cannot be a C++ type name, and
    /// [`HeaderError::NameClash`] if the header already declares another type as `name`, or
    /// declared `T` under another name; the header is then left unchanged.
    pub fn name<T: GpuData>(&mut self, name: &'static str) -> Result<&mut Self, HeaderError> {
        let GpuType::Struct(layout) = T::TYPE else {
            return Err(HeaderError::NotAStruct { name });
        };
        check_type_name(name)?;
        let same = |other: &GpuLayout| core::ptr::eq(other, layout) || *other == *layout;
        let known = || {
            let declared = self.entries.iter().map(|entry| (entry.layout, entry.name));
            declared.chain(self.names.iter().copied())
        };
        // `T` named, or declared, under another name already.
        if let Some((_, other)) = known().find(|&(other, as_)| same(other) && as_ != name) {
            return Err(HeaderError::NameClash { name: other });
        }
        // `name` taken by another type.
        if known().any(|(other, as_)| as_ == name && !same(other)) {
            return Err(HeaderError::NameClash { name });
        }
        self.names.push((layout, name));
        Ok(self)
    }

    fn add_declared(
        &mut self,
        layout: &'static GpuLayout,
        wants: Wants,
    ) -> Result<&mut Self, HeaderError> {
        self.commit(|entries, names| declare(entries, names, layout, wants, 0))
    }

    fn add_type(&mut self, ty: &'static GpuType, wants: Wants) -> Result<&mut Self, HeaderError> {
        match ty {
            GpuType::Struct(layout) => self.add_declared(layout, wants),
            _ => self.commit(|entries, names| declare_within(entries, names, ty, 0)),
        }
    }

    /// Runs `step` on a copy of the entries, kept only if every check passes.
    fn commit(
        &mut self,
        step: impl FnOnce(&mut Vec<Entry>, Names<'_>) -> Result<(), HeaderError>,
    ) -> Result<&mut Self, HeaderError> {
        let mut entries = self.entries.clone();
        step(&mut entries, Names(&self.names))?;
        check_view_names(&entries)?;
        self.entries = entries;
        Ok(self)
    }

    /// The names of the declared structs, in declaration order.
    ///
    /// ```
    /// let header = gpu_aligned::header::CudaHeader::new();
    /// assert!(header.type_names().next().is_none());
    /// ```
    pub fn type_names(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.entries.iter().map(|entry| entry.name)
    }

    /// The header's text.
    ///
    /// ```
    /// let text = gpu_aligned::header::CudaHeader::new().render();
    /// assert!(text.starts_with("// Generated by gpu-aligned"));
    /// ```
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
    names: Names<'_>,
    layout: &'static GpuLayout,
    wants: Wants,
    depth: usize,
) -> Result<(), HeaderError> {
    let name = names.of(layout);
    if depth > MAX_DEPTH {
        return Err(HeaderError::TooDeep { ty: name });
    }
    check_type_name(name)?;
    if let Some(entry) = entries.iter_mut().find(|e| e.name == name) {
        if !core::ptr::eq(entry.layout, layout) && *entry.layout != *layout {
            return Err(HeaderError::NameClash { name });
        }
        if wants.accessors {
            check_one_word(layout)?;
            entry.accessors = true;
        }
        if let Some(columns) = wants.views {
            check_columns(layout)?;
            if entry.views.is_some_and(|before| before != columns) {
                return Err(HeaderError::ColumnsNotFields { ty: layout.name });
            }
            entry.views = Some(columns);
        }
        return Ok(());
    }
    check_layout(layout)?;
    if wants.accessors {
        check_one_word(layout)?;
    }
    if wants.views.is_some() {
        check_columns(layout)?;
    }
    for field in layout.fields {
        declare_within(entries, names, &field.ty, depth + 1)?;
    }
    entries.push(Entry {
        layout,
        name,
        accessors: wants.accessors,
        views: wants.views,
    });
    Ok(())
}

fn declare_within(
    entries: &mut Vec<Entry>,
    names: Names<'_>,
    ty: &'static GpuType,
    depth: usize,
) -> Result<(), HeaderError> {
    match ty {
        GpuType::Struct(inner) => declare(entries, names, inner, PLAIN, depth),
        GpuType::Array { elem, .. } => declare_within(entries, names, elem, depth),
        _ => Ok(()),
    }
}

/// Refuses columns that are not the data fields of `layout`, each once.
fn check_column_order(layout: &'static GpuLayout, columns: &[GpuField]) -> Result<(), HeaderError> {
    let data = |fields: &[GpuField]| fields.iter().filter(|field| !field.is_padding).count();
    let each_once = data(layout.fields) == data(columns)
        && columns.iter().enumerate().all(|(index, column)| {
            column.is_padding
                || (layout.fields.contains(column)
                    && !columns[..index]
                        .iter()
                        .any(|earlier| earlier.name == column.name))
        });
    if !each_once {
        return Err(HeaderError::ColumnsNotFields { ty: layout.name });
    }
    Ok(())
}

/// Refuses a struct declared under the name of another struct's view.
fn check_view_names(entries: &[Entry]) -> Result<(), HeaderError> {
    for with_views in entries.iter().filter(|entry| entry.views.is_some()) {
        for suffix in VIEW_SUFFIXES {
            let view = ViewName(with_views.name, suffix);
            if let Some(taken) = entries.iter().find(|entry| view.is(entry.name)) {
                let (ty, taken_by) = (with_views.name, taken.name);
                return Err(HeaderError::ViewNameTaken { ty, taken_by });
            }
        }
    }
    Ok(())
}

impl fmt::Display for CudaHeader {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(PREAMBLE)?;
        for entry in &self.entries {
            struct_text(f, entry.layout, Names(&self.names))?;
            if entry.accessors {
                accessors_text(f, entry.name, entry.layout.size)?;
            }
            if let Some(columns) = entry.views {
                views_text(f, entry.name, entry.layout, columns)?;
            }
        }
        Ok(())
    }
}
