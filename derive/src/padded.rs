//! `#[gpu_aligned::padded]`: rewrites a struct into a legal GPU element by
//! making every hole an explicit, zeroed pad field and raising the alignment
//! to the element's width.
//!
//! The macro sees tokens, not sizes (`vector::float3`, a nested padded type,
//! a type alias), so it never computes a size itself: every pad length and the
//! width are `const fn` calls over `(size_of, align_of)` of the field types,
//! evaluated by the compiler: `gpu_aligned::__private::{pad_before, tail_pad,
//! padded_width}` (defined in the runtime next to the rule they serve). Alignment must be a literal in `#[repr(align)]`,
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
        None => quote!(#private::padded_width(#shapes)),
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
                #pad: [#private::core::primitive::u8; #private::pad_before(#shapes, #index)],
            });
            pad_names.push(pad);
        }
        body.push(quote!(#field,));
    }
    body.push(quote! {
        #[gpu_aligned(padding)]
        #[allow(dead_code)]
        __pad_tail: [#private::core::primitive::u8; #private::tail_pad(#shapes, #width)],
    });
    pad_names.push(format_ident!("__pad_tail"));
    if forced.is_none() {
        pad_names.push(format_ident!("__align"));
    }

    // A forced width asks for an element, and the derive that checks one
    // says why the fields do not fit it; without one, the width follows
    // the fields, and what they make is whatever the compiler lays out: an
    // element up to 16 bytes, a whole struct of 16-byte words above.
    let derive = match forced {
        Some(_) => quote!(#[derive(#krate::GpuAligned)]),
        None => quote!(#[derive(#krate::GpuData)]),
    };
    let (attrs, replaced) = take_derives(&input.attrs);
    let vis = &input.vis;
    let ident = &input.ident;
    let names: Vec<&syn::Ident> = fields
        .iter()
        .filter_map(|field| field.ident.as_ref())
        .collect();
    let params = fields.iter().map(|field| {
        let name = &field.ident;
        let ty = &field.ty;
        quote!(#name: #ty)
    });
    let field_list = names
        .iter()
        .map(|name| format!("`{}`", name.unraw()))
        .collect::<Vec<_>>()
        .join(", ");
    let new_doc = format!(
        "Builds a `{ident}` from its fields in declaration order ({field_list}); the padding is \
         zeroed."
    );
    let plain = format_ident!("{}Fields", ident.unraw());
    let plain_doc = format!(
        "The fields of [`{ident}`] without its padding, to build one from a struct literal: \
         `{ident}::from({plain} {{ .. }})` (the padding is zeroed), or to take one apart."
    );
    let plain_fields = fields.iter().map(|field| {
        let docs = field
            .attrs
            .iter()
            .filter(|attr| attr.path().is_ident("doc"));
        let vis = &field.vis;
        let name = &field.ident;
        let ty = &field.ty;
        quote!(#(#docs)* #vis #name: #ty)
    });
    let impls = replaced_impls(ident, &names, &replaced, &private);

    quote! {
        #(#attrs)*
        #repr
        #derive
        #crate_attr
        #vis struct #ident {
            #marker
            #(#body)*
        }

        #[doc = #plain_doc]
        #[derive(#private::core::clone::Clone, #private::core::marker::Copy)]
        #vis struct #plain {
            #(#plain_fields,)*
        }

        const _: () = {
            // Parameters named like the fields, which is what the user's
            // docs show. A constant, static or unit struct of the same name
            // in scope would turn such a parameter into a pattern; these
            // functions shadow them here (functions are never patterns).
            #(
                #[allow(dead_code, non_snake_case)]
                fn #names() {}
            )*

            #[automatically_derived]
            impl #ident {
                #[doc = #new_doc]
                #[allow(dead_code, clippy::too_many_arguments)]
                #[must_use]
                #vis const fn new(#(#params),*) -> Self {
                    Self {
                        #(#names,)*
                        #(#pad_names: #private::zeroed(),)*
                    }
                }
            }
        };

        #[automatically_derived]
        impl #private::core::convert::From<#plain> for #ident {
            /// The fields, with the padding zeroed.
            fn from(__gpu_aligned_fields: #plain) -> Self {
                Self::new(#(__gpu_aligned_fields.#names),*)
            }
        }

        #[automatically_derived]
        impl #private::core::convert::From<#ident> for #plain {
            /// The fields, without the padding.
            fn from(__gpu_aligned_value: #ident) -> Self {
                Self { #(#names: __gpu_aligned_value.#names,)* }
            }
        }

        #[automatically_derived]
        impl #private::core::default::Default for #ident {
            /// All fields zero, padding included.
            fn default() -> Self {
                #private::zeroed()
            }
        }

        #impls
    }
}

/// The standard derives whose output would read the pad fields, which
/// `padded` writes itself over the real fields only: a `Debug` that shows
/// the fields and not the pads, and comparisons and hashes that ignore pad
/// bytes (which safe code can set through `bytemuck`, or a kernel can write).
const REPLACED: [&str; 5] = ["Debug", "PartialEq", "Hash", "PartialOrd", "Ord"];

/// The attributes with the derives of [`REPLACED`] taken out of every
/// `#[derive(...)]` (matched by their last path segment, so
/// `::core::fmt::Debug` counts), and the names of those taken out.
fn take_derives(attrs: &[syn::Attribute]) -> (Vec<syn::Attribute>, Vec<String>) {
    let mut kept = Vec::new();
    let mut replaced = Vec::new();
    for attr in attrs {
        if !attr.path().is_ident("derive") {
            kept.push(attr.clone());
            continue;
        }
        let parser = syn::punctuated::Punctuated::<syn::Path, syn::Token![,]>::parse_terminated;
        let Ok(paths) = attr.parse_args_with(parser) else {
            kept.push(attr.clone());
            continue;
        };
        let mut rest = Vec::new();
        for path in paths {
            let last = path.segments.last().map(|s| s.ident.to_string());
            match last {
                Some(name) if REPLACED.contains(&name.as_str()) => replaced.push(name),
                _ => rest.push(path),
            }
        }
        if !rest.is_empty() {
            let mut attr = attr.clone();
            attr.meta = syn::parse_quote!(derive(#(#rest),*));
            kept.push(attr);
        }
    }
    (kept, replaced)
}

/// The impls of the derives [`take_derives`] took out, over the real
/// fields in declaration order. Their bindings have names no user item has:
/// a constant in scope named like a binding would make it a pattern.
fn replaced_impls(
    ident: &syn::Ident,
    names: &[&syn::Ident],
    replaced: &[String],
    private: &TokenStream,
) -> TokenStream {
    let core = quote!(#private::core);
    let name = ident.unraw().to_string();
    let labels: Vec<String> = names.iter().map(|name| name.unraw().to_string()).collect();
    replaced
        .iter()
        .map(|derive| match derive.as_str() {
            "Debug" => quote! {
                #[automatically_derived]
                impl #core::fmt::Debug for #ident {
                    fn fmt(&self, __gpu_aligned_f: &mut #core::fmt::Formatter<'_>) -> #core::fmt::Result {
                        __gpu_aligned_f.debug_struct(#name)
                            #(.field(#labels, &self.#names))*
                            .finish()
                    }
                }
            },
            "PartialEq" => quote! {
                #[automatically_derived]
                impl #core::cmp::PartialEq for #ident {
                    fn eq(&self, __gpu_aligned_other: &Self) -> #core::primitive::bool {
                        true #(&& self.#names == __gpu_aligned_other.#names)*
                    }
                }
            },
            "Hash" => quote! {
                #[automatically_derived]
                impl #core::hash::Hash for #ident {
                    fn hash<__H: #core::hash::Hasher>(&self, __gpu_aligned_state: &mut __H) {
                        #(#core::hash::Hash::hash(&self.#names, __gpu_aligned_state);)*
                    }
                }
            },
            "PartialOrd" => quote! {
                #[automatically_derived]
                impl #core::cmp::PartialOrd for #ident {
                    fn partial_cmp(
                        &self,
                        __gpu_aligned_other: &Self,
                    ) -> #core::option::Option<#core::cmp::Ordering> {
                        #(
                            match #core::cmp::PartialOrd::partial_cmp(&self.#names, &__gpu_aligned_other.#names) {
                                #core::option::Option::Some(#core::cmp::Ordering::Equal) => {}
                                __gpu_aligned_unequal => return __gpu_aligned_unequal,
                            }
                        )*
                        #core::option::Option::Some(#core::cmp::Ordering::Equal)
                    }
                }
            },
            _ => quote! {
                #[automatically_derived]
                impl #core::cmp::Ord for #ident {
                    fn cmp(&self, __gpu_aligned_other: &Self) -> #core::cmp::Ordering {
                        #(
                            match #core::cmp::Ord::cmp(&self.#names, &__gpu_aligned_other.#names) {
                                #core::cmp::Ordering::Equal => {}
                                __gpu_aligned_unequal => return __gpu_aligned_unequal,
                            }
                        )*
                        #core::cmp::Ordering::Equal
                    }
                }
            },
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::expand;
    use quote::quote;

    /// The output as one string of tokens, spaced as `TokenStream` prints.
    fn expanded(input: syn::DeriveInput) -> String {
        expand(quote!(), &input).to_string()
    }

    #[test]
    fn new_takes_the_field_names_as_parameters() {
        let out = expanded(syn::parse_quote!(
            #[derive(Clone, Copy)]
            struct Tagged {
                tag: u8,
                value: u32,
            }
        ));
        assert!(
            out.contains("const fn new (tag : u8 , value : u32) -> Self"),
            "{out}"
        );
        assert!(!out.contains("__arg"), "{out}");
    }

    #[test]
    fn derives_that_would_read_the_pads_are_written_by_hand() {
        let out = expanded(syn::parse_quote!(
            #[derive(Clone, Copy, ::core::fmt::Debug, PartialEq, Eq)]
            struct Tagged {
                tag: u8,
                value: u32,
            }
        ));
        assert!(out.contains("# [derive (Clone , Copy , Eq)]"), "{out}");
        assert!(out.contains("fmt :: Debug for Tagged"), "{out}");
        assert!(out.contains("cmp :: PartialEq for Tagged"), "{out}");
        assert!(!out.contains("Hash for Tagged"), "{out}");
    }
}
