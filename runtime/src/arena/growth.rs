//! How an arena grows: by chunks mapped at the end of a reserved range, so no pointer moves.

use core::fmt;

use super::pool::Pool;
use super::{Arena, ArenaError, ArenaResult};
use crate::align::round_up;
use crate::backend::Backend;

/// The default chunk: 2 MiB, CUDA virtual memory's granularity and a multiple of host pages.
pub const DEFAULT_CHUNK: usize = 2 << 20;

/// When and how far an arena may grow. The default never grows.
///
/// ```
/// use gpu_aligned::arena::GrowthPolicy;
///
/// let fixed = GrowthPolicy::fixed();
/// assert!(!fixed.grows());
///
/// let policy = GrowthPolicy::up_to(1 << 30).with_chunk(4 << 20).with_initial(8 << 20);
/// assert_eq!((policy.initial(), policy.max(), policy.chunk()), (8 << 20, 1 << 30, 4 << 20));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GrowthPolicy {
    grows: bool,
    /// `None`: one chunk.
    initial: Option<usize>,
    max: usize,
    chunk: usize,
}

impl Default for GrowthPolicy {
    fn default() -> Self {
        GrowthPolicy::fixed()
    }
}

impl GrowthPolicy {
    /// Never grow: the arena spans [`initial`](GrowthPolicy::initial) bytes.
    pub const fn fixed() -> GrowthPolicy {
        GrowthPolicy {
            grows: false,
            initial: None,
            max: DEFAULT_CHUNK,
            chunk: DEFAULT_CHUNK,
        }
    }

    /// Grow by whole [`DEFAULT_CHUNK`]s from one chunk up to `max` bytes.
    pub const fn up_to(max: usize) -> GrowthPolicy {
        GrowthPolicy {
            grows: true,
            max,
            ..GrowthPolicy::fixed()
        }
    }

    /// Grow in steps of `chunk` bytes, a multiple of the backend's granularity.
    pub const fn with_chunk(self, chunk: usize) -> GrowthPolicy {
        GrowthPolicy { chunk, ..self }
    }

    /// Start with `initial` bytes (a fixed arena's length), not one chunk.
    pub const fn with_initial(mut self, initial: usize) -> GrowthPolicy {
        self.initial = Some(initial);
        self
    }

    /// Whether the arena grows at all.
    pub const fn grows(&self) -> bool {
        self.grows
    }

    /// Bytes the arena spans when it is made.
    pub const fn initial(&self) -> usize {
        match self.initial {
            Some(initial) => initial,
            None => self.chunk,
        }
    }

    /// The most bytes the arena may span.
    pub const fn max(&self) -> usize {
        match self.grows {
            true => self.max,
            false => self.initial(),
        }
    }

    /// The step the arena grows by.
    pub const fn chunk(&self) -> usize {
        self.chunk
    }

    /// A growing policy of this one's chunk, from `initial` up to `max`.
    pub(crate) const fn settled(&self, initial: usize, max: usize) -> GrowthPolicy {
        GrowthPolicy::up_to(max)
            .with_chunk(self.chunk)
            .with_initial(initial)
    }

    /// The `(initial, max)` lengths over a backend of `granularity`, in chunks.
    pub(crate) fn resolve(&self, granularity: usize) -> Result<(usize, usize), GrowthError> {
        if !self.grows {
            return Ok((self.initial(), self.initial()));
        }
        let chunk = self.chunk;
        if chunk == 0 || granularity == 0 || chunk % granularity != 0 {
            return Err(GrowthError::ChunkNotMultiple { chunk, granularity });
        }
        let max = self.max / chunk * chunk;
        let initial = round_up(self.initial().max(1), chunk).unwrap_or(usize::MAX);
        if initial > max {
            return Err(GrowthError::InitialAboveMax {
                initial: self.initial(),
                max: self.max,
            });
        }
        Ok((initial, max))
    }

    /// The length an arena of `current` bytes grows to to span `needed`.
    pub(crate) fn grow_to(&self, current: usize, needed: usize) -> Result<usize, GrowthError> {
        if !self.grows {
            return Err(GrowthError::Fixed);
        }
        let max = self.max / self.chunk.max(1) * self.chunk.max(1);
        let target = round_up(needed, self.chunk.max(1))
            .filter(|&t| t <= max)
            .ok_or(GrowthError::AtMaximum { needed, max })?;
        Ok(target.max(current))
    }
}

/// Why an arena did not grow.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum GrowthError {
    /// The arena's policy never grows.
    Fixed,
    /// Growing would pass the policy's maximum.
    AtMaximum {
        /// Bytes the arena would have to span.
        needed: usize,
        /// The most it may span.
        max: usize,
    },
    /// The chunk is zero or not a multiple of the backend's granularity.
    ChunkNotMultiple {
        /// The chunk asked for.
        chunk: usize,
        /// The granularity it must be a multiple of.
        granularity: usize,
    },
    /// The initial length is above the maximum.
    InitialAboveMax {
        /// The initial length asked for.
        initial: usize,
        /// The maximum asked for.
        max: usize,
    },
}

impl fmt::Display for GrowthError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            GrowthError::Fixed => f.write_str("the arena is fixed and does not grow"),
            GrowthError::AtMaximum { needed, max } => write!(
                f,
                "the arena would have to span {needed} bytes, past its maximum of {max}"
            ),
            GrowthError::ChunkNotMultiple { chunk, granularity } => write!(
                f,
                "growth chunk {chunk} is not a nonzero multiple of the backend's \
                 granularity {granularity}"
            ),
            GrowthError::InitialAboveMax { initial, max } => write!(
                f,
                "initial arena length {initial} is above the maximum {max} (in whole chunks)"
            ),
        }
    }
}

#[cfg(feature = "std")]
impl std::error::Error for GrowthError {}

impl<B: Backend> Arena<B> {
    /// The arena's growth policy, as settled when it was made.
    pub fn growth(&self) -> GrowthPolicy {
        self.pool.offsets().growth
    }

    /// Bytes the arena spans now.
    pub fn capacity(&self) -> usize {
        self.allocator().capacity()
    }

    /// Gives back the end of a growing arena that no live array holds (and where the backend can,
    /// the free chunks inside): the bytes given back.
    ///
    /// # Errors
    ///
    /// [`ArenaError::Backend`]; the arena stays usable.
    pub fn trim(&mut self) -> ArenaResult<usize, B> {
        if !self.growth().grows() {
            return Ok(0);
        }
        self.drain_pending()?;
        let capacity = self.capacity();
        let Some((held, trimmed)) = self.pool.offsets_mut().trim(&mut self.backend)? else {
            return Ok(0);
        };
        self.regions_trimmed(held);
        trimmed.map_err(ArenaError::Backend)?;
        Ok(capacity - held)
    }

    /// Bytes of memory the arena holds: its [`capacity`](Arena::capacity) less chunks given back.
    pub fn committed(&self) -> usize {
        let released = self.pool.offsets().released_bytes();
        self.capacity().saturating_sub(released)
    }
}

/// The policy's arithmetic at the edges (`tests/growth/arena.rs` checks its rounding).
#[cfg(test)]
mod tests {
    use super::GrowthPolicy;

    #[test]
    fn growth_arithmetic_at_the_edges_never_panics() {
        // SplitMix64, seeded: the same lengths on every run.
        let mut state = 0x6e0_7a1e_u64;
        let mut next = move || {
            state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^ (z >> 31)
        };
        let mut extreme = move || {
            let (which, any) = (next() % 8, next() as usize);
            match which {
                0 => 0,
                1 => usize::MAX,
                2 => usize::MAX - any % 300,
                3 => 1 << (any % 64),
                4 => (1 << (any % 64)) + 1,
                5 => any,
                _ => any % 5000,
            }
        };
        let rounds = if cfg!(miri) { 50 } else { 5000 };
        for _ in 0..rounds {
            let (max, chunk, initial) = (extreme(), extreme(), extreme());
            let (up_to, fixed) = (GrowthPolicy::up_to(max), GrowthPolicy::fixed());
            let (up_to, fixed) = (up_to.with_chunk(chunk), fixed.with_chunk(chunk));
            let (started, fixed) = (up_to.with_initial(initial), fixed.with_initial(initial));
            for policy in [up_to, started, fixed] {
                if let Ok((start, most)) = policy.resolve(extreme()) {
                    assert!(start <= most || !policy.grows(), "{policy:?}");
                }
                let (current, needed) = (extreme(), extreme());
                if let Ok(target) = policy.grow_to(current, needed) {
                    assert!(target >= needed && target >= current, "{policy:?}");
                    assert!(target == current || target <= policy.max(), "{policy:?}");
                }
            }
        }
    }
}
