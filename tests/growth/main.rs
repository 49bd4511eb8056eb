//! Arenas that grow without moving: host arenas committed lazily, and
//! (behind the `cuda` feature, `#[ignore]`d) device arenas with chunks
//! mapped on demand. The host tests run under Miri too, on the fallback
//! allocation. The reservations under them are unit tests of the backends
//! (`runtime/src/backend/vm.rs`, `runtime/src/backend/cuda/vm.rs`).

#[path = "../support/mod.rs"]
mod support;

mod arena;
#[cfg(feature = "cuda")]
mod device_arena;
mod hostile;
mod pytorch_traces;
mod sizing;
