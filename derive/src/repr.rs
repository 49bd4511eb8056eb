//! `#[repr(...)]` in two steps, as zerocopy-derive does: [`parse`] turns
//! every repr attribute into a complete [`Written`] value (what was written,
//! legal or not, with its tokens for error spans), and [`judge`] then
//! decides the combination: a [`Repr`] can hold only the layouts the derive
//! accepts, `repr(C)` (optionally with `align(N)`, N a GPU word size) or
//! `repr(transparent)`. Everything else is reported with the reason and the
//! fix, all at once.
//!
//! Names are compared without a raw prefix (`#[r#repr(packed)]` is a repr
//! to rustc, so it is one here too).

use crate::ctxt::Ctxt;
use proc_macro2::TokenStream;
use quote::ToTokens;
use syn::ext::IdentExt;
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
    /// N.
    pub value: u64,
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

/// What the judge concluded.
pub enum Judged {
    Accepted(Repr),
    /// An error was recorded.
    Rejected,
    /// rustc rejects the attribute itself (`align(3)`, `align(16u8)`) and
    /// says so; a second error from us would repeat it.
    LeftToRustc,
}

/// Every `#[repr]` item on the type, in order, as written.
#[derive(Default)]
pub struct Written {
    items: Vec<Item>,
    /// The first `#[repr]` attribute, for "this repr is not C".
    first_attr: Option<TokenStream>,
}

/// One item inside `#[repr(...)]`; each keeps its tokens for error spans.
enum Item {
    C(TokenStream),
    Transparent(TokenStream),
    /// `align(N)`: `value` is `None` when rustc itself rejects the argument
    /// (not a power of two, over 2^29, suffixed, not a literal).
    Align {
        tokens: TokenStream,
        value: Option<u64>,
    },
    Packed(TokenStream),
    Rust(TokenStream),
    Int(String, TokenStream),
    Other(String, TokenStream),
}

fn is(ident: &Ident, name: &str) -> bool {
    ident.unraw() == name
}

impl Written {
    /// The largest `align(N)` written that is a GPU word size, or 1: what
    /// the struct will be aligned to once the rest of its repr is fixed
    /// (an `align(N)` refused is reported, and not assumed).
    pub fn largest_align(&self) -> u64 {
        self.items
            .iter()
            .filter_map(|item| match item {
                Item::Align {
                    value: Some(value), ..
                } if *value <= 16 => Some(*value),
                _ => None,
            })
            .max()
            .unwrap_or(1)
    }
}

/// Collects every repr item. Only input that cannot be read at all is an
/// error here; whether what was written is acceptable is [`judge`]'s call.
pub fn parse(cx: &Ctxt, attrs: &[Attribute]) -> Written {
    let mut written = Written::default();
    let reprs = attrs
        .iter()
        .filter(|attr| attr.path().get_ident().is_some_and(|i| is(i, "repr")));
    for attr in reprs {
        written
            .first_attr
            .get_or_insert_with(|| attr.to_token_stream());
        let result = attr.parse_nested_meta(|meta| {
            let path = &meta.path;
            let tokens = path.to_token_stream();
            let Some(ident) = path.get_ident() else {
                written.items.push(Item::Other(tokens.to_string(), tokens));
                return Ok(());
            };
            let word = ident.unraw().to_string();
            let item = match word.as_str() {
                "C" => Item::C(tokens),
                "transparent" => Item::Transparent(tokens),
                "align" => {
                    let mut value = None;
                    let mut tokens = tokens;
                    if meta.input.peek(syn::token::Paren) {
                        // Kept as a token tree so errors can underline
                        // `align(N)` with the user's own spans.
                        let group: proc_macro2::Group = meta.input.parse()?;
                        value = syn::parse2::<LitInt>(group.stream())
                            .ok()
                            .filter(|lit| lit.suffix().is_empty())
                            .and_then(|lit| lit.base10_parse::<u64>().ok())
                            .filter(|n| n.is_power_of_two() && *n <= 1 << 29);
                        tokens = quote::quote!(#path #group);
                    }
                    Item::Align { tokens, value }
                }
                "packed" => {
                    if meta.input.peek(syn::token::Paren) {
                        let content;
                        syn::parenthesized!(content in meta.input);
                        let _: TokenStream = content.parse()?;
                    }
                    Item::Packed(tokens)
                }
                "Rust" => Item::Rust(tokens),
                "u8" | "u16" | "u32" | "u64" | "u128" | "usize" | "i8" | "i16" | "i32" | "i64"
                | "i128" | "isize" => Item::Int(word, tokens),
                _ => Item::Other(word, tokens),
            };
            written.items.push(item);
            Ok(())
        });
        if let Err(error) = result {
            cx.syn_error(error);
        }
    }
    written
}

/// Decides whether the items written make a layout CUDA can share,
/// reporting every item that does not and then any bad combination.
///
/// `element`: the struct must be a GPU element (`GpuAligned`), so no
/// alignment above 16; GPU data of any size takes any `align(N)`.
pub fn judge(cx: &Ctxt, written: Written, ident: &Ident, element: bool) -> Judged {
    let mut errors = Vec::new();
    let mut left_to_rustc = false;
    let (mut c, mut transparent, mut align, mut any_align) = (None, None, None, None);
    for item in written.items {
        match item {
            Item::C(tokens) => note_once(&mut errors, &mut c, tokens),
            Item::Transparent(tokens) => note_once(&mut errors, &mut transparent, tokens),
            Item::Align { tokens, value } => {
                // Several `align(N)` are legal: rustc takes the largest (and
                // reports a bad one itself), so the largest is judged.
                let larger = match (&align, value) {
                    (Some(Align { value: kept, .. }), Some(value)) => value > *kept,
                    _ => true,
                };
                if any_align.is_none() {
                    any_align = Some(tokens.clone());
                }
                match value {
                    None => left_to_rustc = true,
                    Some(_) if !larger => {}
                    // An element is aligned to its size, and no size is
                    // above 16, so no larger alignment describes an element.
                    Some(value) if value > 16 && element => errors.push((
                        tokens,
                        format!(
                            "`align({value})` is more than 16: a GPU element is aligned to its \
                             size, and no element is wider than 16 bytes (one load or store); \
                             for more data per item use a structure of arrays"
                        ),
                    )),
                    Some(value) => align = Some(Align { tokens, value }),
                }
            }
            Item::Packed(tokens) => errors.push((
                tokens,
                "`repr(packed)` is not allowed: it can place fields at misaligned addresses, \
                 and a misaligned GPU access faults (cudaErrorMisalignedAddress); remove \
                 `packed` and fill holes with explicit pad fields, or use \
                 `#[gpu_aligned::padded]`"
                    .into(),
            )),
            Item::Rust(tokens) => errors.push((
                tokens,
                "`repr(Rust)` leaves field order and offsets to the compiler, so CUDA cannot \
                 share the layout; use `#[repr(C)]`"
                    .into(),
            )),
            Item::Int(word, tokens) => errors.push((
                tokens,
                format!("`repr({word})` is for enums; a GPU element is a `#[repr(C)]` struct"),
            )),
            Item::Other(word, tokens) => errors.push((
                tokens,
                format!(
                    "unsupported `repr({word})`; use `#[repr(C)]`, `#[repr(C, align(N))]` or \
                     `#[repr(transparent)]`"
                ),
            )),
        }
    }
    match (&c, &transparent) {
        (Some(_), Some(transparent)) => errors.push((
            transparent.clone(),
            "`repr(C)` and `repr(transparent)` exclude each other".into(),
        )),
        (None, Some(_)) => {
            if let Some(align) = &any_align {
                errors.push((
                    align.clone(),
                    "`repr(transparent)` cannot have `align`; use `#[repr(C, align(N))]`".into(),
                ));
            }
        }
        _ => {}
    }
    if !errors.is_empty() {
        for (tokens, message) in errors {
            cx.error_spanned_by(tokens, message);
        }
        return Judged::Rejected;
    }
    if left_to_rustc {
        return Judged::LeftToRustc;
    }
    match (c, transparent, any_align, written.first_attr) {
        (Some(_), _, _, _) => Judged::Accepted(Repr::C { align }),
        (None, Some(_), _, _) => Judged::Accepted(Repr::Transparent),
        (None, None, Some(align), _) => {
            cx.error_spanned_by(
                align,
                "`#[repr(align(N))]` without `C` is `repr(Rust)`: field order and offsets are \
                 unspecified, so CUDA cannot share the layout; write `#[repr(C, align(N))]`",
            );
            Judged::Rejected
        }
        (None, None, None, Some(attr)) => {
            cx.error_spanned_by(
                attr,
                "this repr leaves the layout to the compiler; write `#[repr(C)]`",
            );
            Judged::Rejected
        }
        (None, None, None, None) => {
            cx.syn_error(syn::Error::new(
                ident.span(),
                "missing `#[repr(C)]`: without it Rust may reorder the fields, so CUDA cannot \
                 share the layout; add `#[repr(C)]` (or `#[repr(C, align(N))]`), or put \
                 `#[gpu_aligned::padded]` on the struct to have it chosen",
            ));
            Judged::Rejected
        }
    }
}

// A repeated `C` or `transparent` is reported on its second occurrence.
fn note_once(
    errors: &mut Vec<(TokenStream, String)>,
    slot: &mut Option<TokenStream>,
    tokens: TokenStream,
) {
    if slot.is_some() {
        let message = format!("duplicate `{tokens}` in repr");
        errors.push((tokens, message));
    } else {
        *slot = Some(tokens);
    }
}

/// Whether any `#[repr]`, raw or not, is among `attrs`: `padded` chooses the
/// repr itself and refuses one written by hand.
pub fn is_repr(attr: &Attribute) -> bool {
    attr.path().get_ident().is_some_and(|i| is(i, "repr"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use syn::parse_quote;

    enum Outcome {
        C { aligned: bool },
        Transparent,
        Rejected,
        LeftToRustc,
    }

    fn parse_repr(input: syn::DeriveInput) -> (Outcome, Vec<String>) {
        let cx = Ctxt::new();
        let written = parse(&cx, &input.attrs);
        let outcome = match judge(&cx, written, &input.ident, true) {
            Judged::Accepted(Repr::C { align }) => Outcome::C {
                aligned: align.is_some(),
            },
            Judged::Accepted(Repr::Transparent) => Outcome::Transparent,
            Judged::Rejected => Outcome::Rejected,
            Judged::LeftToRustc => Outcome::LeftToRustc,
        };
        let errors = match cx.check() {
            Ok(()) => Vec::new(),
            Err(error) => error.into_iter().map(|e| e.to_string()).collect(),
        };
        (outcome, errors)
    }

    #[test]
    fn c_with_a_word_alignment_is_accepted() {
        let (repr, errors) = parse_repr(parse_quote!(
            #[repr(C, align(16))]
            struct S;
        ));
        assert!(errors.is_empty(), "{errors:?}");
        assert!(matches!(repr, Outcome::C { aligned: true }));
        let (repr, _) = parse_repr(parse_quote!(
            #[repr(C)]
            #[repr(align(4))]
            struct S;
        ));
        assert!(matches!(repr, Outcome::C { aligned: true }));
        let (repr, _) = parse_repr(parse_quote!(
            #[repr(transparent)]
            struct S;
        ));
        assert!(matches!(repr, Outcome::Transparent));
    }

    #[test]
    fn raw_identifiers_are_reprs_too() {
        let (repr, errors) = parse_repr(parse_quote!(
            #[r#repr(C)]
            struct S;
        ));
        assert!(errors.is_empty(), "{errors:?}");
        assert!(matches!(repr, Outcome::C { aligned: false }));
        let (repr, errors) = parse_repr(parse_quote!(
            #[repr(C)]
            #[r#repr(packed(4))]
            struct S;
        ));
        assert!(matches!(repr, Outcome::Rejected));
        assert!(errors[0].contains("repr(packed)"), "{errors:?}");
    }

    #[test]
    fn every_bad_repr_item_is_reported_at_once() {
        let (repr, errors) = parse_repr(parse_quote!(
            #[repr(C, packed, align(32), u8)]
            struct S;
        ));
        assert!(matches!(repr, Outcome::Rejected));
        assert_eq!(errors.len(), 3, "{errors:?}");
        assert!(errors[0].contains("repr(packed)"));
        assert!(errors[1].contains("align(32)"));
        assert!(errors[2].contains("repr(u8)"));
    }

    #[test]
    fn an_alignment_rustc_rejects_is_left_to_rustc() {
        for input in [
            parse_quote!(
                #[repr(C, align(3))]
                struct S;
            ),
            parse_quote!(
                #[repr(C, align(16u8))]
                struct S;
            ),
            parse_quote!(
                #[repr(C, align(N))]
                struct S;
            ),
        ] {
            let (repr, errors) = parse_repr(input);
            assert!(matches!(repr, Outcome::LeftToRustc));
            assert!(errors.is_empty(), "{errors:?}");
        }
    }

    #[test]
    fn missing_or_alignment_only_repr_is_not_c() {
        let (repr, errors) = parse_repr(parse_quote!(
            struct S;
        ));
        assert!(matches!(repr, Outcome::Rejected));
        assert!(errors[0].starts_with("missing `#[repr(C)]`"), "{errors:?}");
        let (repr, errors) = parse_repr(parse_quote!(
            #[repr(align(8))]
            struct S;
        ));
        assert!(matches!(repr, Outcome::Rejected));
        assert!(errors[0].contains("without `C`"), "{errors:?}");
    }

    #[test]
    fn duplicates_are_reported_on_their_second_occurrence() {
        let (_, errors) = parse_repr(parse_quote!(
            #[repr(C, C, transparent, transparent)]
            struct S;
        ));
        assert_eq!(errors.len(), 3, "{errors:?}");
    }

    #[test]
    fn several_alignments_are_read_as_rustc_reads_them_the_largest() {
        let cx = Ctxt::new();
        let input: syn::DeriveInput = parse_quote!(
            #[repr(C, align(2), align(8))]
            #[repr(align(4))]
            struct S;
        );
        let written = parse(&cx, &input.attrs);
        assert_eq!(written.largest_align(), 8);
        let judged = judge(&cx, written, &input.ident, true);
        assert!(cx.check().is_ok());
        let Judged::Accepted(Repr::C { align: Some(align) }) = judged else {
            panic!("not accepted");
        };
        assert_eq!(align.value, 8);
        assert_eq!(align.tokens.to_string(), "align (8)");
    }
}
