//! The CUDA side of Rust types: the header emitter (every header is compiled
//! by g++ with its `static_assert`s), the layout report and the coalescing
//! model.

mod advisor;
mod coalesce;
mod extremes;
#[macro_use]
mod cuda_types;
mod header;
mod report;
#[path = "../support/mod.rs"]
mod support;
mod views;

use gpu_aligned::{GpuField, GpuLayout, GpuType};

/// [`GpuLayout::new`] under a short name, for the hand-written layouts.
const fn layout(
    name: &'static str,
    size: usize,
    align: usize,
    padding: usize,
    fields: &'static [GpuField],
) -> GpuLayout {
    GpuLayout::new(name, size, align, padding, fields)
}

/// [`GpuField::new`] under a short name, for the hand-written layouts.
const fn field(
    name: &'static str,
    offset: usize,
    size: usize,
    align: usize,
    is_padding: bool,
    ty: GpuType,
) -> GpuField {
    GpuField::new(name, offset, size, align, is_padding, ty)
}
