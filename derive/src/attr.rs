//! Parses our helper attribute, `#[gpu_aligned(...)]`: `padding` on a field,
//! `crate = "path"` on the struct. An unknown key or a repeated one is an
//! error on the key itself, recorded so that parsing continues.

use crate::ctxt::Ctxt;
use syn::{Attribute, LitStr, Path};

/// What `#[gpu_aligned(...)]` says about the struct.
#[derive(Default)]
pub struct ContainerAttrs {
    /// Where the `gpu_aligned` crate is, when the dependency is renamed or
    /// re-exported (`crate = "ga"`); `::gpu_aligned` otherwise.
    pub krate: Option<Path>,
}

/// What `#[gpu_aligned(...)]` says about one field.
#[derive(Default)]
pub struct FieldAttrs {
    /// The field exists only to fill what would otherwise be a hole.
    pub padding: bool,
}

fn ours(attrs: &[Attribute]) -> impl Iterator<Item = &Attribute> {
    attrs
        .iter()
        .filter(|attr| attr.path().is_ident("gpu_aligned"))
}

pub fn container_attrs(cx: &Ctxt, attrs: &[Attribute]) -> ContainerAttrs {
    let mut out = ContainerAttrs::default();
    for attr in ours(attrs) {
        if let syn::Meta::Path(path) = &attr.meta {
            cx.error_spanned_by(path, "expected `#[gpu_aligned(crate = \"path\")]`");
            continue;
        }
        let result = attr.parse_nested_meta(|meta| {
            if meta.path.is_ident("crate") {
                let lit: LitStr = meta.value()?.parse()?;
                if out.krate.is_some() {
                    cx.syn_error(meta.error("duplicate `crate` in #[gpu_aligned]"));
                } else {
                    match lit.parse::<Path>() {
                        Ok(path) => out.krate = Some(path),
                        Err(_) => cx.error_spanned_by(
                            &lit,
                            format!(
                                "`crate = {:?}` is not a path; write the name the `gpu-aligned` \
                                 dependency has in this crate, e.g. `crate = \"ga\"`",
                                lit.value()
                            ),
                        ),
                    }
                }
            } else if meta.path.is_ident("padding") {
                cx.syn_error(meta.error(
                    "`#[gpu_aligned(padding)]` goes on fields; the struct takes only \
                     `crate = \"path\"`. For automatic padding use `#[gpu_aligned::padded]`",
                ));
            } else {
                cx.syn_error(meta.error(format!(
                    "unknown gpu_aligned attribute `{}`; the struct takes only `crate = \"path\"`",
                    key(&meta.path)
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

pub fn field_attrs(cx: &Ctxt, attrs: &[Attribute]) -> FieldAttrs {
    let mut out = FieldAttrs::default();
    for attr in ours(attrs) {
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
                cx.syn_error(meta.error(format!(
                    "unknown gpu_aligned attribute `{}`; the only field attribute is `padding`",
                    key(&meta.path)
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

fn key(path: &Path) -> String {
    path.get_ident().map_or_else(
        || quote::ToTokens::to_token_stream(path).to_string(),
        ToString::to_string,
    )
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
