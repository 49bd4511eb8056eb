//! `#[derive(GpuSoa)]`: a struct of any size stored as one column per field.
//!
//! The syntax decides what it can (a struct, named fields, no generics, no
//! padding fields); whether each field can be a column (a `GpuAligned`
//! type) is left to the compiler, through a bound whose message names the
//! fix. As for `GpuAligned`, the output is one invocation of a runtime
//! `macro_rules!` (`__gpu_soa_derive!`) that holds the `unsafe impl`, so the
//! user's crate gets no `unsafe` and a redirected crate path either reaches
//! the real macro or writes its own `unsafe`.

use crate::ast::Input;
use crate::ctxt::Ctxt;
use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote};
use syn::ext::IdentExt;
use syn::{Data, DeriveInput, Fields};

pub fn derive(input: &DeriveInput) -> syn::Result<TokenStream> {
    let cx = Ctxt::new();
    if !input.generics.params.is_empty() {
        cx.error_spanned_by(
            &input.generics,
            "`GpuSoa` does not support generic structs: the CUDA header needs one name per \
             layout and the column types must be known; write a concrete struct (or a type alias \
             per instantiation wrapped in a concrete struct)",
        );
    }
    let fields: Option<&syn::punctuated::Punctuated<syn::Field, syn::Token![,]>> = match &input.data
    {
        Data::Struct(data) => match &data.fields {
            Fields::Named(named) if !named.named.is_empty() => Some(&named.named),
            Fields::Named(_) | Fields::Unit => {
                cx.error_spanned_by(
                    &input.ident,
                    "`GpuSoa` needs at least one field: each field becomes a column",
                );
                None
            }
            Fields::Unnamed(_) => {
                cx.error_spanned_by(
                    &input.ident,
                    "`GpuSoa` needs named fields: the columns are named like them",
                );
                None
            }
        },
        Data::Enum(data) => {
            cx.error_spanned_by(
                data.enum_token,
                "`GpuSoa` applies to structs with named fields, not enums",
            );
            None
        }
        Data::Union(data) => {
            cx.error_spanned_by(
                data.union_token,
                "`GpuSoa` applies to structs with named fields, not unions",
            );
            None
        }
    };
    cx.check()?;
    let Some(fields) = fields else {
        return Err(syn::Error::new(Span::call_site(), "`GpuSoa`: no fields"));
    };

    // A struct with named fields from here on, so parsing cannot fail on the
    // kind of item; attribute errors are collected.
    let cx = Ctxt::new();
    let ast = match Input::from_syn(&cx, input) {
        Ok(ast) => ast,
        Err(error) => {
            let _already_reported = cx.check();
            return Err(error);
        }
    };
    for field in &ast.fields {
        if field.attrs.padding {
            cx.error_spanned_by(
                field.original,
                "`GpuSoa` has no padding fields: every field becomes a column",
            );
        }
    }
    cx.check()?;
    let krate = crate::expand::krate(&ast);
    let ident = ast.ident;
    let vis = &input.vis;
    let columns = format_ident!("{}Columns", ident.unraw());
    let name = ident.unraw().to_string();
    let count = fields.len();
    let field_list = fields.iter().filter_map(|field| {
        let member = field.ident.as_ref()?;
        let ty = &field.ty;
        let fname = member.unraw().to_string();
        Some(quote!({ #member: #ty, #fname }))
    });
    Ok(quote! {
        #krate::__gpu_soa_derive! {
            vis: #vis,
            type: #ident;
            name: #name;
            count: #count;
            columns: #columns;
            fields: [#(#field_list)*];
        }
    })
}
