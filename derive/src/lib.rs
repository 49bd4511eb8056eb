#![doc = include_str!("../README.md")]

// The pipeline, one file per stage: `ast` (the input as every macro reads
// it, borrowing syn nodes; non-structs are rejected here), `attr` (our
// `#[gpu_aligned(...)]` helper attribute), `repr` (`#[repr]` parsed whole,
// then judged), `ctxt` (collects every error), `valid` (the shape every
// macro needs, checked once for all three), `expand` (the derive's output,
// with the rules the compiler decides), `padded` (the attribute macro's
// rewrite), `soa` (the structure-of-arrays derive, which needs no `repr`
// and hands each field's check to the compiler).

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
// `gpu_aligned`. Rustdoc would append doc comments written here after them,
// so the short docs below exist only under `cfg(doc)`: set when rustdoc
// documents this crate (its docs.rs page), unset when rustc builds it for
// `gpu_aligned`'s docs.

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
#[cfg_attr(
    doc,
    doc = "Checks, at compile time, that a struct is a legal GPU element (1, 2, 4, 8 or 16 bytes, aligned to its size, no holes, plain GPU data), and implements `GpuAligned`, `GpuData`, `bytemuck::Pod` and `Zeroable` for it. Use it as [`gpu_aligned::GpuAligned`](https://docs.rs/gpu-aligned/latest/gpu_aligned/derive.GpuAligned.html), which documents what it accepts and rejects."
)]
#[proc_macro_derive(GpuAligned, attributes(gpu_aligned))]
pub fn derive_gpu_aligned(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    expand::derive(&input, ast::Macro::GpuAligned).into()
}

// Derives `gpu_aligned::GpuData` (and `GpuAligned` or `GpuWords` where the
// compiler finds the struct is an element or 16-aligned), `bytemuck::Pod`
// and `Zeroable` (and cudarc's `DeviceRepr` and `ValidAsZeroBits` when
// `gpu_aligned` has its `cuda` feature) for a struct of any size laid out
// as C lays out its fields with no hole; see the `gpu_aligned` crate. The
// same attributes as `GpuAligned`.
#[cfg_attr(
    doc,
    doc = "Checks, at compile time, that a struct of any size is plain GPU data laid out as C lays it out, with no holes, and implements `GpuData`, `bytemuck::Pod` and `Zeroable` for it: a kernel parameter, a field, a whole struct stored in an arena when 16-aligned. Use it as [`gpu_aligned::GpuData`](https://docs.rs/gpu-aligned/latest/gpu_aligned/derive.GpuData.html), which documents it."
)]
#[proc_macro_derive(GpuData, attributes(gpu_aligned))]
pub fn derive_gpu_data(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    expand::derive(&input, ast::Macro::GpuData).into()
}

// Rewrites a struct into a legal GPU element with explicit, zeroed padding;
// see the `gpu_aligned` crate. Arguments: `align = N` (1, 2, 4, 8 or 16) to
// force the width, `crate = "path"` when the `gpu-aligned` dependency has
// another name. It adds `new(..)` (the fields in declaration order, named
// like them, padding zeroed), `Default` (all zeroes), `<Name>Fields` (the
// fields alone, `From` both ways), and writes the `Debug`, `PartialEq`,
// `Hash`, `PartialOrd` and `Ord` derived on it over the real fields only.
#[cfg_attr(
    doc,
    doc = "Rewrites a struct into a legal GPU element with explicit, zeroed pad fields, a `const fn new`, `Default` and a `<Name>Fields` plain struct to build it from. Use it as [`gpu_aligned::padded`](https://docs.rs/gpu-aligned/latest/gpu_aligned/attr.padded.html), which documents it."
)]
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
#[cfg_attr(
    doc,
    doc = "Stores a struct of any size as one column per field in a `gpu-aligned` arena. Use it as [`gpu_aligned::GpuSoa`](https://docs.rs/gpu-aligned/latest/gpu_aligned/derive.GpuSoa.html), which documents it."
)]
#[proc_macro_derive(GpuSoa, attributes(gpu_aligned))]
pub fn derive_gpu_soa(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    soa::derive(&input).into()
}
