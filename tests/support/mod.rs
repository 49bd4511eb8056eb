//! What several test binaries share: one seeded random generator, the
//! allocator's invariant checks, a `ThreadArena`'s final check and a
//! made-up device buffer (`stand_in`, which the benches share). Each binary
//! uses part of it.
#![allow(dead_code)]

mod stand_in;
#[allow(unused_imports)] // each binary uses part of this module
pub use stand_in::StandIn;

use gpu_aligned::alloc::Allocator;
use gpu_aligned::arena::ThreadArena;
use gpu_aligned::backend::Backend;

/// SplitMix64: seeded, so every run sees the same inputs, and good enough
/// that no test depends on the pattern of its numbers.
#[derive(Clone, Debug)]
pub struct Rng(pub u64);

impl Rng {
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A number in `0..bound` (`bound > 0`).
    pub fn below(&mut self, bound: u64) -> u64 {
        self.next_u64() % bound
    }

    /// A size, an index or an exponent in `0..bound` (`bound > 0`).
    pub fn pick(&mut self, bound: usize) -> usize {
        (self.next_u64() % bound as u64) as usize
    }

    pub fn u32(&mut self) -> u32 {
        (self.next_u64() >> 32) as u32
    }

    /// A float in [-1000, 1000) with few mantissa bits, so that `+ 1`, `* 2`
    /// and negation are exact on the CPU and the GPU alike.
    pub fn f32(&mut self) -> f32 {
        (self.u32() % 2_000_000) as f32 / 1000.0 - 1000.0
    }

    pub fn f64(&mut self) -> f64 {
        f64::from(self.f32()) * 3.0
    }

    /// 0, values near `u64::MAX`, powers of two and their neighbours, any
    /// value, or a small one: the edges where sizes and offsets overflow.
    pub fn extreme(&mut self) -> u64 {
        match self.below(8) {
            0 => 0,
            1 => u64::MAX,
            2 => u64::MAX - self.below(300),
            3 => 1 << self.below(64),
            4 => (1 << self.below(64)) + 1,
            5 => (1 << self.below(64)) - 1,
            6 => self.next_u64(),
            _ => self.below(5000),
        }
    }
}

/// Both invariant checks of the allocator, with the failure spelled out.
pub fn assert_consistent(allocator: &Allocator) {
    if let Err(error) = allocator.check_invariants() {
        panic!("{error}\n{allocator:?}");
    }
    if let Err(error) = allocator.stats().check() {
        panic!("{error}\n{allocator:?}");
    }
}

/// `value` rounded up to a multiple of `align` (a power of two).
pub fn align_up(value: u64, align: u64) -> u64 {
    (value + align - 1) & !(align - 1)
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
