//! `#[derive(GpuSoa)]`: a struct of any size stored as one column per field.
//!
//! The syntax decides what it can (a struct, named fields, no generic
//! parameters: the front end shared with the other macros; no padding
//! fields); whether each field can be a column (a `GpuAligned`
//! type) is left to the compiler, through one check per field whose error
//! points at that field's type. As for `GpuAligned`, the output is one
//! invocation of a runtime `macro_rules!` (`__gpu_soa_derive!`) that holds
//! the `unsafe impl`, so the user's crate gets no `unsafe` and a redirected
//! crate path either reaches the real macro or writes its own `unsafe`.
//!
//! Every error is collected and reported at once. Next to them the derive
//! still emits the trait's impl for whatever fields it could read (all of
//! them but a padding field's, say), or a struct of no columns, so that
//! code using the type does not add errors of its own (thiserror's
//! pattern); only an enum or a union, which no impl fits, gets none.

use crate::ast::{Input, Macro};
use crate::ctxt::Ctxt;
use crate::valid;
use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use syn::ext::IdentExt;
use syn::DeriveInput;

pub fn derive(input: &DeriveInput) -> TokenStream {
    let cx = Ctxt::new();
    let expansion = check_and_expand(&cx, input);
    match cx.check() {
        Ok(()) => expansion.unwrap_or_default(),
        Err(errors) => {
            let errors = errors.into_compile_error();
            quote!(#errors #expansion)
        }
    }
}

/// The expansion, if the input has a field list it can be built from, with
/// every fault of the input recorded in `cx`. The shape (a struct, named
/// fields, not generic) is the front end's, shared with the other macros.
fn check_and_expand(cx: &Ctxt, input: &DeriveInput) -> Option<TokenStream> {
    let ast = Input::read(cx, input, Macro::GpuSoa)?;
    valid::check(cx, &ast, Macro::GpuSoa);
    for field in &ast.fields {
        if field.attrs.padding {
            cx.error_spanned_by(
                field.original,
                "`GpuSoa` has no padding fields: every field becomes a column",
            );
        }
    }
    Some(if valid::has_checkable_shape(&ast, Macro::GpuSoa) {
        // Padding fields included: next to their error, an impl that
        // compiles is worth more than one that leaves them out.
        expand(&ast, input)
    } else {
        fallback(&ast)
    })
}

fn expand(ast: &Input, input: &DeriveInput) -> TokenStream {
    let krate = crate::expand::krate(ast);
    let ident = ast.ident;
    let vis = &input.vis;
    let columns = format_ident!("{}Columns", ident.unraw());
    let fields = ast.fields.iter().map(|field| {
        let member = &field.member;
        let ty = &field.original.ty;
        quote!(#member: #ty)
    });
    quote! {
        #krate::__gpu_soa_derive! {
            vis: #vis,
            type: #ident,
            columns: #columns,
            fields: [#(#fields),*],
        }
    }
}

/// An impl with no columns, for a struct the derive refused for its shape
/// (generic, tuple or no fields): the refusal is the only error. The macro
/// takes identifiers only, so a struct whose parameters it cannot name that
/// way (a lifetime, a constant, a bound or a `where` clause) gets no impl,
/// and its uses may add errors of their own.
fn fallback(ast: &Input) -> TokenStream {
    let krate = crate::expand::krate(ast);
    let ident = ast.ident;
    let generics = &ast.generics;
    let mut params = Vec::new();
    for param in &generics.params {
        match param {
            syn::GenericParam::Type(param)
                if param.bounds.is_empty() && param.default.is_none() =>
            {
                params.push(&param.ident);
            }
            _ => return TokenStream::new(),
        }
    }
    if generics.where_clause.is_some() {
        return TokenStream::new();
    }
    quote! {
        #krate::__gpu_soa_derive! {
            fallback: type: #ident, params: [#(#params),*]
        }
    }
}
