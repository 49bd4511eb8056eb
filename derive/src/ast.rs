//! The input as the derive sees it: a struct's fields with their parsed
//! attributes, each borrowing its syn node so any later error can point at
//! the source. Enums and unions are rejected here, while parsing: there is no
//! field list to build for them.

use crate::attr::{self, ContainerAttrs, FieldAttrs};
use crate::ctxt::Ctxt;
use crate::repr::{self, Written};
use syn::{DeriveInput, Member};

pub struct Input<'a> {
    pub ident: &'a syn::Ident,
    pub generics: &'a syn::Generics,
    pub attrs: ContainerAttrs,
    /// Every `#[repr]` item as written; `repr::judge` decides.
    pub repr: Written,
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
    /// an enum or a union is an error of its own.
    pub fn from_syn(cx: &Ctxt, input: &'a DeriveInput) -> syn::Result<Self> {
        let data =
            match &input.data {
                syn::Data::Struct(data) => data,
                // An enum's discriminant makes some bit patterns invalid (so it
                // cannot be `Pod`), and CUDA C++ has no matching tagged layout.
                syn::Data::Enum(data) => {
                    return Err(syn::Error::new_spanned(
                        data.enum_token,
                        "`GpuAligned` cannot be derived for an enum: not every bit pattern is a \
                     valid variant, and CUDA has no matching layout; use a `#[repr(C)]` struct \
                     with an integer tag field (e.g. `kind: u32`)",
                    ))
                }
                // A union's fields overlap: there is no field list whose offsets
                // and padding could be checked.
                syn::Data::Union(data) => return Err(syn::Error::new_spanned(
                    data.union_token,
                    "`GpuAligned` cannot be derived for a union: its fields overlap, so there is \
                     no field list whose offsets and padding could be checked; use a \
                     `#[repr(C)]` struct, or one word-sized field (e.g. `bits: u32`) that \
                     kernels reinterpret",
                )),
            };
        Ok(Input {
            ident: &input.ident,
            generics: &input.generics,
            attrs: attr::container_attrs(cx, &input.attrs),
            repr: repr::parse(cx, &input.attrs),
            fields: Field::multiple_from_syn(cx, &data.fields),
        })
    }
}

impl<'a> Field<'a> {
    fn multiple_from_syn(cx: &Ctxt, fields: &'a syn::Fields) -> Vec<Self> {
        fields
            .iter()
            .enumerate()
            .map(|(index, field)| Field {
                original: field,
                member: match &field.ident {
                    Some(ident) => Member::Named(ident.clone()),
                    None => Member::Unnamed(index.into()),
                },
                attrs: attr::field_attrs(cx, &field.attrs),
            })
            .collect()
    }
}
