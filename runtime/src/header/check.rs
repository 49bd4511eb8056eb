//! What a layout must satisfy before it is declared: a C++ struct must be
//! able to reproduce it byte for byte, one-instruction accessors need one
//! GPU word, and structure-of-arrays views need every data field to be one.

use super::names::{check_member, Member, VIEW_MEMBERS};
use super::{HeaderError, LayoutFault};
use crate::layout::{GpuLayout, GpuType};

/// Refuses a layout no C++ struct can reproduce, or whose member names
/// cannot be spelled or collide.
pub(crate) fn check_layout(layout: &'static GpuLayout) -> Result<(), HeaderError> {
    let ty = layout.name;
    let bad = |fault| HeaderError::BadLayout { ty, fault };
    if !layout.align.is_power_of_two() || layout.size == 0 || layout.size % layout.align != 0 {
        let (size, align) = (layout.size, layout.align);
        return Err(bad(LayoutFault::SizeOrAlign { size, align }));
    }
    let mut end = 0;
    for (index, field) in layout.fields.iter().enumerate() {
        let type_agrees = field.size == field.ty.size()
            && field.align == field.ty.align()
            && field.size > 0
            && field.align <= layout.align
            && !contains_marker(&field.ty);
        if !type_agrees {
            return Err(bad(LayoutFault::FieldType { field: field.name }));
        }
        if field.offset % field.align != 0 {
            return Err(bad(LayoutFault::Misaligned {
                field: field.name,
                offset: field.offset,
            }));
        }
        let fits = field
            .offset
            .checked_add(field.size)
            .is_some_and(|e| e <= layout.size);
        if field.offset < end || !fits {
            return Err(bad(LayoutFault::Overlap {
                field: field.name,
                offset: field.offset,
            }));
        }
        end = field.offset + field.size;
        check_type_names_within(&field.ty)?;
        check_member(field.name)?;
        let earlier = &layout.fields[..index];
        if earlier
            .iter()
            .any(|other| Member(other.name).spelled_like(Member(field.name)))
        {
            return Err(HeaderError::DuplicateField {
                ty: layout.name,
                field: field.name,
            });
        }
    }
    Ok(())
}

/// Refuses one-instruction accessors for a layout that is not one word.
pub(crate) fn check_one_word(layout: &'static GpuLayout) -> Result<(), HeaderError> {
    if !layout.is_one_word() {
        let (ty, size, align) = (layout.name, layout.size, layout.align);
        return Err(HeaderError::NotOneWord { ty, size, align });
    }
    Ok(())
}

/// Refuses views for a layout with a data field that is not one word, with
/// no data field, or with a field spelled like a member of the views.
pub(crate) fn check_columns(layout: &'static GpuLayout) -> Result<(), HeaderError> {
    let mut columns = 0;
    for field in layout.fields.iter().filter(|field| !field.is_padding) {
        if !field.ty.is_one_word() {
            return Err(HeaderError::NotAColumn {
                ty: layout.name,
                field: field.name,
            });
        }
        if Member(field.name).is_one_of(VIEW_MEMBERS) {
            return Err(HeaderError::ReservedMember {
                ty: layout.name,
                field: field.name,
            });
        }
        columns += 1;
    }
    if columns == 0 {
        return Err(HeaderError::NoColumns { ty: layout.name });
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
fn check_type_names_within(ty: &'static GpuType) -> Result<(), HeaderError> {
    match ty {
        GpuType::Vector { cuda_name, .. } if !super::names::is_identifier(cuda_name) => {
            Err(HeaderError::InvalidName { name: cuda_name })
        }
        GpuType::Array { elem, .. } => check_type_names_within(elem),
        _ => Ok(()),
    }
}
