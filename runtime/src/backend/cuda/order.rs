//! Stream ordering by last use: each array remembers the stream and the
//! epoch of its last write and of its last reads ([`LastUses`]), and a use
//! on the stream of the last use needs nothing, since stream order already
//! puts it after. Only a use on another stream waits, once per producer
//! stream, on one event that stream recorded at or after the epoch needed,
//! recorded only when some other stream needs it and shared by every array
//! that stream used before it (the arena's [`Streams`]).
//!
//! Epochs: every stream the arena has seen counts the uses recorded on it.
//! A use gets its epoch when it ends (the view dropped, after the launch
//! that borrowed it was queued; the copy queued), so an event recorded once
//! the count reads `e` follows every use of epoch `e` or less. A use that
//! began and never ended (a view passed to `mem::forget`) is pending: it
//! needs an event recorded now, which follows whatever it queued, since
//! the array could not be reached again before its borrow ended.
//!
//! Why not cudarc's two events per array: once a context has a second
//! stream, every tracked argument then costs an event record and a stream
//! wait per launch, even when every launch is on one stream.

use std::boxed::Box;
use std::sync::atomic::{AtomicU32, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, PoisonError};

use cudarc::driver::{sys, CudaEvent, CudaStream, DriverError};

use super::buffer::CudaBackend;
use super::error::CudaError;
use crate::backend::Span;

/// The most streams one arena tells apart; a use on one more is waited for
/// on the host when it ends (correct, and slow).
const MAX_STREAMS: usize = 32;

/// Events that only order work: no timestamps, the cheapest to record.
const NO_TIMING: sys::CUevent_flags = sys::CUevent_flags::CU_EVENT_DISABLE_TIMING;

/// Bits of a packed use that hold the epoch.
const EPOCH_BITS: u32 = 48;
const EPOCH_MASK: u64 = (1 << EPOCH_BITS) - 1;

/// One use, packed in a word: the stream's index in [`Streams`] plus one
/// (so the word 0 is no use) above [`EPOCH_BITS`] bits of epoch, 0 for a
/// use still pending.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Use(u64);

impl Use {
    const NONE: Use = Use(0);

    fn pending(stream: usize) -> Use {
        Use((stream as u64 + 1) << EPOCH_BITS)
    }

    fn ended(stream: usize, epoch: u64) -> Use {
        Use(((stream as u64 + 1) << EPOCH_BITS) | (epoch & EPOCH_MASK))
    }

    fn is_none(self) -> bool {
        self.0 == 0
    }

    fn stream(self) -> usize {
        ((self.0 >> EPOCH_BITS) - 1) as usize
    }

    /// The epoch, `None` while pending.
    fn epoch(self) -> Option<u64> {
        match self.0 & EPOCH_MASK {
            0 => None,
            epoch => Some(epoch),
        }
    }
}

/// How many streams' reads an array remembers at once; a read on one more
/// stream first waits for the oldest of them and takes its place.
const READS: usize = 2;

/// What the device backend keeps for each array: the last write and the
/// last reads, by stream and epoch. Empty for an array never used, which
/// is ordered after the arena's own stream (its bytes were last used in
/// that stream's order, or never).
#[derive(Debug, Default)]
pub struct LastUses {
    write: AtomicU64,
    reads: [AtomicU64; READS],
    /// Reads begun and not ended: a writer, which borrows the array alone,
    /// finds this non-zero only after views were forgotten.
    pending_reads: AtomicU32,
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
        self.write.load(Ordering::Relaxed) == 0
            && self
                .reads
                .iter()
                .all(|read| read.load(Ordering::Relaxed) == 0)
    }

    fn write(&self) -> Use {
        Use(self.write.load(Ordering::Acquire))
    }

    fn reads(&self) -> impl Iterator<Item = Use> + '_ {
        let pending = self.pending_reads.load(Ordering::Acquire) != 0;
        self.reads.iter().map(move |read| {
            let read = Use(read.load(Ordering::Acquire));
            // Forgotten reads: their stream's latest work may be one.
            match (pending, read.is_none()) {
                (true, false) => Use::pending(read.stream()),
                _ => read,
            }
        })
    }
}

/// One stream the arena has seen.
#[derive(Debug)]
struct Stream {
    stream: Arc<CudaStream>,
    /// Uses ended on it so far: the epoch of the latest.
    epoch: AtomicU64,
    /// Its event, and the epoch it follows; recorded again, on the same
    /// event, when a newer epoch is needed (a wait already queued keeps
    /// the record it was queued after).
    event: Mutex<Option<(u64, CudaEvent)>>,
    /// For each stream index, the newest epoch of that stream this one has
    /// waited for.
    waited: [AtomicU64; MAX_STREAMS],
}

impl Stream {
    fn new(stream: &Arc<CudaStream>) -> Stream {
        Stream {
            stream: Arc::clone(stream),
            epoch: AtomicU64::new(1),
            event: Mutex::new(None),
            waited: [const { AtomicU64::new(0) }; MAX_STREAMS],
        }
    }
}

/// The streams an arena's arrays were used on; index 0 is the arena's own.
/// Found without a lock: a stream is added once and stays until the arena
/// goes.
#[derive(Debug)]
pub(crate) struct Streams {
    own: Stream,
    /// Index `i` is stream `i + 1`.
    others: Box<[OnceLock<Stream>]>,
    len: AtomicUsize,
    adding: Mutex<()>,
}

/// A use that began: ended by [`Streams::end`] once its work is queued.
#[derive(Debug)]
pub(crate) struct Begun {
    stream: usize,
    access: Access,
    /// The read slot it holds, for a read.
    slot: usize,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
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
            len: AtomicUsize::new(1),
            adding: Mutex::new(()),
        }
    }

    /// Stream `index`: only indices [`index`](Self::index) handed out are
    /// asked for, each set before it was handed out (the arena's own
    /// stream stands in for any other, which cannot be).
    fn stream(&self, index: usize) -> &Stream {
        let other = index.checked_sub(1).and_then(|i| self.others.get(i));
        other.and_then(OnceLock::get).unwrap_or(&self.own)
    }

    fn find(&self, handle: sys::CUstream) -> Option<usize> {
        let len = self.len.load(Ordering::Acquire);
        (0..len).find(|&index| self.stream(index).stream.cu_stream() == handle)
    }

    /// The index of `stream`, added if new; `None` past [`MAX_STREAMS`].
    #[inline]
    fn index(&self, stream: &Arc<CudaStream>) -> Option<usize> {
        let handle = stream.cu_stream();
        if self.stream(0).stream.cu_stream() == handle {
            return Some(0);
        }
        self.find(handle).or_else(|| self.add(stream))
    }

    #[cold]
    fn add(&self, stream: &Arc<CudaStream>) -> Option<usize> {
        let _adding = lock(&self.adding);
        if let Some(found) = self.find(stream.cu_stream()) {
            return Some(found);
        }
        let index = self.len.load(Ordering::Acquire);
        self.others.get(index - 1)?.set(Stream::new(stream)).ok()?;
        self.len.store(index + 1, Ordering::Release);
        Some(index)
    }

    /// The array's last write: an array never written is ordered after the
    /// arena's own stream as it is now (its bytes were last used in that
    /// stream's order).
    fn last_write(&self, uses: &LastUses) -> Use {
        match uses.write() {
            Use::NONE => Use::ended(0, self.stream(0).epoch.load(Ordering::Acquire)),
            write => write,
        }
    }

    /// Makes `stream` wait for whatever the array's last uses that
    /// `access` conflicts with queued on other streams, and marks the use
    /// begun. `Ok(None)`: a stream past the table, which the caller waits
    /// for on the host when the use ends.
    pub(crate) fn begin(
        &self,
        uses: &LastUses,
        stream: &Arc<CudaStream>,
        access: Access,
    ) -> Result<Option<Begun>, CudaError> {
        let Some(index) = self.index(stream) else {
            let outsider = Stream::new(stream);
            self.after(&outsider, usize::MAX, self.last_write(uses))?;
            for read in uses.reads() {
                self.after(&outsider, usize::MAX, read)?;
            }
            return Ok(None);
        };
        let consumer = self.stream(index);
        self.after(consumer, index, self.last_write(uses))?;
        let mut slot = 0;
        match access {
            Access::Write => {
                for read in uses.reads() {
                    self.after(consumer, index, read)?;
                }
                // Ordered before this write now, and so before whatever
                // waits for it. (A writer borrows the array alone: reads
                // still pending were forgotten, and waited for as such.)
                for read in &uses.reads {
                    read.store(0, Ordering::Release);
                }
                uses.pending_reads.store(0, Ordering::Release);
                uses.write.store(Use::pending(index).0, Ordering::Release);
            }
            Access::Read => {
                uses.pending_reads.fetch_add(1, Ordering::AcqRel);
                slot = self.read_slot(uses, consumer, index)?;
            }
        }
        Ok(Some(Begun {
            stream: index,
            access,
            slot,
        }))
    }

    /// The read slot a read on stream `index` takes: its own, an empty one
    /// (claimed), or the first one's once `consumer` waited for it.
    fn read_slot(
        &self,
        uses: &LastUses,
        consumer: &Stream,
        index: usize,
    ) -> Result<usize, CudaError> {
        let mine = Use::pending(index).0;
        loop {
            let seen: [u64; READS] =
                core::array::from_fn(|i| uses.reads[i].load(Ordering::Acquire));
            if let Some(own) = seen
                .iter()
                .position(|&read| read != 0 && Use(read).stream() == index)
            {
                return Ok(own);
            }
            if let Some(empty) = seen.iter().position(|&read| read == 0) {
                let claimed = uses.reads[empty].compare_exchange(
                    0,
                    mine,
                    Ordering::AcqRel,
                    Ordering::Acquire,
                );
                match claimed {
                    Ok(_) => return Ok(empty),
                    Err(_) => continue,
                }
            }
            // Every slot holds another stream: this read follows the
            // first one's, and takes its place.
            let first = match uses.pending_reads.load(Ordering::Acquire) > 1 {
                true => Use::pending(Use(seen[0]).stream()),
                false => Use(seen[0]),
            };
            self.after(consumer, index, first)?;
            if uses.reads[0]
                .compare_exchange(seen[0], mine, Ordering::AcqRel, Ordering::Acquire)
                .is_ok()
            {
                return Ok(0);
            }
        }
    }

    /// Ends `begun`: its work on the stream is queued.
    pub(crate) fn end(&self, uses: &LastUses, begun: &Begun) {
        let stream = self.stream(begun.stream);
        let epoch = stream.epoch.fetch_add(1, Ordering::AcqRel) + 1;
        let ended = Use::ended(begun.stream, epoch).0;
        match begun.access {
            Access::Write => uses.write.store(ended, Ordering::Release),
            Access::Read => {
                // Reads on one stream from several threads: the newest
                // epoch stays, unless the slot went to another stream
                // (which waited for this one's reads first).
                let slot = &uses.reads[begun.slot];
                let _kept = slot.fetch_update(Ordering::AcqRel, Ordering::Acquire, |seen| {
                    let seen = Use(seen);
                    let older = seen.stream() == begun.stream
                        && !matches!(seen.epoch(), Some(e) if e >= epoch);
                    older.then_some(ended)
                });
                uses.pending_reads.fetch_sub(1, Ordering::AcqRel);
            }
        }
    }
    /// Makes `consumer` (at `index`) wait for `producer`'s use, unless it
    /// is on the same stream, none, or waited for already.
    fn after(&self, consumer: &Stream, index: usize, producer: Use) -> Result<(), CudaError> {
        if producer.is_none() || producer.stream() == index {
            return Ok(());
        }
        let from = producer.stream();
        let waited = &consumer.waited[from];
        if let Some(epoch) = producer.epoch() {
            if waited.load(Ordering::Acquire) >= epoch {
                return Ok(());
            }
        }
        let source = self.stream(from);
        let mut event = lock(&source.event);
        let covered = match &*event {
            Some((covered, _)) if producer.epoch().is_some_and(|e| e <= *covered) => *covered,
            _ => {
                // Read first: every use of this epoch or less was queued
                // before the record below.
                let covered = source.epoch.load(Ordering::Acquire);
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
            consumer
                .stream
                .wait(made)
                .map_err(driver("cuStreamWaitEvent"))?;
        }
        waited.fetch_max(covered, Ordering::AcqRel);
        Ok(())
    }

    /// Makes the arena's stream wait for every use the array remembers on
    /// other streams (its bytes are being freed: from now on they are free
    /// in that stream's order), and empties the record. Never blocks.
    pub(crate) fn retire(&self, uses: &mut LastUses) -> Result<(), CudaError> {
        let own = self.stream(0);
        for producer in core::iter::once(uses.write()).chain(uses.reads()) {
            self.after(own, 0, producer)?;
        }
        *uses = LastUses::default();
        // The waits are the arena's stream's work: an event recorded from
        // now on follows them.
        own.epoch.fetch_add(1, Ordering::AcqRel);
        Ok(())
    }
}

/// How one use of an array is ordered: what [`CudaBackend::begin_use`]
/// did, for [`CudaBackend::end_use`].
#[derive(Debug)]
pub(crate) enum Ordered {
    /// Waited for what it must on a stream the arena tells apart; its
    /// epoch is taken when it ends.
    Begun(Begun),
    /// Inside a capture, where nothing is ordered (see `capture.rs`).
    Captured,
    /// On a stream past the arena's table: waited for on the host when it
    /// ends.
    Host(Arc<CudaStream>),
}

impl CudaBackend {
    /// Orders a use of the array `array`, whose record is `uses`, on
    /// `stream`: the stream waits for the last uses it conflicts with on
    /// other streams. Call [`end_use`](Self::end_use) once its work is
    /// queued.
    pub(crate) fn begin_use(
        &self,
        uses: &LastUses,
        array: Span,
        stream: &Arc<CudaStream>,
        access: Access,
    ) -> Result<Ordered, CudaError> {
        self.healthy()?;
        self.same_context(stream)?;
        if let Some(log) = &self.capture {
            log.touch(array);
            return Ok(Ordered::Captured);
        }
        // cudarc's event calls make the context current themselves.
        match self.order.begin(uses, stream, access)? {
            Some(begun) => Ok(Ordered::Begun(begun)),
            None => Ok(Ordered::Host(Arc::clone(stream))),
        }
    }

    /// Ends a use begun with [`begin_use`](Self::begin_use): its work is
    /// queued.
    pub(crate) fn end_use(&self, uses: &LastUses, ordered: &Ordered) -> Result<(), CudaError> {
        match ordered {
            Ordered::Begun(begun) => {
                self.order.end(uses, begun);
                Ok(())
            }
            Ordered::Captured => Ok(()),
            Ordered::Host(stream) => self.wait_for(stream),
        }
    }
}
