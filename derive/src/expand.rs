//! Emits the impls for `#[derive(GpuAligned)]`: `GpuData`, `GpuAligned` with
//! its `LAYOUT`, `bytemuck::Zeroable` and `bytemuck::Pod`, and the layout
//! rules as bounds the compiler checks with the real sizes.
//!
//! # Why the `unsafe impl`s are sound
//!
//! Every impl below is emitted together with the rule bounds in one
//! `const _` block; if any rule fails the crate does not compile, so in any
//! program that runs, all of these hold for the type:
//!
//! - it is a non-generic struct, `repr(C)` or `repr(transparent)` (checked in
//!   `valid` and `repr`), so its layout is fixed and matches C's;
//! - every field is `GpuData` (the `<F as GpuData>::TYPE` in `LAYOUT` must
//!   type-check), and `GpuData: Pod`, so every field accepts any bit pattern,
//!   including all zeroes, and has no padding of its own;
//! - there is no hole before any field and none after the last (the
//!   `NoHoleBeforeField` and `NoTrailingPadding` bounds, computed from
//!   `offset_of!` and `size_of`): every byte belongs to a field, so every byte
//!   is initialised and any bit pattern is a valid value. These rules step
//!   aside only when the size rules have already failed, which is itself a
//!   compile error;
//! - the size is 1, 2, 4, 8 or 16 and the alignment equals it
//!   (`AtMostSixteenBytes`, `WordSize`, `NaturallyAligned`).
//!
//! That is `Zeroable` and `Pod` (`Copy + 'static` are supertraits the
//! compiler checks itself), `GpuData` (`TYPE` is `GpuType::Struct` of a
//! layout built from `size_of`/`align_of`/`offset_of!` of the type itself, and
//! there is no padding) and `GpuAligned` (the four promises of its `# Safety`
//! section are exactly the rules). Only this derive writes these impls: the
//! traits are `unsafe` to implement by hand.

use crate::ast::{Field, Input};
use crate::ctxt::Ctxt;
use crate::repr::Repr;
use crate::valid;
use proc_macro2::{Span, TokenStream};
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{DeriveInput, Member};

pub fn derive(input: &DeriveInput) -> syn::Result<TokenStream> {
    let cx = Ctxt::new();
    let ast = Input::from_syn(&cx, input);
    valid::check(&cx, &ast);
    let repr = ast.repr.as_ref();
    cx.check()?;
    // `check` returned Ok, so `repr` parsed.
    let repr = repr.expect("repr errors are recorded in Ctxt");
    Ok(impls(&ast, repr))
}

fn impls(input: &Input, repr: &Repr) -> TokenStream {
    let ident = &input.original.ident;
    let name = ident.to_string();
    let field_count = input.fields.len();
    let fields = input.fields.iter().map(|field| layout_field(ident, field));
    let rules = rules(input, repr);

    quote! {
        #[doc(hidden)]
        #[allow(non_local_definitions, unused_qualifications, clippy::all)]
        const _: () = {
            #[automatically_derived]
            unsafe impl ::gpu_aligned::GpuData for #ident {
                const TYPE: ::gpu_aligned::GpuType = ::gpu_aligned::GpuType::Struct(
                    &<#ident as ::gpu_aligned::GpuAligned>::LAYOUT,
                );
            }

            #[automatically_derived]
            unsafe impl ::gpu_aligned::GpuAligned for #ident {
                const LAYOUT: ::gpu_aligned::GpuLayout = {
                    const __FIELDS: [::gpu_aligned::GpuField; #field_count] = [#(#fields),*];
                    const __SIZED: [
                        ::gpu_aligned::GpuField;
                        ::gpu_aligned::__private::sized_field_count(&__FIELDS)
                    ] = ::gpu_aligned::__private::sized_fields(&__FIELDS);
                    ::gpu_aligned::__private::layout(
                        #name,
                        ::core::mem::size_of::<#ident>(),
                        ::core::mem::align_of::<#ident>(),
                        ::gpu_aligned::__private::padding_bytes(&__FIELDS),
                        &__SIZED,
                    )
                };
            }

            #[automatically_derived]
            unsafe impl ::gpu_aligned::__private::bytemuck::Zeroable for #ident {}

            #[automatically_derived]
            unsafe impl ::gpu_aligned::__private::bytemuck::Pod for #ident {}

            #[automatically_derived]
            impl ::gpu_aligned::__private::LayoutRules for #ident where #(#rules,)* {}
        };
    }
}

/// One `GpuField` entry. `<F as GpuData>::TYPE` is spanned at the field's
/// type, so a field that is not GPU data is reported there, once.
fn layout_field(ident: &syn::Ident, field: &Field) -> TokenStream {
    let ty = &field.original.ty;
    let member = &field.member;
    let name = member_name(member);
    let is_padding = field.attrs.padding;
    let ty_data = quote_spanned!(ty.span()=> <#ty as ::gpu_aligned::GpuData>::TYPE);
    quote! {
        ::gpu_aligned::__private::field(
            #name,
            ::core::mem::offset_of!(#ident, #member),
            ::core::mem::size_of::<#ty>(),
            ::core::mem::align_of::<#ty>(),
            #is_padding,
            #ty_data,
        )
    }
}

fn member_name(member: &Member) -> String {
    match member {
        Member::Named(ident) => syn::ext::IdentExt::unraw(ident).to_string(),
        Member::Unnamed(index) => index.index.to_string(),
    }
}

/// The layout rules as `(): Rule<Type, numbers.., OK>` predicates, each
/// spanned at what is to blame: the struct's name, its `align(N)`, or a
/// field. The trait paths are written inside `quote_spanned!` so the whole
/// predicate carries the span (one call-site token would move the error to
/// the `#[derive]`).
fn rules(input: &Input, repr: &Repr) -> Vec<TokenStream> {
    let ident = &input.original.ident;
    let size = quote!(::core::mem::size_of::<#ident>());
    let align = quote!(::core::mem::align_of::<#ident>());
    let is_word = quote!(::gpu_aligned::__private::is_word_size(#size));
    let ident_span = ident.span();
    let align_span = repr.align_tokens().map_or(ident_span, first_span);

    let mut rules = vec![
        quote_spanned! {ident_span=>
            (): ::gpu_aligned::__private::AtMostSixteenBytes<#ident, { #size }, { #size <= 16 }>
        },
        quote_spanned! {ident_span=>
            (): ::gpu_aligned::__private::WordSize<
                #ident, { #size }, { #align }, { #is_word || #size > 16 }
            >
        },
        quote_spanned! {align_span=>
            (): ::gpu_aligned::__private::NaturallyAligned<
                #ident, { #size }, { #align }, { !#is_word || #size == #align }
            >
        },
    ];

    // `repr(transparent)` has the layout of its one sized field, so it has no
    // holes, and its zero-sized fields all sit at offset 0.
    if let Repr::Transparent = repr {
        return rules;
    }
    let mut previous: Option<&Field> = None;
    for field in &input.fields {
        if let Some(previous) = previous {
            let prev_member = &previous.member;
            let prev_ty = &previous.original.ty;
            let member = &field.member;
            let hole = quote! {
                ::gpu_aligned::__private::gap(
                    ::core::mem::offset_of!(#ident, #prev_member)
                        + ::core::mem::size_of::<#prev_ty>(),
                    ::core::mem::offset_of!(#ident, #member),
                )
            };
            rules.push(quote_spanned! {field_span(field)=>
                (): ::gpu_aligned::__private::NoHoleBeforeField<
                    #ident, { #hole }, { !#is_word || #hole == 0 }
                >
            });
        }
        previous = Some(field);
    }
    if let Some(last) = previous {
        let member = &last.member;
        let ty = &last.original.ty;
        let tail = quote! {
            ::gpu_aligned::__private::gap(
                ::core::mem::offset_of!(#ident, #member) + ::core::mem::size_of::<#ty>(),
                #size,
            )
        };
        rules.push(quote_spanned! {align_span=>
            (): ::gpu_aligned::__private::NoTrailingPadding<
                #ident, { #size }, { #align }, { #tail }, { !#is_word || #tail == 0 }
            >
        });
    }
    rules
}

fn field_span(field: &Field) -> Span {
    match &field.original.ident {
        Some(ident) => ident.span(),
        None => field.original.ty.span(),
    }
}

fn first_span(tokens: &TokenStream) -> Span {
    tokens
        .clone()
        .into_iter()
        .next()
        .map_or_else(Span::call_site, |token| token.span())
}
