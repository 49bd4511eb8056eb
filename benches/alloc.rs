//! The sub-allocator against `offset-allocator` 0.2 (the TLSF-style offset
//! allocator it is most like), each case on one pre-generated sequence that
//! both run in the same process: a steady state where each step frees a
//! random live allocation and allocates another in its place, timed per
//! free+alloc pair. Ours keeps every check (handles, sizes, alignment).
//! Both get the same capacity, and offset-allocator is set up the way its
//! users would for the workload: it counts in units of our granularity (the
//! smallest alignment the case asks for), so a request aligned to one unit
//! needs no over-allocation, and only an alignment above a unit costs it
//! `align - unit` extra bytes (it has no alignment of its own):
//!
//! - `a`: 1,000 live, 256 B to 64 KiB at alignment 256, ours at granularity
//!   256 (what an arena with the default minimum alignment uses);
//!   offset-allocator in 256-byte units.
//! - `b`: 1,000 live, 1 B to 64 KiB at alignments 1 to 4096, ours from
//!   `Allocator::new` (granularity 16); offset-allocator in 16-byte units,
//!   asked for `size + align - 16` bytes when `align` exceeds 16.
//! - `c`: 10,000 live, 16 to 256 B at alignment 16, ours from
//!   `Allocator::new`; offset-allocator in 16-byte units, asked for `size`.
//!
//! Then how long a failing allocation takes with 1,000 and 100,000 free
//! blocks (bounded, not a walk of every block), and threads: one
//! `Allocator` behind a `Mutex` against one per thread, 1 and 2 threads,
//! in pairs per second.
//!
//! Before the timings, it prints the utilization at first failure of a
//! random workload with alignments 1 to 4096 (see `utilization`).

use std::sync::{Barrier, Mutex};
use std::time::{Duration, Instant};

use criterion::{criterion_group, BenchmarkId, Criterion, Throughput};
use gpu_aligned::alloc::{AllocError, Allocation, Allocator, DEFAULT_GRANULARITY};

// The tests' seeded generator, so both allocators see one sequence.
#[path = "../tests/support/rng.rs"]
mod rng;
use rng::Rng;

/// One steady-state case: the requests, and the granularity both
/// allocators work in.
struct Case {
    live: usize,
    capacity: usize,
    /// Our allocator's granularity, and offset-allocator's unit in bytes.
    granularity: usize,
    /// `(size, align)` of the initial allocations.
    initial: Vec<(usize, usize)>,
    /// Per step: which live allocation to replace, with what.
    steps: Vec<(usize, usize, usize)>,
}

const STEPS: usize = 1 << 16;

impl Case {
    fn new(
        seed: u64,
        live: usize,
        capacity: usize,
        granularity: usize,
        request: impl Fn(&mut Rng) -> (usize, usize),
    ) -> Case {
        let mut rng = Rng(seed);
        let initial = (0..live).map(|_| request(&mut rng)).collect();
        let steps = (0..STEPS)
            .map(|_| {
                let slot = rng.pick(live);
                let (size, align) = request(&mut rng);
                (slot, size, align)
            })
            .collect();
        Case {
            live,
            capacity,
            granularity,
            initial,
            steps,
        }
    }

    fn ours(&self) -> Allocator {
        Allocator::with_granularity(self.capacity, self.granularity).expect("a power of two")
    }

    /// What offset-allocator is asked for, in its units: enough for `size`
    /// bytes at any unit-aligned start that can be moved up to `align`.
    fn oa_request(&self, size: usize, align: usize) -> u32 {
        let unit = self.granularity;
        (size + align.max(unit) - unit).div_ceil(unit) as u32
    }

    fn oa_capacity(&self) -> u32 {
        (self.capacity / self.granularity) as u32
    }

    /// Our allocator holding the case's initial allocations.
    fn ours_filled(&self) -> (Allocator, Vec<Allocation>) {
        let mut allocator = self.ours();
        let live = self
            .initial
            .iter()
            .map(|&(size, align)| allocator.alloc(size, align).expect("room"))
            .collect();
        (allocator, live)
    }

    /// offset-allocator holding the case's initial allocations.
    fn oa_filled(
        &self,
    ) -> (
        offset_allocator::Allocator,
        Vec<offset_allocator::Allocation>,
    ) {
        let max_allocs = (self.live as u32 * 4).max(128 * 1024);
        let mut allocator =
            offset_allocator::Allocator::with_max_allocs(self.oa_capacity(), max_allocs);
        let live = self
            .initial
            .iter()
            .map(|&(size, align)| {
                allocator
                    .allocate(self.oa_request(size, align))
                    .expect("room")
            })
            .collect();
        (allocator, live)
    }
}

fn steady_state(c: &mut Criterion, name: &str, case: &Case) {
    let mut group = c.benchmark_group(name);
    group.bench_function("gpu-aligned", |b| {
        let (mut allocator, mut live) = case.ours_filled();
        let mut step = 0;
        b.iter(|| {
            let (slot, size, align) = case.steps[step % STEPS];
            step += 1;
            allocator.free(live[slot]).expect("live");
            live[slot] = allocator.alloc(size, align).expect("steady state fits");
        });
    });
    group.bench_function("offset-allocator", |b| {
        let (mut allocator, mut live) = case.oa_filled();
        let mut step = 0;
        b.iter(|| {
            let (slot, size, align) = case.steps[step % STEPS];
            step += 1;
            allocator.free(live[slot]);
            live[slot] = allocator
                .allocate(case.oa_request(size, align))
                .expect("steady state fits");
        });
    });
    group.finish();
}

/// The three cases, named as in the module docs.
fn all_cases() -> [(&'static str, Case); 3] {
    // 128 MiB: room for 1,000 allocations of up to 64 KiB (plus alignment)
    // twice over, so the steady state measures the search, not running out.
    let a = Case::new(0xa, 1_000, 128 << 20, 256, |rng| {
        (rng.between(256, 64 << 10), 256)
    });
    let b = Case::new(0xb, 1_000, 128 << 20, DEFAULT_GRANULARITY, |rng| {
        (rng.between(1, 64 << 10), 1 << rng.pick(13))
    });
    let c = Case::new(0xc, 10_000, 16 << 20, DEFAULT_GRANULARITY, |rng| {
        (rng.between(16, 256), 16)
    });
    [
        ("a: 1000 live, 256 B-64 KiB, align 256, granularity 256", a),
        ("b: 1000 live, 1 B-64 KiB, align 1-4096", b),
        ("c: 10000 live, 16-256 B, align 16", c),
    ]
}

fn cases(c: &mut Criterion) {
    for (name, case) in all_cases() {
        steady_state(c, name, &case);
    }
}

/// `ALLOC_PAIRS=<case letter>,<ours|oa>,<pairs>`: runs that many pairs of
/// one case untimed and exits, for instruction counts under
/// `valgrind --tool=callgrind` (two runs with different pair counts; the
/// difference divided by the difference in pairs is the cost of one pair,
/// without the set-up).
fn pairs_only(spec: &str) {
    let mut parts = spec.split(',');
    let (letter, side, pairs) = (
        parts.next().expect("case letter"),
        parts.next().expect("ours or oa"),
        parts
            .next()
            .and_then(|p| p.parse::<usize>().ok())
            .expect("pairs"),
    );
    let (_, case) = all_cases()
        .into_iter()
        .find(|(name, _)| name.starts_with(letter))
        .expect("a case a, b or c");
    if side == "ours" {
        let (mut allocator, mut live) = case.ours_filled();
        for &(slot, size, align) in case.steps.iter().cycle().take(pairs) {
            allocator.free(live[slot]).expect("live");
            live[slot] = allocator.alloc(size, align).expect("fits");
        }
        std::hint::black_box(&live);
    } else {
        let (mut allocator, mut live) = case.oa_filled();
        for &(slot, size, align) in case.steps.iter().cycle().take(pairs) {
            allocator.free(live[slot]);
            live[slot] = allocator
                .allocate(case.oa_request(size, align))
                .expect("fits");
        }
        std::hint::black_box(&live);
    }
}

/// A byte-exact allocator with `holes` free blocks of 90 bytes between live
/// ones and nothing free that holds 91 bytes.
fn fragmented(holes: usize) -> Allocator {
    let mut allocator = Allocator::with_granularity(holes * 180, 1).expect("a power of two");
    let mut freed = Vec::new();
    for _ in 0..holes {
        freed.push(allocator.alloc(90, 1).expect("room"));
        let _separator = allocator.alloc(90, 1).expect("room");
    }
    for hole in freed {
        allocator.free(hole).expect("live");
    }
    allocator
}

fn failing(c: &mut Criterion) {
    let mut group = c.benchmark_group("failing alloc");
    for holes in [1_000usize, 100_000] {
        let mut allocator = fragmented(holes);
        group.bench_function(BenchmarkId::new("free blocks", holes), |b| {
            b.iter(|| {
                let refused = allocator.alloc(91, 1);
                assert!(matches!(refused, Err(AllocError::OutOfMemory { .. })));
            });
        });
    }
    group.finish();
}

/// Live allocations each thread keeps; sizes as in case `a`.
const PER_THREAD_LIVE: usize = 256;

/// One thread's sequence of (slot, size) steps.
type Steps = Vec<(usize, usize)>;

/// One thread's part: its own sequence of (slot, size) steps.
fn thread_steps(seed: u64) -> Steps {
    let mut rng = Rng(seed);
    (0..STEPS)
        .map(|_| (rng.pick(PER_THREAD_LIVE), rng.between(256, 64 << 10)))
        .collect()
}

/// Runs `threads` workers that each do `iters` free+alloc pairs through
/// `pair`, started together; returns the wall time from start to the last
/// finish.
fn timed_threads<S: Send>(
    threads: usize,
    iters: u64,
    mut states: Vec<S>,
    work: impl Fn(&mut S, u64) + Sync,
) -> Duration {
    let start = Barrier::new(threads + 1);
    std::thread::scope(|scope| {
        let workers: Vec<_> = states
            .drain(..)
            .map(|mut state| {
                let (start, work) = (&start, &work);
                scope.spawn(move || {
                    start.wait();
                    work(&mut state, iters);
                })
            })
            .collect();
        start.wait();
        let began = Instant::now();
        for worker in workers {
            worker.join().expect("worker");
        }
        began.elapsed()
    })
}

/// One allocator for every thread, as case `a` sets it up.
fn shared_allocator(capacity: usize) -> Mutex<Allocator> {
    Mutex::new(Allocator::with_granularity(capacity, 256).expect("a power of two"))
}

/// Each thread's live allocations from `shared`, and its steps.
fn shared_states<'s>(
    shared: &Mutex<Allocator>,
    steps: &'s [Steps],
) -> Vec<(Vec<Allocation>, &'s Steps)> {
    steps
        .iter()
        .map(|steps| {
            let live = (0..PER_THREAD_LIVE)
                .map(|i| {
                    shared
                        .lock()
                        .expect("lock")
                        .alloc(steps[i].1, 256)
                        .expect("room")
                })
                .collect();
            (live, steps)
        })
        .collect()
}

fn threads(c: &mut Criterion) {
    let steps: Vec<_> = (0..2).map(|t| thread_steps(0x7 + t)).collect();
    let capacity = 256 << 20;
    let mut group = c.benchmark_group("threads, free+alloc pairs, 256 B-64 KiB, align 256");
    for threads in [1usize, 2] {
        group.throughput(Throughput::Elements(threads as u64));
        group.bench_function(
            BenchmarkId::new("one shared Mutex<Allocator>", threads),
            |b| {
                b.iter_custom(|iters| {
                    let shared = shared_allocator(capacity);
                    let states = shared_states(&shared, &steps[..threads]);
                    timed_threads(threads, iters, states, |(live, steps), iters| {
                        for i in 0..iters as usize {
                            let (slot, size) = steps[i % STEPS];
                            shared.lock().expect("lock").free(live[slot]).expect("live");
                            live[slot] =
                                shared.lock().expect("lock").alloc(size, 256).expect("fits");
                        }
                    })
                });
            },
        );
        group.bench_function(
            BenchmarkId::new("one shared Mutex<Allocator>, 16 pairs per lock", threads),
            |b| {
                b.iter_custom(|iters| {
                    let shared = shared_allocator(capacity);
                    let states = shared_states(&shared, &steps[..threads]);
                    timed_threads(threads, iters, states, |(live, steps), iters| {
                        let mut i = 0;
                        while i < iters as usize {
                            let mut allocator = shared.lock().expect("lock");
                            let batch_end = (i + 16).min(iters as usize);
                            while i < batch_end {
                                let (slot, size) = steps[i % STEPS];
                                allocator.free(live[slot]).expect("live");
                                live[slot] = allocator.alloc(size, 256).expect("fits");
                                i += 1;
                            }
                        }
                    })
                });
            },
        );
        group.bench_function(BenchmarkId::new("one Allocator per thread", threads), |b| {
            b.iter_custom(|iters| {
                let states: Vec<_> = (0..threads)
                    .map(|t| {
                        let mut allocator =
                            Allocator::with_granularity(capacity / 2, 256).expect("a power of two");
                        let live: Vec<_> = (0..PER_THREAD_LIVE)
                            .map(|i| allocator.alloc(steps[t][i].1, 256).expect("room"))
                            .collect();
                        (allocator, live, &steps[t])
                    })
                    .collect();
                timed_threads(threads, iters, states, |(allocator, live, steps), iters| {
                    for i in 0..iters as usize {
                        let (slot, size) = steps[i % STEPS];
                        allocator.free(live[slot]).expect("live");
                        live[slot] = allocator.alloc(size, 256).expect("fits");
                    }
                })
            });
        });
    }
    group.finish();
}

/// Fraction of the buffer in use when a random workload first fails: two
/// allocations (1 B to 16 KiB, alignment 2^0 to 2^12) for every free, so
/// the heap fills while fragmenting.
fn utilization(seed: u64) -> f64 {
    let capacity = 16 << 20;
    let mut allocator = Allocator::new(capacity);
    let mut rng = Rng(seed);
    let mut live = Vec::new();
    loop {
        if !live.is_empty() && rng.pick(3) == 0 {
            let victim = rng.pick(live.len());
            allocator.free(live.swap_remove(victim)).expect("live");
            continue;
        }
        let size = 1 + rng.pick(16 * 1024);
        let align = 1 << rng.pick(13);
        match allocator.alloc(size, align) {
            Ok(allocation) => live.push(allocation),
            Err(_) => return allocator.stats().used as f64 / capacity as f64,
        }
    }
}

criterion_group!(benches, cases, failing, threads);

/// `ALLOC_RACE=<case letters>`: both allocators in alternating bursts of
/// 20,000 pairs, 40 rounds, printing the fastest burst of each in ns per
/// pair and the median of the rounds' ratios: on a machine shared with other
/// work the fastest burst is the one least disturbed, and a round's two
/// bursts, run back to back, see the same disturbance, so both figures are
/// steadier than a mean.
fn race(letters: &str) {
    for (name, case) in all_cases() {
        if !letters.contains(&name[..1]) {
            continue;
        }
        let (mut ours, mut ours_live) = case.ours_filled();
        let (mut oa, mut oa_live) = case.oa_filled();
        const BURST: usize = 20_000;
        let (mut best_ours, mut best_oa) = (f64::INFINITY, f64::INFINITY);
        let mut ratios = Vec::new();
        let mut step = 0;
        for _ in 0..40 {
            let began = Instant::now();
            for i in 0..BURST {
                let (slot, size, align) = case.steps[(step + i) % STEPS];
                ours.free(ours_live[slot]).expect("live");
                ours_live[slot] = ours.alloc(size, align).expect("fits");
            }
            let ours_ns = began.elapsed().as_nanos() as f64 / BURST as f64;
            best_ours = best_ours.min(ours_ns);
            let began = Instant::now();
            for i in 0..BURST {
                let (slot, size, align) = case.steps[(step + i) % STEPS];
                oa.free(oa_live[slot]);
                oa_live[slot] = oa.allocate(case.oa_request(size, align)).expect("fits");
            }
            let oa_ns = began.elapsed().as_nanos() as f64 / BURST as f64;
            best_oa = best_oa.min(oa_ns);
            ratios.push(ours_ns / oa_ns);
            step += BURST;
        }
        ratios.sort_by(f64::total_cmp);
        println!(
            "{name}: gpu-aligned {best_ours:.1} ns, offset-allocator {best_oa:.1} ns, ratio {:.2}, median round {:.2}",
            best_ours / best_oa,
            ratios[ratios.len() / 2]
        );
    }
}

fn main() {
    if let Ok(spec) = std::env::var("ALLOC_PAIRS") {
        pairs_only(&spec);
        return;
    }
    if let Ok(letters) = std::env::var("ALLOC_RACE") {
        race(&letters);
        return;
    }
    let runs: Vec<f64> = (1..=10).map(utilization).collect();
    let mean = runs.iter().sum::<f64>() / runs.len() as f64;
    let worst = runs.iter().copied().fold(f64::INFINITY, f64::min);
    println!(
        "utilization at first failure (alignments 1..4096, 10 seeds): mean {mean:.4}, worst {worst:.4}"
    );
    benches();
    criterion::Criterion::default()
        .configure_from_args()
        .final_summary();
}
