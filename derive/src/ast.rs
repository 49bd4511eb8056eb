//! The input as every macro of this crate sees it: a struct's fields with
//! their parsed attributes, each borrowing its syn node so any later error
//! can point at the source. Enums and unions are rejected here, while
//! parsing: there is no field list to build for them. [`Macro`] says which
//! macro reads the struct, so that `valid` can check the shape once for all
//! three, each with its own words.

use crate::attr::{self, ContainerAttrs, FieldAttrs};
use crate::ctxt::Ctxt;
use crate::repr::{self, Written};
use syn::{DeriveInput, Member};

/// The macro reading the struct.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Macro {
    /// `#[derive(GpuAligned)]`.
    GpuAligned,
    /// `#[derive(GpuData)]`: a struct of any size without holes.
    GpuData,
    /// `#[gpu_aligned::padded]`, which rewrites the struct and derives
    /// `GpuAligned` on the result (which parses its own attributes).
    Padded,
    /// `#[derive(GpuSoa)]`.
    GpuSoa,
}

pub struct Input<'a> {
    pub ident: &'a syn::Ident,
    pub generics: &'a syn::Generics,
    pub attrs: ContainerAttrs,
    /// Every `#[repr]` item as written; `repr::judge` decides.
    pub repr: Written,
    /// Named, tuple or unit, for the macros that need names.
    pub style: &'a syn::Fields,
    pub fields: Vec<Field<'a>>,
}

pub struct Field<'a> {
    pub original: &'a syn::Field,
    /// `x` or `0`: what `offset_of!`, patterns and constructors name.
    pub member: Member,
    pub attrs: FieldAttrs,
}

impl<'a> Input<'a> {
    /// Builds the AST, recording attribute and repr syntax errors in `cx`;
    /// an enum or a union is an error of its own, recorded too (`None`).
    /// `padded` passes its input on to the derive, which parses the helper
    /// attributes: read here too, they would be reported twice.
    pub fn read(cx: &Ctxt, input: &'a DeriveInput, by: Macro) -> Option<Self> {
        let data = match &input.data {
            syn::Data::Struct(data) => data,
            syn::Data::Enum(data) => {
                cx.error_spanned_by(data.enum_token, not_an_enum(by));
                return None;
            }
            syn::Data::Union(data) => {
                cx.error_spanned_by(data.union_token, not_a_union(by));
                return None;
            }
        };
        let ours = by != Macro::Padded;
        Some(Input {
            ident: &input.ident,
            generics: &input.generics,
            attrs: if ours {
                attr::container_attrs(cx, &input.attrs)
            } else {
                ContainerAttrs::default()
            },
            repr: if matches!(by, Macro::GpuAligned | Macro::GpuData) {
                repr::parse(cx, &input.attrs)
            } else {
                Written::default()
            },
            style: &data.fields,
            fields: Field::multiple_from_syn(cx, &data.fields, ours),
        })
    }
}

// An enum's discriminant makes some bit patterns invalid (so it cannot be
// `Pod`), and CUDA C++ has no matching tagged layout.
fn not_an_enum(by: Macro) -> &'static str {
    match by {
        Macro::GpuAligned => {
            "`GpuAligned` cannot be derived for an enum: not every bit pattern is a valid \
             variant, and CUDA has no matching layout; use a `#[repr(C)]` struct with an \
             integer tag field (e.g. `kind: u32`)"
        }
        Macro::GpuData => {
            "`GpuData` cannot be derived for an enum: not every bit pattern is a valid \
             variant, and CUDA has no matching layout; use a `#[repr(C)]` struct with an \
             integer tag field (e.g. `kind: u32`)"
        }
        Macro::Padded => "`#[gpu_aligned::padded]` goes on a struct with named fields, not an enum",
        Macro::GpuSoa => "`GpuSoa` applies to structs with named fields, not enums",
    }
}

// A union's fields overlap: there is no field list whose offsets and padding
// could be checked, nor one column per field.
fn not_a_union(by: Macro) -> &'static str {
    match by {
        Macro::GpuAligned => {
            "`GpuAligned` cannot be derived for a union: its fields overlap, so there is no \
             field list whose offsets and padding could be checked; use a `#[repr(C)]` \
             struct, or one word-sized field (e.g. `bits: u32`) that kernels reinterpret"
        }
        Macro::GpuData => {
            "`GpuData` cannot be derived for a union: its fields overlap, so there is no \
             field list whose offsets and padding could be checked; use a `#[repr(C)]` \
             struct"
        }
        Macro::Padded => "`#[gpu_aligned::padded]` goes on a struct with named fields, not a union",
        Macro::GpuSoa => "`GpuSoa` applies to structs with named fields, not unions",
    }
}

impl<'a> Field<'a> {
    fn multiple_from_syn(cx: &Ctxt, fields: &'a syn::Fields, attrs: bool) -> Vec<Self> {
        fields
            .iter()
            .enumerate()
            .map(|(index, field)| Field {
                original: field,
                member: match &field.ident {
                    Some(ident) => Member::Named(ident.clone()),
                    None => Member::Unnamed(index.into()),
                },
                attrs: if attrs {
                    attr::field_attrs(cx, &field.attrs)
                } else {
                    FieldAttrs::default()
                },
            })
            .collect()
    }
}
