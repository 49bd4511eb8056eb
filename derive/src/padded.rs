//! `#[gpu_aligned::padded]`: rewrites a struct into a legal GPU element by
//! making every hole an explicit, zeroed pad field and raising the alignment
//! to the element's width.
//!
//! The macro sees tokens, not sizes (`vector::float3`, a nested padded type,
//! a type alias), so it never computes a size itself: every pad length and the
//! width are `const fn` calls over `(size_of, align_of)` of the field types,
//! evaluated by the compiler: `gpu_aligned::rules::{pad_before, tail_pad,
//! padded_width}`, next to the rule they serve. Alignment must be a literal in `#[repr(align)]`,
//! so the computed width instead selects a zero-sized marker field type
//! (`Width<{N}> as AlignMarker>::Marker`, aligned to N). `align = N` given
//! explicitly is a literal, so it goes straight into the repr.
//!
//! `crate = "path"` names the runtime crate when its dependency is renamed;
//! it is passed on to the derive as `#[gpu_aligned(crate = "path")]`.

use crate::ast::{Input, Macro};
use crate::ctxt::Ctxt;
use crate::{repr, valid};
use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};
use syn::ext::IdentExt;
use syn::{Data, DeriveInput, Fields, LitInt, LitStr};

/// What `#[gpu_aligned::padded(...)]` was given.
#[derive(Default)]
struct Args {
    /// `align = N`, N one of 1, 2, 4, 8, 16, as an unsuffixed literal.
    align: Option<LitInt>,
    /// `crate = "path"`: the literal (passed on to the derive) and the path.
    krate: Option<(LitStr, syn::Path)>,
}

pub fn expand(args: TokenStream, input: &DeriveInput) -> TokenStream {
    let cx = Ctxt::new();
    let args = parse_args(&cx, args);
    check_input(&cx, input);
    match cx.check() {
        // The struct goes out unchanged next to the errors, so code that
        // names it does not add "cannot find type" errors.
        Err(error) => {
            let error = error.into_compile_error();
            quote!(#error #input)
        }
        Ok(()) => rewrite(input, &args),
    }
}

fn parse_args(cx: &Ctxt, args: TokenStream) -> Args {
    let mut out = Args::default();
    let parser = syn::meta::parser(|meta| {
        if meta.path.is_ident("align") {
            let lit: LitInt = meta.value()?.parse()?;
            let value = lit.base10_parse::<u64>()?;
            if out.align.is_some() {
                cx.syn_error(meta.error("duplicate `align`"));
            } else if !is_word_size(value) {
                cx.error_spanned_by(
                    &lit,
                    format!(
                        "`align = {value}`: a GPU element is 1, 2, 4, 8 or 16 bytes, aligned to \
                         its size"
                    ),
                );
            } else {
                // A suffix (`16u8`) names the same number; `repr(align)`
                // takes it unsuffixed.
                out.align = Some(LitInt::new(lit.base10_digits(), lit.span()));
            }
            Ok(())
        } else if meta.path.is_ident("crate") {
            let lit: LitStr = meta.value()?.parse()?;
            if out.krate.is_some() {
                cx.syn_error(meta.error("duplicate `crate`"));
            } else {
                match lit.parse::<syn::Path>() {
                    Ok(path) => out.krate = Some((lit, path)),
                    Err(_) => cx.error_spanned_by(
                        &lit,
                        "`crate` takes the name the `gpu-aligned` dependency has in this crate, \
                         e.g. `crate = \"ga\"`",
                    ),
                }
            }
            Ok(())
        } else {
            Err(meta.error(
                "unknown argument; expected `align = N` (N = 1, 2, 4, 8 or 16) or \
                 `crate = \"path\"`",
            ))
        }
    });
    if let Err(error) = syn::parse::Parser::parse2(parser, args) {
        cx.syn_error(error);
    }
    out
}

// The widths a forced alignment may take: the word sizes of the rule
// (`gpu_aligned::rules::WORD_SIZES`, which a proc macro cannot call).
fn is_word_size(value: u64) -> bool {
    matches!(value, 1 | 2 | 4 | 8 | 16)
}

// The shape (a struct with named fields, not generic) is checked by the
// front end all macros share; the rewrite chooses the repr itself, so one
// written by hand would conflict or be overridden.
fn check_input(cx: &Ctxt, input: &DeriveInput) {
    if let Some(ast) = Input::read(cx, input, Macro::Padded) {
        valid::check(cx, &ast, Macro::Padded);
    }
    for attr in input.attrs.iter().filter(|attr| repr::is_repr(attr)) {
        cx.error_spanned_by(
            attr,
            "`#[gpu_aligned::padded]` chooses the repr itself (`repr(C)` plus the width); \
             remove this `#[repr]`, or force a width with `#[gpu_aligned::padded(align = N)]`",
        );
    }
}

fn rewrite(input: &DeriveInput, args: &Args) -> TokenStream {
    let forced = args.align.as_ref();
    let krate = match &args.krate {
        Some((_, path)) => quote!(#path),
        None => quote!(::gpu_aligned),
    };
    let crate_attr = args
        .krate
        .as_ref()
        .map(|(lit, _)| quote!(#[gpu_aligned(crate = #lit)]));
    let Data::Struct(data) = &input.data else {
        unreachable!("checked in check_input")
    };
    let Fields::Named(named) = &data.fields else {
        unreachable!("checked in check_input")
    };
    let fields: Vec<&syn::Field> = named.named.iter().collect();
    let private = quote!(#krate::__private);
    let rules = quote!(#krate::rules);

    let shapes = fields.iter().map(|field| {
        let ty = &field.ty;
        quote!((#private::core::mem::size_of::<#ty>(), #private::core::mem::align_of::<#ty>()))
    });
    let shapes = quote!(&[#(#shapes),*]);
    let width = match forced {
        Some(lit) => {
            let value = LitInt::new(&format!("{}usize", lit.base10_digits()), lit.span());
            quote!(#value)
        }
        None => quote!(#rules::padded_width(#shapes)),
    };

    let (repr, marker) = match forced {
        None => {
            let marker = quote! {
                #[gpu_aligned(padding)]
                __align: <#private::Width<{ #width }> as #private::AlignMarker>::Marker,
            };
            (quote!(#[repr(C)]), marker)
        }
        Some(lit) => {
            // Spanned at the user's `align = N`, so errors about the alignment
            // point there.
            let align = quote_spanned!(lit.span()=> align(#lit));
            (quote!(#[repr(C, #align)]), TokenStream::new())
        }
    };

    let mut body = Vec::new();
    let mut pad_names = Vec::new();
    for (index, field) in fields.iter().enumerate() {
        if index > 0 {
            let ident = field.ident.as_ref().expect("named field");
            let pad = format_ident!("__pad_before_{}", ident.unraw());
            body.push(quote! {
                #[gpu_aligned(padding)]
                #[allow(dead_code)]
                #pad: [#private::core::primitive::u8; #rules::pad_before(#shapes, #index)],
            });
            pad_names.push(pad);
        }
        body.push(quote!(#field,));
    }
    body.push(quote! {
        #[gpu_aligned(padding)]
        #[allow(dead_code)]
        __pad_tail: [#private::core::primitive::u8; #rules::tail_pad(#shapes, #width)],
    });
    pad_names.push(format_ident!("__pad_tail"));
    if forced.is_none() {
        pad_names.push(format_ident!("__align"));
    }

    let attrs = &input.attrs;
    let vis = &input.vis;
    let ident = &input.ident;
    // Fresh parameter names: a field's own name could be a constant or a
    // unit struct in scope, which a parameter pattern would match against
    // instead of binding.
    let args: Vec<syn::Ident> = (0..fields.len())
        .map(|index| format_ident!("__arg_{}", index))
        .collect();
    let params = fields.iter().zip(&args).map(|(field, arg)| {
        let ty = &field.ty;
        quote!(#arg: #ty)
    });
    let inits = fields.iter().zip(&args).map(|(field, arg)| {
        let name = &field.ident;
        quote!(#name: #arg)
    });
    let field_list = fields
        .iter()
        .filter_map(|field| field.ident.as_ref())
        .map(|name| format!("`{}`", name.unraw()))
        .collect::<Vec<_>>()
        .join(", ");
    let new_doc = format!(
        "Builds a `{ident}` from its fields in declaration order ({field_list}); the padding is \
         zeroed."
    );

    quote! {
        #(#attrs)*
        #repr
        #[derive(#krate::GpuAligned)]
        #crate_attr
        #vis struct #ident {
            #marker
            #(#body)*
        }

        #[automatically_derived]
        impl #ident {
            #[doc = #new_doc]
            #[allow(dead_code, clippy::too_many_arguments)]
            #[must_use]
            #vis const fn new(#(#params),*) -> Self {
                Self {
                    #(#inits,)*
                    #(#pad_names: #private::zeroed(),)*
                }
            }
        }

        #[automatically_derived]
        impl #private::core::default::Default for #ident {
            /// All fields zero, padding included.
            fn default() -> Self {
                #private::zeroed()
            }
        }
    }
}
