//! What several test binaries share: the allocator's invariant checks, a
//! `ThreadArena`'s final check, and the files the benches include by path
//! too: one seeded random generator (`rng`), the median of samples
//! (`median`), an array's raw address (`address`), the launch grids of the
//! device tests (`launch`) and a made-up device buffer (`stand_in`). Each binary uses part of it.
#![allow(dead_code)]

mod address;
#[cfg(feature = "cuda")]
mod launch;
mod median;
mod rng;
mod stand_in;
#[allow(unused_imports)] // each binary uses part of this module
pub use address::address_of;
#[allow(unused_imports)] // each binary uses part of this module
#[cfg(feature = "cuda")]
pub use launch::{grid, GRID_STRIDE};
#[allow(unused_imports)] // each binary uses part of this module
pub use median::median;
#[allow(unused_imports)] // each binary uses part of this module
pub use rng::Rng;
#[allow(unused_imports)] // each binary uses part of this module
pub use stand_in::StandIn;

use gpu_aligned::alloc::Allocator;
use gpu_aligned::arena::ThreadArena;
use gpu_aligned::backend::Backend;

/// The allocator's invariants (its counters' equations among them), with
/// the failure spelled out.
pub fn assert_consistent(allocator: &Allocator) {
    if let Err(error) = allocator.check_invariants() {
        panic!("{error}\n{allocator:?}");
    }
}

/// `value` rounded up to a multiple of `align` (a power of two).
pub fn align_up(value: u64, align: u64) -> u64 {
    (value + align - 1) & !(align - 1)
}

/// The host page size, which a growing host arena's chunk must be a
/// multiple of: the arena says so when asked for a chunk of one byte.
pub fn page_size() -> usize {
    use gpu_aligned::arena::{ArenaError, ArenaOptions, GrowthError, GrowthPolicy};
    let one_byte = GrowthPolicy::up_to(1 << 20).with_chunk(1);
    match ArenaOptions::new().growth(one_byte).host(1) {
        Err(ArenaError::Growth(GrowthError::ChunkNotMultiple { granularity, .. })) => {
            assert!(granularity.is_power_of_two(), "{granularity}");
            granularity
        }
        other => panic!("a one-byte chunk was not refused: {other:?}"),
    }
}

/// The growing arenas the tests make: the policy's own initial length.
pub trait GrowingArena: Into<gpu_aligned::arena::ArenaOptions> {
    fn growing_host(
        self,
        policy: gpu_aligned::arena::GrowthPolicy,
    ) -> Result<gpu_aligned::arena::Arena, gpu_aligned::arena::ArenaError> {
        self.into().growth(policy).host(policy.initial())
    }

    #[cfg(feature = "cuda")]
    fn growing_device(
        self,
        stream: &std::sync::Arc<gpu_aligned::backend::cuda::cudarc::driver::CudaStream>,
        policy: gpu_aligned::arena::GrowthPolicy,
    ) -> gpu_aligned::arena::ArenaResult<
        gpu_aligned::arena::Arena<gpu_aligned::backend::cuda::CudaBackend>,
        gpu_aligned::backend::cuda::CudaBackend,
    > {
        self.into().growth(policy).device(stream, policy.initial())
    }
}

impl GrowingArena for gpu_aligned::arena::ArenaOptions {}

/// Nothing of `arena` is live, and once the threads' kept blocks are
/// flushed (on a device: once every last use finished), the whole buffer
/// of `capacity` bytes is free and fits one array at offset 0.
pub fn assert_nothing_lost<B>(arena: &ThreadArena<B>, capacity: usize)
where
    B: Backend + Send + 'static,
    B::Tracking: Send,
    B::Fence: Send,
{
    assert_eq!(arena.live(), 0);
    arena.flush().unwrap();
    let stats = arena.stats();
    assert_eq!((stats.free, stats.allocations), (capacity, 0));
    assert_consistent(arena.lock().allocator());
    let whole = arena.alloc::<u8>(capacity).unwrap();
    assert_eq!(arena.lock().offset(&whole).unwrap(), 0);
}
