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
