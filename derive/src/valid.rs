//! The rules that the syntax alone decides, one `check_` function each. Rules
//! that need sizes and alignments are emitted as bounds by `expand`, for the
//! compiler to decide.

use crate::ast::Input;
use crate::ctxt::Ctxt;
use syn::Data;

pub fn check(cx: &Ctxt, input: &Input) {
    check_is_struct(cx, input);
    check_has_fields(cx, input);
    check_not_generic(cx, input);
}

// An enum's discriminant makes some bit patterns invalid (so it cannot be
// `Pod`), and CUDA C++ has no matching tagged layout; a union has no single
// field list whose offsets and padding could be checked.
fn check_is_struct(cx: &Ctxt, input: &Input) {
    match &input.original.data {
        Data::Struct(_) => {}
        Data::Enum(data) => cx.error_spanned_by(
            data.enum_token,
            "`GpuAligned` cannot be derived for an enum: not every bit pattern is a valid \
             variant, and CUDA has no matching layout; use a `#[repr(C)]` struct with an integer \
             tag field (e.g. `kind: u32`)",
        ),
        Data::Union(data) => cx.error_spanned_by(
            data.union_token,
            "`GpuAligned` cannot be derived for a union: its fields overlap, so there is no field \
             list whose offsets and padding could be checked; use a `#[repr(C)]` struct, or one \
             word-sized field (e.g. `bits: u32`) that kernels reinterpret",
        ),
    }
}

// A zero-sized type is no GPU word at all (1, 2, 4, 8 or 16 bytes), and an
// array of it occupies no memory.
fn check_has_fields(cx: &Ctxt, input: &Input) {
    if let Data::Struct(data) = &input.original.data {
        if data.fields.is_empty() {
            cx.error_spanned_by(
                &input.original.ident,
                "`GpuAligned` cannot be derived for a zero-sized struct: a GPU element is 1, 2, \
                 4, 8 or 16 bytes; give it fields",
            );
        }
    }
}

// The layout rules depend on the type arguments (`Pair<u8>` is 2 bytes,
// `Pair<f32>` is 8, `Pair<[u8; 3]>` breaks the rules), and a derive sees the
// definition only, before any instantiation: a sound check would need bounds
// that no derive can state generically on stable Rust.
fn check_not_generic(cx: &Ctxt, input: &Input) {
    let generics = &input.original.generics;
    if !generics.params.is_empty() || generics.where_clause.is_some() {
        cx.error_spanned_by(
            generics,
            "`GpuAligned` cannot be derived for a generic struct: whether it is a legal GPU \
             element depends on the type arguments, which a derive cannot see; write a concrete \
             struct for each instantiation (a type alias will not do)",
        );
    }
}
