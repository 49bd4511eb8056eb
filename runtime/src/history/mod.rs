//! What an arena did with its bytes ([`Arena::record_history`](crate::arena::Arena::record_history)):
//! arrays allocated, given back and taken back, growth, trims, resets and memory given back, each
//! an event of at most 64 bytes in a bounded ring that allocates nothing per event. A [`History`]
//! is a copy of the ring; from it come the [`Ledger`] (where every reserved byte is after each
//! event) and, with `std`, exports for PyTorch's memory viewer, Perfetto and a page of inline SVG.
//! Off, the arena's fast paths pay nothing (`docs/HISTORY.md`).

mod ledger;

#[cfg(feature = "std")]
mod export;

pub use ledger::Ledger;
#[cfg(feature = "std")]
use ledger::Replay;

use alloc_crate::boxed::Box;
use alloc_crate::vec::Vec;

use crate::align::offset_of;
use crate::alloc::{Allocation, Allocator};
use crate::sanitizer::{ArrayInfo, RegionShape};

/// What an event records.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(u8)]
pub(crate) enum Kind {
    /// An array's block was reserved (from the allocator or a kept block).
    #[default]
    Alloc,
    /// The arena took back a dropped array: its block is pending.
    FreeRequested,
    /// The block went back to the allocator (an array freed by hand at once).
    Freed,
    /// The span grew or shrank.
    Grow,
    Trim,
    /// `size` bytes of memory from `offset` were given back, the span kept.
    Release,
    /// Every array was freed at once.
    Reset,
    /// The array at `offset` was labelled `label`.
    Label,
}

/// One event, copied into the ring: at most 64 bytes.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Event {
    /// Clock ticks (see `ticks`); in a `History`, nanoseconds since recording began.
    pub(crate) time: u64,
    pub(crate) offset: u64,
    /// The block's bytes (red zone included; in a `History`, rounded to whole granules).
    pub(crate) size: u64,
    /// The elements an allocated array holds (rows times width if pitched).
    pub(crate) elements: u64,
    /// The arena's span and the bytes of it given back, after the event.
    pub(crate) capacity: u64,
    pub(crate) released: u64,
    pub(crate) red_zone: u32,
    pub(crate) kind: Kind,
    pub(crate) align_log2: u8,
    /// The thread that allocated (0 for the first to, then 1, ...).
    pub(crate) thread: u16,
    /// The element type and the label plus one (0: none), indices into the
    /// recorder's tables.
    pub(crate) ty: u16,
    pub(crate) label: u16,
}

const _: () = assert!(core::mem::size_of::<Event>() <= 64);

impl Event {
    /// Writes the fields of every event and those of this one's kind into `slot` (a ring's slot
    /// keeps an older event's other fields until `snapshot` clears them).
    #[inline(always)]
    fn write_to(self, slot: &mut Event) {
        (slot.time, slot.offset, slot.size, slot.kind) =
            (self.time, self.offset, self.size, self.kind);
        (slot.capacity, slot.released) = (self.capacity, self.released);
        match self.kind {
            Kind::Alloc => {
                (slot.elements, slot.red_zone) = (self.elements, self.red_zone);
                (slot.align_log2, slot.thread, slot.ty) = (self.align_log2, self.thread, self.ty);
            }
            Kind::Label => slot.label = self.label,
            _ => {}
        }
    }

    /// An event of `kind` (the recorder fills in the rest).
    #[inline(always)]
    pub(crate) fn new(kind: Kind) -> Event {
        Event {
            kind,
            ..Event::default()
        }
    }
}

/// An element type: its name, size and pad bytes in one element.
#[derive(Clone, Copy, Debug)]
pub(crate) struct TypeInfo(pub(crate) &'static str, pub(crate) u64, pub(crate) u64);

/// What the arena is: what it reserved, its minimum alignment, whether it
/// grows, and where its buffer starts.
#[derive(Clone, Copy, Debug)]
#[cfg_attr(not(feature = "std"), allow(dead_code))] // the exports read all
pub(crate) struct Frame {
    pub(crate) reserved: u64,
    pub(crate) min_align: u64,
    pub(crate) grows: bool,
    pub(crate) base: u64,
}

/// The ring an arena records into. See the [module docs](self).
#[derive(Debug)]
pub(crate) struct Recorder {
    /// Made whole at the start, so that an event is one write in place.
    ring: Vec<Event>,
    /// Where the next event goes (the ring's length once full: the next wraps).
    next: usize,
    /// How many times the ring wrapped.
    laps: u64,
    /// The element types (the first for blocks of no known type, counted as
    /// payload) and the labels.
    types: Vec<TypeInfo>,
    /// The last element type seen, and its index.
    last_type: (&'static str, u16),
    labels: Vec<Box<str>>,
    frame: Frame,
    /// The clock when recording began: ticks, and the system clock.
    start: u64,
    #[cfg(feature = "std")]
    started: std::time::Instant,
}

/// The most distinct labels a history keeps.
const LABELS: usize = 4096;

impl Recorder {
    /// A ring of `events` (at least one) for an arena framed so.
    pub(crate) fn new(events: usize, frame: Frame) -> Recorder {
        Recorder {
            ring: alloc_crate::vec![Event::default(); events.max(1)],
            next: 0,
            laps: 0,
            types: alloc_crate::vec![TypeInfo("?", 1, 0)],
            last_type: ("?", 0),
            labels: Vec::new(),
            frame,
            start: ticks(),
            #[cfg(feature = "std")]
            started: std::time::Instant::now(),
        }
    }

    /// Appends `event` for `block` with the allocator's span and the bytes
    /// of it given back after it, over the oldest once the ring is full.
    #[inline(always)]
    pub(crate) fn push(
        &mut self,
        mut event: Event,
        block: Option<&Allocation>,
        allocator: &Allocator,
        released: usize,
    ) {
        let slot = match self.ring.get_mut(self.next) {
            Some(slot) => slot,
            None => self.wrap(),
        };
        event.time = ticks();
        // The clock read is a barrier to the compiler: what is read after it is not kept across it.
        if let Some(block) = block {
            (event.offset, event.size) = (block.offset(), offset_of(block.size()));
        }
        (event.capacity, event.released) = (offset_of(allocator.capacity()), offset_of(released));
        event.write_to(slot);
        self.next += 1;
    }

    /// The first slot, once the ring is full.
    #[cold]
    fn wrap(&mut self) -> &mut Event {
        (self.next, self.laps) = (0, self.laps + 1);
        &mut self.ring[0]
    }

    /// Events recorded in all, kept or not.
    fn total(&self) -> u64 {
        self.laps * self.ring.len() as u64 + self.next as u64
    }

    /// The event of an array of `array` at `align` with a red zone.
    #[inline(always)]
    pub(crate) fn alloc(&mut self, array: &ArrayInfo, align: usize, red_zone: usize) -> Event {
        let elements = match array.shape {
            RegionShape::Array { len } => len,
            RegionShape::Rows { width, height, .. } => width.saturating_mul(height),
        };
        let mut event = Event::new(Kind::Alloc);
        event.thread = thread_slot();
        event.elements = offset_of(elements);
        event.red_zone = u32::try_from(red_zone).unwrap_or(u32::MAX);
        event.align_log2 = align.trailing_zeros() as u8;
        // Arrays of one type come in runs: the last type is one compare away.
        if !core::ptr::eq(self.last_type.0, array.element) {
            self.last_type = (array.element, self.intern(array));
        }
        event.ty = self.last_type.1;
        event
    }

    /// The index of `array`'s element type, added at first sight.
    #[cold]
    fn intern(&mut self, array: &ArrayInfo) -> u16 {
        let found = self.types.iter().position(|ty| ty.0 == array.element);
        let new = TypeInfo(
            array.element,
            offset_of(array.element_size),
            offset_of(array.padding),
        );
        let index = found.unwrap_or_else(|| (self.types.push(new), self.types.len() - 1).1);
        index.try_into().unwrap_or(0)
    }

    /// The event of an array labelled `label`: one of the first
    /// [`LABELS`] distinct labels, else none (the table stays bounded).
    pub(crate) fn label(&mut self, label: &str) -> Event {
        let found = self.labels.iter().position(|kept| &**kept == label);
        let index = found.or_else(|| {
            (self.labels.len() < LABELS)
                .then(|| (self.labels.push(label.into()), self.labels.len() - 1).1)
        });
        let mut event = Event::new(Kind::Label);
        event.label = index.map_or(0, |index| u16::try_from(index + 1).unwrap_or(0));
        event
    }

    /// A copy of the ring, oldest first, with the arena's blocks now: the
    /// allocator's, those at the offsets `pending` not live; `released` as
    /// for `push`.
    pub(crate) fn snapshot(
        &self,
        allocator: &Allocator,
        released: usize,
        mut pending: Vec<u64>,
    ) -> History {
        let (newer, older) = self.ring.split_at(self.next);
        let kept = (self.total() as usize).min(self.ring.len());
        let older = &older[older.len() - (kept - newer.len().min(kept))..];
        let mut events: Vec<Event> = older
            .iter()
            .chain(&newer[..newer.len().min(kept)])
            .copied()
            .collect();
        // Ticks to nanoseconds since recording began.
        #[cfg(feature = "std")]
        let scale = self.started.elapsed().as_nanos() as f64 / (ticks() - self.start).max(1) as f64;
        #[cfg(not(feature = "std"))]
        let scale = 0.0;
        // A block's bytes to the whole granules (a power of two) it holds.
        let granule = offset_of(allocator.granularity()).max(1);
        let whole = |bytes: u64| bytes.saturating_add(granule - 1) & !(granule - 1);
        for event in &mut events {
            core::mem::take(event).write_to(event); // only its kind's fields
            event.time = (event.time.saturating_sub(self.start) as f64 * scale) as u64;
            if event.kind != Kind::Release {
                event.size = whole(event.size);
            }
        }
        let wrapped = self.total() > events.len() as u64;
        pending.sort_unstable();
        let blocks = allocator.live().map(|(at, bytes)| {
            let held = pending.binary_search(&at).is_ok();
            (at, whole(offset_of(bytes)), held)
        });
        let start = ledger::start_state(&events, blocks, wrapped);
        let now = (offset_of(allocator.capacity()), offset_of(released));
        History {
            span: events
                .first()
                .map_or(now, |first| (first.capacity, first.released)),
            events,
            types: self.types.clone(),
            labels: self.labels.clone(),
            frame: self.frame,
            start,
            lost: self.total().saturating_sub(self.ring.len() as u64),
        }
    }
}

/// A copy of an arena's history: the last events of its ring, oldest
/// first, and what the arena held before the first. Made by
/// [`Arena::history`](crate::arena::Arena::history); see the [module
/// docs](self).
#[derive(Clone, Debug)]
#[cfg_attr(not(feature = "std"), allow(dead_code))] // the exports read all
pub struct History {
    pub(crate) events: Vec<Event>,
    pub(crate) types: Vec<TypeInfo>,
    pub(crate) labels: Vec<Box<str>>,
    pub(crate) frame: Frame,
    /// The blocks before the first event, `(offset, bytes, pending)`, and
    /// the span and bytes of it given back after it.
    pub(crate) start: Vec<(u64, u64, bool)>,
    pub(crate) span: (u64, u64),
    lost: u64,
}

impl History {
    /// How many older events the ring dropped to make room. Then the blocks
    /// before the first event are inferred from the events kept and the
    /// arena's blocks when the copy was taken (a block first seen reused
    /// from a dropped array counts as free before).
    ///
    /// ```
    /// # let mut arena = gpu_aligned::arena::Arena::host(4096)?;
    /// arena.record_history(2)?;
    /// for _ in 0..3 {
    ///     let a = arena.alloc::<u8>(1)?;
    ///     arena.free(a)?; // allocated, freed
    /// }
    /// assert_eq!(arena.history().unwrap().lost(), 4);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn lost(&self) -> u64 {
        self.lost
    }
}

/// A clock for events: the time-stamp counter on x86-64 (one instruction;
/// a `History` turns ticks into nanoseconds with two readings of the
/// system clock), else the system clock's nanoseconds (without `std`, 0).
#[inline]
fn ticks() -> u64 {
    #[cfg(all(target_arch = "x86_64", not(miri)))]
    // SAFETY: `rdtsc` exists on every x86-64 processor and touches no memory.
    return unsafe { core::arch::x86_64::_rdtsc() };
    #[cfg(all(any(not(target_arch = "x86_64"), miri), feature = "std"))]
    return EPOCH
        .get_or_init(std::time::Instant::now)
        .elapsed()
        .as_nanos() as u64;
    #[cfg(all(any(not(target_arch = "x86_64"), miri), not(feature = "std")))]
    0
}

#[cfg(all(any(not(target_arch = "x86_64"), miri), feature = "std"))]
static EPOCH: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();

/// The calling thread's number (without `std`, 0).
#[inline(always)]
fn thread_slot() -> u16 {
    #[cfg(feature = "std")]
    std::thread_local! {
        static SLOT: core::cell::Cell<u16> = const { core::cell::Cell::new(u16::MAX) };
    }
    #[cfg(feature = "std")]
    return SLOT.with(|slot| {
        use core::sync::atomic::{AtomicU16, Ordering};
        static NEXT: AtomicU16 = AtomicU16::new(0);
        if slot.get() == u16::MAX {
            slot.set(NEXT.fetch_add(1, Ordering::Relaxed));
        }
        slot.get()
    });
    #[cfg(not(feature = "std"))]
    0
}
