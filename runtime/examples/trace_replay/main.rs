//! Replays an allocation trace (what a real program allocated and freed, in
//! order) against three allocators on one GPU and reports, for each, the
//! time per operation (median and 99th percentile), the most device memory
//! it held (peak reserved: in the first pass, which is what the traced
//! program needed, and in any pass), how fragmented its free memory was
//! when the most bytes were live (1 - largest free block / all free bytes,
//! where the allocator lets us see it) and how many allocations failed:
//!
//! - a growing device [`Arena`] (`ArenaOptions::growth`, up to the
//!   device's memory, array starts at the trace's largest alignment),
//!   twice: each array freed by hand ([`Arena::free`], its block back in
//!   the allocator at once), and each array dropped (what Rust code does:
//!   the arena takes dropped blocks back, or keeps them for the next array
//!   of their size, when it next allocates, which places later arrays
//!   differently);
//! - `cuMemAllocAsync` / `cuMemFreeAsync` on the device's default memory
//!   pool (peak reserved: the pool's `CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH`);
//! - cudarc's `stream.alloc` and drop (which use the same pool).
//!
//! ```text
//! cargo build --release --features cuda --example trace_replay
//! python3 runtime/examples/trace_replay/torch_trace.py record traces   # or `convert` your own snapshot
//! target/release/examples/trace_replay traces/train.trace
//! target/release/examples/trace_replay --history out docs/traces/infer.trace.gz
//! ```
//!
//! `--history DIR` replays the trace once more on a fresh device arena that
//! records its history (`gpu_aligned::history`; arrays dropped, each
//! labelled with its trace id) and writes `DIR/<name>.pickle` (PyTorch's
//! memory snapshot), `.json` (Chrome trace, for Perfetto) and `.html` (the
//! crate's page); `docs/HISTORY.md` shows one. A `.gz` trace is read
//! through the `gzip` program.
//!
//! The trace format (text, one operation per line) is described in
//! `torch_trace.py` beside this file, which also converts a PyTorch memory
//! snapshot of your own program (`torch.cuda.memory._record_memory_history`,
//! then `_dump_snapshot`) into it. Every operation runs on one stream, a
//! stream of its own (the pool is slower on the legacy default stream); a
//! trace that used several says so in the report.
//!
//! The race is fair to the pool (`support/rounds.rs`): first each
//! allocator replays the trace once from a cold start (the pool emptied
//! first), one after another: that pass gives the peaks and is the
//! warm-up, and its times are not kept. The pool keeps what it reserved
//! from then on (its release threshold raised, as the arena keeps what it
//! grew). Then `--repeat` rounds (3 by default; `--warmup N` untimed ones
//! first) take the allocators in turn, each replaying the trace once with
//! every operation timed on its own with [`Instant`] (whose own cost, about
//! 20-30 ns, is in every figure) and once timed whole, one clock read per
//! pass, for the mean time per operation with no clock read in it. Each
//! round's median and mean of every allocator, and the pool's over each
//! other's, are printed, then the medians over rounds; the summary table
//! pools every timed pass's operations for the median and the 99th
//! percentile. An allocator that does nothing is replayed the same way:
//! its median is the timing's own floor, and the medians' ratio net of it
//! is printed too.

// The history of a replay, written for the viewers (shared with the
// `memory_history` example and the tests).
#[path = "../support/history.rs"]
mod history;
// Alternating rounds and medians, shared with the device benches.
#[path = "../support/rounds.rs"]
#[allow(dead_code)]
mod rounds;
mod trace;

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;

use gpu_aligned::align::PITCH_ALIGN;
use gpu_aligned::arena::{Arena, ArenaOptions, ArenaSlice, GrowthPolicy};
use gpu_aligned::backend::cuda::cudarc::driver::{result, sys, CudaContext, CudaSlice, CudaStream};
use gpu_aligned::backend::cuda::CudaBackend;

use trace::{parse, Error, Op, Trace};

/// What one allocator is asked to do; `Handle` is what it hands out.
trait Replayed {
    type Handle;
    fn alloc(&mut self, bytes: u64, align: u64) -> Option<Self::Handle>;
    fn free(&mut self, handle: Self::Handle);
    /// Bytes of device memory held now, if the allocator says (0 if not).
    fn reserved(&self) -> u64 {
        0
    }
    /// 1 - largest free block / all free bytes, if the allocator shows them.
    fn fragmentation(&self) -> Option<f64> {
        None
    }
    /// The most device memory held during the pass just run, as far as the
    /// allocator reports it (the replay also keeps the most `reserved` seen).
    fn peak_reserved(&mut self) -> Result<u64, Error>;
}

/// The only calls the replay makes into the arena: allocate, and free by
/// hand (the other replay drops the array instead).
mod arena_calls {
    use super::*;

    pub type Array = ArenaSlice<u8, CudaBackend>;

    pub fn arena_alloc(arena: &mut Arena<CudaBackend>, bytes: u64) -> Option<Array> {
        arena.alloc::<u8>(bytes as usize).ok()
    }

    pub fn arena_free(arena: &mut Arena<CudaBackend>, array: Array) {
        arena.free(array).expect("an array of this arena");
    }
}

struct ArenaReplay {
    arena: Arena<CudaBackend>,
    /// Frees each array with `Arena::free`, which gives its block to the
    /// allocator at once; otherwise drops it, as Rust code does, and the
    /// arena takes the block back (or keeps it for the next array of its
    /// size) when it next allocates.
    by_hand: bool,
}

impl Replayed for ArenaReplay {
    type Handle = arena_calls::Array;

    fn alloc(&mut self, bytes: u64, _align: u64) -> Option<Self::Handle> {
        // The arena was made with the trace's largest alignment as its
        // minimum, so every array starts on a multiple of every `align`.
        arena_calls::arena_alloc(&mut self.arena, bytes)
    }

    fn free(&mut self, handle: Self::Handle) {
        if self.by_hand {
            arena_calls::arena_free(&mut self.arena, handle);
        } else {
            drop(handle);
        }
    }

    fn reserved(&self) -> u64 {
        self.arena.capacity() as u64
    }

    fn fragmentation(&self) -> Option<f64> {
        let stats = self.arena.allocator().stats();
        Some(if stats.free == 0 {
            0.0
        } else {
            1.0 - stats.largest_free_block as f64 / stats.free as f64
        })
    }

    fn peak_reserved(&mut self) -> Result<u64, Error> {
        // The replay samples `reserved` after every allocation.
        Ok(self.arena.capacity() as u64)
    }
}

/// The default pool's reserved-bytes high-water mark, reset to what it holds.
fn pool_peak(pool: sys::CUmemoryPool) -> Result<u64, Error> {
    let mut high = 0u64;
    // SAFETY: the attribute is a `cuuint64_t`, written into `high`.
    unsafe {
        result::mem_pool::get_attribute(
            pool,
            sys::CUmemPool_attribute::CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH,
            (&mut high as *mut u64).cast(),
        )
    }?;
    let mut zero = 0u64;
    // SAFETY: setting the high-water mark to 0 resets it (the driver's
    // documented use); the value is a `cuuint64_t`.
    unsafe {
        result::mem_pool::set_attribute(
            pool,
            sys::CUmemPool_attribute::CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH,
            (&mut zero as *mut u64).cast(),
        )
    }?;
    Ok(high)
}

/// The device's default memory pool, which `cuMemAllocAsync` and cudarc
/// allocate from, and the stream they use.
struct Pool {
    stream: Arc<CudaStream>,
    pool: sys::CUmemoryPool,
}

impl Pool {
    /// The most the pool held since the last call, once the stream is done.
    fn peak(&self) -> Result<u64, Error> {
        self.stream.synchronize()?;
        pool_peak(self.pool)
    }
}

struct PoolReplay(Pool);

impl Replayed for PoolReplay {
    type Handle = sys::CUdeviceptr;

    fn alloc(&mut self, bytes: u64, _align: u64) -> Option<Self::Handle> {
        // `align` is left to the pool, which has no alignment parameter:
        // CUDA documents 256-byte starts (512 were seen on an H100), while
        // PyTorch's traces ask for 512, its own block granularity.
        // SAFETY: the memory is never read; it is freed on the same stream.
        unsafe { result::malloc_async(self.0.stream.cu_stream(), bytes as usize) }.ok()
    }

    fn free(&mut self, handle: Self::Handle) {
        // SAFETY: `handle` came from `cuMemAllocAsync` on this stream.
        unsafe { result::free_async(handle, self.0.stream.cu_stream()) }.expect("cuMemFreeAsync");
    }

    fn peak_reserved(&mut self) -> Result<u64, Error> {
        self.0.peak()
    }
}

struct CudarcReplay(Pool);

impl Replayed for CudarcReplay {
    type Handle = CudaSlice<u8>;

    fn alloc(&mut self, bytes: u64, _align: u64) -> Option<Self::Handle> {
        // SAFETY: the memory is never read.
        unsafe { self.0.stream.alloc::<u8>(bytes as usize) }.ok()
    }

    fn free(&mut self, handle: Self::Handle) {
        drop(handle);
    }

    fn peak_reserved(&mut self) -> Result<u64, Error> {
        self.0.peak()
    }
}

/// An allocator that does nothing: replayed like the others, its times
/// are what the timing itself costs per operation (two clock reads, and
/// the loop around them), the floor under every other row.
struct NoAllocator;

impl Replayed for NoAllocator {
    type Handle = ();

    fn alloc(&mut self, _bytes: u64, _align: u64) -> Option<()> {
        Some(())
    }

    fn free(&mut self, handle: ()) {
        std::hint::black_box(handle);
    }

    fn peak_reserved(&mut self) -> Result<u64, Error> {
        Ok(0)
    }
}

/// What replaying a trace against one allocator gave.
struct Report {
    name: &'static str,
    times: Vec<u64>,
    alloc_times: Vec<u64>,
    /// The most device memory held during the first pass: what the traced
    /// program would have needed from this allocator.
    first_peak_reserved: u64,
    /// The most held during any pass (later passes start from what the
    /// earlier ones left cached or mapped).
    peak_reserved: u64,
    fragmentation: Option<f64>,
    failed: usize,
    /// Nanoseconds per operation over as many more passes timed whole (one
    /// `Instant` per pass, so no clock read is in the figure; the mean,
    /// tail included).
    mean_untimed: f64,
}

fn percentile(sorted: &[u64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    sorted[((sorted.len() - 1) as f64 * p).round() as usize] as f64
}

/// One allocator under replay: the allocator, the handles a pass holds,
/// and what its passes gave.
struct Lane<R: Replayed> {
    replayed: R,
    live: Vec<Option<R::Handle>>,
    report: Report,
    /// Operations and nanoseconds of the passes timed whole.
    whole: (usize, u128),
}

/// What the race asks of an allocator under replay, whatever its handle.
trait Side {
    fn report(&self) -> &Report;
    /// One pass of `trace` with every operation timed on its own, freeing
    /// what the trace left live. The first pass (`first`) is the memory
    /// pass: it gives the peak reserved and fragmentation of a cold start,
    /// and its times are not kept (it is the warm-up). Returns the pass's
    /// median ns per operation.
    fn timed_pass(&mut self, trace: &Trace, first: bool) -> Result<f64, Error>;
    /// One pass timed whole (one clock read per pass, none inside);
    /// returns its mean ns per operation.
    fn whole_pass(&mut self, trace: &Trace) -> Result<f64, Error>;
    /// Sorts the kept times and sets the mean of the whole passes.
    fn finish(&mut self);
}

impl<R: Replayed> Lane<R> {
    fn new(name: &'static str, replayed: R, trace: &Trace) -> Lane<R> {
        Lane {
            replayed,
            live: (0..trace.ids).map(|_| None).collect(),
            report: Report {
                name,
                times: Vec::new(),
                alloc_times: Vec::new(),
                first_peak_reserved: 0,
                peak_reserved: 0,
                fragmentation: None,
                failed: 0,
                mean_untimed: f64::NAN,
            },
            whole: (0, 0),
        }
    }
}

impl<R: Replayed> Side for Lane<R> {
    fn report(&self) -> &Report {
        &self.report
    }

    fn timed_pass(&mut self, trace: &Trace, first: bool) -> Result<f64, Error> {
        let (replayed, live, report) = (&mut self.replayed, &mut self.live, &mut self.report);
        let mut times = Vec::with_capacity(trace.ops.len());
        let mut alloc_times = Vec::new();
        let (mut live_bytes, mut peak_live) = (0u64, 0u64);
        let mut sizes = HashMap::new();
        let mut peak = 0u64;
        for op in &trace.ops {
            match *op {
                Op::Alloc { id, bytes, align } => {
                    let began = Instant::now();
                    let handle = replayed.alloc(bytes, align);
                    let took = began.elapsed().as_nanos() as u64;
                    times.push(took);
                    alloc_times.push(took);
                    match handle {
                        Some(handle) => {
                            live[id] = Some(handle);
                            sizes.insert(id, bytes);
                            live_bytes += bytes;
                        }
                        None => report.failed += 1,
                    }
                    peak = peak.max(replayed.reserved());
                    if first && live_bytes > peak_live {
                        peak_live = live_bytes;
                        report.fragmentation = replayed.fragmentation();
                    }
                }
                Op::Free { id } => {
                    // A failed allocation leaves nothing to free.
                    if let Some(handle) = live.get_mut(id).and_then(Option::take) {
                        live_bytes -= sizes.remove(&id).unwrap_or(0);
                        let began = Instant::now();
                        replayed.free(handle);
                        times.push(began.elapsed().as_nanos() as u64);
                    }
                }
            }
        }
        for handle in live.iter_mut().filter_map(Option::take) {
            replayed.free(handle);
        }
        let peak = peak.max(replayed.peak_reserved()?);
        if first {
            report.first_peak_reserved = peak;
        }
        report.peak_reserved = report.peak_reserved.max(peak);
        let median = {
            let mut sorted = times.clone();
            sorted.sort_unstable();
            percentile(&sorted, 0.5)
        };
        if !first {
            report.times.extend(times);
            report.alloc_times.extend(alloc_times);
        }
        Ok(median)
    }

    fn whole_pass(&mut self, trace: &Trace) -> Result<f64, Error> {
        let began = Instant::now();
        let ops = pass_untimed(&mut self.replayed, trace, &mut self.live);
        let took = began.elapsed().as_nanos();
        let peak = self.replayed.peak_reserved()?;
        self.report.peak_reserved = self.report.peak_reserved.max(peak);
        self.whole.0 += ops;
        self.whole.1 += took;
        Ok(took as f64 / ops.max(1) as f64)
    }

    fn finish(&mut self) {
        self.report.times.sort_unstable();
        self.report.alloc_times.sort_unstable();
        self.report.mean_untimed = self.whole.1 as f64 / self.whole.0.max(1) as f64;
    }
}

/// One pass of `trace` with no clock read between operations, freeing what
/// it left live; returns how many operations it made.
fn pass_untimed<R: Replayed>(
    replayed: &mut R,
    trace: &Trace,
    live: &mut [Option<R::Handle>],
) -> usize {
    let mut ops = 0;
    for op in &trace.ops {
        match *op {
            Op::Alloc { id, bytes, align } => {
                live[id] = replayed.alloc(bytes, align);
                ops += 1;
            }
            Op::Free { id } => {
                if let Some(handle) = live.get_mut(id).and_then(Option::take) {
                    replayed.free(handle);
                    ops += 1;
                }
            }
        }
    }
    for handle in live.iter_mut().filter_map(Option::take) {
        replayed.free(handle);
        ops += 1;
    }
    ops
}

fn main() -> Result<(), Error> {
    let mut args = std::env::args().skip(1);
    let (mut path, mut repeat, mut history_dir) = (None, 3usize, None);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--repeat" => repeat = args.next().ok_or("--repeat needs a count")?.parse()?,
            "--history" => history_dir = Some(args.next().ok_or("--history needs a directory")?),
            // Read by `rounds::flag`.
            "--warmup" => {
                args.next();
            }
            _ => path = Some(arg),
        }
    }
    let path = path.ok_or(
        "usage: trace_replay [--repeat N] [--warmup N] [--history DIR] TRACE (or - for stdin)",
    )?;
    let trace = if path == "-" {
        parse(std::io::stdin().lock())?
    } else if path.ends_with(".gz") {
        let unzipped = std::process::Command::new("gzip")
            .args(["-dc", &path])
            .output()?;
        parse(&unzipped.stdout[..])?
    } else {
        parse(std::fs::File::open(&path)?)?
    };
    for comment in &trace.comments {
        println!("# {comment}");
    }
    let allocs = trace
        .ops
        .iter()
        .filter(|op| matches!(op, Op::Alloc { .. }))
        .count();
    println!(
        "{} operations ({allocs} allocations) on {} stream(s), replayed on one; alignment up to {}; a memory pass, then {repeat} rounds",
        trace.ops.len(),
        trace.streams,
        trace.max_align
    );

    let context = CudaContext::new(0)?;
    // A stream of its own: the pool is slower on the legacy default stream.
    let stream = context.new_stream()?;
    println!("device: {}", context.name()?);
    // SAFETY: the device is the context's own.
    let pool = unsafe { result::device::get_default_mem_pool(context.cu_device()) }?;
    // Keeps what the pool reserved across the passes' synchronizations, so
    // that only the memory pass starts it cold (as the arena's does).
    rounds::warm_pool(&stream, 0)?;
    pool_peak(pool)?;

    // The sides in the race's order: the pool first, so that each ratio
    // printed is the pool's time over another's.
    let mut sides: Vec<Box<dyn Side>> = Vec::new();
    sides.push(Box::new(Lane::new(
        "cuMemAllocAsync (default pool)",
        PoolReplay(Pool {
            stream: stream.clone(),
            pool,
        }),
        &trace,
    )));
    sides.push(Box::new(Lane::new(
        "cudarc stream.alloc",
        CudarcReplay(Pool {
            stream: stream.clone(),
            pool,
        }),
        &trace,
    )));
    for (name, by_hand) in [
        ("gpu-aligned arena (free)", true),
        ("gpu-aligned arena (drop)", false),
    ] {
        // A trace's alignments are small powers of two.
        let align = trace.max_align.max(256) as usize;
        let policy = GrowthPolicy::up_to(context.total_mem()?);
        let options = ArenaOptions::new()
            .min_align(align)
            .pitch_align(PITCH_ALIGN.max(align))
            .growth(policy);
        let arena = options.device(&stream, policy.initial())?;
        sides.push(Box::new(Lane::new(
            name,
            ArenaReplay { arena, by_hand },
            &trace,
        )));
    }
    sides.push(Box::new(Lane::new(
        "nothing (the timing's floor)",
        NoAllocator,
        &trace,
    )));
    let short = ["pool", "cudarc", "arena free", "arena drop", "nothing"];
    let (pools, arenas) = (0..2, 2..4);

    // The memory pass, one allocator after another, each from a cold start
    // (the pool emptied first): the peak each needed, and the warm-up.
    for (k, side) in sides.iter_mut().enumerate() {
        if pools.contains(&k) {
            // SAFETY: the pool is the device's default; nothing of it is in use.
            unsafe { result::mem_pool::trim_to(pool, 0) }?;
            pool_peak(pool)?;
        }
        side.timed_pass(&trace, true)?;
    }

    // The timed rounds: each allocator in turn, one pass with every
    // operation timed, then one pass timed whole.
    let laps = rounds::Rounds {
        warmup: rounds::flag("--warmup").unwrap_or(0),
        timed: repeat.max(1),
    };
    let mut means: Vec<Vec<f64>> = vec![Vec::new(); sides.len()];
    rounds::race(
        "median ns per operation of each pass (each operation timed on its own)",
        "ns per op",
        &short,
        laps,
        |k| {
            let median = sides[k].timed_pass(&trace, false)?;
            means[k].push(sides[k].whole_pass(&trace)?);
            Ok(median)
        },
    )?;
    // The passes timed whole, per round (the warm-up rounds' first).
    let means: Vec<Vec<f64>> = (laps.warmup..laps.warmup + laps.timed)
        .map(|r| means.iter().map(|m| m[r]).collect())
        .collect();
    rounds::table(
        "mean ns per operation of the passes timed whole, same rounds",
        "ns per op",
        &short,
        &means,
    );
    for side in &mut sides {
        side.finish();
    }
    let reports: Vec<&Report> = sides.iter().map(|side| side.report()).collect();
    let floor = reports[4];

    println!(
        "\n{:<32} {:>12} {:>10} {:>12} {:>10} {:>18} {:>18} {:>14} {:>7}",
        "allocator",
        "median ns/op",
        "p99 ns/op",
        "median alloc",
        "mean ns/op",
        "peak reserved B",
        "(any pass)",
        "fragmentation",
        "failed"
    );
    for report in &reports {
        println!(
            "{:<32} {:>12.0} {:>10.0} {:>12.0} {:>10.1} {:>18} {:>18} {:>14} {:>7}",
            report.name,
            percentile(&report.times, 0.5),
            percentile(&report.times, 0.99),
            percentile(&report.alloc_times, 0.5),
            report.mean_untimed,
            report.first_peak_reserved,
            report.peak_reserved,
            report
                .fragmentation
                .map_or("n/a".to_string(), |f| format!("{f:.3}")),
            report.failed
        );
    }
    let clock = percentile(&floor.times, 0.5);
    let (others, arenas) = (&reports[pools], &reports[arenas]);
    for (arena, other) in arenas
        .iter()
        .flat_map(|arena| others.iter().map(move |other| (arena, other)))
    {
        println!(
            "{} vs {}: {:.1}x faster per op (median of every timed pass's operations), {} net of the floor, {:.1}x at p99, {:.1}x in the mean of passes timed whole",
            arena.name,
            other.name,
            percentile(&other.times, 0.5) / percentile(&arena.times, 0.5),
            match percentile(&arena.times, 0.5) - clock {
                // A floor as slow as the arena's whole operation says nothing.
                net if net > 0.0 => format!("{:.1}x", (percentile(&other.times, 0.5) - clock) / net),
                _ => "n/a".to_string(),
            },
            percentile(&other.times, 0.99) / percentile(&arena.times, 0.99),
            other.mean_untimed / arena.mean_untimed,
        );
    }
    if let Some(pytorch) = trace.pytorch_max_reserved {
        for arena in arenas {
            println!(
                "{} peak reserved (first pass) {} B vs PyTorch's own {} B: {:.3}x",
                arena.name,
                arena.first_peak_reserved,
                pytorch,
                arena.first_peak_reserved as f64 / pytorch as f64
            );
        }
    }
    if let Some(dir) = history_dir {
        let align = trace.max_align.max(256) as usize;
        let policy = GrowthPolicy::up_to(context.total_mem()?);
        let options = ArenaOptions::new()
            .min_align(align)
            .pitch_align(PITCH_ALIGN.max(align));
        let mut arena = options.growth(policy).device(&stream, policy.initial())?;
        let recorded = history::replay_recorded(&mut arena, &trace)?;
        let name = std::path::Path::new(&path)
            .file_name()
            .and_then(|n| n.to_str());
        let name = name
            .unwrap_or("trace")
            .trim_end_matches(".gz")
            .trim_end_matches(".trace");
        history::write_exports(
            &recorded,
            std::path::Path::new(&dir),
            &format!("{name}-device"),
        )?;
    }
    Ok(())
}
