//! The error accumulator: every stage records what is wrong and carries on,
//! so one compile shows every syntactic mistake at once instead of one per
//! edit-compile cycle.

use quote::ToTokens;
use std::cell::RefCell;
use std::fmt::Display;
use std::thread;

/// Collects errors; [`Ctxt::check`] must be called before it is dropped.
pub struct Ctxt {
    // `None` once `check` has run.
    errors: RefCell<Option<Vec<syn::Error>>>,
}

impl Ctxt {
    pub fn new() -> Self {
        Ctxt {
            errors: RefCell::new(Some(Vec::new())),
        }
    }

    /// Records an error pointing at `tokens` (the field, attribute or key at fault).
    pub fn error_spanned_by<A: ToTokens, T: Display>(&self, tokens: A, message: T) {
        self.syn_error(syn::Error::new_spanned(tokens.into_token_stream(), message));
    }

    /// Records an error from syn (a parse failure, or one built with `meta.error`).
    pub fn syn_error(&self, error: syn::Error) {
        self.errors
            .borrow_mut()
            .as_mut()
            .expect("Ctxt used after check()")
            .push(error);
    }

    /// All recorded errors as one (each keeps its own span), or `Ok` if none.
    pub fn check(self) -> syn::Result<()> {
        let errors = self.errors.borrow_mut().take().expect("Ctxt checked twice");
        let mut errors = errors.into_iter();
        match errors.next() {
            None => Ok(()),
            Some(mut first) => {
                for rest in errors {
                    first.combine(rest);
                }
                Err(first)
            }
        }
    }
}

impl Drop for Ctxt {
    fn drop(&mut self) {
        // A forgotten `check` would silently drop the user's errors.
        if !thread::panicking() && self.errors.borrow().is_some() {
            panic!("gpu-aligned-derive bug: Ctxt dropped without check()");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Ctxt;

    #[test]
    fn errors_are_combined_in_order() {
        let cx = Ctxt::new();
        cx.error_spanned_by(quote::quote!(a), "first");
        cx.error_spanned_by(quote::quote!(b), "second");
        let messages: Vec<String> = cx
            .check()
            .unwrap_err()
            .into_iter()
            .map(|e| e.to_string())
            .collect();
        assert_eq!(messages, ["first", "second"]);
    }

    #[test]
    #[should_panic(expected = "dropped without check")]
    fn dropping_unchecked_errors_panics() {
        let cx = Ctxt::new();
        cx.error_spanned_by(quote::quote!(a), "lost");
        drop(cx);
    }
}
