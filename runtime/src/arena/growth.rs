//! How an arena grows when an allocation does not fit: never (a fixed
//! buffer, the default), or by whole chunks up to a maximum. Growth maps or
//! commits more memory at the end of a range reserved up front, so the base
//! address never moves and every offset and pointer already handed out stays
//! valid.

use core::fmt;

/// The default chunk: 2 MiB, the allocation granularity of CUDA virtual
/// memory on current NVIDIA GPUs, and a multiple of every host page size in
/// common use (4 KiB, 16 KiB, 64 KiB, 2 MiB).
pub const DEFAULT_CHUNK: u64 = 2 << 20;

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
/// // A block that needs the arena to span 9 MiB grows it to 12 MiB:
/// assert_eq!(policy.grow_to(8 << 20, 9 << 20)?, 12 << 20);
/// # Ok::<(), gpu_aligned::arena::GrowthError>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GrowthPolicy {
    grows: bool,
    initial: u64,
    max: u64,
    chunk: u64,
}

impl Default for GrowthPolicy {
    fn default() -> Self {
        GrowthPolicy::fixed()
    }
}

impl GrowthPolicy {
    /// Never grow: a full arena returns out-of-memory, as a fixed buffer
    /// does. The arena spans [`initial`](GrowthPolicy::initial) bytes
    /// ([`DEFAULT_CHUNK`] unless set with
    /// [`with_initial`](GrowthPolicy::with_initial)).
    ///
    /// ```
    /// use gpu_aligned::arena::{GrowthError, GrowthPolicy};
    /// let fixed = GrowthPolicy::fixed();
    /// assert_eq!(fixed.grow_to(1 << 20, 2 << 20), Err(GrowthError::Fixed));
    /// ```
    pub const fn fixed() -> GrowthPolicy {
        GrowthPolicy {
            grows: false,
            initial: DEFAULT_CHUNK,
            max: DEFAULT_CHUNK,
            chunk: DEFAULT_CHUNK,
        }
    }

    /// Grow by whole [`DEFAULT_CHUNK`]s, starting from one chunk, until the
    /// arena spans `max` bytes (rounded down to whole chunks when the arena
    /// is made; the range reserved up front is `max` bytes long).
    ///
    /// ```
    /// use gpu_aligned::arena::GrowthPolicy;
    /// let policy = GrowthPolicy::up_to(64 << 30);
    /// assert!(policy.grows());
    /// assert_eq!(policy.initial(), policy.chunk());
    /// ```
    pub const fn up_to(max: u64) -> GrowthPolicy {
        GrowthPolicy {
            grows: true,
            initial: DEFAULT_CHUNK,
            max,
            chunk: DEFAULT_CHUNK,
        }
    }

    /// Grow in steps of `chunk` bytes (a multiple of the backend's
    /// granularity: the host page size, or the device's allocation
    /// granularity; checked when the arena is made).
    ///
    /// ```
    /// use gpu_aligned::arena::GrowthPolicy;
    /// assert_eq!(GrowthPolicy::up_to(1 << 30).with_chunk(8 << 20).chunk(), 8 << 20);
    /// ```
    pub const fn with_chunk(self, chunk: u64) -> GrowthPolicy {
        GrowthPolicy { chunk, ..self }
    }

    /// Start with `initial` bytes (rounded up to whole chunks when the
    /// arena is made) rather than one chunk; for a [fixed](GrowthPolicy::fixed)
    /// policy, the arena's length.
    ///
    /// ```
    /// use gpu_aligned::arena::GrowthPolicy;
    /// assert_eq!(GrowthPolicy::up_to(1 << 30).with_initial(8 << 20).initial(), 8 << 20);
    /// ```
    pub const fn with_initial(self, initial: u64) -> GrowthPolicy {
        GrowthPolicy { initial, ..self }
    }

    /// Whether the arena grows at all.
    ///
    /// ```
    /// assert!(!gpu_aligned::arena::GrowthPolicy::default().grows());
    /// ```
    pub const fn grows(&self) -> bool {
        self.grows
    }

    /// Bytes the arena spans when it is made.
    ///
    /// ```
    /// use gpu_aligned::arena::{GrowthPolicy, DEFAULT_CHUNK};
    /// assert_eq!(GrowthPolicy::up_to(1 << 30).initial(), DEFAULT_CHUNK);
    /// ```
    pub const fn initial(&self) -> u64 {
        self.initial
    }

    /// The most bytes the arena may span.
    ///
    /// ```
    /// assert_eq!(gpu_aligned::arena::GrowthPolicy::up_to(1 << 30).max(), 1 << 30);
    /// ```
    pub const fn max(&self) -> u64 {
        self.max
    }

    /// The step the arena grows by.
    ///
    /// ```
    /// use gpu_aligned::arena::{GrowthPolicy, DEFAULT_CHUNK};
    /// assert_eq!(GrowthPolicy::up_to(1 << 30).chunk(), DEFAULT_CHUNK);
    /// ```
    pub const fn chunk(&self) -> u64 {
        self.chunk
    }

    /// Checks the policy against a backend whose memory comes in multiples
    /// of `granularity` bytes, and returns the `(initial, max)` lengths it
    /// settles on: the initial length rounded up to whole chunks (one chunk
    /// at least), the maximum rounded down to whole chunks. A fixed policy
    /// settles on its initial length for both, as it is.
    ///
    /// ```
    /// use gpu_aligned::arena::{GrowthError, GrowthPolicy};
    /// let policy = GrowthPolicy::up_to((1 << 30) + 5).with_initial(1);
    /// assert_eq!(policy.resolve(4096)?, (2 << 20, 1 << 30));
    /// assert_eq!(
    ///     policy.with_chunk(3000).resolve(4096),
    ///     Err(GrowthError::ChunkNotMultiple { chunk: 3000, granularity: 4096 })
    /// );
    /// assert_eq!(GrowthPolicy::fixed().with_initial(1000).resolve(4096)?, (1000, 1000));
    /// # Ok::<(), GrowthError>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`GrowthError::ChunkNotMultiple`] for a zero chunk or one that is not
    /// a multiple of `granularity`; [`GrowthError::InitialAboveMax`] when
    /// the rounded initial length exceeds the rounded maximum.
    pub fn resolve(&self, granularity: u64) -> Result<(u64, u64), GrowthError> {
        if !self.grows {
            return Ok((self.initial, self.initial));
        }
        let chunk = self.chunk;
        if chunk == 0 || granularity == 0 || chunk % granularity != 0 {
            return Err(GrowthError::ChunkNotMultiple { chunk, granularity });
        }
        let max = self.max / chunk * chunk;
        let initial = round_up(self.initial.max(1), chunk).unwrap_or(u64::MAX);
        if initial > max {
            return Err(GrowthError::InitialAboveMax {
                initial: self.initial,
                max: self.max,
            });
        }
        Ok((initial, max))
    }

    /// The length an arena spanning `current` bytes grows to so that it
    /// spans at least `needed` bytes: `needed` rounded up to whole chunks.
    ///
    /// ```
    /// use gpu_aligned::arena::{GrowthError, GrowthPolicy};
    /// let policy = GrowthPolicy::up_to(16 << 20);
    /// assert_eq!(policy.grow_to(2 << 20, (2 << 20) + 1)?, 4 << 20);
    /// assert_eq!(
    ///     policy.grow_to(16 << 20, 17 << 20),
    ///     Err(GrowthError::AtMaximum { needed: 17 << 20, max: 16 << 20 })
    /// );
    /// # Ok::<(), GrowthError>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`GrowthError::Fixed`] for a policy that never grows;
    /// [`GrowthError::AtMaximum`] when `needed` exceeds the maximum.
    pub fn grow_to(&self, current: u64, needed: u64) -> Result<u64, GrowthError> {
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
        needed: u64,
        /// The most it may span.
        max: u64,
    },
    /// The chunk is zero or not a multiple of the backend's granularity.
    ChunkNotMultiple {
        /// The chunk asked for.
        chunk: u64,
        /// The granularity it must be a multiple of.
        granularity: u64,
    },
    /// The initial length is above the maximum.
    InitialAboveMax {
        /// The initial length asked for.
        initial: u64,
        /// The maximum asked for.
        max: u64,
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
                "initial arena length {initial} is above the maximum {max} \
                 (in whole chunks)"
            ),
        }
    }
}

#[cfg(feature = "std")]
impl std::error::Error for GrowthError {}

/// `n` rounded up to a multiple of `to` (nonzero), if it fits.
fn round_up(n: u64, to: u64) -> Option<u64> {
    n.checked_add(to - 1).map(|n| n / to * to)
}
