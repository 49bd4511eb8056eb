//! The arena's tuned numbers, each with one line of why and where it was
//! fitted; the measurements are in `docs/RESULTS.md` ("Tuned numbers").
//! None changes a result the tests check, only speed and peak memory.

/// Dropped arrays taken back at once, one lock per batch (`benches/arena.rs`, `gpu`).
pub(super) const RETURN_BATCH: usize = 8;

/// A large array takes the dropped arrays back first once they span this
/// many times its bytes (the PyTorch traces, `gpu`).
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

/// Chunks that make an array of a growing arena large, placed high so small
/// long-lived arrays pack low (`tests/growth/hostile.rs`).
pub(super) const LARGE_CHUNKS: u64 = 16;
