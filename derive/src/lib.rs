//! `#[derive(GpuAligned)]`, `#[gpu_aligned::padded]` and
//! `#[derive(GpuSoa)]`: the macros behind the `gpu-aligned` crate, which
//! re-exports them. Use them through `gpu_aligned`; the generated code names
//! `::gpu_aligned` paths (or the path given with `crate = "..."`).
//!
//! The pipeline, one file per stage: `ast` (the input, borrowing syn nodes;
//! non-structs are rejected here), `attr` (our `#[gpu_aligned(...)]` helper
//! attribute), `repr` (`#[repr]` parsed whole, then judged), `ctxt` (collects
//! every error), `valid` (rules the syntax decides), `expand` (the derive's
//! output, with the rules the compiler decides), `padded` (the attribute
//! macro's rewrite), `soa` (the structure-of-arrays derive, which needs no
//! `repr` and hands each field's check to the compiler).

extern crate proc_macro;

mod ast;
mod attr;
mod ctxt;
mod expand;
mod padded;
mod repr;
mod soa;
mod valid;

use proc_macro::TokenStream;
use syn::{parse_macro_input, DeriveInput};

// The user-facing docs of these macros are on their re-exports in
// `gpu_aligned` (rustdoc would append doc comments written here after them),
// so here they are plain comments.

// Derives `gpu_aligned::GpuAligned`, `GpuData`, `bytemuck::Pod` and
// `bytemuck::Zeroable` (and cudarc's `DeviceRepr` and `ValidAsZeroBits`
// when `gpu_aligned` has its `cuda` feature) after checking the GPU layout
// rule, `gpu_aligned::rules`; see the `gpu_aligned` crate.
//
// The struct needs `#[derive(Clone, Copy)]` and `#[repr(C)]` (or
// `#[repr(C, align(N))]`, or `#[repr(transparent)]`). Attributes:
// `#[gpu_aligned(padding)]` on a field that exists only to fill a hole
// (counted as padding, not data); `#[gpu_aligned(crate = "path")]` on the
// struct when the `gpu-aligned` dependency has another name.
#[proc_macro_derive(GpuAligned, attributes(gpu_aligned))]
pub fn derive_gpu_aligned(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    expand::derive(&input).into()
}

// Rewrites a struct into a legal GPU element with explicit, zeroed padding;
// see the `gpu_aligned` crate. Arguments: `align = N` (1, 2, 4, 8 or 16) to
// force the width, `crate = "path"` when the `gpu-aligned` dependency has
// another name. It adds `new(..)` (the fields in declaration order, padding
// zeroed) and `Default` (all zeroes).
#[proc_macro_attribute]
pub fn padded(args: TokenStream, input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    padded::expand(args.into(), &input).into()
}

// Derives `gpu_aligned::soa::GpuSoa`: the struct (any size, any `repr`,
// named fields whose types are GPU elements) stored as one column per
// field, and a `<Name>Columns` struct of typed column handles; see the
// `gpu_aligned` crate. `#[gpu_aligned(crate = "path")]` on the struct when
// the `gpu-aligned` dependency has another name.
#[proc_macro_derive(GpuSoa, attributes(gpu_aligned))]
pub fn derive_gpu_soa(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    soa::derive(&input).into()
}
