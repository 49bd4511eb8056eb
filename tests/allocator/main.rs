//! The offsets-only allocator: against a model, on bad input, with counters
//! at their limits, growing and shrinking, leaks, how full it gets, and
//! shared between threads. Runs under Miri too
//! (`cargo +nightly miri test -p gpu-aligned-tests --test allocator`), with
//! smaller op counts.

#[path = "../support/mod.rs"]
mod support;

mod bad_input;
mod counters;
mod grow;
mod leaks;
mod model;
mod threads;
mod utilization;
