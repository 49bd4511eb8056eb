//! Stream ordering by last use: each array remembers the stream and the epoch of its last write and
//! of its last reads ([`LastUses`]), and a use on the stream of the last use needs nothing, since
//! stream order already puts it after. Only a use on another stream waits, once per producer
//! stream, on one event that stream recorded at or after the epoch needed, recorded only when some
//! other stream needs it and shared by every array that stream used before it (the arena's
//! [`Streams`]).
//!
//! Epochs: a stream's epoch moves on only when an event is recorded on it. A use reads the epoch
//! when it ends (the view dropped, after the launch that borrowed it was queued; the copy queued),
//! and a record first moves the epoch from `e` to `e + 1`, then records: so the event follows every
//! use that read `e` or less, and a use on the stream of its last use costs loads and one
//! compare-exchange, no read-modify-write of a shared count. A read slot also counts the reads on
//! its stream still in flight; a slot with reads in flight (begun, not ended: a view alive, or one
//! passed to `mem::forget`) is never given to another stream, and a use that waits for it waits for
//! an event recorded now, which follows whatever it queued (the array could not be reached again
//! before its borrow ended).
//!
//! One stream: while the arena has seen no stream but its own, a read on it is not counted. Its
//! slot becomes the stream's *untracked* one (the count saturated), which nothing ends: a read
//! joining it writes nothing, and a conflicting use on another stream waits for an event recorded
//! then (a later write clears it). An arena used on one stream pays loads for a read.
//!
//! Wide uses: a read on a third stream while both slots have reads in flight, and any use on a
//! stream past the table, mark the array *wide*: the next use that conflicts waits for every stream
//! the arena knows, on events recorded then.
//!
//! Why not cudarc's two events per array: once a context has a second
//! stream, every tracked argument then costs an event record and a stream
//! wait per launch, even when every launch is on one stream.

use std::boxed::Box;
use std::sync::atomic::Ordering::{AcqRel, Acquire, Relaxed, Release};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, PoisonError};
use std::vec::Vec;

use cudarc::driver::{sys, CudaEvent, CudaStream, DriverError};

use super::buffer::CudaBackend;
use super::error::CudaError;
use crate::backend::Span;

/// The most streams one arena tells apart; a use on one more makes the array wide.
const MAX_STREAMS: usize = 32;

/// The stream index of a write on a stream past the table: whoever
/// follows it waits for every stream.
const OUTSIDER: usize = 62;

/// Events that only order work: no timestamps, the cheapest to record.
const NO_TIMING: sys::CUevent_flags = sys::CUevent_flags::CU_EVENT_DISABLE_TIMING;

/// A packed use: the stream's index plus one (so the word 0 is no use) in the top bits, the uses in
/// flight (begun, not ended) in the middle, the epoch in the low [`EPOCH_BITS`].
const EPOCH_BITS: u32 = 48;
const EPOCH_MASK: u64 = (1 << EPOCH_BITS) - 1;
const STREAM_SHIFT: u32 = 58;
const IN_FLIGHT_ONE: u64 = 1 << EPOCH_BITS;
const IN_FLIGHT_MAX: u64 = (1 << (STREAM_SHIFT - EPOCH_BITS)) - 1;

/// One use, packed in a word (see [`EPOCH_BITS`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Use(u64);

impl Use {
    const NONE: Use = Use(0);

    /// A use begun on `stream`, in flight.
    fn begun(stream: usize) -> Use {
        Use(((stream as u64 + 1) << STREAM_SHIFT) | IN_FLIGHT_ONE)
    }

    /// `stream`'s reads, not counted: always in flight (see the module docs).
    fn untracked(stream: usize) -> Use {
        Use(((stream as u64 + 1) << STREAM_SHIFT) | IN_FLIGHT_MAX << EPOCH_BITS)
    }

    /// Whether a read can join this one's count (a full count is [`untracked`](Self::untracked)).
    fn joinable(self) -> bool {
        self.in_flight() + 1 < IN_FLIGHT_MAX
    }

    fn ended(stream: usize, epoch: u64) -> Use {
        Use(((stream as u64 + 1) << STREAM_SHIFT) | (epoch & EPOCH_MASK))
    }

    fn is_none(self) -> bool {
        self.0 == 0
    }

    fn stream(self) -> usize {
        ((self.0 >> STREAM_SHIFT).wrapping_sub(1)) as usize
    }

    fn in_flight(self) -> u64 {
        (self.0 >> EPOCH_BITS) & IN_FLIGHT_MAX
    }

    /// The epoch its event must follow; `None` while uses are in flight
    /// (then an event recorded now).
    fn epoch(self) -> Option<u64> {
        (self.in_flight() == 0).then_some(self.0 & EPOCH_MASK)
    }
}

/// How many streams' reads an array remembers at once.
const READS: usize = 2;

/// What the device backend keeps for each array: the last write and the last reads, by stream and
/// epoch. Empty for an array never used, which is ordered after the arena's own stream (its bytes
/// were last used in that stream's order, or never).
#[derive(Debug, Default)]
pub struct LastUses {
    write: AtomicU64,
    reads: [AtomicU64; READS],
    /// Used where the slots cannot say (see the module docs): the next use
    /// that conflicts waits for every stream.
    wide: AtomicBool,
}

/// Whether a use reads or writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Access {
    Read,
    Write,
}

impl LastUses {
    /// Whether the array was ever used on the device.
    #[inline]
    pub(crate) fn is_unused(&self) -> bool {
        self.write.load(Relaxed) == 0
            && self.reads.iter().all(|read| read.load(Relaxed) == 0)
            && !self.wide.load(Relaxed)
    }

    #[inline]
    fn write(&self) -> Use {
        Use(self.write.load(Acquire))
    }

    fn reads(&self) -> impl Iterator<Item = Use> + '_ {
        self.reads.iter().map(|read| Use(read.load(Acquire)))
    }
}

/// One stream the arena has seen.
#[derive(Debug)]
struct Stream {
    stream: Arc<CudaStream>,
    /// Moved on by each record of its event: a use that ends reads it.
    epoch: AtomicU64,
    /// Its event, and the epoch it follows; recorded again, on the same event, when a newer epoch
    /// is needed (a wait already queued keeps the record it was queued after).
    event: Mutex<Option<(u64, CudaEvent)>>,
    /// For each stream index, the newest epoch of that stream this one has waited for.
    waited: [AtomicU64; MAX_STREAMS],
}

impl Stream {
    /// Whether this stream waited already for `producer`, a use ended on a stream of the table.
    #[inline]
    fn waited_for(&self, producer: Use) -> bool {
        let waited = self.waited.get(producer.stream());
        matches!((waited, producer.epoch()), (Some(w), Some(e)) if w.load(Acquire) >= e)
    }

    fn new(stream: &Arc<CudaStream>) -> Stream {
        Stream {
            stream: Arc::clone(stream),
            epoch: AtomicU64::new(1),
            event: Mutex::new(None),
            waited: [const { AtomicU64::new(0) }; MAX_STREAMS],
        }
    }
}

/// The streams an arena's arrays were used on; index 0 is the arena's own. Found without a lock: a
/// stream is added once and stays until the arena goes.
#[derive(Debug)]
pub(crate) struct Streams {
    own: Stream,
    /// Index `i` is stream `i + 1`.
    others: Box<[OnceLock<Stream>]>,
    /// Stream `i`'s handle, set before `len` counts it: found in one array, not `i` streams.
    handles: [AtomicU64; MAX_STREAMS],
    len: AtomicUsize,
    adding: Mutex<()>,
    /// Streams past the table that used an array (which became wide).
    outsiders: Mutex<Vec<Arc<CudaStream>>>,
}

/// A use that began: ended by [`Streams::end`] once its work is queued.
/// Small, as every view carries one.
#[derive(Debug)]
pub(crate) struct Begun {
    /// Its stream's index; [`Begun::UNRECORDED`] for a use that records nothing (wide, untracked).
    stream: u8,
    access: Access,
    /// The read slot it holds, for a read.
    slot: u8,
}

impl Begun {
    const UNRECORDED: u8 = u8::MAX;

    /// A use on stream `index` (below [`MAX_STREAMS`]), holding read slot `slot`.
    fn on(index: usize, access: Access, slot: usize) -> Begun {
        const _: () = assert!(MAX_STREAMS < Begun::UNRECORDED as usize && READS <= 256);
        Begun {
            stream: index as u8,
            access,
            slot: slot as u8,
        }
    }

    fn unrecorded(access: Access) -> Begun {
        Begun {
            stream: Begun::UNRECORDED,
            access,
            slot: 0,
        }
    }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A stream's handle as a word, to compare.
fn key(stream: &CudaStream) -> u64 {
    stream.cu_stream() as u64
}

fn driver(op: &'static str) -> impl Fn(DriverError) -> CudaError {
    move |error| CudaError::Driver { op, error }
}

impl Streams {
    /// The table of an arena working on `own`.
    pub(crate) fn new(own: &Arc<CudaStream>) -> Streams {
        Streams {
            own: Stream::new(own),
            others: (1..MAX_STREAMS).map(|_| OnceLock::new()).collect(),
            handles: core::array::from_fn(|i| AtomicU64::new(if i == 0 { key(own) } else { 0 })),
            len: AtomicUsize::new(1),
            adding: Mutex::new(()),
            outsiders: Mutex::new(Vec::new()),
        }
    }

    /// Stream `index`: only indices [`index`](Self::index) handed out are asked for, each set
    /// before it was handed out (the arena's own stream stands in for any other, which cannot be).
    #[inline]
    fn stream(&self, index: usize) -> &Stream {
        let other = index.checked_sub(1).and_then(|i| self.others.get(i));
        other.and_then(OnceLock::get).unwrap_or(&self.own)
    }

    #[inline]
    fn find(&self, stream: &CudaStream) -> Option<usize> {
        let (known, key) = (self.handles.get(..self.len.load(Acquire)), key(stream));
        known?.iter().position(|handle| handle.load(Relaxed) == key)
    }

    /// The index of `stream`, added if new; `None` past [`MAX_STREAMS`].
    #[inline]
    fn index(&self, stream: &Arc<CudaStream>) -> Option<usize> {
        self.find(stream).or_else(|| self.add(stream))
    }

    #[cold]
    fn add(&self, stream: &Arc<CudaStream>) -> Option<usize> {
        let _adding = lock(&self.adding);
        if let Some(found) = self.find(stream) {
            return Some(found);
        }
        let index = self.len.load(Acquire);
        let added = match (self.others.get(index - 1), self.handles.get(index)) {
            (Some(slot), Some(handle)) => {
                handle.store(key(stream), Relaxed);
                slot.set(Stream::new(stream)).is_ok()
            }
            _ => false,
        };
        if !added {
            let mut outsiders = lock(&self.outsiders);
            if !outsiders.iter().any(|s| key(s) == key(stream)) {
                outsiders.push(Arc::clone(stream));
            }
            return None;
        }
        self.len.store(index + 1, Release);
        Some(index)
    }

    /// The array's last write: an array never written is ordered after the arena's own stream as it
    /// is now (its bytes were last used in that stream's order).
    #[inline]
    fn last_write(&self, uses: &LastUses) -> Use {
        match uses.write() {
            Use::NONE => Use::ended(0, self.own.epoch.load(Acquire)),
            write => write,
        }
    }

    /// Makes `stream` wait for whatever the array's last uses that `access` conflicts with queued
    /// on other streams, and marks the use begun.
    #[inline]
    pub(crate) fn begin(
        &self,
        uses: &LastUses,
        stream: &Arc<CudaStream>,
        access: Access,
    ) -> Result<Begun, CudaError> {
        match self.begin_in_order(uses, stream, access) {
            Some(begun) => Ok(begun),
            None => self.begin_after_others(uses, stream, access),
        }
    }

    /// The common use, with nothing to wait for: a read on the stream of the array's last write (or
    /// after it, waited for already) joining its stream's slot, or a write on the stream of all its
    /// last uses, so stream order puts it after them. `None` for anything else (nothing changed).
    #[inline]
    fn begin_in_order(
        &self,
        uses: &LastUses,
        stream: &Arc<CudaStream>,
        access: Access,
    ) -> Option<Begun> {
        let index = self.find(stream)?;
        // A use's stream field is its index plus one (no write counts as the arena's own); a read
        // also takes this path after a write on another stream that this one waited for already.
        let tag = index as u64 + 1;
        if (uses.write().0 >> STREAM_SHIFT).max(1) != tag
            && (access == Access::Write || !self.stream(index).waited_for(self.last_write(uses)))
        {
            return None;
        }
        if access == Access::Write {
            // The writer borrows the array alone, and every read it follows is on its stream.
            let ours = uses
                .reads()
                .all(|read| read.is_none() || read.0 >> STREAM_SHIFT == tag);
            if !ours || uses.wide.load(Acquire) {
                return None;
            }
            self.clear(uses, Use::begun(index));
            return Some(Begun::on(index, access, 0));
        }
        let (untracked, single) = (Use::untracked(index), self.len.load(Acquire) == 1);
        (0..READS).find_map(|slot| {
            let seen = Use(uses.reads[slot].load(Acquire));
            let ours = seen.0 >> STREAM_SHIFT == tag;
            let next = match seen == untracked {
                true => return Some(Begun::unrecorded(access)),
                // Only the arena's own stream was ever seen (module docs).
                false if single && (ours || seen.is_none()) => untracked,
                false if ours && seen.joinable() => Use(seen.0 + IN_FLIGHT_ONE),
                false => return None,
            };
            let set = uses.reads[slot].compare_exchange(seen.0, next.0, AcqRel, Relaxed);
            set.is_ok().then(|| match next == untracked {
                true => Begun::unrecorded(access),
                false => Begun::on(index, access, slot),
            })
        })
    }

    /// [`begin`](Self::begin) when other streams' uses may need waiting for.
    #[inline(never)]
    fn begin_after_others(
        &self,
        uses: &LastUses,
        stream: &Arc<CudaStream>,
        access: Access,
    ) -> Result<Begun, CudaError> {
        let index = self.index(stream);
        let outsider;
        let (consumer, at) = match index {
            Some(index) => (self.stream(index), index),
            None => {
                // Past the table: waits like any stream, on events it
                // never shares, and leaves the array wide.
                outsider = Stream::new(stream);
                (&outsider, usize::MAX)
            }
        };
        self.after(consumer, at, self.last_write(uses))?;
        if access == Access::Write {
            for read in uses.reads() {
                self.after(consumer, at, read)?;
            }
            if uses.wide.load(Acquire) {
                self.after_all(consumer)?;
            }
        }
        let index = match (index, access) {
            (Some(index), _) => index,
            (None, Access::Read) => return Ok(self.wide_read(uses)),
            (None, Access::Write) => {
                // Done once queued: whoever follows waits for every stream.
                self.clear(uses, Use::ended(OUTSIDER, 0));
                return Ok(Begun::unrecorded(access));
            }
        };
        match access {
            Access::Write => {
                // A writer borrows the array alone: every read before it was waited for above.
                self.clear(uses, Use::begun(index));
                Ok(Begun::on(index, access, 0))
            }
            Access::Read => match self.read_slot(uses, consumer, index)? {
                Some(slot) => Ok(Begun::on(index, access, slot)),
                None => Ok(self.wide_read(uses)),
            },
        }
    }

    /// A read no slot remembers: the array becomes wide.
    #[cold]
    fn wide_read(&self, uses: &LastUses) -> Begun {
        uses.wide.store(true, Release);
        Begun::unrecorded(Access::Read)
    }

    /// Forgets the reads and the wideness, and sets the last write.
    fn clear(&self, uses: &LastUses, write: Use) {
        for read in &uses.reads {
            read.store(0, Release);
        }
        uses.wide.store(false, Release);
        uses.write.store(write.0, Release);
    }

    /// The read slot a read on stream `index` joins: its own, an empty one, or one whose reads have
    /// all ended, once `consumer` waited for them. `None` when every slot has reads in flight on
    /// other streams (or too many on this one).
    fn read_slot(
        &self,
        uses: &LastUses,
        consumer: &Stream,
        index: usize,
    ) -> Result<Option<usize>, CudaError> {
        loop {
            let seen: [Use; READS] = core::array::from_fn(|i| Use(uses.reads[i].load(Acquire)));
            let own = seen
                .iter()
                .position(|read| !read.is_none() && read.stream() == index);
            let (slot, joined) = match own {
                // Untracked: joined as it is (its end changes nothing).
                Some(own) if seen[own] == Use::untracked(index) => return Ok(Some(own)),
                Some(own) if seen[own].joinable() => (own, Use(seen[own].0 + IN_FLIGHT_ONE)),
                Some(_) => return Ok(None),
                None => match seen
                    .iter()
                    .position(|read| read.is_none())
                    .or_else(|| seen.iter().position(|read| read.in_flight() == 0))
                {
                    Some(free) => {
                        // An empty slot, or another stream's ended reads,
                        // which this read follows from now on.
                        self.after(consumer, index, seen[free])?;
                        (free, Use::begun(index))
                    }
                    None => return Ok(None),
                },
            };
            let claimed =
                uses.reads[slot].compare_exchange(seen[slot].0, joined.0, AcqRel, Acquire);
            if claimed.is_ok() {
                return Ok(Some(slot));
            }
        }
    }

    /// Ends `begun`: its work on the stream is queued.
    #[inline]
    pub(crate) fn end(&self, uses: &LastUses, begun: &Begun) {
        if begun.stream == Begun::UNRECORDED {
            return;
        }
        let index = usize::from(begun.stream);
        let epoch = self.stream(index).epoch.load(Acquire);
        match begun.access {
            Access::Write => uses.write.store(Use::ended(index, epoch).0, Release),
            Access::Read => {
                // The slot stays this stream's while a read is in flight:
                // one fewer, and the newest epoch of the reads on it.
                let Some(slot) = uses.reads.get(usize::from(begun.slot)) else {
                    return;
                };
                let _ended = slot.fetch_update(AcqRel, Acquire, |seen| {
                    let newest = (seen & EPOCH_MASK).max(epoch);
                    // Untracked reads are never ended.
                    let counted = (1..IN_FLIGHT_MAX).contains(&Use(seen).in_flight());
                    counted.then_some(())?;
                    Some((seen - IN_FLIGHT_ONE) & !EPOCH_MASK | newest)
                });
            }
        }
    }

    /// Makes `consumer` (at `index`) wait for `producer`'s use, unless it
    /// is on the same stream, none, or waited for already.
    #[inline]
    fn after(&self, consumer: &Stream, index: usize, producer: Use) -> Result<(), CudaError> {
        if producer.is_none() || producer.stream() == index {
            return Ok(());
        }
        self.wait(consumer, producer)
    }

    /// [`after`](Self::after) for a use on another stream.
    #[cold]
    fn wait(&self, consumer: &Stream, producer: Use) -> Result<(), CudaError> {
        let from = producer.stream();
        if from == OUTSIDER {
            return self.after_all(consumer);
        }
        if consumer.waited_for(producer) {
            return Ok(());
        }
        let waited = consumer.waited.get(from);
        let source = self.stream(from);
        let mut event = lock(&source.event);
        let covered = match &*event {
            Some((covered, _)) if producer.epoch().is_some_and(|e| e <= *covered) => *covered,
            _ => {
                // Every use that read this epoch or less was queued before
                // the record below; later ones read the next.
                let covered = source.epoch.fetch_add(1, AcqRel);
                let recorded = match event.take() {
                    Some((_, made)) => made.record(&source.stream).map(|()| made),
                    None => source.stream.record_event(Some(NO_TIMING)),
                };
                let made = recorded.map_err(driver("cuEventRecord"))?;
                *event = Some((covered, made));
                covered
            }
        };
        if let Some((_, made)) = &*event {
            let queued = consumer.stream.wait(made);
            queued.map_err(driver("cuStreamWaitEvent"))?;
        }
        if let Some(waited) = waited {
            waited.fetch_max(covered, AcqRel);
        }
        Ok(())
    }

    /// Makes the arena's stream wait for all work queued on every stream
    /// it knows, a peer device's too (see `CudaBackend`'s drop).
    pub(crate) fn join_all(&self) -> Result<(), CudaError> {
        self.after_all(&self.own)
    }

    /// Makes `consumer` wait for all work queued so far on every stream the
    /// arena knows: what a wide array's next conflicting use needs.
    #[cold]
    fn after_all(&self, consumer: &Stream) -> Result<(), CudaError> {
        let len = self.len.load(Acquire);
        let at = self.find(&consumer.stream).unwrap_or(usize::MAX);
        for index in 0..len {
            self.after(consumer, at, Use::begun(index))?;
        }
        let outsiders = lock(&self.outsiders).clone();
        for outsider in outsiders.iter().filter(|s| key(s) != key(&consumer.stream)) {
            let event = outsider.record_event(Some(NO_TIMING));
            let event = event.map_err(driver("cuEventRecord"))?;
            let queued = consumer.stream.wait(&event);
            queued.map_err(driver("cuStreamWaitEvent"))?;
        }
        Ok(())
    }

    /// Makes the arena's stream wait for every use the array remembers on
    /// other streams (its bytes are being freed: from now on they are free
    /// in that stream's order), and empties the record. Never blocks.
    pub(crate) fn retire(&self, uses: &mut LastUses) -> Result<(), CudaError> {
        for producer in core::iter::once(uses.write()).chain(uses.reads()) {
            self.after(&self.own, 0, producer)?;
        }
        if uses.wide.load(Acquire) {
            self.after_all(&self.own)?;
        }
        // The waits are the arena's stream's work: an event recorded on it
        // from now on moves its epoch first, and follows them.
        *uses = LastUses::default();
        Ok(())
    }
}

/// How one use of an array is ordered: what [`CudaBackend::begin_use`]
/// did, for [`CudaBackend::end_use`].
#[derive(Debug)]
pub(crate) enum Ordered {
    /// Waited for what it must; its epoch is taken when it ends.
    Begun(Begun),
    /// Inside a capture, where nothing is ordered (see `capture.rs`).
    Captured,
}

impl CudaBackend {
    /// Orders a use of the array `array`, whose record is `uses`, on `stream`: the stream waits for
    /// the last uses it conflicts with on other streams. Call [`end_use`](Self::end_use) once its
    /// work is queued.
    #[inline(always)]
    pub(crate) fn begin_use(
        &self,
        uses: &LastUses,
        array: Span,
        stream: &Arc<CudaStream>,
        access: Access,
    ) -> Result<Ordered, CudaError> {
        self.healthy()?;
        self.same_context(stream, access)?;
        if let Some(log) = &self.capture {
            log.touch(array);
            return Ok(Ordered::Captured);
        }
        // cudarc's event calls make the context current themselves.
        Ok(Ordered::Begun(self.order.begin(uses, stream, access)?))
    }

    /// Ends a use begun with [`begin_use`](Self::begin_use): its work is queued.
    #[inline]
    pub(crate) fn end_use(&self, uses: &LastUses, ordered: &Ordered) {
        if let Ordered::Begun(begun) = ordered {
            self.order.end(uses, begun);
        }
    }
}
