//! The median of timed samples, for the tests and the benches (the benches
//! include this file by path): a median, not a mean, so that one run
//! slowed by the machine moves no figure.
// Each bench uses part of it.
#![allow(dead_code)]

use core::cmp::Ordering;

/// A sample that can be ordered: nanosecond counts, and floating-point
/// times ordered by `total_cmp` (no time is NaN, and a total order never
/// panics).
pub trait Sample: Copy {
    fn order(&self, other: &Self) -> Ordering;
}

impl Sample for u64 {
    fn order(&self, other: &Self) -> Ordering {
        self.cmp(other)
    }
}

impl Sample for f64 {
    fn order(&self, other: &Self) -> Ordering {
        self.total_cmp(other)
    }
}

/// The middle of `samples` (the upper middle of an even count), which it
/// leaves in their order.
///
/// # Panics
///
/// If `samples` is empty.
pub fn median<T: Sample>(samples: &[T]) -> T {
    let mut sorted = samples.to_vec();
    sorted.sort_by(T::order);
    sorted[sorted.len() / 2]
}
