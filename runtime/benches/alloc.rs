//! The sub-allocator against `offset-allocator` 0.2 (the TLSF-style offset
//! allocator it is most like) on the same sequence: a steady state of 1,000
//! live allocations where each step frees a random one and allocates 256 B
//! to 64 KiB in its place. Ours is asked for bytes at alignment 256, with its
//! handle checks on; offset-allocator, which has no alignment, for the same
//! sizes in 256-byte units. The ratio of the two times per free+alloc pair is
//! the figure in the README.
//!
//! Before the timings, it prints the utilization at first failure of a
//! random workload with alignments 1 to 4096 (see `utilization`).

use criterion::{criterion_group, BenchmarkId, Criterion};
use gpu_aligned::alloc::Allocator;

const LIVE: usize = 1_000;
const STEPS: usize = 1 << 14;
const UNIT: u64 = 256;
/// 128 MiB: room for 1,000 allocations of up to 64 KiB twice over, so the
/// steady state measures the search, not out-of-memory handling.
const CAPACITY: u64 = 128 << 20;

/// SplitMix64: a seeded generator, so both allocators see one sequence.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, bound: u64) -> u64 {
        self.next() % bound
    }
}

/// The initial sizes and, per step, which slot to replace with what size.
struct Workload {
    initial: Vec<u64>,
    steps: Vec<(usize, u64)>,
}

fn workload() -> Workload {
    let mut rng = Rng(0x5eed);
    let size = |rng: &mut Rng| 256 + rng.below(64 * 1024 - 256 + 1);
    let initial = (0..LIVE).map(|_| size(&mut rng)).collect();
    let steps = (0..STEPS)
        .map(|_| (rng.below(LIVE as u64) as usize, size(&mut rng)))
        .collect();
    Workload { initial, steps }
}

fn units(bytes: u64) -> u32 {
    bytes.div_ceil(UNIT) as u32
}

/// Our allocator through the sequence, one free+alloc pair per iteration.
fn bench_ours(
    c: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>,
    work: &Workload,
    granularity: u64,
) {
    let id = BenchmarkId::new(
        "gpu-aligned",
        format!("align 256, granularity {granularity}"),
    );
    c.bench_function(id, |b| {
        let mut allocator =
            Allocator::with_granularity(CAPACITY, granularity).expect("a power of two");
        let mut live: Vec<_> = work
            .initial
            .iter()
            .map(|&size| {
                allocator
                    .alloc(size, UNIT)
                    .expect("room for the initial set")
            })
            .collect();
        let mut step = 0;
        b.iter(|| {
            let (slot, size) = work.steps[step % STEPS];
            step += 1;
            allocator.free(live[slot]).expect("live");
            live[slot] = allocator.alloc(size, UNIT).expect("steady state fits");
        });
    });
}

fn steady_state(c: &mut Criterion) {
    let work = workload();
    let mut group = c.benchmark_group("steady state, 1000 live, free+alloc 256 B..64 KiB");
    // Granularity 256 is what an arena with the default minimum alignment
    // uses (and what 256-byte units give offset-allocator); granularity 1
    // keeps every request byte-exact and the slivers after it free.
    bench_ours(&mut group, &work, 256);
    bench_ours(&mut group, &work, 1);

    group.bench_function(
        BenchmarkId::new("offset-allocator", "256-byte units"),
        |b| {
            let mut allocator: offset_allocator::Allocator =
                offset_allocator::Allocator::new(units(CAPACITY));
            let mut live: Vec<_> = work
                .initial
                .iter()
                .map(|&size| {
                    allocator
                        .allocate(units(size))
                        .expect("room for the initial set")
                })
                .collect();
            let mut step = 0;
            b.iter(|| {
                let (slot, size) = work.steps[step % STEPS];
                step += 1;
                allocator.free(live[slot]);
                live[slot] = allocator.allocate(units(size)).expect("steady state fits");
            });
        },
    );
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
        if !live.is_empty() && rng.below(3) == 0 {
            let victim = rng.below(live.len() as u64) as usize;
            allocator.free(live.swap_remove(victim)).expect("live");
            continue;
        }
        let size = 1 + rng.below(16 * 1024);
        let align = 1 << rng.below(13);
        match allocator.alloc(size, align) {
            Ok(allocation) => live.push(allocation),
            Err(_) => return allocator.stats().used as f64 / capacity as f64,
        }
    }
}

criterion_group!(benches, steady_state);

fn main() {
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
