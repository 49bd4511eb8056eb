//! The arena's tuned numbers, each with where it was fitted (`docs/RESULTS.md`, "Tuned
//! numbers"); none changes a result the tests check.

/// Dropped arrays taken back at once, one lock per batch (`benches/arena.rs`, `gpu`).
pub(super) const RETURN_BATCH: usize = 8;

/// A large array takes dropped arrays back first past this many times its bytes (the traces).
pub(super) const LARGE_TAKE_BACK: usize = 4;

/// Sizes the reuse cache keeps at once, a power of two (chosen).
pub(super) const CLASSES: usize = 16;

/// Kept blocks this large are freed when a large array misses (PyTorch's line; the traces).
pub(super) const LARGE: usize = 1 << 20;

/// Blocks kept per size, at least [`RETURN_BATCH`] (chosen).
pub(super) const DEPTH: usize = 16;

/// Blocks a thread's slot hands the shared arena under one lock (chosen).
#[cfg(feature = "std")]
pub(super) const SPILL_BATCH: usize = 32;

/// Chunks that make an array large, placed high so small ones pack low (`tests/growth/hostile.rs`).
pub(super) const LARGE_CHUNKS: u64 = 16;
