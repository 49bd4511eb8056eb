//! `#[derive(GpuAligned)]`, `#[derive(GpuData)]`, `#[gpu_aligned::padded]`, the layout facts they
//! produce and the CUDA vector types: the legal cases (the rejected ones are
//! the ui-tests), hygiene and lints of the generated code.

mod data;
mod derive;
mod generic;
mod hygiene;
mod layout;
mod lints;
mod nested_padding;
mod padded;
mod rules;
mod vector;
