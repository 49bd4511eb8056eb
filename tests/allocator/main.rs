//! The offsets-only allocator: against a model, on bad input, how full it
//! gets, and shared between threads. Runs under Miri too
//! (`cargo +nightly miri test -p gpu-aligned-tests --test allocator`), with
//! smaller op counts.

#[path = "../support/mod.rs"]
mod support;

mod bad_input;
mod model;
mod threads;
mod utilization;
