//! The input as the derive sees it: the struct's fields with their parsed
//! attributes, each borrowing its syn node so any later error can point at
//! the source.

use crate::attr::{self, FieldAttrs};
use crate::ctxt::Ctxt;
use crate::repr::{self, Repr};
use syn::{DeriveInput, Member};

pub struct Input<'a> {
    pub original: &'a DeriveInput,
    /// `None` if the repr was rejected (the error is already recorded).
    pub repr: Option<Repr>,
    pub fields: Vec<Field<'a>>,
}

pub struct Field<'a> {
    pub original: &'a syn::Field,
    /// `x` or `0`: what `offset_of!` and constructors name.
    pub member: Member,
    pub attrs: FieldAttrs,
}

impl<'a> Input<'a> {
    /// Builds the AST, recording attribute and repr errors in `cx`. Enums and
    /// unions get an empty field list; `valid` rejects them.
    pub fn from_syn(cx: &Ctxt, input: &'a DeriveInput) -> Self {
        attr::container_attrs(cx, &input.attrs);
        let repr = repr::parse(cx, &input.attrs, &input.ident);
        let fields = match &input.data {
            syn::Data::Struct(data) => Field::multiple_from_syn(cx, &data.fields),
            syn::Data::Enum(_) | syn::Data::Union(_) => Vec::new(),
        };
        Input {
            original: input,
            repr,
            fields,
        }
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
