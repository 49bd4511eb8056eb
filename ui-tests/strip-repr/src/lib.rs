//! `#[strip_repr]`: removes every `#[repr(...)]` from the struct it is put
//! on, leaving it `repr(Rust)`. Placed after `#[derive(GpuAligned)]`, it
//! runs after the derive has read `#[repr(C)]`, so the struct the compiler
//! lays out is not the one the derive saw: the ui-tests show that the impls
//! are refused all the same.

use proc_macro::{Delimiter, TokenStream, TokenTree};

#[proc_macro_attribute]
pub fn strip_repr(_args: TokenStream, input: TokenStream) -> TokenStream {
    let mut out = Vec::new();
    let mut tokens = input.into_iter().peekable();
    while let Some(token) = tokens.next() {
        // `#` followed by `[repr(...)]`: drop both.
        if let TokenTree::Punct(punct) = &token {
            if punct.as_char() == '#' {
                if let Some(TokenTree::Group(group)) = tokens.peek() {
                    let is_repr = group.delimiter() == Delimiter::Bracket
                        && matches!(
                            group.stream().into_iter().next(),
                            Some(TokenTree::Ident(ident)) if ident.to_string() == "repr"
                        );
                    if is_repr {
                        tokens.next();
                        continue;
                    }
                }
            }
        }
        out.push(token);
    }
    out.into_iter().collect()
}
