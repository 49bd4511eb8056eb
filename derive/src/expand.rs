//! Emits the code of `#[derive(GpuAligned)]`: one invocation of the runtime
//! crate's `__private::derive_impls!` macro, which expands to the hidden
//! `__private::Derived` (the layout facts, from which the runtime's blanket
//! impls give `GpuData` and `GpuAligned` with its `LAYOUT`),
//! `bytemuck::Zeroable`, `bytemuck::Pod` (and cudarc's `DeviceRepr` and
//! `ValidAsZeroBits` when the runtime has its `cuda` feature), together with
//! the `const` that checks the layout rule against the sizes the compiler
//! computed.
//!
//! # The trust boundary
//!
//! The `unsafe impl`s are sound only because the check passed, so the two
//! must stand or fall together. This derive therefore emits no `unsafe`
//! itself: the impls and the check are written once, in one `macro_rules!`
//! of the runtime crate, and both name the runtime through `$crate`, which a
//! caller cannot redirect. Whoever points the derive's path elsewhere
//! (`extern crate self as gpu_aligned;` with a fake `is_legal`, or
//! `#[gpu_aligned(crate = "...")]`) either reaches the real macro, check
//! included, or must write a macro of their own that spells `unsafe impl`:
//! their `unsafe`, not ours. The macro trusts none of its input either: it
//! proves the field list is the struct's (every field once, each with its
//! exact type), takes every size from `size_of`, and fails the build after
//! the blame calls whether or not they fired.
//!
//! # Why the impls are sound when the checks pass
//!
//! - the compiler laid the struct out exactly as C lays out its field list
//!   (every field's `offset_of!` is where the fields before it end, with no
//!   hole: for a layout without holes, exactly C's),
//!   whatever `#[repr]` the derive saw: an attribute macro after the derive,
//!   or a hand-written call of the runtime macro, cannot slip a reordered
//!   struct through;
//! - every field is `GpuData` (`<F as GpuData>::TYPE` in `LAYOUT` must
//!   type-check), and `GpuData: Pod`, so every field accepts any bit pattern,
//!   all zeroes included, and has no padding of its own;
//! - `rules::is_legal(size, align, sum of field sizes)`: the size is 1, 2, 4,
//!   8 or 16, the alignment equals it, and since fields never overlap, fields
//!   that add up to the size cover every byte: no byte is uninitialised.
//!
//! That is `Zeroable` and `Pod` (`Copy + 'static` are supertraits the
//! compiler checks itself), `GpuData` and `GpuAligned` (the promises of its
//! `# Safety` section are exactly the rule).
//!
//! # Generic structs
//!
//! `Zeroable`, `Pod`, `GpuData` and cudarc's traits of a generic struct
//! exist for every instantiation at once, and bytemuck's casts read no check
//! of ours: they are emitted only for the shapes without padding for any
//! type argument (`valid::check_generic_shape`), which the runtime macro's
//! `generic` arm proves again (each field is `T`, `[T; N]` or a
//! `PhantomData`; the `u8` instantiation has no hole, so the `#[repr]` adds
//! none). The rest of the rule depends on `T` and is checked per
//! instantiation, in `GpuAligned::LAYOUT`, which every entry point of the
//! runtime reads before relying on it.
//!
//! # Compile time
//!
//! The checks are one `const` per type, not a trait bound per rule and field:
//! with 1,000 types, bounds make a rebuild over twice as slow as
//! `bytemuck`'s derive (`benches/compile-time/run.sh` measures it). What a
//! legal type costs is mostly the compiler's per-constant and per-pattern
//! work, so the macro writes each `offset_of!` once (one `const` of field
//! facts, read by the check and borrowed by `FACTS`), proves the field list
//! with struct expressions rather than patterns (which the compiler checks
//! for exhaustiveness), and evaluates `LAYOUT` and formats a message only
//! when the check fails (`LAYOUT` is named only inside the generic `blame_*`
//! functions: a constant named in the `const` body would be evaluated even
//! on the branch not taken).
//!
//! # Errors
//!
//! Every fault of a struct comes out of one compile. Errors the syntax
//! decides (the shape, checked by `valid` for every macro, the repr, the
//! helper attributes) are collected in `Ctxt` and reported together. Next
//! to them, what the compiler decides is still checked: with an accepted
//! repr, the impls are emitted, checked as always, so that code using the
//! type does not add "`GpuAligned` is not implemented" to the list; with a
//! rejected repr, the runtime macro's `checks_only` arm checks each field's
//! type, `Copy`, and the rule on the layout C gives the fields, without
//! impls (there is no layout to trust). The size is checked from `size_of`
//! alone, before anything reads `LAYOUT`, so a field that is not GPU data
//! (which leaves `LAYOUT` unevaluated) and a size over 16 bytes are reported
//! together.

use crate::ast::{Field, Input, Macro};
use crate::ctxt::Ctxt;
use crate::repr::{self, Judged, Repr};
use crate::valid;
use proc_macro2::{Group, Span, TokenStream, TokenTree};
use quote::{format_ident, quote, quote_spanned, ToTokens};
use syn::spanned::Spanned;
use syn::{DeriveInput, Member};

/// `#[derive(GpuAligned)]` (`by` is [`Macro::GpuAligned`]) or
/// `#[derive(GpuData)]` ([`Macro::GpuData`]): the same front end, the same
/// runtime macro, each with its rule.
pub fn derive(input: &DeriveInput, by: Macro) -> TokenStream {
    let cx = Ctxt::new();
    let Some(mut ast) = Input::read(&cx, input, by) else {
        return cx
            .check()
            .err()
            .map_or_else(TokenStream::new, syn::Error::into_compile_error);
    };
    valid::check(&cx, &ast, by);
    let rule = Rule::of(by);
    let align = ast.repr.largest_align();
    let repr = repr::judge(
        &cx,
        std::mem::take(&mut ast.repr),
        ast.ident,
        rule == Rule::Element,
    );
    let krate = krate(&ast);
    if !ast.generics.params.is_empty() || ast.generics.where_clause.is_some() {
        return generic(cx, &ast, &krate, repr, rule);
    }
    let errors = cx.check();
    let checkable = valid::has_checkable_shape(&ast, by);
    match (errors, repr) {
        (Ok(()), Judged::Accepted(repr)) => impls(&ast, &krate, &repr, rule),
        // The impls, checked as always, next to errors that leave the layout
        // as written (a bad helper attribute), so that code using the type
        // does not add "`GpuAligned` is not implemented" to them.
        (Err(error), Judged::Accepted(repr)) if checkable => {
            let error = error.into_compile_error();
            let impls = impls(&ast, &krate, &repr, rule);
            quote!(#error #impls)
        }
        // A repr that is refused (or that rustc refuses, and says so): no
        // impls, since there is no layout to trust, but every other fault
        // of the struct (a field that is not GPU data, its size, holes,
        // `Copy`) checked on the layout C gives its fields, so that fixing
        // the repr is not followed by another round of errors.
        (errors, Judged::Rejected | Judged::LeftToRustc) if checkable => {
            let error = errors.err().map(syn::Error::into_compile_error);
            let checks = checks_only(&ast, &krate, align, rule);
            quote!(#error #checks)
        }
        (Err(error), _) => error.into_compile_error(),
        (Ok(()), _) => TokenStream::new(),
    }
}

/// A generic struct: the runtime macro's `generic` arm, or only the errors
/// (the checks of the other arms need a concrete type).
fn generic(cx: Ctxt, input: &Input, krate: &TokenStream, repr: Judged, rule: Rule) -> TokenStream {
    // `align(N)` pads the instantiations smaller than N (`Pair<u8>` under
    // `align(4)` is 2 bytes of data in 4), and `Pod` exists for all of them.
    if let Judged::Accepted(Repr::C { align: Some(align) }) = &repr {
        cx.error_spanned_by(
            &align.tokens,
            "a generic GPU struct cannot take `align(N)`: it would pad the instantiations \
             smaller than N, and no instantiation may have padding; remove it (each \
             instantiation is already checked to be aligned to its size)",
        );
    }
    if let Err(error) = cx.check() {
        return error.into_compile_error();
    }
    let Judged::Accepted(_) = repr else {
        return TokenStream::new();
    };
    let ident = input.ident;
    let name = ident.unraw_string();
    let params = input.generics.type_params().map(|param| &param.ident);
    let (mut element, mut fields, mut phantoms, mut count) = (None, Vec::new(), Vec::new(), 0usize);
    for field in &input.fields {
        match valid::part(&field.original.ty, input.generics) {
            Some(valid::Part::Element(ident)) => {
                element = Some(ident);
                count += 1;
                fields.push(one_field(field));
            }
            _ => phantoms.push(&field.member),
        }
    }
    quote! {
        #krate::__private::derive_impls! {
            generic;
            rule: #rule;
            type: #ident;
            params: [#(#params),*];
            element: #element;
            name: #name;
            count: #count;
            fields: [#(#fields)*];
            phantoms: [#(#phantoms)*];
        }
    }
}

pub fn krate(input: &Input) -> TokenStream {
    match &input.attrs.krate {
        Some(path) => path.to_token_stream(),
        None => quote!(::gpu_aligned),
    }
}

/// The one invocation; see the module docs.
fn impls(input: &Input, krate: &TokenStream, repr: &Repr, rule: Rule) -> TokenStream {
    let ident = input.ident;
    let name = ident.unraw_string();
    let count = input.fields.len();
    let fields = field_list(input);
    let blame = blame(input, krate, repr.align_tokens(), Target::Type, rule);
    // The size of an element is checked from `size_of` alone (in a
    // constant of its own, so that it is reported next to a field that is
    // not GPU data), spanned at the struct's name. GPU data has any size.
    let size = match rule {
        Rule::Element => {
            let krate = respan(krate, ident.span());
            quote_spanned!(ident.span()=> #krate::__private::blame_size::<#ident>(#name);)
        }
        Rule::Data => TokenStream::new(),
    };
    quote! {
        #krate::__private::derive_impls! {
            rule: #rule;
            type: #ident;
            name: #name;
            count: #count;
            fields: [#(#fields)*];
            size: { #size };
            blame: { #blame };
        }
    }
}

/// The runtime macro's `checks_only` arm: the checks of [`impls`] on the
/// layout C gives the field list, without the impls.
fn checks_only(input: &Input, krate: &TokenStream, align: u64, rule: Rule) -> TokenStream {
    let ident = input.ident;
    let name = ident.unraw_string();
    let count = input.fields.len();
    let align = proc_macro2::Literal::usize_unsuffixed(align as usize);
    let fields = field_list(input);
    let shape = shape();
    let blame = blame(input, krate, None, Target::Shape(&shape), rule);
    quote! {
        #krate::__private::derive_impls! {
            checks_only;
            rule: #rule;
            type: #ident;
            name: #name;
            count: #count;
            align: #align;
            fields: [#(#fields)*];
            shape: #shape;
            blame: { #blame };
        }
    }
}

fn field_list<'a>(input: &'a Input) -> impl Iterator<Item = TokenStream> + 'a {
    input.fields.iter().map(one_field)
}

fn one_field(field: &Field) -> TokenStream {
    let member = &field.member;
    let ty = &field.original.ty;
    let name = member_name(member);
    let padding = field.attrs.padding;
    quote!({ #member: #ty, #name, #padding })
}

/// The rule the runtime macro checks: a GPU element's, or GPU data's (no
/// holes, any size).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Rule {
    Element,
    Data,
}

impl Rule {
    fn of(by: Macro) -> Rule {
        if by == Macro::GpuData {
            Rule::Data
        } else {
            Rule::Element
        }
    }
}

/// The word the runtime macro matches: `element` or `data`.
impl ToTokens for Rule {
    fn to_tokens(&self, tokens: &mut TokenStream) {
        let word = match self {
            Rule::Element => "element",
            Rule::Data => "data",
        };
        tokens.extend([TokenTree::Ident(proc_macro2::Ident::new(
            word,
            Span::call_site(),
        ))]);
    }
}

/// What the blame calls read: the derived type (`__SHAPE` of its impl), or
/// the local the `checks_only` arm binds.
enum Target<'a> {
    Type,
    Shape(&'a syn::Ident),
}

/// The local the runtime macro binds to the layout of a failing check, and
/// the blame calls read: named here, so that both sides of the macro see the
/// same binding (a name written inside `macro_rules!` is hygienic).
fn shape() -> syn::Ident {
    syn::Ident::new("__gpu_aligned_shape", Span::call_site())
}

trait UnrawString {
    fn unraw_string(&self) -> String;
}

impl UnrawString for syn::Ident {
    fn unraw_string(&self) -> String {
        syn::ext::IdentExt::unraw(self).to_string()
    }
}

fn member_name(member: &Member) -> String {
    match member {
        Member::Named(ident) => ident.unraw_string(),
        Member::Unnamed(index) => index.index.to_string(),
    }
}

/// The calls that stop compilation with the rule's message, each spanned at
/// what it blames (`#[track_caller]` reports the call's location): the first
/// field with a hole before it, the `align(N)` that left a hole or is too
/// small, or else the struct's name.
fn blame(
    input: &Input,
    krate: &TokenStream,
    align: Option<&TokenStream>,
    target: Target,
    rule: Rule,
) -> TokenStream {
    let ident = input.ident;
    if rule == Rule::Data {
        return blame_holes(input, krate, target);
    }
    // `::<Type>` for the impls' checks, `_in(&shape, ..)` for the checks
    // without impls.
    let (suffix, generics, shape) = match &target {
        Target::Type => (quote!(), quote!(::<#ident>), None),
        Target::Shape(shape) => (quote!(_in), quote!(), Some(quote!(&#shape,))),
    };
    let blame_field = format_ident!("blame_field{}", suffix.to_string());
    let blame_alignment = format_ident!("blame_alignment{}", suffix.to_string());
    let blame_type = format_ident!("blame_type{}", suffix.to_string());
    let blame_fields = input.fields.iter().skip(1).map(|field: &Field| {
        let name = member_name(&field.member);
        let span = match &field.original.ident {
            Some(ident) => ident.span(),
            None => field.original.ty.span(),
        };
        let krate = respan(krate, span);
        quote_spanned!(span=> #krate::__private::#blame_field #generics(#shape #name);)
    });
    // Without an `align(N)` to point at, the alignment is blamed at the
    // struct's name, by the last call, which reports every rule: a call of
    // its own would only cost compile time.
    let blame_alignment = align
        .and_then(|tokens| tokens.clone().into_iter().next())
        .map(|token| {
            let span = token.span();
            let krate = respan(krate, span);
            quote_spanned!(span=> #krate::__private::#blame_alignment #generics(#shape);)
        });
    let blame_type = {
        let krate = respan(krate, ident.span());
        quote_spanned!(ident.span()=> #krate::__private::#blame_type #generics(#shape);)
    };
    // Whether the compiler laid the type out as C would is said by the last
    // call, at the struct's name: the field and alignment calls skip such a
    // layout, so that no hole is named by a rule that assumes C's.
    quote!(#(#blame_fields)* #blame_alignment #blame_type)
}

/// [`blame`] for GPU data, whose only fault is a hole: a call per field
/// after the first (the hole before it), and one at the struct's name that
/// reports a layout that is not C's, or a trailing hole.
fn blame_holes(input: &Input, krate: &TokenStream, target: Target) -> TokenStream {
    let ident = input.ident;
    let (suffix, generics, shape) = match &target {
        Target::Type => (quote!(), quote!(::<#ident>), None),
        Target::Shape(shape) => (quote!(_in), quote!(), Some(quote!(&#shape,))),
    };
    let blame_hole = format_ident!("blame_hole{}", suffix.to_string());
    let reject_holes = format_ident!("reject_holes{}", suffix.to_string());
    let fields = input.fields.iter().skip(1).map(|field: &Field| {
        let name = member_name(&field.member);
        let span = match &field.original.ident {
            Some(ident) => ident.span(),
            None => field.original.ty.span(),
        };
        let krate = respan(krate, span);
        quote_spanned!(span=> #krate::__private::#blame_hole #generics(#shape #name);)
    });
    let whole = {
        let krate = respan(krate, ident.span());
        quote_spanned!(ident.span()=> #krate::__private::#reject_holes #generics(#shape);)
    };
    quote!(#(#fields)* #whole)
}

/// `tokens` with every span set to `span`. A call's location (what
/// `#[track_caller]` reports) is the span from its first token to its last;
/// a crate path left with the macro's own span would stretch it to the
/// derive attribute.
fn respan(tokens: &TokenStream, span: Span) -> TokenStream {
    tokens
        .clone()
        .into_iter()
        .map(|mut token| {
            if let TokenTree::Group(group) = &token {
                let mut inner = Group::new(group.delimiter(), respan(&group.stream(), span));
                inner.set_span(span);
                token = TokenTree::Group(inner);
            } else {
                token.set_span(span);
            }
            token
        })
        .collect()
}
