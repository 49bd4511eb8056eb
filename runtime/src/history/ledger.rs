//! The ledger: each event of a [`History`] replayed over a map of the blocks, the free holes a
//! multiset of lengths (so the largest is at hand), with running sums: a few map operations an
//! event. The holes are counted on their own, so the parts summing up checks the replay.

use alloc_crate::collections::BTreeMap;
use alloc_crate::vec::Vec;

use super::{Event, History, Kind};

/// Where an arena's reserved bytes are after one event: the parts (every
/// field but `reserved` and `largest_free`) sum to `reserved`. A dropped
/// array counts as live until the arena takes it back (when it next
/// allocates, a few at a time, or when it needs the bytes).
///
/// ```
/// use gpu_aligned::arena::Arena;
/// use gpu_aligned::vector::float3_16_t;
///
/// let mut arena = Arena::host(1 << 20)?;
/// arena.record_history(100)?;
/// let points = arena.alloc::<float3_16_t>(10)?; // 160 bytes, 40 of them pads
/// let after = *arena.history().unwrap().ledger().last().unwrap();
/// assert_eq!((after.payload, after.element_padding, after.rounding), (120, 40, 96));
/// assert_eq!(after.sum(), after.reserved);
/// # drop(points);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Ledger {
    /// A growing arena's whole address range, a fixed arena's buffer.
    pub reserved: u64,
    /// Live arrays' element bytes, but for their pad bytes.
    pub payload: u64,
    /// Pad bytes in live arrays' elements: the type's padding times the length.
    pub element_padding: u64,
    /// Free bytes before each block aligned past the arena's minimum
    /// alignment, up to that alignment less the minimum: what its start skipped.
    pub alignment_gap: u64,
    /// Live arrays' bytes past their elements: rounding to the arena's
    /// alignment, a pitched array's row ends.
    pub rounding: u64,
    /// Live arrays' red zones (see `crate::sanitizer`).
    pub red_zones: u64,
    /// Free bytes with memory: holes between blocks, a fixed arena's free end.
    pub free: u64,
    /// The largest array that fits without growing, at the arena's
    /// alignment (in `free` or `mapped_unused`, not a part).
    pub largest_free: u64,
    /// Blocks of arrays taken back but not free: kept for the next array
    /// of their size (an array a captured graph holds counts as live).
    pub pending: u64,
    /// A growing arena's free end with memory: what `trim` gives back.
    pub mapped_unused: u64,
    /// Reserved bytes with no memory: past the span, and runs given back
    /// inside it (counted out of the holes first, then the free end).
    pub unmapped: u64,
}

impl Ledger {
    /// The sum of the parts: `reserved`, when the history is consistent.
    ///
    /// ```
    /// # let mut arena = gpu_aligned::arena::Arena::host(4096)?;
    /// arena.record_history(10)?;
    /// let a = arena.alloc::<u8>(10)?;
    /// assert!(arena.history().unwrap().ledger().iter().all(|l| l.sum() == 4096));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn sum(&self) -> u64 {
        let parts = self.parts().into_iter();
        parts.fold(0u64, |sum, (_, part)| sum.saturating_add(part))
    }

    /// The parts by name, in the order the exports stack them.
    pub(crate) fn parts(&self) -> [(&'static str, u64); 9] {
        [
            ("payload", self.payload),
            ("element padding", self.element_padding),
            ("rounding", self.rounding),
            ("red zones", self.red_zones),
            ("pending", self.pending),
            ("alignment gap", self.alignment_gap),
            ("free", self.free),
            ("mapped unused", self.mapped_unused),
            ("unmapped", self.unmapped),
        ]
    }
}

impl History {
    /// The ledger after each event.
    ///
    /// ```
    /// # let mut arena = gpu_aligned::arena::Arena::host(4096)?;
    /// arena.record_history(10)?;
    /// let a = arena.alloc::<u32>(3)?;
    /// let ledger = arena.history().unwrap().ledger();
    /// assert_eq!((ledger.len(), ledger[0].payload, ledger[0].free), (1, 12, 4096 - 256));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn ledger(&self) -> Vec<Ledger> {
        let mut replay = Replay::new(self);
        let mut ledger = Vec::with_capacity(self.events.len());
        while replay.step().is_some() {
            ledger.push(replay.ledger());
        }
        ledger
    }
}

/// One block of the replay; `since` is the index of the event that
/// allocated it plus one (0 for a block from before the first event).
#[derive(Clone, Copy, Debug, Default)]
#[cfg_attr(not(feature = "std"), allow(dead_code))] // the exports read all
pub(crate) struct Block {
    pub(crate) size: u64,
    pub(crate) elements: u64,
    pub(crate) ty: u16,
    pub(crate) label: u16,
    pub(crate) red_zone: u32,
    pub(crate) align_log2: u8,
    pub(crate) pending: bool,
    pub(crate) since: u64,
}

/// The history replayed an event at a time. See the [module docs](self).
#[derive(Default)]
pub(crate) struct Replay<'a> {
    pub(crate) history: Option<&'a History>,
    pub(crate) blocks: BTreeMap<u64, Block>,
    /// Hole length to how many holes have it (the free end included).
    holes: BTreeMap<u64, u32>,
    /// The sums: free bytes, live arrays' bytes, payload, element padding,
    /// red zones, pending bytes and alignment gaps.
    free: u64,
    live: [u64; 4],
    pending: u64,
    gaps: u64,
    pub(crate) capacity: u64,
    released: u64,
    pub(crate) next: usize,
    /// Whether a block aligned past the minimum was seen (else no hole
    /// makes a gap, and none is looked for).
    aligned: bool,
}

impl<'a> Replay<'a> {
    pub(crate) fn new(history: &'a History) -> Replay<'a> {
        let (capacity, released) = history.span;
        let history = Some(history);
        let mut replay = Replay {
            history,
            capacity,
            released,
            ..Replay::default()
        };
        replay.hole(0, capacity, true);
        for &(offset, size, pending) in &replay.history().start {
            let elements = size;
            replay.insert(
                offset,
                Block {
                    size,
                    elements,
                    pending,
                    ..Block::default()
                },
            );
        }
        replay
    }

    fn history(&self) -> &'a History {
        self.history
            .unwrap_or_else(|| unreachable!("made by `new`"))
    }

    /// Applies the next event; returns it with the block it touched as it
    /// was before (`None` at the end).
    pub(crate) fn step(&mut self) -> Option<(&'a Event, Option<Block>)> {
        let event = self.history().events.get(self.next)?;
        self.next += 1;
        let touched = self.blocks.get(&event.offset).copied();
        match (event.kind, touched) {
            (Kind::Alloc, _) => {
                let (size, elements, ty, red_zone) =
                    (event.size, event.elements, event.ty, event.red_zone);
                let (align_log2, since) = (event.align_log2, self.next as u64);
                let block = Block {
                    size,
                    elements,
                    ty,
                    red_zone,
                    align_log2,
                    since,
                    ..Block::default()
                };
                match touched.filter(|old| old.size == size && old.align_log2 == align_log2) {
                    // A kept block reused: the holes stay as they are.
                    Some(old) => self.replace(event.offset, old, block),
                    None => {
                        if let Some(old) = touched {
                            self.unplace(event.offset, old);
                        }
                        self.insert(event.offset, block);
                    }
                }
            }
            (Kind::FreeRequested, Some(block)) if !block.pending => {
                let pending = Block {
                    pending: true,
                    ..block
                };
                self.replace(event.offset, block, pending);
            }
            (Kind::Freed, Some(block)) => self.unplace(event.offset, block),
            (Kind::Label, Some(block)) => {
                let label = event.label;
                self.blocks.insert(event.offset, Block { label, ..block });
            }
            (Kind::Reset, _) => {
                let offsets: Vec<u64> = self.blocks.keys().copied().collect();
                for offset in offsets {
                    self.remove(offset);
                }
            }
            _ => {}
        }
        if event.capacity != self.capacity {
            let end = self.blocks.last_key_value().map_or(0, |(o, b)| o + b.size);
            self.hole(end, self.capacity, false);
            self.capacity = event.capacity;
            self.hole(end, self.capacity, true);
        }
        self.released = event.released;
        Some((event, touched))
    }

    /// The ledger now.
    pub(crate) fn ledger(&self) -> Ledger {
        let frame = &self.history().frame;
        let end = self.blocks.last_key_value().map_or(0, |(o, b)| o + b.size);
        let tail = self.capacity.saturating_sub(end);
        let in_holes = self.free.saturating_sub(tail).saturating_sub(self.gaps);
        let released_in_holes = self.released.min(in_holes);
        let released_in_tail = (self.released - released_in_holes).min(tail);
        let (free, mapped_unused) = match frame.grows {
            true => (in_holes - released_in_holes, tail - released_in_tail),
            false => (in_holes - released_in_holes + tail - released_in_tail, 0),
        };
        let [live, payload, padding, red] = self.live;
        Ledger {
            reserved: frame.reserved,
            payload,
            element_padding: padding,
            alignment_gap: self.gaps,
            rounding: live - payload - padding - red,
            red_zones: red,
            free,
            largest_free: self.holes.last_key_value().map_or(0, |(len, _)| *len),
            pending: self.pending,
            mapped_unused,
            unmapped: frame.reserved.saturating_sub(self.capacity)
                + released_in_holes
                + released_in_tail,
        }
    }

    /// The free bytes from the end of the block before `offset` (or 0) to
    /// the start of the block after it (or the span's end).
    fn around(&self, offset: u64) -> (u64, u64) {
        let before = self.blocks.range(..offset).next_back();
        let after = self.blocks.range(offset + 1..).next();
        let start = before.map_or(0, |(o, b)| o + b.size);
        (start, after.map_or(self.capacity, |(o, _)| *o))
    }

    /// `old` at `offset` becomes `new`, of the same size and alignment.
    fn replace(&mut self, offset: u64, old: Block, new: Block) {
        self.count(&old, false);
        self.count(&new, true);
        self.blocks.insert(offset, new);
    }

    fn insert(&mut self, offset: u64, block: Block) {
        self.aligned |= 1u64 << block.align_log2 > self.history().frame.min_align;
        let (start, end) = self.around(offset);
        self.hole(start, end, false);
        self.count(&block, true);
        self.blocks.insert(offset, block);
        self.hole(start, offset, true);
        self.hole(offset + block.size, end, true);
    }

    fn remove(&mut self, offset: u64) -> Option<Block> {
        let block = *self.blocks.get(&offset)?;
        self.unplace(offset, block);
        Some(block)
    }

    /// [`remove`](Self::remove) of `block`, known to be at `offset`.
    fn unplace(&mut self, offset: u64, block: Block) {
        let (start, end) = self.around(offset);
        self.hole(start, offset, false);
        self.hole(offset + block.size, end, false);
        self.blocks.remove(&offset);
        self.count(&block, false);
        self.hole(start, end, true);
    }

    /// Adds `block` to the sums (or takes it away).
    fn count(&mut self, block: &Block, add: bool) {
        let ty = self.history().types[usize::from(block.ty)];
        let elements = block.elements.saturating_mul(ty.1).min(block.size);
        let padding = block.elements.saturating_mul(ty.2).min(elements);
        let live = [
            block.size,
            elements - padding,
            padding,
            u64::from(block.red_zone),
        ];
        let (sums, bytes) = match block.pending {
            true => (core::slice::from_mut(&mut self.pending), &live[..1]),
            false => (&mut self.live[..], &live[..]),
        };
        for (sum, bytes) in sums.iter_mut().zip(bytes) {
            *sum = if add {
                *sum + bytes
            } else {
                sum.saturating_sub(*bytes)
            };
        }
    }

    /// Adds the hole `start .. end` (or takes it away), with the alignment
    /// gap it makes before the block at `end`. Saturating: a history that
    /// is not consistent makes a ledger that does not sum, never a panic.
    fn hole(&mut self, start: u64, end: u64, add: bool) {
        let len = end.saturating_sub(start);
        let align = self
            .blocks
            .get(&end)
            .map_or(0, |block| 1u64 << block.align_log2);
        let gap = len.min(align.saturating_sub(self.history().frame.min_align));
        let count = self.holes.entry(len).or_insert(0);
        *count = if add {
            *count + 1
        } else {
            count.saturating_sub(1)
        };
        if *count == 0 || len == 0 {
            self.holes.remove(&len);
        }
        (self.free, self.gaps) = match add {
            true => (self.free + len, self.gaps + gap),
            false => (self.free.saturating_sub(len), self.gaps.saturating_sub(gap)),
        };
    }
}

/// The blocks before the first of `events`, from the arena's blocks when
/// they were copied (`now`) and the first event that touched each offset:
/// a block first given back was live (or, once the ring `wrapped`, pending
/// if first freed), one first allocated was free, one no event touched is
/// as it is now (unless an event reset the arena).
pub(crate) fn start_state(
    events: &[Event],
    now: impl Iterator<Item = (u64, u64, bool)>,
    wrapped: bool,
) -> Vec<(u64, u64, bool)> {
    let reset = events.iter().position(|event| event.kind == Kind::Reset);
    let mut first = BTreeMap::new();
    for event in &events[..reset.unwrap_or(events.len())] {
        if let Kind::Alloc | Kind::FreeRequested | Kind::Freed | Kind::Label = event.kind {
            first
                .entry(event.offset)
                .or_insert((event.kind, event.size));
        }
    }
    let untouched = now.filter(|(offset, ..)| reset.is_none() && !first.contains_key(offset));
    let mut start: Vec<(u64, u64, bool)> = untouched.collect();
    for (offset, (kind, size)) in first {
        match kind {
            Kind::FreeRequested | Kind::Label => start.push((offset, size, false)),
            Kind::Freed => start.push((offset, size, wrapped)),
            _ => {}
        }
    }
    start.sort_unstable();
    start
}
