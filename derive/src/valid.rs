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
        && !is_generic(input.generics, by)
        && (!needs_names(by) || is_named(input))
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
        Macro::GpuAligned => {}
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

// The layout rules depend on the type arguments (`Pair<u8>` is 2 bytes,
// `Pair<f32>` is 8, `Pair<[u8; 3]>` breaks the rules), and a derive sees the
// definition only, before any instantiation: a sound check would need bounds
// that no derive can state generically on stable Rust.
fn check_not_generic(cx: &Ctxt, input: &Input, by: Macro) {
    if !is_generic(input.generics, by) {
        return;
    }
    let message = match by {
        Macro::GpuAligned => {
            "`GpuAligned` cannot be derived for a generic struct: whether it is a legal GPU \
             element depends on the type arguments, which a derive cannot see; write a concrete \
             struct for each instantiation (a type alias will not do)"
        }
        Macro::Padded => {
            "`#[gpu_aligned::padded]` cannot pad a generic struct: the padding depends on the \
             type arguments; write a concrete struct for each instantiation"
        }
        Macro::GpuSoa => {
            "`GpuSoa` does not support generic structs: the CUDA header needs one name per \
             layout and the column types must be known; write a concrete struct (or a type \
             alias per instantiation wrapped in a concrete struct)"
        }
    };
    cx.error_spanned_by(input.generics, message);
}

// `GpuSoa`'s impls carry a `where` clause through (each column is still
// checked by the compiler); the layout macros' checks do not.
fn is_generic(generics: &syn::Generics, by: Macro) -> bool {
    !generics.params.is_empty() || (by != Macro::GpuSoa && generics.where_clause.is_some())
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
                struct Z<T> {}
            ),
            Macro::GpuAligned,
        );
        assert_eq!(errors.len(), 2, "{errors:?}");
        assert!(errors[0].contains("zero-sized") && errors[1].contains("generic"));
    }
}
