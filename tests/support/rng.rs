//! The seeded random generator of the tests and the benches (the benches
//! include this file by path), so that every run sees the same inputs and
//! two peers of a bench see one sequence.
// Each test binary and bench uses part of it.
#![allow(dead_code)]

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

    /// A size in `low..=high` (`low <= high`).
    pub fn between(&mut self, low: usize, high: usize) -> usize {
        low + self.pick(high - low + 1)
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
