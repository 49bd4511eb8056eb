//! `#[derive(GpuAligned)]` and `#[gpu_aligned::padded]`: the macros behind
//! the `gpu-aligned` crate, which re-exports them. Use them through
//! `gpu_aligned`; the generated code names `::gpu_aligned` paths.
//!
//! The pipeline, one file per stage: `ast` (the input, borrowing syn nodes),
//! `attr` (our `#[gpu_aligned(...)]` helper attribute), `repr` (`#[repr]`
//! into a typed enum), `ctxt` (collects every error), `valid` (rules the
//! syntax decides), `expand` (the derive's output, with the rules the
//! compiler decides), `padded` (the attribute macro's rewrite).

extern crate proc_macro;

mod ast;
mod attr;
mod ctxt;
mod expand;
mod padded;
mod repr;
mod valid;

use proc_macro::TokenStream;
use syn::{parse_macro_input, DeriveInput};

/// Derives `gpu_aligned::GpuAligned`, `GpuData`, `bytemuck::Pod` and
/// `bytemuck::Zeroable` after checking the GPU layout rules; see the
/// `gpu_aligned` crate.
#[proc_macro_derive(GpuAligned, attributes(gpu_aligned))]
pub fn derive_gpu_aligned(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    expand::derive(&input)
        .unwrap_or_else(syn::Error::into_compile_error)
        .into()
}

/// Rewrites a struct into a legal GPU element with explicit, zeroed padding;
/// see the `gpu_aligned` crate.
#[proc_macro_attribute]
pub fn padded(args: TokenStream, input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    padded::expand(args.into(), &input)
        .unwrap_or_else(syn::Error::into_compile_error)
        .into()
}
