//! Parses `#[repr(...)]` into [`Repr`], which can hold only the layouts the
//! derive accepts: `repr(C)` (optionally with `align(N)`, N a GPU word size)
//! or `repr(transparent)`. Everything else is reported, with the reason and
//! the fix, and parsing goes on so every bad repr shows at once.

use crate::ctxt::Ctxt;
use proc_macro2::TokenStream;
use quote::ToTokens;
use syn::{Attribute, Ident, LitInt};

/// A layout the derive accepts.
pub enum Repr {
    /// `#[repr(C)]` or `#[repr(C, align(N))]`.
    C { align: Option<Align> },
    /// `#[repr(transparent)]`: the layout of its one non-zero-sized field.
    Transparent,
}

/// A valid `align(N)`: N is 1, 2, 4, 8 or 16.
pub struct Align {
    /// The `align(N)` tokens, for errors about holes the alignment creates.
    pub tokens: TokenStream,
}

impl Repr {
    /// The tokens of `align(N)`, if any.
    pub fn align_tokens(&self) -> Option<&TokenStream> {
        match self {
            Repr::C { align: Some(align) } => Some(&align.tokens),
            _ => None,
        }
    }
}

/// What was written, before deciding whether it is legal.
#[derive(Default)]
struct Written {
    c: Option<TokenStream>,
    transparent: Option<TokenStream>,
    align: Option<Align>,
    // An `align(N)` seen, legal or not: tells "align without C" from "no repr".
    any_align: Option<TokenStream>,
    // Set once any error was reported, so a bad repr does not also get
    // "missing repr(C)".
    failed: bool,
}

/// Parses every `#[repr]` on the type. `None` means an error was recorded.
pub fn parse(cx: &Ctxt, attrs: &[Attribute], ident: &Ident) -> Option<Repr> {
    let mut written = Written::default();
    let mut first_repr_attr = None;
    for attr in attrs.iter().filter(|attr| attr.path().is_ident("repr")) {
        first_repr_attr.get_or_insert(attr);
        let result = attr.parse_nested_meta(|meta| {
            let path = &meta.path;
            let Some(word) = path.get_ident().map(Ident::to_string) else {
                cx.error_spanned_by(path, "unsupported repr");
                written.failed = true;
                return Ok(());
            };
            match word.as_str() {
                "C" => note_once(cx, &mut written.c, path, &mut written.failed),
                "transparent" => note_once(cx, &mut written.transparent, path, &mut written.failed),
                "align" => {
                    // Kept as a token tree so errors can underline `align(N)`
                    // with the user's own spans.
                    let group: proc_macro2::Group = meta.input.parse()?;
                    let lit: LitInt = syn::parse2(group.stream())?;
                    let tokens = quote::quote!(#path #group);
                    parse_align(cx, &mut written, &lit, tokens);
                }
                "packed" => {
                    if meta.input.peek(syn::token::Paren) {
                        let content;
                        syn::parenthesized!(content in meta.input);
                        let _: TokenStream = content.parse()?;
                    }
                    cx.error_spanned_by(
                        path,
                        "`repr(packed)` is not allowed: it can place fields at misaligned \
                         addresses, and a misaligned GPU access faults \
                         (cudaErrorMisalignedAddress); remove `packed` and fill holes with \
                         explicit pad fields, or use `#[gpu_aligned::padded]`",
                    );
                    written.failed = true;
                }
                "Rust" => {
                    cx.error_spanned_by(
                        path,
                        "`repr(Rust)` leaves field order and offsets to the compiler, so CUDA \
                         cannot share the layout; use `#[repr(C)]`",
                    );
                    written.failed = true;
                }
                "u8" | "u16" | "u32" | "u64" | "u128" | "usize" | "i8" | "i16" | "i32" | "i64"
                | "i128" | "isize" => {
                    cx.error_spanned_by(
                        path,
                        format!(
                            "`repr({word})` is for enums; a GPU element is a `#[repr(C)]` struct"
                        ),
                    );
                    written.failed = true;
                }
                _ => {
                    cx.error_spanned_by(
                        path,
                        format!(
                            "unsupported `repr({word})`; use `#[repr(C)]`, `#[repr(C, align(N))]` \
                             or `#[repr(transparent)]`"
                        ),
                    );
                    written.failed = true;
                }
            }
            Ok(())
        });
        if let Err(error) = result {
            cx.syn_error(error);
            written.failed = true;
        }
    }
    classify(cx, written, first_repr_attr, ident)
}

fn note_once(cx: &Ctxt, slot: &mut Option<TokenStream>, path: &syn::Path, failed: &mut bool) {
    if slot.is_some() {
        cx.error_spanned_by(
            path,
            format!("duplicate `{}` in repr", path.to_token_stream()),
        );
        *failed = true;
    } else {
        *slot = Some(path.to_token_stream());
    }
}

// An element is aligned to its size, and sizes are 1, 2, 4, 8 or 16, so only
// those alignments can describe a legal element.
fn parse_align(cx: &Ctxt, written: &mut Written, lit: &LitInt, tokens: TokenStream) {
    if written.any_align.is_some() {
        cx.error_spanned_by(&tokens, "duplicate `align` in repr; write one `align(N)`");
        written.failed = true;
        return;
    }
    written.any_align = Some(tokens.clone());
    let Ok(value) = lit.base10_parse::<u64>() else {
        cx.error_spanned_by(lit, "`align` takes an integer");
        written.failed = true;
        return;
    };
    if !value.is_power_of_two() {
        cx.error_spanned_by(
            &tokens,
            format!(
                "`align({value})` is not a power of two; a GPU element is aligned to its size, \
                 1, 2, 4, 8 or 16"
            ),
        );
        written.failed = true;
    } else if value > 16 {
        cx.error_spanned_by(
            &tokens,
            format!(
                "`align({value})` is more than 16: a GPU element is aligned to its size, and no \
                 element is wider than 16 bytes (one load or store); for more data per item use a \
                 structure of arrays"
            ),
        );
        written.failed = true;
    } else {
        written.align = Some(Align { tokens });
    }
}

fn classify(
    cx: &Ctxt,
    written: Written,
    first_repr_attr: Option<&Attribute>,
    ident: &Ident,
) -> Option<Repr> {
    match (&written.c, &written.transparent) {
        (Some(_), Some(transparent)) => {
            cx.error_spanned_by(
                transparent,
                "`repr(C)` and `repr(transparent)` exclude each other",
            );
            None
        }
        (None, Some(_)) => match written.any_align {
            Some(align) => {
                cx.error_spanned_by(
                    align,
                    "`repr(transparent)` cannot have `align`; use `#[repr(C, align(N))]`",
                );
                None
            }
            None if written.failed => None,
            None => Some(Repr::Transparent),
        },
        (Some(_), None) if written.failed => None,
        (Some(_), None) => Some(Repr::C {
            align: written.align,
        }),
        (None, None) => {
            if written.failed {
                return None;
            }
            match (written.any_align, first_repr_attr) {
                (Some(align), _) => cx.error_spanned_by(
                    align,
                    "`#[repr(align(N))]` without `C` is `repr(Rust)`: field order and offsets are \
                     unspecified, so CUDA cannot share the layout; write `#[repr(C, align(N))]`",
                ),
                (None, Some(attr)) => cx.error_spanned_by(
                    attr,
                    "this repr leaves the layout to the compiler; write `#[repr(C)]`",
                ),
                (None, None) => cx.syn_error(syn::Error::new(
                    ident.span(),
                    "missing `#[repr(C)]`: without it Rust may reorder the fields, so CUDA cannot \
                     share the layout; add `#[repr(C)]` (or `#[repr(C, align(N))]`), or put \
                     `#[gpu_aligned::padded]` on the struct to have it chosen",
                )),
            }
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use syn::parse_quote;

    fn parse_repr(input: syn::DeriveInput) -> (Option<Repr>, Vec<String>) {
        let cx = Ctxt::new();
        let repr = parse(&cx, &input.attrs, &input.ident);
        let errors = match cx.check() {
            Ok(()) => Vec::new(),
            Err(error) => error.into_iter().map(|e| e.to_string()).collect(),
        };
        (repr, errors)
    }

    #[test]
    fn c_with_a_word_alignment_is_accepted() {
        let (repr, errors) = parse_repr(parse_quote!(
            #[repr(C, align(16))]
            struct S;
        ));
        assert!(errors.is_empty(), "{errors:?}");
        assert!(matches!(repr, Some(Repr::C { align: Some(_) })));
        let (repr, _) = parse_repr(parse_quote!(
            #[repr(C)]
            #[repr(align(4))]
            struct S;
        ));
        assert!(matches!(repr, Some(Repr::C { align: Some(_) })));
        let (repr, _) = parse_repr(parse_quote!(
            #[repr(transparent)]
            struct S;
        ));
        assert!(matches!(repr, Some(Repr::Transparent)));
    }

    #[test]
    fn every_bad_repr_item_is_reported_at_once() {
        let (repr, errors) = parse_repr(parse_quote!(
            #[repr(C, packed, align(3), u8)]
            struct S;
        ));
        assert!(repr.is_none());
        assert_eq!(errors.len(), 3, "{errors:?}");
        assert!(errors[0].contains("repr(packed)"));
        assert!(errors[1].contains("align(3)"));
        assert!(errors[2].contains("repr(u8)"));
    }

    #[test]
    fn missing_or_alignment_only_repr_is_not_c() {
        let (repr, errors) = parse_repr(parse_quote!(
            struct S;
        ));
        assert!(repr.is_none());
        assert!(errors[0].starts_with("missing `#[repr(C)]`"), "{errors:?}");
        let (repr, errors) = parse_repr(parse_quote!(
            #[repr(align(8))]
            struct S;
        ));
        assert!(repr.is_none());
        assert!(errors[0].contains("without `C`"), "{errors:?}");
    }

    #[test]
    fn alignment_above_sixteen_and_duplicates_are_rejected() {
        let (_, errors) = parse_repr(parse_quote!(
            #[repr(C, align(32))]
            struct S;
        ));
        assert!(errors[0].contains("more than 16"), "{errors:?}");
        let (_, errors) = parse_repr(parse_quote!(
            #[repr(C, C, align(4), align(4))]
            struct S;
        ));
        assert_eq!(errors.len(), 2, "{errors:?}");
    }
}
