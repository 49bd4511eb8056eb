//! Emits the impls for `#[derive(GpuAligned)]`: `GpuData`, `GpuAligned` with
//! its `LAYOUT`, `bytemuck::Zeroable` and `bytemuck::Pod`, and a `const` that
//! checks the layout rules against the sizes the compiler computed.
//!
//! # Why the `unsafe impl`s are sound
//!
//! Every impl below is emitted together with the rule check in one `const _`
//! block; if any rule fails the crate does not compile, so in any program
//! that runs, all of these hold for the type:
//!
//! - it is a non-generic struct, `repr(C)` or `repr(transparent)` (checked in
//!   `valid` and `repr`), so its layout is fixed and matches C's;
//! - every field is `GpuData` (the `<F as GpuData>::TYPE` in `LAYOUT` must
//!   type-check), and `GpuData: Pod`, so every field accepts any bit pattern,
//!   including all zeroes, and has no padding of its own;
//! - `LAYOUT` lists every field of nonzero size with its `offset_of!` and
//!   `size_of`, in declaration order, which `repr(C)` makes offset order;
//!   `__private::check` walks that list and fails on any byte before a field,
//!   between fields or after the last one that no field covers. So every
//!   byte belongs to a field: every byte is initialised and any bit pattern is
//!   a valid value. The hole checks are skipped only when the size rule has
//!   already failed, which is itself a compile error;
//! - the size is 1, 2, 4, 8 or 16 and the alignment equals it (the first
//!   rules of `check`).
//!
//! That is `Zeroable` and `Pod` (`Copy + 'static` are supertraits the
//! compiler checks itself), `GpuData` (`TYPE` is `GpuType::Struct` of a
//! layout built from `size_of`/`align_of`/`offset_of!` of the type itself, and
//! there is no padding) and `GpuAligned` (the four promises of its `# Safety`
//! section are exactly the rules). Only this derive writes these impls: the
//! traits are `unsafe` to implement by hand.
//!
//! The check is a `const` evaluated by the compiler, not a trait bound per
//! rule (zerocopy's pattern, the first design): with 1,000 types the bounds
//! made a rebuild 2.2-2.5x slower than `bytemuck`'s derive, while one `const`
//! per type stays within the 1.2x budget (`benches/compile-time/run.sh`). The
//! message is formatted by `const fn`s, so it still names the type, the
//! sizes, the rule and the fix, and the failing `panic!` is spanned at the
//! field or `align(N)` to blame.

use crate::ast::{Field, Input};
use crate::ctxt::Ctxt;
use crate::repr::Repr;
use crate::valid;
use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{DeriveInput, Member};

pub fn derive(input: &DeriveInput) -> syn::Result<TokenStream> {
    let cx = Ctxt::new();
    let ast = Input::from_syn(&cx, input);
    valid::check(&cx, &ast);
    cx.check()?;
    Ok(impls(&ast))
}

fn impls(input: &Input) -> TokenStream {
    let ident = &input.original.ident;
    let name = ident.to_string();
    let field_count = input.fields.len();
    let fields = input.fields.iter().map(|field| layout_field(ident, field));
    let rules = rules(input);
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
                    let fields: &'static ::gpu_aligned::__private::Fields<#field_count> =
                        &const { ::gpu_aligned::__private::Fields::new([#(#fields),*]) };
                    ::gpu_aligned::__private::layout(
                        #name,
                        ::core::mem::size_of::<#ident>(),
                        ::core::mem::align_of::<#ident>(),
                        fields.padding(),
                        fields.sized(),
                    )
                };
            }

            #[automatically_derived]
            unsafe impl ::gpu_aligned::__private::bytemuck::Zeroable for #ident {}

            #[automatically_derived]
            unsafe impl ::gpu_aligned::__private::bytemuck::Pod for #ident {}

            #rules
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

/// The rules, checked as statements of the `const _` block that holds the
/// impls, which the compiler evaluates. A legal type costs one cheap call:
/// `is_legal` over `size_of`/`align_of` of the type and its fields. Only when
/// that fails is `LAYOUT` evaluated and the message formatted (`LAYOUT` is
/// named only inside the generic `blame_*` functions: a constant named in
/// this body would be evaluated even on the branch not taken), and the
/// `#[track_caller]` calls that report it are spanned at what is to blame:
/// the first field with a hole before it, the `align(N)` that left a hole or
/// is too small, or else the struct's name. (Not one trait bound per rule and
/// field: that made a rebuild over twice as slow as bytemuck's derive; see
/// `benches/compile-time`.)
fn rules(input: &Input) -> TokenStream {
    let ident = &input.original.ident;
    let blame_fields = input.fields.iter().skip(1).map(|field| {
        let name = member_name(&field.member);
        let span = match &field.original.ident {
            Some(ident) => ident.span(),
            None => field.original.ty.span(),
        };
        quote_spanned!(span=> ::gpu_aligned::__private::blame_field::<#ident>(#name);)
    });
    let alignment_span = input
        .repr
        .as_ref()
        .and_then(Repr::align_tokens)
        .and_then(|tokens| tokens.clone().into_iter().next())
        .map_or_else(|| ident.span(), |token| token.span());
    let field_types = input.fields.iter().map(|field| &field.original.ty);
    let blame_alignment = quote_spanned! {alignment_span=>
        ::gpu_aligned::__private::blame_alignment::<#ident>();
    };
    let blame_type =
        quote_spanned!(ident.span()=> ::gpu_aligned::__private::blame_type::<#ident>(););
    quote! {
        if !::gpu_aligned::__private::is_legal(
            ::core::mem::size_of::<#ident>(),
            ::core::mem::align_of::<#ident>(),
            0 #(+ ::core::mem::size_of::<#field_types>())*,
        ) {
            #(#blame_fields)*
            #blame_alignment
            #blame_type
        }
    }
}
