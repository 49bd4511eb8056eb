//! The CUDA backend. `host` runs everywhere (no GPU, no CUDA library);
//! `device` needs an NVIDIA GPU, so each of its tests is `#[ignore]`d: CI
//! compiles and lists them, and they run on a GPU machine with
//! `--include-ignored`. The sticky-fault test lives in its own binary
//! (`cuda_fault.rs`) because it destroys its process's CUDA context.
#![cfg(feature = "cuda")]

#[path = "../support/mod.rs"]
mod support;

mod device;
mod empty;
#[path = "../arena/generic.rs"]
mod generic;
mod graphs;
mod history;
mod host;
mod kernel_arrays;
mod probe;
mod streams;
mod threads;
mod traits;
mod types;
