//! The rules that the syntax alone decides, one `check_` function each,
//! working on the AST only. Rules that need sizes and alignments are checked
//! by the compiler, in the code `expand` emits.

use crate::ast::Input;
use crate::ctxt::Ctxt;

pub fn check(cx: &Ctxt, input: &Input) {
    check_has_fields(cx, input);
    check_not_generic(cx, input);
}

/// Whether the checked impls can be emitted at all (also as the fallback
/// next to other errors): they name the fields and the type without
/// generics.
pub fn has_checkable_shape(input: &Input) -> bool {
    !input.fields.is_empty() && !is_generic(input.generics)
}

// A zero-sized type is no GPU word at all (1, 2, 4, 8 or 16 bytes), and an
// array of it occupies no memory.
fn check_has_fields(cx: &Ctxt, input: &Input) {
    if input.fields.is_empty() {
        cx.error_spanned_by(
            input.ident,
            "`GpuAligned` cannot be derived for a zero-sized struct: a GPU element is 1, 2, 4, 8 \
             or 16 bytes; give it fields",
        );
    }
}

// The layout rules depend on the type arguments (`Pair<u8>` is 2 bytes,
// `Pair<f32>` is 8, `Pair<[u8; 3]>` breaks the rules), and a derive sees the
// definition only, before any instantiation: a sound check would need bounds
// that no derive can state generically on stable Rust.
fn check_not_generic(cx: &Ctxt, input: &Input) {
    if is_generic(input.generics) {
        cx.error_spanned_by(
            input.generics,
            "`GpuAligned` cannot be derived for a generic struct: whether it is a legal GPU \
             element depends on the type arguments, which a derive cannot see; write a concrete \
             struct for each instantiation (a type alias will not do)",
        );
    }
}

fn is_generic(generics: &syn::Generics) -> bool {
    !generics.params.is_empty() || generics.where_clause.is_some()
}
