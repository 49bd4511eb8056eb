//! The arena's tuned numbers, in one place: how long dropped arrays wait,
//! what a large array is, how many blocks are kept for reuse and how many a
//! thread's slot collects before handing them over. Each has one line of
//! why; the measurements that fitted it, with the traces and benches they
//! came from and the commands that reproduce them, are in `docs/RESULTS.md`
//! ("Tuned numbers"). Changing one changes no result the tests check, only
//! speed and peak memory: measure again there before and after.

/// How many dropped arrays wait on the returns list before an allocation
/// takes them back although it fits without them: one lock per batch, not
/// per array. Fitted on `benches/arena.rs` and the `gpu` bench's
/// allocate + drop pairs.
pub(super) const RETURN_BATCH: usize = 8;

/// A large array (at least [`LARGE`] bytes) that no kept block serves
/// takes the dropped arrays back before it is placed once they span this
/// many times its bytes: at once would cost a loop of one large size a
/// take-back per pair, only by the batch would let held-back blocks grow
/// the arena. Fitted on the two recorded PyTorch traces (dropped, stand-in
/// device) and the `gpu` bench's 1 MiB and 16 MiB pairs; the trace test
/// `tests/growth/pytorch_traces.rs` checks the same traces, so it is not
/// an independent check of this number.
pub(super) const LARGE_TAKE_BACK: usize = 4;

/// How many sizes the reuse cache keeps blocks of at once (a power of two,
/// so a class is a mask of the size's hash): enough for the few sizes of
/// an allocate-and-drop loop. Chosen, not fitted.
pub(super) const CLASSES: usize = 16;

/// The size from which a kept block is large and goes back to the
/// allocator when a large array misses (so holes merge before it is
/// placed): PyTorch's line between its small and large pools, 1 MiB.
/// Checked on the two recorded traces.
pub(super) const LARGE: usize = 1 << 20;

/// How many blocks of one size are kept: at least [`RETURN_BATCH`], so a
/// loop over one size is served from the cache entirely. Chosen, not
/// fitted.
pub(super) const DEPTH: usize = 16;

/// How many blocks a thread's slot collects for the shared arena (arrays
/// used on a device, blocks its cache has no room for) before it hands
/// them over under one lock. Chosen, not fitted (`benches/threads.rs` is
/// where a change would show). Only `ThreadArena` (feature `std`) has slots.
#[cfg(feature = "std")]
pub(super) const SPILL_BATCH: usize = 32;

/// How many chunks make an array of a growing arena large, placed at the
/// top of its free block so small long-lived arrays pack at the bottom;
/// arrays of a few chunks stay low, where the gap a high placement leaves
/// after a growth would be a large share of them. With 2 MiB chunks:
/// 32 MiB. Fitted on `tests/growth/hostile.rs`.
pub(super) const LARGE_CHUNKS: u64 = 16;
