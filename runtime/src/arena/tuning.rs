//! The arena's tuned numbers, in one place, each with one line of why; what
//! each was fitted on, the measurements and how to reproduce them are in
//! `docs/RESULTS.md` ("Tuned numbers"). Changing one changes no result the
//! tests check, only speed and peak memory: measure there before and after.

/// Dropped arrays waiting before an allocation takes them back although it
/// fits without them: one lock per batch, not per array. Fitted on
/// `benches/arena.rs` and the `gpu` bench's allocate + drop pairs.
pub(super) const RETURN_BATCH: usize = 8;

/// A large array no kept block serves takes the dropped arrays back first
/// once they span this many times its bytes: at once would cost a loop of
/// one large size a take-back per pair, only by the batch would let them
/// grow the arena. Fitted on the two recorded PyTorch traces (which
/// `tests/growth/pytorch_traces.rs` checks too) and the `gpu` bench.
pub(super) const LARGE_TAKE_BACK: usize = 4;

/// Sizes the reuse cache keeps blocks of at once (a power of two, so a
/// class is a mask of the size's hash): enough for the few sizes of an
/// allocate-and-drop loop. Chosen, not fitted.
pub(super) const CLASSES: usize = 16;

/// From this size a kept block is large, freed when a large array misses so
/// that holes merge before it is placed: PyTorch's line between its small
/// and large pools. Checked on the two recorded traces.
pub(super) const LARGE: usize = 1 << 20;

/// Blocks kept per size: at least [`RETURN_BATCH`], so a loop over one size
/// is served from the cache entirely. Chosen, not fitted.
pub(super) const DEPTH: usize = 16;

/// Blocks a thread's slot collects for the shared arena before it hands
/// them over under one lock. Chosen, not fitted (`benches/threads.rs` would
/// show a change).
#[cfg(feature = "std")]
pub(super) const SPILL_BATCH: usize = 32;

/// Chunks that make an array of a growing arena large, placed at the top of
/// its free block so small long-lived arrays pack at the bottom (arrays of
/// a few chunks stay low: a high placement's gap after a growth would be a
/// large share of them). Fitted on `tests/growth/hostile.rs`.
pub(super) const LARGE_CHUNKS: u64 = 16;
