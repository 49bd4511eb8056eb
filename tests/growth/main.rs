//! Memory that grows without moving: host reservations committed lazily,
//! and (behind the `cuda` feature, `#[ignore]`d) device reservations with
//! chunks mapped on demand. The host tests run under Miri too, on the
//! fallback allocation.

#[path = "../support/mod.rs"]
mod support;

mod arena;
#[cfg(feature = "cuda")]
mod device_arena;
#[cfg(feature = "cuda")]
mod device_vm;
mod host_vm;
mod hostile;
mod pytorch_traces;
mod sizing;
