//! Many threads allocating and dropping arrays of one arena at once: the
//! arena with a cache per thread (`ThreadArena`) against the arena behind
//! one lock (`Mutex<Arena>`), in the same run, at 1, 2, 4, 8 and 16 threads.
//! Each thread runs alloc+drop pairs over four sizes (64 B to 4 KiB); one
//! iteration is one pair on every thread, so criterion's throughput is
//! pairs per second over all threads.
//!
//! The host group also runs one `Arena` per thread (each thread its own
//! buffer, nothing shared): not a way to share one buffer, but the scaling
//! that the machine allows this loop, a reference for the other two.
//! `docs/RESULTS.md` (Many threads) has the figures from the H100's host.
//!
//! After the groups it prints, from the same samples, each type's median
//! time per pair and its throughput as a ratio to its own one thread, and
//! `ThreadArena`'s as a ratio to `Mutex<Arena>`'s at the same thread count.
//! The host backend always; with the `cuda` feature and a GPU, the device
//! backend too (allocating and dropping an array that was never used on a
//! stream makes no CUDA call).

use std::collections::BTreeMap;
use std::hint::black_box;
use std::sync::{Barrier, Mutex};
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use gpu_aligned::arena::{Arena, ArenaResult, ArenaSlice, ThreadArena};
use gpu_aligned::backend::Backend;

// The tests' median of samples.
#[path = "../tests/support/median.rs"]
mod median;
use median::median;

const THREADS: [usize; 5] = [1, 2, 4, 8, 16];

/// `f32` lengths: 64 B, 256 B, 1 KiB, 4 KiB.
const LENS: [usize; 4] = [16, 64, 256, 1024];

/// Which case a sample is of: (group, type, threads).
type Case = (String, &'static str, usize);

/// Nanoseconds per iteration of every sample, by case.
static SAMPLES: Mutex<BTreeMap<Case, Vec<f64>>> = Mutex::new(BTreeMap::new());

/// Something threads allocate from with `&self`.
trait Shared<B: Backend>: Sync {
    fn alloc(&self, len: usize) -> ArenaResult<ArenaSlice<f32, B>, B>;
}

impl<B> Shared<B> for ThreadArena<B>
where
    B: Backend + Send + 'static,
    B::Tracking: Send,
    B::Fence: Send,
{
    fn alloc(&self, len: usize) -> ArenaResult<ArenaSlice<f32, B>, B> {
        ThreadArena::alloc(self, len)
    }
}

/// The arena behind one lock, taken for each allocation (a drop takes none:
/// it queues the array for the arena's next call).
impl<B> Shared<B> for Mutex<Arena<B>>
where
    B: Backend + Send,
    Mutex<Arena<B>>: Sync,
{
    fn alloc(&self, len: usize) -> ArenaResult<ArenaSlice<f32, B>, B> {
        self.lock().expect("lock").alloc(len)
    }
}

/// `threads` threads doing `iters` alloc+drop pairs each, from a common
/// start; the time until the last one is done.
fn timed<B: Backend, S: Shared<B>>(arena: &S, threads: usize, iters: u64) -> Duration {
    let start = Barrier::new(threads + 1);
    std::thread::scope(|scope| {
        for id in 0..threads {
            let start = &start;
            scope.spawn(move || {
                // A first pair outside the timing: the thread's slot.
                drop(arena.alloc(LENS[0]).expect("room"));
                start.wait();
                for i in 0..iters {
                    let len = LENS[(i as usize + id) % LENS.len()];
                    let array = arena.alloc(black_box(len)).expect("room");
                    drop(black_box(array));
                }
            });
        }
        start.wait();
        // The scope joins every thread before it returns.
        Instant::now()
    })
    .elapsed()
}

/// As [`timed`], each thread with an arena of its own.
fn timed_apart(threads: usize, iters: u64) -> Duration {
    let start = Barrier::new(threads + 1);
    std::thread::scope(|scope| {
        for id in 0..threads {
            let start = &start;
            scope.spawn(move || {
                let mut arena = Arena::host(1 << 20).expect("host arena");
                drop(arena.alloc::<f32>(LENS[0]).expect("room"));
                start.wait();
                for i in 0..iters {
                    let len = LENS[(i as usize + id) % LENS.len()];
                    let array = arena.alloc::<f32>(black_box(len)).expect("room");
                    drop(black_box(array));
                }
            });
        }
        start.wait();
        Instant::now()
    })
    .elapsed()
}

fn bench<B: Backend, S: Shared<B>>(c: &mut Criterion, group: &str, name: &'static str, arena: &S) {
    bench_with(c, group, name, |threads, iters| {
        timed(arena, threads, iters)
    });
}

fn bench_with(
    c: &mut Criterion,
    group: &str,
    name: &'static str,
    timed: impl Fn(usize, u64) -> Duration,
) {
    let mut bench_group = c.benchmark_group(group);
    for threads in THREADS {
        bench_group.throughput(Throughput::Elements(threads as u64));
        bench_group.bench_function(BenchmarkId::new(name, threads), |b| {
            b.iter_custom(|iters| {
                let took = timed(threads, iters);
                let per_iter = took.as_nanos() as f64 / iters.max(1) as f64;
                SAMPLES
                    .lock()
                    .unwrap()
                    .entry((group.to_owned(), name, threads))
                    .or_default()
                    .push(per_iter);
                took
            });
        });
    }
    bench_group.finish();
}

/// The arena behind one lock.
const LOCKED: &str = "Mutex<Arena>";

const HOST: &str = "threads, host arena, alloc+drop pairs, 64 B-4 KiB";

fn host(c: &mut Criterion) {
    let cached = ThreadArena::new(Arena::host(64 << 20).expect("host arena"));
    bench(c, HOST, "ThreadArena", &cached);
    let locked = Mutex::new(Arena::host(64 << 20).expect("host arena"));
    bench(c, HOST, LOCKED, &locked);
    bench_with(c, HOST, "Arena per thread", timed_apart);
}

#[cfg(feature = "cuda")]
const DEVICE: &str = "threads, device arena, alloc+drop pairs, 64 B-4 KiB";

#[cfg(feature = "cuda")]
fn device(c: &mut Criterion) {
    // cudarc panics when it finds no driver library to load.
    let opened = std::panic::catch_unwind(|| cudarc::driver::CudaContext::new(0));
    let Ok(Ok(context)) = opened else {
        eprintln!("no CUDA device: the device groups are skipped");
        return;
    };
    let stream = context.new_stream().expect("a stream");
    let cached = ThreadArena::new(Arena::device(&stream, 64 << 20).expect("device arena"));
    bench(c, DEVICE, "ThreadArena", &cached);
    let locked = Mutex::new(Arena::device(&stream, 64 << 20).expect("device arena"));
    bench(c, DEVICE, LOCKED, &locked);
}

#[cfg(not(feature = "cuda"))]
fn device(_: &mut Criterion) {}

/// The ratios, from the samples criterion took.
fn report(_: &mut Criterion) {
    let samples = SAMPLES.lock().unwrap();
    let ns = |group: &str, name: &'static str, threads: usize| {
        samples
            .get(&(group.to_owned(), name, threads))
            .map(|samples| median(samples))
    };
    let groups: Vec<String> = samples.keys().map(|(group, _, _)| group.clone()).collect();
    let mut groups = groups;
    groups.dedup();
    for group in groups {
        println!("\n{group}: median ns per iteration (one pair on every thread)");
        println!(
            "{:>7} {:>12} {:>10} {:>12} {:>10} {:>12} {:>10} {:>12}",
            "threads",
            "ThreadArena",
            "x 1 thread",
            LOCKED,
            "x 1 thread",
            "per thread",
            "x 1 thread",
            "Thread x Mutex"
        );
        for threads in THREADS {
            let cached = ns(&group, "ThreadArena", threads);
            let locked = ns(&group, LOCKED, threads);
            let apart = ns(&group, "Arena per thread", threads);
            // Throughput relative to one thread: `threads` pairs per
            // iteration against one.
            let scale = |now: Option<f64>, one: Option<f64>| match (now, one) {
                (Some(now), Some(one)) => format!("{:.2}", threads as f64 * one / now),
                _ => "-".to_owned(),
            };
            let show = |value: Option<f64>| value.map_or("-".to_owned(), |v| format!("{v:.1}"));
            let versus = match (cached, locked) {
                (Some(cached), Some(locked)) => format!("{:.2}", locked / cached),
                _ => "-".to_owned(),
            };
            println!(
                "{:>7} {:>12} {:>10} {:>12} {:>10} {:>12} {:>10} {:>12}",
                threads,
                show(cached),
                scale(cached, ns(&group, "ThreadArena", 1)),
                show(locked),
                scale(locked, ns(&group, LOCKED, 1)),
                show(apart),
                scale(apart, ns(&group, "Arena per thread", 1)),
                versus,
            );
        }
    }
}

criterion_group!(benches, host, device, report);
criterion_main!(benches);
