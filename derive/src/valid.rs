//! The shape every macro of this crate needs, checked once for all three
//! (serde_derive's pattern): fields to lay out, names where the macro
//! needs them, no generics where the macro cannot check an instantiation.
//! Each rule is one `check_` function recording its error in `Ctxt` and
//! carrying on, so one compile reports every fault. Rules that need sizes
//! and alignments are checked by the compiler, in the code `expand` emits.

use crate::ast::{Input, Macro};
use crate::ctxt::Ctxt;

/// Checks the shape `by` needs, recording every fault.
pub fn check(cx: &Ctxt, input: &Input, by: Macro) {
    check_has_fields(cx, input, by);
    check_named(cx, input, by);
    check_not_generic(cx, input, by);
}

/// Whether the macro can still emit its code (the derive's checked impls,
/// also as the fallback next to other errors): a non-generic struct with
/// fields, named where `by` needs names.
pub fn has_checkable_shape(input: &Input, by: Macro) -> bool {
    !input.fields.is_empty()
        && (!is_generic(input.generics, by) || is_layout_derive(by))
        && (!needs_names(by) || is_named(input))
}

/// The derives that check a layout and implement traits of it.
pub fn is_layout_derive(by: Macro) -> bool {
    matches!(by, Macro::GpuAligned | Macro::GpuData)
}

// `padded` adds named pad fields, and `GpuSoa` names its columns like the
// fields.
fn needs_names(by: Macro) -> bool {
    matches!(by, Macro::Padded | Macro::GpuSoa)
}

fn is_named(input: &Input) -> bool {
    matches!(input.style, syn::Fields::Named(_))
}

// A zero-sized type is no GPU word at all (1, 2, 4, 8 or 16 bytes), and an
// array of it occupies no memory.
fn check_has_fields(cx: &Ctxt, input: &Input, by: Macro) {
    if !input.fields.is_empty() || (needs_names(by) && !is_named(input) && !is_unit(input)) {
        return;
    }
    let message = match by {
        Macro::GpuAligned => {
            "`GpuAligned` cannot be derived for a zero-sized struct: a GPU element is 1, 2, 4, \
             8 or 16 bytes; give it fields"
        }
        Macro::GpuData => {
            "`GpuData` cannot be derived for a zero-sized struct: it holds no data, and C++ \
             gives an empty struct a byte; give it fields"
        }
        Macro::Padded if is_unit(input) => {
            "`#[gpu_aligned::padded]` needs a struct with named fields"
        }
        Macro::Padded => {
            "`#[gpu_aligned::padded]` needs at least one field: a GPU element is 1, 2, 4, 8 or \
             16 bytes"
        }
        Macro::GpuSoa => "`GpuSoa` needs at least one field: each field becomes a column",
    };
    cx.error_spanned_by(input.ident, message);
}

fn is_unit(input: &Input) -> bool {
    matches!(input.style, syn::Fields::Unit)
}

fn check_named(cx: &Ctxt, input: &Input, by: Macro) {
    let syn::Fields::Unnamed(fields) = input.style else {
        return;
    };
    match by {
        Macro::GpuAligned | Macro::GpuData => {}
        Macro::Padded => cx.error_spanned_by(
            fields,
            "`#[gpu_aligned::padded]` needs named fields (it adds named pad fields); use \
             `struct Name { a: T, .. }`",
        ),
        Macro::GpuSoa => cx.error_spanned_by(
            input.ident,
            "`GpuSoa` needs named fields: the columns are named like them",
        ),
    }
}

// `GpuSoa` and `padded` need the sizes of a concrete struct (the header
// names one layout per struct; the pads depend on the field sizes).
// `GpuAligned` accepts the generic shapes that have no padding for any type
// argument (see `check_generic_shape`), and refuses the rest here.
fn check_not_generic(cx: &Ctxt, input: &Input, by: Macro) {
    if !is_generic(input.generics, by) {
        return;
    }
    let message = match by {
        Macro::GpuAligned | Macro::GpuData => return check_generic_shape(cx, input, by),
        Macro::Padded => {
            "`#[gpu_aligned::padded]` cannot pad a generic struct: the padding depends on the \
             type arguments; write a concrete struct for each instantiation"
        }
        Macro::GpuSoa => {
            "`GpuSoa` does not support generic structs (a generic structure of arrays is not \
             implemented): the CUDA header needs one name per layout and the column types must \
             be known; write a concrete struct (or a type alias per instantiation wrapped in a \
             concrete struct)"
        }
    };
    cx.error_spanned_by(input.generics, message);
}

// `GpuSoa`'s impls carry a `where` clause through (each column is still
// checked by the compiler); the layout macros' checks do not.
fn is_generic(generics: &syn::Generics, by: Macro) -> bool {
    !generics.params.is_empty() || (by != Macro::GpuSoa && generics.where_clause.is_some())
}

/// What a field of a generic struct is.
pub enum Part<'a> {
    /// `T` or `[T; N]`, `T` the element parameter.
    Element(&'a syn::Ident),
    /// `PhantomData<..>`: no bytes.
    Phantom,
}

/// What a field of a generic struct is, if it is one of the two parts a
/// generic GPU struct may have.
pub fn part<'a>(ty: &'a syn::Type, generics: &syn::Generics) -> Option<Part<'a>> {
    let ty = match ty {
        syn::Type::Array(array) => &*array.elem,
        syn::Type::Group(group) => &*group.elem,
        ty => ty,
    };
    let syn::Type::Path(path) = ty else {
        return None;
    };
    if path.qself.is_some() {
        return None;
    }
    if let Some(ident) = path.path.get_ident() {
        return generics
            .type_params()
            .any(|param| param.ident == *ident)
            .then_some(Part::Element(ident));
    }
    let last = path.path.segments.last()?;
    (last.ident == "PhantomData").then_some(Part::Phantom)
}

// Why only these shapes: `Zeroable`, `Pod` and cudarc's `DeviceRepr` exist
// for every instantiation at once, and bytemuck's casts read no check of
// ours, so they are sound only if no instantiation has padding. A struct
// whose fields are one parameter `T` or arrays of it (plus `PhantomData`s)
// has none for any `T` under `repr(C)` or `repr(transparent)`: each field's
// size is a multiple of `T`'s alignment. Any other field (`u8`, a second
// parameter) leaves a hole that depends on `T` (`{ a: u8, b: T }` is padded
// for `T = u32`). The rest of the rule (1, 2, 4, 8 or 16 bytes, aligned to
// its size) depends on `T` too, and is checked per instantiation where its
// `LAYOUT` is needed. Bounds are added by the derive and not taken from the
// user: a `where` clause in the runtime's proof could make a field of
// another type pass as `T`.
fn check_generic_shape(cx: &Ctxt, input: &Input, by: Macro) {
    let derive = if by == Macro::GpuData {
        "GpuData"
    } else {
        "GpuAligned"
    };
    let generics = input.generics;
    for param in &generics.params {
        match param {
            syn::GenericParam::Type(param) => {
                if param.colon_token.is_some() || param.eq_token.is_some() {
                    cx.error_spanned_by(
                        param,
                        format!(
                            "`{derive}` on a generic struct adds the bound itself: write `{}` \
                             without bounds or default (the derive implements it where `{}: \
                             GpuData`)",
                            param.ident, param.ident
                        ),
                    );
                }
            }
            syn::GenericParam::Lifetime(_) => cx.error_spanned_by(
                param,
                "a GPU element holds no references, so it takes no lifetime parameter; remove \
                 it",
            ),
            syn::GenericParam::Const(_) => cx.error_spanned_by(
                param,
                format!(
                    "`{derive}` does not take const parameters: the padding would depend on \
                     the constant; write a concrete struct for each instantiation"
                ),
            ),
        }
    }
    if let Some(clause) = &generics.where_clause {
        cx.error_spanned_by(
            clause,
            format!(
                "`{derive}` on a generic struct adds the bounds itself (`T: GpuData`); remove \
                 the `where` clause"
            ),
        );
    }
    let mut element: Option<&syn::Ident> = None;
    for field in &input.fields {
        let ty = &field.original.ty;
        match part(ty, generics) {
            Some(Part::Element(ident)) => match element {
                None => element = Some(ident),
                Some(first) if first == ident => {}
                Some(first) => cx.error_spanned_by(
                    ty,
                    format!(
                        "every field of a generic GPU struct must be the same parameter \
                         (`{first}`) or arrays of it: with `{first}` and `{ident}` the padding \
                         would depend on the type arguments; use one parameter, or write a \
                         concrete struct"
                    ),
                ),
            },
            Some(Part::Phantom) => {}
            None => cx.error_spanned_by(
                ty,
                format!(
                    "a field of a generic GPU struct must be its type parameter (`{p}`), an \
                     array of it (`[{p}; N]`) or a `PhantomData`: the padding would depend on \
                     `{p}` (`{{ a: u8, b: {p} }}` has 3 bytes of padding when `{p}` is `u32`); \
                     make this field a `{p}`, or write a concrete struct for each instantiation",
                    p = element
                        .map(ToString::to_string)
                        .or_else(|| generics.type_params().next().map(|p| p.ident.to_string()))
                        .unwrap_or_else(|| "T".to_owned())
                ),
            ),
        }
    }
    if element.is_none() && !input.fields.is_empty() {
        cx.error_spanned_by(
            input.ident,
            "a generic GPU struct needs a field of its type parameter (`T` or `[T; N]`): \
             `PhantomData` fields alone occupy no bytes",
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use syn::parse_quote;

    /// What the front end reports for `input` read by `by`: the messages,
    /// and whether the macro can still emit its code.
    fn front_end(input: syn::DeriveInput, by: Macro) -> (Vec<String>, bool) {
        let cx = Ctxt::new();
        let checkable = Input::read(&cx, &input, by).is_some_and(|ast| {
            check(&cx, &ast, by);
            has_checkable_shape(&ast, by)
        });
        let errors = match cx.check() {
            Ok(()) => Vec::new(),
            Err(error) => error.into_iter().map(|e| e.to_string()).collect(),
        };
        (errors, checkable)
    }

    #[test]
    fn each_macro_gets_its_own_words_for_the_same_fault() {
        for (by, start) in [
            (
                Macro::GpuAligned,
                "`GpuAligned` cannot be derived for an enum",
            ),
            (Macro::Padded, "`#[gpu_aligned::padded]` goes on a struct"),
            (Macro::GpuSoa, "`GpuSoa` applies to structs"),
        ] {
            let (errors, checkable) = front_end(
                parse_quote!(
                    enum E {
                        A,
                    }
                ),
                by,
            );
            assert!(!checkable);
            assert_eq!(errors.len(), 1);
            assert!(errors[0].starts_with(start), "{errors:?}");
        }
    }

    #[test]
    fn tuple_structs_are_refused_only_where_names_are_needed() {
        let tuple: syn::DeriveInput = parse_quote!(
            struct T(u32, u32);
        );
        assert_eq!(front_end(tuple.clone(), Macro::GpuAligned), (vec![], true));
        for by in [Macro::Padded, Macro::GpuSoa] {
            let (errors, checkable) = front_end(tuple.clone(), by);
            assert!(!checkable);
            assert_eq!(errors.len(), 1, "{errors:?}");
            assert!(errors[0].contains("named fields"), "{errors:?}");
        }
    }

    #[test]
    fn generic_structs_without_padding_for_any_argument_are_accepted() {
        for accepted in [
            parse_quote!(
                struct M<T>(T);
            ),
            parse_quote!(
                struct P<T> {
                    a: T,
                    b: [T; 3],
                }
            ),
            parse_quote!(
                struct U<T, Unit>(T, core::marker::PhantomData<Unit>);
            ),
        ] {
            assert_eq!(front_end(accepted, Macro::GpuAligned), (vec![], true));
        }
        for (refused, fault) in [
            (
                parse_quote!(
                    struct A<T> {
                        a: u8,
                        b: T,
                    }
                ),
                "must be its type parameter",
            ),
            (
                parse_quote!(
                    struct B<T, U> {
                        a: T,
                        b: U,
                    }
                ),
                "the same parameter",
            ),
            (
                parse_quote!(
                    struct C<T>(core::marker::PhantomData<T>);
                ),
                "needs a field",
            ),
            (
                parse_quote!(
                    struct D<T>(T)
                    where
                        T: Copy;
                ),
                "`where` clause",
            ),
            (
                parse_quote!(
                    struct E<const N: usize>([u8; N]);
                ),
                "const parameters",
            ),
        ] {
            let (errors, _) = front_end(refused, Macro::GpuAligned);
            assert!(
                errors.len() == 1 || fault == "const parameters",
                "{errors:?}"
            );
            assert!(errors[0].contains(fault), "{errors:?}");
        }
    }

    #[test]
    fn every_fault_of_the_shape_is_reported_at_once() {
        let (errors, checkable) = front_end(
            parse_quote!(
                struct G<T>(T);
            ),
            Macro::GpuSoa,
        );
        assert!(!checkable);
        assert_eq!(errors.len(), 2, "{errors:?}");
        assert!(errors[0].contains("named fields"));
        assert!(errors[1].contains("generic"));
        let (errors, _) = front_end(
            parse_quote!(
                struct Z<'a, T: Copy> {}
            ),
            Macro::GpuAligned,
        );
        assert_eq!(errors.len(), 3, "{errors:?}");
        assert!(errors[0].contains("zero-sized") && errors[1].contains("lifetime"));
        assert!(errors[2].contains("adds the bound itself"));
    }
}
