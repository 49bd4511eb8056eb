//! Parses our helper attribute, `#[gpu_aligned(...)]`. The only key is
//! `padding`, on a field; an unknown key or a repeated one is an error on the
//! key itself, recorded so that parsing continues.

use crate::ctxt::Ctxt;
use syn::Attribute;

/// What `#[gpu_aligned(...)]` says about one field.
#[derive(Default)]
pub struct FieldAttrs {
    /// The field exists only to fill what would otherwise be a hole.
    pub padding: bool,
}

pub fn field_attrs(cx: &Ctxt, attrs: &[Attribute]) -> FieldAttrs {
    let mut out = FieldAttrs::default();
    for attr in attrs
        .iter()
        .filter(|attr| attr.path().is_ident("gpu_aligned"))
    {
        if let syn::Meta::Path(path) = &attr.meta {
            cx.error_spanned_by(path, "expected `#[gpu_aligned(padding)]`");
            continue;
        }
        let result = attr.parse_nested_meta(|meta| {
            if meta.path.is_ident("padding") {
                if out.padding {
                    // Reported on the second occurrence, which is the one to delete.
                    cx.syn_error(meta.error("duplicate `padding` in #[gpu_aligned]"));
                }
                out.padding = true;
            } else {
                let key = meta.path.get_ident().map_or_else(
                    || quote::ToTokens::to_token_stream(&meta.path).to_string(),
                    ToString::to_string,
                );
                cx.syn_error(meta.error(format!(
                    "unknown gpu_aligned attribute `{key}`; the only field attribute is \
                     `padding`"
                )));
                skip_value(&meta)?;
            }
            Ok(())
        });
        if let Err(error) = result {
            cx.syn_error(error);
        }
    }
    out
}

/// The struct itself takes no `#[gpu_aligned]` keys; say so rather than
/// ignore one.
pub fn container_attrs(cx: &Ctxt, attrs: &[Attribute]) {
    for attr in attrs
        .iter()
        .filter(|attr| attr.path().is_ident("gpu_aligned"))
    {
        cx.error_spanned_by(
            attr,
            "`#[gpu_aligned(...)]` goes on fields (`#[gpu_aligned(padding)]`); the struct takes \
             none. For automatic padding use `#[gpu_aligned::padded]`",
        );
    }
}

// Consumes `= value` or `(...)` after an unknown key, so the next key still parses.
fn skip_value(meta: &syn::meta::ParseNestedMeta) -> syn::Result<()> {
    if meta.input.peek(syn::Token![=]) {
        let _: syn::Expr = meta.value()?.parse()?;
    } else if meta.input.peek(syn::token::Paren) {
        let content;
        syn::parenthesized!(content in meta.input);
        let _: proc_macro2::TokenStream = content.parse()?;
    }
    Ok(())
}
